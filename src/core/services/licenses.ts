// License breakdown of a cohort: series and size per license short name, with
// the long name and URL of that license where the curated metadata has them,
// and whether commercial use is allowed.

import { memo, type AppContext } from '../context.ts';
import { compileFilter, type FilterObject } from '../filters/v3.ts';
import type { Param } from '../engine/engine.ts';
import { commercialUseAllowed } from '../rules/commercial-use.ts';
import { round, tbFromMb, toNumber } from './numbers.ts';
import type { FiltersApplied } from './cohort.ts';
import { answer } from '../planner/plan.ts';
import { licenseGroupsBySql } from '../planner/sql-evaluator.ts';
import type { LicenseGroup } from '../planner/questions.ts';
import { asOfCohort, type AsOfNames } from './as-of.ts';

export interface LicenseItem {
  license_short_name: string | null;
  license_long_name?: string;
  license_url?: string;
  series: number;
  size_TB: number;
  size_MB: number;
  commercial_use_allowed: boolean | null;
}

export interface LicensesResult {
  licenses: LicenseItem[];
  commercial_use_allowed_for_all: boolean;
  filters_applied: FiltersApplied;
  warnings: string[];
  as_of?: string;
  computed_on?: string;
}

interface LicenseDetail {
  long_name: string | null;
  url: string | null;
}

/** Long name and URL per short name, from collections' sources and analysis results (most frequent spelling wins). */
function licenseDetails(ctx: AppContext): Promise<Map<string, LicenseDetail>> {
  return memo(ctx, 'license-details', async () => {
    const has = (table: string, cols: string[]) => {
      const have = new Set((ctx.catalog.columns.get(table) ?? []).map((c) => c.name));
      return ctx.catalog.tables.includes(table) && cols.every((c) => have.has(c));
    };
    const parts: string[] = [];
    if (has('collections_index', ['sources'])) {
      parts.push(
        `SELECT s.license.license_short_name AS short, s.license.license_long_name AS long, s.license.license_url AS url
         FROM (SELECT unnest(sources) AS s FROM collections_index)`,
      );
    }
    if (has('analysis_results_index', ['license_short_name', 'license_long_name', 'license_url'])) {
      parts.push(`SELECT license_short_name, license_long_name, license_url FROM analysis_results_index`);
    }
    const out = new Map<string, LicenseDetail>();
    if (parts.length === 0) return out;
    let rows;
    try {
      rows = await ctx.engine.rows(
        `SELECT short, long, url, count(*) AS n FROM (${parts.join(' UNION ALL ')}) WHERE short IS NOT NULL
         GROUP BY ALL ORDER BY short, n DESC, long NULLS LAST, url NULLS LAST`,
      );
    } catch {
      // A release whose sources struct lacks the license fields: breakdown without long names.
      return out;
    }
    for (const r of rows) {
      const short = String(r.short);
      const prev = out.get(short);
      const long = r.long === null ? null : String(r.long);
      const url = r.url === null ? null : String(r.url);
      if (!prev) out.set(short, { long_name: long, url });
      else {
        prev.long_name ??= long;
        prev.url ??= url;
      }
    }
    return out;
  });
}

/** Series and size per license short name over rows of `from` (index by default) matching `where`; most series first, ties by name. */
export async function licenseBreakdown(ctx: AppContext, where: string, params: Param[], from = '"index"'): Promise<LicenseItem[]> {
  return itemsOf(await licenseGroupsBySql(ctx, where, params, from));
}

const itemsOf = (groups: LicenseGroup[]) => groups.map((g) => licenseItem(g.license, g.series, g.sizeMb));

function licenseItem(short: string | null, series: number, mb: number): LicenseItem {
  return { license_short_name: short, series, size_TB: tbFromMb(mb), size_MB: round(mb, 3), commercial_use_allowed: commercialUseAllowed(short) };
}

/** The breakdown of the versions a past release served: a series' license is that of its row in the served release. */
async function asOfBreakdown(ctx: AppContext, filter: FilterObject, asOf: string | number) {
  const c = await asOfCohort(ctx, filter, asOf);
  const [items, gone] = await Promise.all([
    licenseBreakdown(ctx, 'TRUE', c.params, c.from),
    ctx.engine.one(`SELECT count(*) FILTER (WHERE NOT in_served) AS n FROM ${c.from}`, c.params),
  ]);
  const warnings = [...c.warnings];
  const n = toNumber(gone?.n);
  if (n > 0) warnings.push(`${n} series of ${c.as_of} are not in ${c.computed_on}, which alone records licenses: they are counted under license_short_name null.`);
  if (c.empty) warnings.push(`No filter: this is the breakdown of the whole ${c.as_of} release.`);
  const names: AsOfNames = { as_of: c.as_of, computed_on: c.computed_on };
  return { items, filters_applied: c.filters_applied as FiltersApplied, warnings, names };
}

export async function cohortLicenses(ctx: AppContext, filter: FilterObject, asOf?: string | number): Promise<LicensesResult> {
  const compiled = asOf === undefined ? await compileFilter(ctx, filter) : await asOfBreakdown(ctx, filter, asOf);
  const [items, details] = await Promise.all([
    'items' in compiled ? compiled.items : answer('licenses', ctx, compiled).then(itemsOf),
    licenseDetails(ctx),
  ]);
  const licenses = items.map((l): LicenseItem => {
    const d = l.license_short_name === null ? undefined : details.get(l.license_short_name);
    return {
      license_short_name: l.license_short_name,
      ...(d?.long_name ? { license_long_name: d.long_name } : {}),
      ...(d?.url ? { license_url: d.url } : {}),
      series: l.series,
      size_TB: l.size_TB,
      size_MB: l.size_MB,
      commercial_use_allowed: l.commercial_use_allowed,
    };
  });
  return {
    licenses,
    commercial_use_allowed_for_all: licenses.length > 0 && licenses.every((l) => l.commercial_use_allowed === true),
    filters_applied: compiled.filters_applied,
    warnings: compiled.warnings,
    ...('names' in compiled ? compiled.names : {}),
  };
}
