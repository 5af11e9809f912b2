// Discovery tools: version, totals, collections, analysis results,
// attributes and their values.

import { Type } from '@sinclair/typebox';
import { attributeValues, listAttributes } from '../../core/services/attributes.ts';
import { getCollection, listAnalysisResults, listCollections } from '../../core/services/collections.ts';
import { stats, version } from '../../core/services/version.ts';
import { applyLimit } from '../../contract/limits.ts';
import type { ToolLimits } from '../limits.ts';
import { defineTool, type ToolDef } from './types.ts';

export function discoveryTools(limits: ToolLimits): ToolDef[] {
  const { values } = limits;
  return [
    defineTool({
      capability: 'get_idc_version',
      title: 'Data release and server version',
      description:
        'The data release served (idc_version), the version of its index tables and this server’s version. ' +
        'Call it to state what your answers are based on; synthetic=true means generated demonstration data, not the real corpus. ' +
        'When the server serves several releases, releases lists them (newest, the default, first) and every tool takes release to answer from another.',
      input: {},
      run: (_a, { ctx }) => version(ctx),
    }),
    defineTool({
      capability: 'get_stats',
      title: 'Headline totals',
      description: 'Totals of the release: collections, analysis results, patients, studies, series, instances and size (size_TB, size_MB).',
      input: {},
      run: (_a, { ctx }) => stats(ctx),
    }),
    defineTool({
      capability: 'list_collections',
      title: 'List collections',
      description:
        'Every collection (source dataset) with its metadata, DOIs and licenses, ordered by collection_id (a long list: for ids and series counts only, ' +
        'get_attribute_values with attribute collection_id is much shorter). Use collection_id values in filters (terms.collection_id).',
      input: {},
      run: (_a, { ctx }) => listCollections(ctx),
    }),
    defineTool({
      capability: 'get_collection',
      title: 'Collection detail',
      description:
        'One collection: metadata, distinct patients, studies and series, instances, size, its modalities and series and size per license ' +
        '(with whether commercial use is allowed). An unknown id is an error that suggests close ids.',
      input: {
        collection_id: Type.String({ description: 'Collection identifier, case-sensitive, e.g. "nlst".' }),
      },
      run: (a, { ctx }) => getCollection(ctx, a.collection_id),
    }),
    defineTool({
      capability: 'list_analysis_results',
      title: 'List analysis results',
      description:
        'Derived datasets (segmentations, annotations, measurements), ordered by analysis_result_id. An analysis result can span several collections: ' +
        'analysis_result_id and collection_id are independent filter attributes.',
      input: {},
      run: (_a, { ctx }) => listAnalysisResults(ctx),
    }),
    defineTool({
      capability: 'list_attributes',
      title: 'List filter attributes',
      description:
        'The attributes usable in cohort filters (columns of the series table index): kind term goes in terms, kind range in ranges. ' +
        'Call this before building a filter, then get_attribute_values for exact values. A property not listed here may be in another table: see list_tables and run_sql.',
      input: {},
      run: () => listAttributes(),
    }),
    defineTool({
      capability: 'get_attribute_values',
      title: 'Distinct values of an attribute',
      description:
        'ALWAYS call this before filtering on an attribute: values are case-sensitive and must match exactly (e.g. Modality "CT", BodyPartExamined "CHEST"). ' +
        'Distinct values with their series counts, most frequent first; truncated=true means more values exist. ' +
        `Keep limit small (default ${values.default}, at most ${values.cap}).`,
      input: {
        attribute: Type.String({ description: 'A column of index, case-sensitive (see list_attributes), e.g. "Modality".' }),
        limit: Type.Optional(
          Type.Integer({ minimum: 1, description: `Most values to return, default ${values.default}; values above ${values.cap} are lowered to ${values.cap}.` }),
        ),
      },
      run: (a, { ctx }) => attributeValues(ctx, a.attribute, applyLimit('limit', a.limit, values).value),
    }),
  ];
}
