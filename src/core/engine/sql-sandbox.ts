// The second line of defence for caller SQL, after the text guard: the
// statement's syntax tree (the engine's own parser, as JSON) is searched for
// functions and table references that touch the server rather than the data:
// file and URL readers (the database file and spill folder are readable even
// with external access disabled), dynamic SQL, maintenance, and settings or
// catalogs that disclose server paths. Also the redaction of server paths in
// any engine message a caller sees.

import { invalidQuery, msg, see } from '../errors.ts';

/** Engine errors that are the server's problem (its file, its memory), never the caller's. */
export const SERVER_FAULT = /^(IO Error|INTERNAL Error|FATAL Error|Fatal Error)|[Cc]orrupt|checksum/;

/** Refused functions (table or scalar), by what they would do. */
const REFUSED: Record<string, string> = {};
const refuse = (why: string, names: string) => names.split(/\s+/).forEach((n) => n && (REFUSED[n] = why));
refuse(
  'reads files or URLs; caller SQL reads the served tables only',
  `read_blob read_text read_csv read_csv_auto read_json read_json_auto read_json_objects read_json_objects_auto read_ndjson
   read_ndjson_auto read_ndjson_objects read_parquet parquet_scan parquet_metadata parquet_schema parquet_file_metadata
   parquet_kv_metadata parquet_full_metadata parquet_bloom_probe read_duckdb glob sniff_csv arrow_scan arrow_scan_dumb`,
);
refuse('runs SQL given as text, which the sandbox cannot check', 'query query_table json_execute_serialized_sql');
refuse(
  'changes the state of the engine; the service is read-only',
  `checkpoint force_checkpoint enable_logging disable_logging truncate_duckdb_logs enable_profiling disable_profiling
   enable_peg_parser disable_peg_parser check_peg_parser write_log`,
);
refuse(
  'describes the server rather than the data',
  `duckdb_databases duckdb_settings duckdb_temporary_files duckdb_extensions duckdb_secrets duckdb_secret_types which_secret
   duckdb_logs duckdb_logs_parsed duckdb_log_contexts duckdb_memory duckdb_external_file_cache duckdb_profiling_settings
   pragma_database_list`,
);

/** Settings whose value is a server path (or could hold one). */
const PATH_SETTING = /director|path|repositor|file|output|secret|home|log/i;

type Node = { [k: string]: unknown };

function refusal(name: string, why: string): Error {
  return invalidQuery(msg`${name} is refused: it ${why}. ${see('list_tables')} lists the tables caller SQL can read.`);
}

/** The constant string argument of a function call, if that is what it is. */
function constantArg(fn: Node): string | null {
  const children = fn.children as Node[] | undefined;
  const first = children?.[0];
  if (!first || first.class !== 'CONSTANT') return null;
  const value = first.value as { is_null?: boolean; value?: unknown } | undefined;
  return typeof value?.value === 'string' ? value.value : null;
}

/**
 * Throw invalid_query when the serialized statement (json_serialize_sql) calls
 * a refused function, reads a path-valued setting, or names a file as a table.
 */
export function checkSyntaxTree(tree: unknown): void {
  const stack: unknown[] = [tree];
  while (stack.length > 0) {
    const n = stack.pop();
    if (Array.isArray(n)) {
      for (const x of n) stack.push(x);
      continue;
    }
    if (n === null || typeof n !== 'object') continue;
    const node = n as Node;
    if (typeof node.function_name === 'string') {
      const name = node.function_name.toLowerCase();
      const why = REFUSED[name];
      if (why) throw refusal(name, why);
      if (name === 'current_setting' || name === 'getenv') {
        const arg = constantArg(node);
        if (name === 'getenv' || arg === null || PATH_SETTING.test(arg)) {
          throw invalidQuery(
            `${name}(${arg === null ? '…' : `'${arg}'`}) is refused: caller SQL may read settings that describe the engine (such as current_setting('threads')), not ones that hold server paths or values computed at run time.`,
          );
        }
      }
    }
    if (node.type === 'BASE_TABLE' && typeof node.table_name === 'string') {
      // The engine's built-in views over those functions (pragma_database_list, duckdb_databases) are refused as they are.
      const why = REFUSED[node.table_name.toLowerCase()];
      if (why) throw refusal(node.table_name, why);
    }
    if (node.type === 'BASE_TABLE' && typeof node.table_name === 'string' && /[./\\:~]/.test(node.table_name)) {
      throw invalidQuery(msg`FROM '${node.table_name}' names a file; caller SQL reads the served tables only (${see('list_tables')} lists them).`);
    }
    for (const v of Object.values(node)) if (v !== null && typeof v === 'object') stack.push(v);
  }
}

/** Replace server paths (longest first) in a message with a placeholder. */
export function redactPaths(text: string, paths: readonly string[]): string {
  let out = text;
  for (const p of [...new Set(paths)].filter((x) => x.length > 1).sort((a, b) => b.length - a.length)) out = out.split(p).join('<server path>');
  return out;
}
