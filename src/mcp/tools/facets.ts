// Cohort facets as an agent tool: the counts a filter panel shows, so a model
// can see which values (and how many cases) each attribute offers within the
// current selection before narrowing it.

import { Type } from '@sinclair/typebox';
import { cohortFacets } from '../../core/services/facets/cohort-facets.ts';
import { COUNT_MODES } from '../../core/services/facets/table.ts';
import { applyLimit } from '../../contract/limits.ts';
import type { ToolLimits } from '../limits.ts';
import { defineTool, filterInput, filterOf, type ToolDef } from './types.ts';
import { AS_OF_DESCRIPTION } from '../../contract/release-schemas.ts';

export function facetTools(limits: ToolLimits): ToolDef[] {
  return [
    defineTool({
      capability: 'get_cohort_facets',
      title: 'Cohort facets',
      description:
        'For a filter, each attribute’s values (or histogram bins of range attributes) with count (under every other filter: what picking the value would give) ' +
        'and filtered_count (under all filters), a missing bucket, and the cohort totals. Ask for a few attributes at a time ' +
        `(attributes, e.g. ["Modality", "BodyPartExamined"]); limit (values per attribute) defaults to ${limits.values.default}, at most ${limits.values.cap}.`,
      input: {
        ...filterInput,
        attributes: Type.Optional(Type.Array(Type.String(), { description: 'Attributes to facet (list_attributes); default all.' })),
        count: Type.Optional(Type.String({ description: `What to count: ${COUNT_MODES.join(', ')} (default patients).` })),
        limit: Type.Optional(
          Type.Integer({ minimum: 1, description: `Most values per term attribute (selected values are always listed); default ${limits.values.default}, at most ${limits.values.cap}.` }),
        ),
        as_of: Type.Optional(Type.Union([Type.String(), Type.Integer()], { description: `${AS_OF_DESCRIPTION} Facets then exist for those attributes only.` })),
      },
      run: async (a, { ctx }) => {
        const l = applyLimit('limit', a.limit, limits.values);
        const r = await cohortFacets(ctx, { filters: filterOf(a), attributes: a.attributes, count: a.count, limit: l.value, ...(a.as_of === undefined ? {} : { as_of: a.as_of }) });
        if (l.warning) r.warnings.push(l.warning);
        return r;
      },
    }),
  ];
}
