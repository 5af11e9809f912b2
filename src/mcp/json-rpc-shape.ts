// Tells a body that is JSON but not JSON-RPC (invalid request, -32600) from
// one that is not JSON at all (parse error, -32700, which the SDK's transport
// answers). The transport answers both with the parse error; JSON-RPC 2.0
// reserves that code for text that does not parse.

import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';

/** Why a body that parses as JSON is not a JSON-RPC message (or batch); null when it is, or when it does not parse. */
export function notJsonRpc(body: string): string | null {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return null;
  }
  const messages = Array.isArray(value) ? value : [value];
  if (messages.length === 0) return 'Invalid Request: an empty batch; send a JSON-RPC 2.0 message or a non-empty list of them.';
  const bad = messages.findIndex((m) => !JSONRPCMessageSchema.safeParse(m).success);
  if (bad < 0) return null;
  const where = Array.isArray(value) ? ` (item ${bad} of the batch)` : '';
  return `Invalid Request: the body is JSON but not a JSON-RPC 2.0 message${where}; send an object with "jsonrpc": "2.0", a "method" and, for a request, an "id".`;
}
