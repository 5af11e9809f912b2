// The engine options every database handle of the service opens with: read
// only, no external access, no extension loading, its memory, threads and
// spill caps, and the configuration locked. The curated engine and every
// caller-SQL worker use the same set, so they cannot drift apart.

/**
 * Options applied when a database is opened; lock_configuration freezes them.
 * Paths (temp_directory and the like) must come before these: they cannot be
 * set once external access is disabled, so the curated engine spills to
 * DuckDB's default <database>.tmp folder and a worker puts its own first.
 */
export function hardenedConfig(b: { memoryLimit: string; threads: number; tempDirSize: string }): Record<string, string> {
  return {
    access_mode: 'READ_ONLY',
    enable_external_access: 'false',
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
    allow_community_extensions: 'false',
    allow_unsigned_extensions: 'false',
    memory_limit: b.memoryLimit,
    threads: String(b.threads),
    max_temp_directory_size: b.tempDirSize,
    lock_configuration: 'true',
  };
}
