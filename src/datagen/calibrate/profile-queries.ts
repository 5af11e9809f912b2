// Extraction of the release profile from a real release: public identity of
// every collection and analysis result, and the distributions the generator
// draws from. Every number of data/synth/release-profile.json comes from a
// query in this file (or series-stats.ts) over the release named in its
// provenance.

import type { DuckDBConnection } from '@duckdb/node-api';
import type {
  AnalysisResultPart,
  AnalysisResultProfile,
  CollectionProfile,
  LicenseProfile,
  ModalityProfile,
  ReleaseProfile,
  SourceProfile,
  StudySignature,
  Weighted,
} from '../profile.ts';
import { SOURCE_PRIORITY } from '../vocab.ts';
import { pidTemplate } from './pid-template.ts';
import { query } from './release-views.ts';
import { seriesStats, sig, topK } from './series-stats.ts';


const K = '\u0001';

async function collectionIdentity(conn: DuckDBConnection) {
  return query<{
    id: string; name: string; cancer_types: string | null; tumor_locations: string | null; subjects: number; species: string | null;
    supporting_data: string | null; program: string | null; status: string | null; updated: string | null; sources: SourceProfile[];
  }>(
    conn,
    `SELECT collection_id AS id, collection_name AS name, cancer_types, tumor_locations, subjects, species, supporting_data,
       program_id AS program, status, updated,
       list_transform(list_filter(sources, lambda s: s.source_type <> 'analysis_result'),
         lambda s: {'source_id': s.source_id, 'title': s.source_title, 'doi': s.source_doi, 'url': s.source_url,
                    'modalities': s.modalities, 'license': s.license.license_short_name}) AS sources
     FROM r_collections ORDER BY collection_id`,
  );
}

/** Per-collection counts, demographics, dates and history of the original (non-derived) series. */
async function collectionStats(conn: DuckDBConnection) {
  const counts = await query<{ c: string; patients: number; studies: number; series: number; revised: number; prior: number; spp: number; spp_max: number }>(
    conn,
    `WITH p AS (SELECT collection_id, count(*)::DOUBLE AS prior FROM r_prior GROUP BY 1),
      s AS (SELECT collection_id, PatientID, count(DISTINCT StudyInstanceUID) AS n FROM orig GROUP BY ALL)
     SELECT o.collection_id AS c, count(DISTINCT PatientID) AS patients, count(DISTINCT StudyInstanceUID) AS studies, count(*) AS series,
       avg((series_revised_idc_version > series_init_idc_version)::INTEGER) AS revised,
       coalesce(any_value(p.prior), 0) / count(*) AS prior,
       (SELECT avg(n) FROM s WHERE s.collection_id = o.collection_id) AS spp,
       (SELECT max(n) FROM s WHERE s.collection_id = o.collection_id) AS spp_max
     FROM orig o LEFT JOIN p USING (collection_id) GROUP BY o.collection_id`,
  );
  const sex = await topK<string | null>(conn, `(SELECT collection_id, PatientID, mode(PatientSex) AS sx FROM orig GROUP BY ALL)`, ['collection_id'], 'sx', 5);
  const ages = await query<{ c: string; nul: number; mean: number | null; sd: number | null }>(
    conn,
    `WITH st AS (SELECT collection_id, StudyInstanceUID, any_value(PatientAge) AS a FROM orig GROUP BY ALL),
      y AS (SELECT collection_id, a, CASE right(a, 1) WHEN 'Y' THEN 1.0 WHEN 'M' THEN 1 / 12 WHEN 'W' THEN 1 / 52 WHEN 'D' THEN 1 / 365 END
        * TRY_CAST(left(a, 3) AS INTEGER) AS yrs FROM st)
     SELECT collection_id AS c, avg((yrs IS NULL)::INTEGER) AS nul, avg(yrs) AS mean, stddev_pop(yrs) AS sd FROM y GROUP BY 1`,
  );
  const dates = await query<{ c: string; nul: number; lo: number | null; hi: number | null }>(
    conn,
    `WITH st AS (SELECT collection_id, StudyInstanceUID, TRY_CAST(left(any_value(StudyDate), 4) AS INTEGER) AS y FROM orig GROUP BY ALL)
     SELECT collection_id AS c, avg((y IS NULL)::INTEGER) AS nul, quantile_disc(y, 0.02) AS lo, quantile_disc(y, 0.98) AS hi FROM st GROUP BY 1`,
  );
  const stdesc = await topK<string | null>(conn, `(SELECT collection_id, StudyInstanceUID, any_value(StudyDescription) AS d FROM orig GROUP BY ALL)`, ['collection_id'], 'd', 8);
  const pids = await query<{ c: string; ids: string[] }>(conn, `SELECT collection_id AS c, list(DISTINCT PatientID) AS ids FROM orig GROUP BY 1`);
  return { counts, sex, ages, dates, stdesc, pids };
}

