// The MCP server over the core: the tools (one per capability with a tool in
// the catalog, each a thin call into the same service as its route), the
// resources (usage guide, table list, table schemas) and the error mapping:
// core errors become tool errors in the REST envelope, with what they point
// to named as tools. A Toolset is built once per AppContext (schemas compiled
// once); an McpServer is cheap to create, so the stateless HTTP endpoint
// makes one per request.

import { Ajv, type ValidateFunction } from 'ajv';
import type { Logger } from 'pino';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListToolsRequestSchema,
  LoggingLevelSchema,
  McpError,
  RequestSchema,
  SetLevelRequestSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { AppContext } from '../core/context.ts';
import { IdqsError, invalidRequest } from '../core/errors.ts';
import { currentWork, runWork } from '../core/engine/work.ts';
import { sqlLogValue } from '../core/sql-log.ts';
import { suggest, suggestionText } from '../core/suggest.ts';
import { listTables, tableSchema } from '../core/services/tables.ts';
import { envelopeOf, errorEnvelope, withRequestId, type ErrorEnvelope } from '../contract/error-envelope.ts';
import { AJV_OPTIONS, ajvErrorMessage, type AjvError } from '../contract/validation.ts';
import { TOOL_WORDS } from '../contract/words.ts';
import { GUIDE, instructionsFor } from './guide.ts';
import { toolLimits, type ToolLimits } from './limits.ts';
import { getPrompt, listPrompts } from './prompts.ts';
import { LogLevel, logTo, reportProgress } from './notify.ts';
import { cohortTools } from './tools/cohort.ts';
import { releaseTools } from './tools/releases.ts';
import { discoveryTools } from './tools/discovery.ts';
import { facetTools } from './tools/facets.ts';
import { sideTools } from './tools/side.ts';
import { sqlTools } from './tools/sql.ts';
import { tableTools } from './tools/tables.ts';
import type { ToolDef, ToolEnv } from './tools/types.ts';
import { inRelease, pickRelease } from '../core/releases.ts';
import { RELEASE_PARAM, ReleaseParam } from '../contract/release-param.ts';

export const SERVER_NAME = 'IDQS';

export interface McpServerOptions {
  /** Base URL of the HTTP API, for the download commands of build_cohort. */
  apiBase: string;
  /** Audit log: one line per tool call (never the result rows). */
  log?: Logger | null;
}

interface Entry {
  def: ToolDef;
  validate: ValidateFunction;
  listing: Tool;
}

export class Toolset {
  readonly limits: ToolLimits;
  readonly defs: ToolDef[];
  private readonly entries = new Map<string, Entry>();

