// Prompts: short templates that start a researcher's common workflows with
// our tools (find and size a cohort, download it, cite it and check its
// licenses, explore a collection, query with SQL safely). Each names the
// tools with ready-to-send arguments built from the prompt's own arguments,
// which are checked first (a collection or table that does not exist, a
// filter that is not the cohort filter, a format or store we do not know):
// a template that starts a workflow on a typo helps no one.

import { Ajv } from 'ajv';
import { ErrorCode, McpError, type GetPromptResult, type Prompt } from '@modelcontextprotocol/sdk/types.js';
import type { AppContext } from '../core/context.ts';
import { collectionIds } from '../core/services/collections.ts';
import { CITATION_FORMATS, DEFAULT_CITATION_FORMAT } from '../core/services/citations.ts';
import { STORE_ALIASES } from '../core/rules/stores.ts';
import { suggest, suggestionText } from '../core/suggest.ts';
import { FilterSchema } from '../contract/filter-schema.ts';
import { AJV_OPTIONS, ajvErrorMessage, type AjvError } from '../contract/validation.ts';
import type { ToolLimits } from './limits.ts';

type Args = Record<string, string>;
type Filter = { terms?: Record<string, string[]>; ranges?: Record<string, { gte?: unknown; lte?: unknown }> };

interface PromptDef {
  listing: Prompt;
  render(args: Args, ctx: AppContext, limits: ToolLimits): Promise<string>;
}

const validateFilter = new Ajv({ ...AJV_OPTIONS, strict: false }).compile(JSON.parse(JSON.stringify(FilterSchema)) as object);

const invalid = (message: string) => new McpError(ErrorCode.InvalidParams, message);

/** A tool call as the templates write it: the name and its JSON arguments. */
const call = (tool: string, args?: Record<string, unknown>) => (args && Object.keys(args).length > 0 ? `\`${tool} ${JSON.stringify(args)}\`` : `\`${tool}\``);

async function checkCollection(ctx: AppContext, id: string): Promise<string> {
  const ids = await collectionIds(ctx);
  if (ids.has(id)) return id;
  throw invalid(`Argument collection_id: no collection has collection_id ${JSON.stringify(id)} (ids are case-sensitive).${suggestionText(suggest(id, ids))} The tool list_collections lists them.`);
}

