// What a log line keeps of caller SQL: a short snippet or a hash, as
// configured. Shared by the HTTP request log and the agent-tool audit log.

import { createHash } from 'node:crypto';
import type { AppContext } from './context.ts';

export function sqlLogValue(ctx: AppContext, sql: string): string {
  if (ctx.config.sqlLogMode === 'hash') return `sha256:${createHash('sha256').update(sql).digest('hex').slice(0, 12)}`;
  const oneLine = sql.replace(/\s+/g, ' ').trim();
  return oneLine.length > 200 ? `${oneLine.slice(0, 200)}…` : oneLine;
}
