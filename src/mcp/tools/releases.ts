// Tools over the releases of the data: resolving a saved manifest or UID list
// against the served release (the same service as POST /v3/series/resolve).

import { Type } from '@sinclair/typebox';
import { field, invalidQuery, msg } from '../../core/errors.ts';
import { resolveSaved } from '../../core/services/resolve.ts';
import { defineTool, type ToolDef } from './types.ts';

export function releaseTools(): ToolDef[] {
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
  ];
}
