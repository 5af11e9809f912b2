// Graceful shutdown with a deadline: stop accepting connections, say so
// (/v3/ready answers 503, responses close their connections, idle kept-alive
// connections are closed), let in-flight requests finish, and when the
// deadline (IDQS_SHUTDOWN_S) comes, cut whatever is left: every connection is
// closed, which stops the work of those requests. Resolves in time whatever
// the clients do; the caller then closes the engine and exits.

import type { FastifyInstance } from 'fastify';

export type ShutdownOutcome = 'clean' | 'cut';

export async function drain(app: FastifyInstance, deadlineMs: number): Promise<ShutdownOutcome> {
  app.draining = true;
  const closing = app.close().then(() => 'clean' as const);
  app.server.closeIdleConnections();
  let timer: NodeJS.Timeout | undefined;
  const cut = new Promise<'cut'>((resolve) => {
    timer = setTimeout(() => {
      app.server.closeAllConnections();
      resolve('cut');
    }, deadlineMs);
  });
  try {
    return await Promise.race([closing, cut]);
  } finally {
    clearTimeout(timer);
  }
}
