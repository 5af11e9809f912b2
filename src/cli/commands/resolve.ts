// `idqs resolve FILE|ID...`: what a saved manifest or list of identifiers is
// in a release (the service of POST /v3/series/resolve, run locally on a
// database): one row per line, then the totals per class on stderr.

import { Command, Option } from 'commander';
import { existsSync, readFileSync, statSync } from 'node:fs';
import type { Config } from '../../config.ts';
import type { ResolveResult } from '../../core/services/resolve.ts';

export interface ResolveDeps {
  loadConfig: () => Config;
  /** The database of --db, --release or the default dataset. */
  database: (cfg: Config, o: { db?: string; release?: string; source?: string }) => Promise<string>;
}

/** What a line became, in a few words: the version now, or the last release that had it. */
function detail(l: ResolveResult['lines'][number]): string {
  if (l.class === 'current' && l.kind === 'StudyInstanceUID') return `${l.series_current} series now${l.series_removed ? `, ${l.series_removed} removed` : ''}`;
  if (l.class === 'current') return `now ${l.current?.crdc_series_uuid}`;
  if (l.class === 'revised') {
    const named = l.named ? `named v${l.named.min_idc_version}-v${l.named.max_idc_version}, ` : '';
    return `${named}now ${l.current?.crdc_series_uuid} (since v${l.current?.since_idc_version})`;
  }
  if (l.class === 'removed') return `last in v${l.last_idc_version}${l.versions?.length ? `: ${l.versions[l.versions.length - 1]!.series_aws_url}` : ''}`;
  return l.message ?? '';
}

export function registerResolve(program: Command, deps: ResolveDeps): void {
  program
    .command('resolve')
    .description('What a saved manifest or list of UIDs is in a release: each line current, revised, removed, unknown, a header or invalid (as POST /v3/series/resolve)')
    .argument('<items...>', 'manifest files (s5cmd cp lines, s3:// or gs:// URLs, UIDs, one per line), or identifiers: SeriesInstanceUID, StudyInstanceUID, crdc_series_uuid, URL')
    .option('--db <path>', 'database file (default: the default dataset)')
    .option('--release <version>', 'real release to resolve against, e.g. 25.0.5 (fetched and built when not in the cache)')
    .option('--source <source>', 'where to fetch --release: gcs (default), github or pypi')
    .addOption(new Option('--format <f>', 'output format').choices(['table', 'json', 'tsv']).default('table'))
    .addHelpText(
      'after',
      `
Examples:
  idqs resolve saved_manifest.s5cmd --release 25.0.5
  idqs resolve 1.3.6.1.4.1.14519.5.2.1.7009.2403.255637500032299473330002534202 --format json

Exit status: 0 when every line is current, revised or removed (or a header); 1 when some are unknown or invalid; 2 for a usage error.`,
    )
    .action(async (items: string[], o: { db?: string; release?: string; source?: string; format: string }) => {
      const cfg = deps.loadConfig();
      const files = items.filter((i) => i.length < 4096 && existsSync(i) && statSync(i).isFile());
      if (files.length > 0 && files.length !== items.length) {
        throw new Error(`give either manifest files or identifiers, not both (files: ${files.join(', ')})`);
      }
      const inputs = files.length > 0 ? files.map((f) => ({ name: f, input: { text: readFileSync(f, 'utf8') } })) : [{ name: 'arguments', input: { ids: items } }];
      const { createContext } = await import('../../core/context.ts');
      const { resolveSaved, resolveText } = await import('../../core/services/resolve.ts');
      const { resolveTsvBlocks } = await import('../../core/services/resolve-output.ts');
      const ctx = await createContext(cfg, await deps.database(cfg, o));
      let unresolved = 0;
      try {
        for (const { name, input } of inputs) {
          // The table of POST /v3/series/resolve with "format": "tsv", written as the engine gives it; other forms read the answer as objects.
          const r = o.format === 'tsv' ? await resolveText(ctx, input, 'tsv') : await resolveSaved(ctx, input);
          unresolved += r.totals.unknown + r.totals.invalid;
          if ('format' in r) {
            if (files.length > 1) process.stdout.write(`# ${name}\n`);
            for (const block of resolveTsvBlocks(r)) process.stdout.write(block);
          } else if (o.format === 'json') process.stdout.write(JSON.stringify(files.length > 0 ? { file: name, ...r } : r) + '\n');
          else {
            const rows = r.lines.map((l) => [String(l.line), l.class, l.kind ?? '', l.id ?? '', l.SeriesInstanceUID ?? '', detail(l)]);
            const w = [4, 8, 17, 36, 0, 0].map((min, i) => Math.max(min, ...rows.map((x) => x[i]!.length)));
            const pad = (x: string[]) => x.map((v, i) => (i === x.length - 1 ? v : v.padEnd(w[i]!))).join('  ');
            if (files.length > 1) process.stdout.write(`${name}:\n`);
            process.stdout.write([pad(['line', 'class', 'kind', 'id', 'SeriesInstanceUID', 'detail']), ...rows.map(pad)].join('\n') + '\n');
          }
          const t = r.totals;
          process.stderr.write(
            `${name}: ${t.lines} lines against ${r.idc_version}: ${t.current} current, ${t.revised} revised, ${t.removed} removed, ${t.unknown} unknown, ${t.invalid} invalid` +
              ` (${t.header} header, ${t.comments} comments, ${t.blank} blank)\n`,
          );
        }
      } finally {
        ctx.engine.close();
      }
      if (unresolved > 0) process.exitCode = 1;
    });
}
