// list_releases: the releases this process serves (the same service as GET /v3/releases).

import { listReleases } from '../../core/releases.ts';
import { defineTool, type ToolDef } from './types.ts';

export function servedReleaseTools(): ToolDef[] {
  return [
    defineTool({
      capability: 'list_releases',
      title: 'Releases served',
      description:
        'Every data release this server serves, newest (the default) first, with its totals. Every tool takes release (e.g. "24.2.2" or "v24") to answer from another served release than the newest.',
      input: {},
      run: (_a, { ctx }) => listReleases(ctx),
    }),
  ];
}
