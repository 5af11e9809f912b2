// The result of one caller query as the worker sent it: the rows stay the JSON
// text the worker wrote (the route sends them as they are) and are parsed only
// when a caller asks for objects (the agent tools, the CLI).

import type { JsonValue } from './json.ts';

/** A caller query's result: rows kept as the JSON text the worker wrote, parsed only when asked. */
export class CallerSqlResult {
  private parsed: Record<string, JsonValue>[] | undefined;
  constructor(
    readonly columns: string[],
    readonly types: string[],
    /** The rows as JSON objects separated by commas. */
    readonly rowsJson: string,
    readonly row_count: number,
    readonly truncated: boolean,
    readonly truncated_reason: 'max_rows' | 'max_bytes' | null,
    readonly max_rows: number,
  ) {}

  get rows(): Record<string, JsonValue>[] {
    this.parsed ??= JSON.parse(`[${this.rowsJson}]`) as Record<string, JsonValue>[];
    return this.parsed;
  }
}