/** The cohort a prompt is about: `filters` (the cohort filter as JSON), `collection_id`, or both (ANDed). */
async function cohortOf(ctx: AppContext, args: Args): Promise<Filter> {
  if (args.filters === undefined && args.collection_id === undefined) {
    throw invalid('Give the cohort: filters (JSON, e.g. {"terms": {"Modality": ["CT"]}}) or collection_id, or both.');
  }
  let filter: Filter = {};
  if (args.filters !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(args.filters);
    } catch (e) {
      throw invalid(`Argument filters is not JSON (${(e as Error).message}); send the cohort filter, e.g. {"terms": {"collection_id": ["nlst"], "Modality": ["CT"]}, "ranges": {"instanceCount": {"gte": 50}}}.`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw invalid('Argument filters must be a JSON object: {"terms": {...}, "ranges": {...}}.');
    if (!validateFilter(parsed)) throw invalid(ajvErrorMessage((validateFilter.errors ?? []) as AjvError[], 'filters') ?? 'Argument filters is not a cohort filter.');
    filter = parsed as Filter;
  }
  if (args.collection_id !== undefined) {
    const id = await checkCollection(ctx, args.collection_id);
    filter = { ...filter, terms: { ...filter.terms, collection_id: [id] } };
  }
  return filter;
}

function oneOf(name: string, value: string | undefined, allowed: readonly string[]): string | undefined {
  if (value === undefined || allowed.includes(value.toLowerCase())) return value?.toLowerCase();
  throw invalid(`Argument ${name} must be one of ${allowed.join(', ')}, not ${JSON.stringify(value)}.${suggestionText(suggest(value, allowed))}`);
}

const COHORT_ARGS = [
  { name: 'filters', description: 'The cohort filter as JSON: {"terms": {attribute: [values]}, "ranges": {attribute: {"gte": .., "lte": ..}}}.', required: false },
  { name: 'collection_id', description: 'A collection id (e.g. nlst); ANDed with filters when both are given.', required: false },
];

const PROMPTS: PromptDef[] = [
  {
    listing: {
      name: 'find_cohort',
      title: 'Find and size a cohort',
      description: 'Turn a description of the imaging you need into a checked cohort filter, and size it (patients, studies, series, TB) before anything is listed or downloaded.',
      arguments: [
        { name: 'description', description: 'What the cohort is, in words (e.g. "chest CT of lung cancer patients, at least 100 slices").', required: true },
        { name: 'collection_id', description: 'Restrict to this collection.', required: false },
      ],
    },
    async render(args, ctx) {
      const base: Filter = args.collection_id ? { terms: { collection_id: [await checkCollection(ctx, args.collection_id)] } } : {};
      return [
        `Find and size this cohort: ${args.description}`,
        '',
        '1. Ground the names: call `list_attributes` (kind term goes in terms, kind range in ranges), then ' +
          `${call('get_attribute_values', { attribute: 'Modality' })} (and the same for every other attribute you filter on): values are case-sensitive, copy them.` +
          (args.collection_id ? ` The cohort is within collection ${args.collection_id}: ${call('get_collection', { collection_id: args.collection_id })} says what it holds.` : ' Use `list_collections` to find collection ids.'),
        `2. Size it: ${call('get_cohort_counts', base)} with your terms and ranges added. Read warnings: an ignored empty list or a value that exists only in another casing means the filter is not what you meant.`,
        `3. See how it splits: ${call('get_cohort_facets', { ...base, attributes: ['Modality', 'BodyPartExamined'] })} (counts per value within the cohort), and narrow the filter if needed.`,
        '4. Report the filter you used, the counts and the size in TB. Do not list or download anything yet.',
      ].join('\n');
    },
  },
  {
    listing: {
      name: 'download_cohort',
      title: 'Get a manifest and download it',
      description: 'Size a cohort, check its licenses, then get its manifest of series URLs and the commands that download it.',
      arguments: [
        ...COHORT_ARGS,
        { name: 'source', description: 'Object store: cloud1 (default; aws) or cloud2 (gcs).', required: false },
        { name: 'out', description: 'Destination folder of the download commands (default ./idc-data).', required: false },
      ],
    },
    async render(args, ctx, limits) {
      const filter = await cohortOf(ctx, args);
      const source = oneOf('source', args.source, [...STORE_ALIASES.keys()]);
      const out = args.out ?? './idc-data';
      if (/[\0\n\r]/.test(out)) throw invalid('Argument out must be a folder name on one line.');
      return [
        `Download this cohort: ${JSON.stringify(filter)} into ${out}.`,
        '',
        `1. Size it first: ${call('get_cohort_counts', filter)}. Tell the user the series count and size in TB, and stop to ask before anything large (over about 10 GB).`,
        `2. Licenses: ${call('get_licenses', filter)}. Say whether commercial use is allowed (CC BY-NC parts are not).`,
        `3. The manifest and commands: ${call('build_cohort', { ...filter, page_size: Math.min(5, limits.pageSize.cap) })} returns sample series and download.commands (the idqs and s5cmd lines).` +
          ` For the series URLs themselves: ${call('get_cohort_urls', { ...filter, ...(source ? { source } : {}), limit: limits.urls.default })}; truncated=true means there are more than listed, so use the manifest commands for the whole cohort.`,
        `4. Give the user the command to run, e.g. idqs download --filters '${JSON.stringify(filter)}'${source ? ` --source ${source}` : ''} --out ${out} --dry-run (then without --dry-run), and say that nothing is downloaded through this server: files come straight from the public object store.`,
      ].join('\n');
    },
  },
  {
    listing: {
      name: 'cite_cohort',
      title: 'Cite a cohort and check its licenses',
      description: 'The citations of every dataset in a cohort plus the platform paper, and the licenses that govern its reuse.',
      arguments: [...COHORT_ARGS, { name: 'citation_format', description: `One of ${CITATION_FORMATS.join(', ')} (default ${DEFAULT_CITATION_FORMAT}).`, required: false }],
    },
    async render(args, ctx) {
      const filter = await cohortOf(ctx, args);
      const format = oneOf('citation_format', args.citation_format, CITATION_FORMATS) ?? DEFAULT_CITATION_FORMAT;
      return [
        `Cite this cohort and check its licenses: ${JSON.stringify(filter)}.`,
        '',
        `1. ${call('get_licenses', filter)}: list each license with its series and size, and say plainly whether commercial use is allowed for the whole cohort.`,
        `2. ${call('get_citations', { ...filter, citation_format: format })}: give the user every dataset citation and the idc_acknowledgment (the platform paper) in ${format}; both must be cited.`,
        '3. If the cohort mixes licenses, say which collections carry the more restrictive one (`get_cohort_facets` with attributes ["license_short_name", "collection_id"] splits it).',
      ].join('\n');
    },
  },
  {
    listing: {
      name: 'explore_collection',
      title: 'Explore a collection',
      description: 'What a collection holds: its description, counts, modalities, body parts, licenses, clinical data and a viewer link.',
      arguments: [{ name: 'collection_id', description: 'The collection id (e.g. nlst; list_collections lists them).', required: true }],
    },
    async render(args, ctx) {
      const id = await checkCollection(ctx, args.collection_id!);
      const terms = { collection_id: [id] };
      return [
        `Explore the collection ${id}.`,
        '',
        `1. ${call('get_collection', { collection_id: id })}: its description, cancer types, counts, modalities and licenses.`,
        `2. ${call('get_cohort_facets', { terms, attributes: ['Modality', 'BodyPartExamined', 'Manufacturer'] })}: how its series split.`,
        `3. ${call('list_clinical_tables', { collection_id: id })}: its clinical tables, if any (read one with get_clinical_table_schema before querying it).`,
        `4. ${call('build_cohort', { terms, page_size: 3 })}: a few series, each with a viewer link via \`get_viewer_url\`.`,
        '5. Summarise for a researcher: what it is, how large, what imaging and clinical data it has, and how it may be reused.',
      ].join('\n');
    },
  },
  {
    listing: {
      name: 'query_sql',
      title: 'Query with SQL safely',
      description: 'Answer a question with one read-only SQL query: names grounded in the schema first, small results, aggregates over rows, truncation read.',
      arguments: [
        { name: 'question', description: 'The question to answer (e.g. "how many CT series per collection?").', required: true },
        { name: 'table', description: 'The table to start from (default index; list_tables lists them).', required: false },
      ],
    },
    async render(args, ctx, limits) {
      const table = args.table ?? 'index';
      if (!ctx.catalog.tables.includes(table)) {
        throw invalid(`Argument table: no table ${JSON.stringify(table)}.${suggestionText(suggest(table, ctx.catalog.tables))} The tool list_tables lists them.`);
      }
      const quoted = `"${table}"`;
      return [
        `Answer with SQL: ${args.question}`,
        '',
        `1. Ground the names: \`list_tables\`, then ${call('get_table_schema', { table })}. Use only columns it lists; STRING[] columns need list_contains(column, 'value').`,
        `2. Check the values you filter on: ${call('run_sql', { sql: `SELECT * FROM ${quoted} LIMIT 3`, max_rows: 3 })}, or get_attribute_values for an attribute of index.`,
        `3. Write one SELECT (or WITH ... SELECT) that aggregates in SQL (GROUP BY, count, sum) rather than fetching rows, and run it with \`run_sql\` and a small max_rows (default ${limits.sqlRows.default}, at most ${limits.sqlRows.cap}). Nothing can be modified; the engine refuses anything but one read-only statement.`,
        '4. If the engine answers with an error, read its "Did you mean" and fix the name. truncated=true means rows were cut: aggregate further or say the answer is partial.',
        '5. Answer the question and show the SQL you ran.',
      ].join('\n');
    },
  },
];

const BY_NAME = new Map(PROMPTS.map((p) => [p.listing.name, p]));

export function listPrompts(): Prompt[] {
  return PROMPTS.map((p) => p.listing);
}

/** One prompt, its arguments checked: unknown or missing arguments, unknown names and bad values are InvalidParams. */
export async function getPrompt(ctx: AppContext, limits: ToolLimits, name: string, raw: Record<string, string> | undefined): Promise<GetPromptResult> {
  const def = BY_NAME.get(name);
  if (!def) throw invalid(`Unknown prompt ${JSON.stringify(name)}.${suggestionText(suggest(name, BY_NAME.keys()))} prompts/list lists them.`);
  const declared = def.listing.arguments ?? [];
  // An empty string is an omitted argument (clients fill forms with them).
  const args: Args = Object.fromEntries(Object.entries(raw ?? {}).filter(([, v]) => typeof v === 'string' && v.trim() !== '').map(([k, v]) => [k, v.trim()]));
  for (const k of Object.keys(args)) {
    if (!declared.some((a) => a.name === k)) throw invalid(`Unknown argument ${JSON.stringify(k)} of prompt ${name}; accepted: ${declared.map((a) => a.name).join(', ')}.`);
  }
  for (const a of declared) if (a.required && args[a.name] === undefined) throw invalid(`Missing required argument ${JSON.stringify(a.name)} of prompt ${name}: ${a.description}`);
  const text = await def.render(args, ctx, limits);
  return { description: def.listing.description, messages: [{ role: 'user', content: { type: 'text', text } }] };
}