async function signatures(conn: DuckDBConnection): Promise<Map<string, StudySignature[]>> {
  const rows = await query<{ c: string; mods: string[]; studies: number; per: { m: string; mean: number; max: number }[] }>(
    conn,
    `WITH st AS (SELECT collection_id, StudyInstanceUID, Modality, count(*) AS n FROM orig GROUP BY ALL),
      sig AS (SELECT collection_id, StudyInstanceUID, list_sort(list(Modality)) AS mods FROM st GROUP BY ALL),
      j AS (SELECT s.collection_id, g.mods, s.Modality, s.n FROM st s JOIN sig g USING (collection_id, StudyInstanceUID)),
      per AS (SELECT collection_id, mods, Modality, avg(n) AS mean, max(n) AS max, count(*) AS studies FROM j GROUP BY ALL)
     SELECT collection_id AS c, mods, max(studies) AS studies, list({'m': Modality, 'mean': mean, 'max': max} ORDER BY Modality) AS per
     FROM per GROUP BY ALL ORDER BY c, studies DESC, mods`,
  );
  const out = new Map<string, StudySignature[]>();
  for (const r of rows) {
    const list = out.get(r.c) ?? [];
    list.push({
      mods: r.mods,
      share: Number(r.studies),
      per: Object.fromEntries(r.per.map((p) => [p.m, sig(p.mean)])),
      max: Object.fromEntries(r.per.map((p) => [p.m, Number(p.max)])),
    });
    out.set(r.c, list);
  }
  for (const list of out.values()) {
    const total = list.reduce((s, x) => s + x.share, 0);
    for (const x of list) x.share = sig(x.share / total);
  }
  return out;
}

async function modalityStats(conn: DuckDBConnection): Promise<Map<string, Record<string, ModalityProfile>>> {
  const keys = ['collection_id', 'Modality'];
  const stats = await seriesStats(conn, 'orig', keys);
  const out = new Map<string, Record<string, ModalityProfile>>();
  for (const [k, s] of stats) {
    const [c, m] = k.split(K) as [string, string];
    const rec = out.get(c) ?? {};
    rec[m] = s;
    out.set(c, rec);
  }
  return out;
}