  constructor(readonly ctx: AppContext) {
    this.limits = toolLimits(ctx.config);
    this.defs = [...discoveryTools(this.limits), ...tableTools(this.limits), ...cohortTools(this.limits), ...facetTools(this.limits), ...sqlTools(this.limits), ...sideTools(), ...releaseTools(this.limits)];
    // The options of the REST validator, so that the same argument gets the same verdict and message.
    const ajv = new Ajv({ ...AJV_OPTIONS, strict: false });
    // Several releases served: every tool takes `release` (the toolset picks it; the tool never sees it).
    const several = (ctx.served?.length ?? 0) > 1;
    for (const def of this.defs) {
      const input = several ? { ...def.input, properties: { ...def.input.properties, [RELEASE_PARAM]: ReleaseParam } } : def.input;
      const schema = JSON.parse(JSON.stringify(input)) as Tool['inputSchema'];
      this.entries.set(def.name, {
        def,
        validate: ajv.compile(schema),
        listing: {
          name: def.name,
          title: def.title,
          description: def.description,
          inputSchema: schema,
          annotations: { title: def.title, readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
        },
      });
    }
  }

  list(): Tool[] {
    return [...this.entries.values()].map((e) => e.listing);
  }

  /** Run a tool: validate the arguments, call the service, shape the result or the error. */
  async call(name: string, rawArgs: Record<string, unknown> | undefined, opts: McpServerOptions, observe?: (audit: Record<string, unknown>) => void): Promise<CallToolResult> {
    const entry = this.entries.get(name);
    if (!entry) {
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool ${JSON.stringify(name)}.${suggestionText(suggest(name, this.entries.keys()))} tools/list lists the tools.`);
    }
    const started = performance.now();
    const requestId = currentWork()?.requestId;
    const audit: Record<string, unknown> = { tool: name };
    if (requestId) audit.req_id = requestId;
    if (name === 'run_sql' && typeof rawArgs?.sql === 'string') audit.sql = sqlLogValue(this.ctx, rawArgs.sql);
    let result: CallToolResult;
    try {
      // Models often send null for an argument they mean to omit.
      const args = Object.fromEntries(Object.entries(rawArgs ?? {}).filter(([, v]) => v !== null && v !== undefined));
      if (!entry.validate(args)) {
        throw invalidRequest(ajvErrorMessage((entry.validate.errors ?? []) as AjvError[], 'arguments') ?? 'Invalid arguments.');
      }
      // The release the call names (the newest served by default); the tool itself never sees the member.
      const { [RELEASE_PARAM]: releaseName, ...toolArgs } = args;
      const release = pickRelease(this.ctx, releaseName as string | undefined);
      if (release.served) audit.release = release.dataset.index_version;
      const env: ToolEnv = { ctx: release, limits: this.limits, apiBase: opts.apiBase };
      const body = await inRelease(release, () => entry.def.run(toolArgs, env));
      result = success(body);
      audit.outcome = 'ok';
      const b = body as { rows?: unknown; truncated?: unknown };
      if (Array.isArray(b?.rows)) audit.row_count = b.rows.length;
      if (typeof b?.truncated === 'boolean') audit.truncated = b.truncated;
    } catch (e) {
      if (e instanceof IdqsError) {
        result = failure(withRequestId(envelopeOf(e, TOOL_WORDS), requestId));
        audit.error = e.code;
      } else {
        opts.log?.error({ err: e, tool: name, req_id: requestId }, 'unhandled error in tool');
        result = failure(withRequestId(errorEnvelope('internal_error', 'Internal error while handling the request; it has been logged.'), requestId));
        audit.error = 'internal_error';
      }
      audit.outcome = 'error';
    }
    audit.duration_ms = Math.round((performance.now() - started) * 100) / 100;
    opts.log?.info(audit, 'tool call');
    observe?.(audit);
    return result;
  }
}

/** Structured content is the REST body (an array body is wrapped as {result}); the text is the REST body as JSON. */
function success(body: unknown): CallToolResult {
  const structured = Array.isArray(body) ? { result: body } : (body as Record<string, unknown>);
  return { content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: structured };
}

/** The REST error envelope (in tool words), as structured content and as text. */
function failure(envelope: ErrorEnvelope): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(envelope) }], structuredContent: envelope as unknown as Record<string, unknown> };
}

const toolsets = new WeakMap<AppContext, Toolset>();

export function toolsetFor(ctx: AppContext): Toolset {
  let t = toolsets.get(ctx);
  if (!t) {
    t = new Toolset(ctx);
    toolsets.set(ctx, t);
  }
  return t;
}

/** A new MCP server with every tool and resource, not yet connected to a transport. */
export function createMcpServer(ctx: AppContext, opts: McpServerOptions): McpServer {
  const toolset = toolsetFor(ctx);
  const mcp = new McpServer(
    { name: SERVER_NAME, title: 'IDQS: Imaging Data Query Service', version: ctx.serverVersion },
    { instructions: instructionsFor(ctx.dataset.synthetic) },
  );
  // Tools are declared with JSON Schema (TypeBox) and validated like the REST
  // routes, so they go on the underlying server rather than through registerTool (zod).
  // The tool list never changes while the server runs.
  mcp.server.registerCapabilities({ tools: { listChanged: false } });
  mcp.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: toolset.list() }));
  // A tool call is cancelled when its HTTP client leaves (the work of the request it came in) or when the
  // MCP client cancels it (the SDK's signal).
  // Log messages to the client at the level it sets (per connection: one stdio session, or one HTTP request).
  const levels = new LogLevel();
  mcp.server.registerCapabilities({ logging: {} });
  // Its params are checked here, not by the SDK's schema: a bad level is the caller's mistake (-32602, naming
  // the levels), where the SDK's own parse answers -32603 with a validation dump.
  mcp.server.setRequestHandler(SetLevelRequestSchema.extend({ params: RequestSchema.shape.params }), (req) => {
    const level = LoggingLevelSchema.safeParse((req.params as { level?: unknown } | undefined)?.level);
    if (!level.success) {
      const got = (req.params as { level?: unknown } | undefined)?.level;
      throw new McpError(ErrorCode.InvalidParams, `level must be one of ${LoggingLevelSchema.options.join(', ')}; got ${got === undefined ? 'none' : JSON.stringify(got)}.`);
    }
    levels.level = level.data;
    return {};
  });
  mcp.server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const outer = currentWork();
    const signal = outer?.signal ? AbortSignal.any([outer.signal, extra.signal]) : extra.signal;
    const name = req.params.name;
    const token = extra._meta?.progressToken;
    const stop = token === undefined ? undefined : reportProgress(extra.sendNotification, token, name, ctx.config.mcpProgressMs);
    logTo(extra.sendNotification, levels, 'debug', { tool: name, event: 'start' });
    try {
      return await runWork({ requestId: outer?.requestId, timeout: outer?.timeout, signal }, () =>
        toolset.call(name, req.params.arguments, opts, (audit) => logTo(extra.sendNotification, levels, audit.outcome === 'ok' ? 'info' : 'warning', audit)),
      );
    } finally {
      stop?.();
    }
  });

  // Prompts: the researcher's workflows as templates over the tools (./prompts.ts).
  mcp.server.registerCapabilities({ prompts: { listChanged: false } });
  mcp.server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts: listPrompts() }));
  mcp.server.setRequestHandler(GetPromptRequestSchema, (req) => getPrompt(ctx, toolset.limits, req.params.name, req.params.arguments));

  // idc:// are the public service's names of the same resources, for clients written against it.
  for (const [scheme, alias] of [['idqs', ''], ['idc', ' (alias of the idqs:// resource)']] as const) {
    const name = (n: string) => (scheme === 'idqs' ? n : `${scheme}-${n}`);
    mcp.registerResource(
      name('guide'),
      `${scheme}://guide`,
      { title: `Agent guide${alias}`, description: 'Data model, tools, workflow, SQL tips and error codes. Read it first.', mimeType: 'text/markdown' },
      (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/markdown', text: GUIDE }] }),
    );
    mcp.registerResource(
      name('tables'),
      `${scheme}://tables`,
      { title: `Tables for SQL${alias}`, description: 'The tables run_sql can query (as list_tables returns them).', mimeType: 'application/json' },
      (uri) => ({ contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(listTables(ctx), null, 2) }] }),
    );
  }
  for (const scheme of ['idqs', 'idc'] as const) {
    mcp.registerResource(
      scheme === 'idqs' ? 'table-schema' : 'idc-table-schema',
      new ResourceTemplate(`${scheme}://schema/{table}`, {
        // The alias is not listed again: the same schemas would appear twice.
        list:
          scheme === 'idqs'
            ? () => ({ resources: ctx.catalog.tables.map((t) => ({ uri: `idqs://schema/${t}`, name: `schema of ${t}`, mimeType: 'application/json' })) })
            : undefined,
        complete: { table: (v) => ctx.catalog.tables.filter((t) => t.startsWith(v)) },
      }),
      {
        title: scheme === 'idqs' ? 'Table schema' : 'Table schema (alias of idqs://schema/{table})',
        description: 'Columns of a table with types and descriptions (as get_table_schema returns them).',
        mimeType: 'application/json',
      },
      (uri, vars) => {
        const table = decodeURIComponent(String(vars.table));
        try {
          return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(tableSchema(ctx, table), null, 2) }] };
        } catch (e) {
          if (e instanceof IdqsError) throw new McpError(ErrorCode.InvalidParams, e.text(TOOL_WORDS), { code: e.code });
          throw e;
        }
      },
    );
  }
  return mcp;
}
