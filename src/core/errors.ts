// Domain errors with a stable machine-readable code and an HTTP status. The
// HTTP adapter renders them as {"error":{"code","message"}}; other adapters
// keep the code too.

export class IdqsError extends Error {
  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'IdqsError';
  }
}

export const invalidQuery = (message: string) => new IdqsError('invalid_query', 400, message);
export const notFound = (message: string) => new IdqsError('not_found', 404, message);
export const invalidRequest = (message: string) => new IdqsError('invalid_request', 422, message);
export const queryTimeout = (message: string) => new IdqsError('query_timeout', 504, message);
export const busy = (message: string) => new IdqsError('busy', 503, message);
export const unavailable = (message: string) => new IdqsError('unavailable', 503, message);
