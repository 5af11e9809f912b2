// Tools over the releases of the data: resolving a saved manifest or UID list
// against the served release (the same service as POST /v3/series/resolve).

import { Type } from '@sinclair/typebox';
import { field, invalidQuery, msg } from '../../core/errors.ts';
import { resolveSaved } from '../../core/services/resolve.ts';
import { cohortChanges } from '../../core/services/changes.ts';
import { applyLimit } from '../../contract/limits.ts';
import { ReleaseName } from '../../contract/release-schemas.ts';
import { defineTool, filterInput, filterOf, type ToolDef } from './types.ts';
import type { ToolLimits } from '../limits.ts';

export function releaseTools(limits: ToolLimits): ToolDef[] {
  return [
    defineTool({
      capability: 'resolve_series',
      title: 'Resolve a saved manifest or UID list',
      description:
        'What each line of a manifest or UID list saved from an earlier release is now: current, revised (the release has another version of the series; ' +
        'the earlier version and its URL are given, and its objects stay in the stores), removed (the last release that had it, and its URLs), unknown, ' +
        'a header, or invalid (not an identifier or URL, with the reason), with totals per class. Give text (the manifest as saved: s5cmd cp lines, ' +
        's3:// or gs:// URLs, UIDs or crdc_series_uuids, # comments) or ids (one identifier per entry).',
      input: {
        text: Type.Optional(Type.String({ description: 'The manifest or list as saved, lines separated by newlines.' })),
        ids: Type.Optional(Type.Array(Type.String(), { minItems: 1, description: 'SeriesInstanceUIDs, StudyInstanceUIDs, crdc_series_uuids or URLs, one per entry.' })),
      },
      run: (a, { ctx }) => {
        if ((a.text === undefined) === (a.ids === undefined)) throw invalidQuery(msg`Give either ${field('text')} (a saved manifest) or ${field('ids')} (identifiers), not both or neither.`);
        return resolveSaved(ctx, a.text !== undefined ? { text: a.text } : { ids: a.ids! });
      },
    }),
      defineTool({
      capability: 'get_cohort_changes',
      title: 'Cohort changes between releases',
      description:
        'Series of a cohort added, revised (another version) and removed between two releases (from; to defaults to the served one), with counts and sizes. ' +
        'terms may use collection_id, PatientID, StudyInstanceUID, SeriesInstanceUID and Modality only (what earlier releases record); no ranges.',
      input: {
        terms: filterInput.terms,
        from: ReleaseName,
        to: Type.Optional(ReleaseName),
        limit: Type.Optional(Type.Integer({ minimum: 0, description: `Changed series to list (default 20, at most ${limits.pageSize.cap}; 0 for counts only).` })),
        by: Type.Optional(Type.Unsafe<'collection_id' | 'Modality'>({ type: 'string', enum: ['collection_id', 'Modality'], description: 'Also count the changes per collection or per modality (groups).' })),
      },
      run: async (a, { ctx }) => {
        const limit = applyLimit('limit', a.limit, { default: 20, cap: limits.pageSize.cap });
        const r = await cohortChanges(ctx, { filters: filterOf(a), from: a.from, to: a.to, limit: limit.value, ...(a.by === undefined ? {} : { by: a.by }) });
        return { ...r, warnings: [...r.warnings, ...(limit.warning ? [limit.warning] : [])] };
      },
    }),
  ];
}