async function analysisResults(conn: DuckDBConnection): Promise<AnalysisResultProfile[]> {
  const prio = `[${SOURCE_PRIORITY.map((m) => `'${m}'`).join(', ')}]`;
  // The image modality of each derived series: the most specific original
  // modality of its study, else the collection's most common image modality.
  await conn.run(`CREATE OR REPLACE TEMP TABLE ar_rows AS
    WITH sm AS (SELECT StudyInstanceUID, list_distinct(list(Modality)) AS mods FROM orig GROUP BY 1),
      cm AS (SELECT collection_id, mode(Modality) AS m FROM orig WHERE list_contains(${prio}, Modality) GROUP BY 1)
    SELECT d.*, coalesce(list_filter(${prio}, lambda x: list_contains(coalesce(sm.mods, []), x))[1], cm.m, 'CT') AS source
    FROM r_index d LEFT JOIN sm USING (StudyInstanceUID) LEFT JOIN cm USING (collection_id)
    WHERE d.analysis_result_id IS NOT NULL`);
  const keys = ['analysis_result_id', 'collection_id', 'Modality', 'source'];
  const stats = await seriesStats(conn, 'ar_rows', keys);
  const src = await query<{ c: string; m: string; n: number }>(conn, `SELECT collection_id AS c, Modality AS m, count(*) AS n FROM orig GROUP BY ALL`);
  const srcN = new Map(src.map((r) => [`${r.c}${K}${r.m}`, Number(r.n)]));
  const ids = await query<{ id: string; title: string; doi: string; url: string; license: string; updated: string | null; subjects: number }>(
    conn,
    `SELECT analysis_result_id AS id, analysis_result_title AS title, source_DOI AS doi, source_url AS url, license_short_name AS license,
       updated, subjects FROM r_ar ORDER BY 1`,
  );
  const parts = new Map<string, AnalysisResultPart[]>();
  for (const [k, s] of [...stats.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    const [ar, collection, modality, source] = k.split(K) as [string, string, string, string];
    const list = parts.get(ar) ?? [];
    list.push({ ...s, collection, modality, source, source_series: srcN.get(`${collection}${K}${source}`) ?? 0 });
    parts.set(ar, list);
  }
  return ids.map((a) => ({ ...a, subjects: Number(a.subjects), parts: parts.get(a.id) ?? [] }));
}

async function licenses(conn: DuckDBConnection): Promise<LicenseProfile[]> {
  return query<LicenseProfile>(
    conn,
    `WITH l AS (
       SELECT s.license.license_short_name AS short, s.license.license_long_name AS long, s.license.license_url AS url
       FROM (SELECT unnest(sources) AS s FROM r_collections)
       UNION ALL SELECT license_short_name, license_long_name, license_url FROM r_ar)
     SELECT short, mode(long) AS long, mode(url) AS url FROM l WHERE short IS NOT NULL GROUP BY 1 ORDER BY 1`,
  );
}

/** Extract the release profile from the r_* views (see release-views.ts). */
export async function extractProfile(conn: DuckDBConnection, provenance: ReleaseProfile['provenance'], indexVersion: string): Promise<ReleaseProfile> {
  await conn.run(`CREATE OR REPLACE TEMP VIEW orig AS SELECT * FROM r_index WHERE analysis_result_id IS NULL`);
  const ident = await collectionIdentity(conn);
  const cs = await collectionStats(conn);
  const sigs = await signatures(conn);
  const mods = await modalityStats(conn);
  const byC = <T extends { c: string }>(rows: T[]) => new Map(rows.map((r) => [r.c, r]));
  const counts = byC(cs.counts);
  const ages = byC(cs.ages);
  const dates = byC(cs.dates);
  const pids = byC(cs.pids);
  const collections: CollectionProfile[] = ident.map((c) => {
    const n = counts.get(c.id);
    const a = ages.get(c.id);
    const d = dates.get(c.id);
    return {
      ...c,
      subjects: Number(c.subjects),
      patients: Number(n?.patients ?? 0),
      studies: Number(n?.studies ?? 0),
      series: Number(n?.series ?? 0),
      pid: pidTemplate(pids.get(c.id)?.ids ?? []),
      sex: (cs.sex.get(c.id) ?? []) as Weighted,
      age: { null: sig(a?.nul ?? 1), mean: sig(a?.mean ?? 0), sd: sig(a?.sd ?? 0) },
      dates: { null: sig(d?.nul ?? 1), years: [Number(d?.lo ?? 2000), Number(d?.hi ?? 2010)] },
      studies_per_patient: { mean: sig(n?.spp ?? 1), max: Number(n?.spp_max ?? 1) },
      study_descriptions: cs.stdesc.get(c.id) ?? [],
      revised: sig(n?.revised ?? 0),
      prior: sig(n?.prior ?? 0),
      signatures: sigs.get(c.id) ?? [],
      modalities: mods.get(c.id) ?? {},
    };
  });
  const versions = await query<{ v: number; t: string }>(conn, `SELECT idc_version AS v, version_timestamp::VARCHAR AS t FROM r_versions ORDER BY 1`);
  const totals = (
    await query<{ collections: number; patients: number; studies: number; series: number; instances: number; size_TB: number }>(
      conn,
      `SELECT count(DISTINCT collection_id) AS collections, count(DISTINCT PatientID) AS patients, count(DISTINCT StudyInstanceUID) AS studies,
         count(*) AS series, sum(instanceCount) AS instances, sum(series_size_MB) / 1e6 AS size_TB FROM r_index`,
    )
  )[0]!;
  const ars = await analysisResults(conn);
  return {
    format: 'idqs-release-profile/1',
    provenance,
    release: { idc_version: Math.max(...versions.map((v) => Number(v.v))), index_version: indexVersion, versions: versions.map((v) => [Number(v.v), v.t]) },
    totals: {
      collections: Number(totals.collections), analysis_results: ars.length, patients: Number(totals.patients), studies: Number(totals.studies),
      series: Number(totals.series), instances: Number(totals.instances), size_TB: sig(totals.size_TB),
    },
    licenses: await licenses(conn),
    collections,
    analysis_results: ars,
  };
}
