// The synthetic dataset generator. Dimension tables (collections, templates,
// analysis results) come from the plan; patients, studies, series and
// instances are generated in SQL from range() with hash-based randomness, so
// the same seed and scale give the same rows on every run, fast.

import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, readdir, rm, stat, writeFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { EQUIPMENT, LICENSES, SERIES_DESCRIPTIONS, SOP_CLASS, TEMPLATES, TRANSFER_SYNTAX, releaseDate } from './catalog.ts';
import { makePlan, type Plan } from './plan.ts';
import { lit, valuesTable } from '../core/data/sql.ts';
import { TABLES } from '../core/registry/tables.ts';
import { generateClinical } from './generate-clinical.ts';
import { generateV2 } from './generate-v2.ts';
import { buildBibliography } from './bibliography.ts';
import { DEFAULT_STORES, type DatasetManifest } from '../core/data/manifest.ts';

export interface GenerateOptions {
  scale: number;
  seed: number;
  out: string;
  /** Also write the instance-level /v2 table (one row per instance). */
  instances?: boolean;
  threads?: number;
  memoryLimit?: string;
  onProgress?: (step: string, done: number, total: number) => void;
}

export interface GenContext {
  conn: DuckDBConnection;
  plan: Plan;
  seed: number;
  run: (sql: string) => Promise<void>;
}

/** Macros shared by every generation step. `u` is a uniform draw in [0, 1) keyed by (key, salt). */
function macros(seed: number): string[] {
  const S = String(seed);
  return [
    // hash() of several arguments combines them linearly, so draws with different
    // salts for one key would be correlated; hashing the result again mixes them.
    `CREATE MACRO u(k, salt) AS ((hash(hash(${S}, k, salt)) >> 11)::DOUBLE / 9007199254740992.0)`,
    `CREATE MACRO u2(k, j, salt) AS ((hash(hash(${S}, k, j, salt)) >> 11)::DOUBLE / 9007199254740992.0)`,
    `CREATE MACRO ui(k, salt, lo, hi) AS (lo + floor(u(k, salt) * (hi - lo + 1))::BIGINT)`,
    `CREATE MACRO gauss(k, salt) AS (sqrt(-2 * ln(1 - u(k, salt || ':a'))) * cos(2 * pi() * u(k, salt || ':b')))`,
    `CREATE MACRO pick(lst, k, salt) AS (lst[1 + floor(u(k, salt) * len(lst))::INTEGER])`,
    `CREATE MACRO digits(k, salt, n) AS (right(lpad((hash(hash(${S}, k, salt)) % 1000000000000000000)::VARCHAR, 18, '0'), n))`,
    `CREATE MACRO hex16(k, salt, part) AS printf('%016x', hash(hash(${S}, k, salt, part)))`,
    `CREATE MACRO uuid4(k, salt) AS (hex16(k, salt, 1)[1:8] || '-' || hex16(k, salt, 1)[9:12] || '-4' || hex16(k, salt, 1)[14:16] || '-' ||
       ['8', '9', 'a', 'b'][1 + (hash(hash(${S}, k, salt, 3)) % 4)::INTEGER] || hex16(k, salt, 2)[2:4] || '-' || hex16(k, salt, 2)[5:16])`,
    // DICOM UIDs: digits and dots, at most 64 characters, no component with a
    // leading zero; `typ` and the zero-padded index make them unique.
    `CREATE MACRO uid(style, c4a, c4b, typ, idx, k) AS CASE style
       WHEN 'nlst' THEN '1.2.840.113654.2.55.' || typ || lpad(idx::VARCHAR, 10, '0') || digits(k, 'uid1', 18) || digits(k, 'uid2', 10)
       WHEN 'pixelmed' THEN '1.3.6.1.4.1.5962.99.1.' || typ || lpad(idx::VARCHAR, 10, '0') || '.' || (1000000000000 + hash(hash(${S}, k, 'uid3')) % 9000000000000)::VARCHAR || '.2.0'
       WHEN 'highdicom' THEN '1.2.826.0.1.3680043.10.511.3.' || typ || lpad(idx::VARCHAR, 10, '0') || digits(k, 'uid1', 18) || digits(k, 'uid2', 6)
       ELSE '1.3.6.1.4.1.14519.5.2.1.' || c4a || '.' || c4b || '.' || typ || lpad(idx::VARCHAR, 10, '0') || digits(k, 'uid1', 18) || digits(k, 'uid2', 1)
     END`,
    `CREATE MACRO inst_size(k, j, b, pyramid) AS CASE WHEN pyramid
       THEN greatest(20000, b * pow(0.25, j) * (0.9 + 0.2 * u2(k, j, 'isz')))::BIGINT
       ELSE (b * (0.98 + 0.04 * u2(k, j, 'isz')))::BIGINT END`,
    `CREATE MACRO clampi(x, lo, hi) AS least(hi, greatest(lo, x))`,
    `CREATE MACRO ts_name(uids) AS array_to_string(list_sort(list_transform(string_split(uids, ','), lambda x: map_extract_value(${tsMap()}, x))), ',')`,
  ];
}

function tsMap(): string {
  return `MAP {${Object.entries(TRANSFER_SYNTAX)
    .map(([k, v]) => `${lit(k)}: ${lit(v)}`)
    .join(', ')}}`;
}

/** Per-modality distributions: instances per series, bytes per instance, equipment, SOP class. */
const MOD_PARAMS: Record<string, { n: [number, number, number, number]; b: [number, number]; pyramid?: boolean; image: boolean }> = {
  CT: { n: [110, 0.6, 20, 1200], b: [525_000, 0.03], image: true },
  MR: { n: [60, 0.8, 10, 3000], b: [250_000, 0.6], image: true },
  PT: { n: [250, 0.4, 80, 800], b: [120_000, 0.4], image: true },
  SM: { n: [8, 0.35, 4, 16], b: [260_000_000, 1.0], pyramid: true, image: true },
  SEG: { n: [1, 0, 1, 1], b: [1_500_000, 1.5], image: false },
  SR: { n: [1, 0, 1, 1], b: [40_000, 1.0], image: false },
  ANN: { n: [1, 0, 1, 1], b: [15_000_000, 1.5], image: false },
  RTSTRUCT: { n: [1, 0, 1, 1], b: [1_000_000, 1.0], image: false },
  RTPLAN: { n: [1, 0, 1, 1], b: [60_000, 0.5], image: false },
  RTDOSE: { n: [1, 0, 1, 1], b: [4_000_000, 0.8], image: true },
  MG: { n: [1, 0.3, 1, 3], b: [25_000_000, 0.5], image: true },
  DX: { n: [1, 0.3, 1, 2], b: [12_000_000, 0.4], image: true },
  CR: { n: [1, 0.3, 1, 2], b: [10_000_000, 0.4], image: true },
  US: { n: [8, 1.0, 1, 60], b: [1_000_000, 0.6], image: true },
  NM: { n: [2, 0.5, 1, 4], b: [2_000_000, 0.5], image: true },
  XA: { n: [25, 0.6, 5, 120], b: [1_000_000, 0.4], image: true },
};

function pidParts(pattern: string): { kind: string; prefix: string; width: number; suffix: string } {
  if (pattern === '{tcga}') return { kind: 'tcga', prefix: '', width: 0, suffix: '' };
  if (pattern.includes('{cptac}')) return { kind: 'cptac', prefix: '', width: 0, suffix: '' };
  if (pattern === '{nlst}') return { kind: 'nlst', prefix: '', width: 0, suffix: '' };
  const m = /^(.*)\{n(\d+)\}(.*)$/.exec(pattern);
  if (!m) throw new Error(`bad PatientID pattern ${pattern}`);
  return { kind: 'n', prefix: m[1]!, width: Number(m[2]), suffix: m[3]! };
}

async function loadDimensions(ctx: GenContext): Promise<void> {
  const { plan, run } = ctx;
  const tplNames = Object.keys(TEMPLATES);
  await run(
    valuesTable(
      'coll',
      [
        ['idx', 'INTEGER'], ['collection_id', 'VARCHAR'], ['collection_name', 'VARCHAR'], ['cancer', 'VARCHAR'], ['location', 'VARCHAR'],
        ['species', 'VARCHAR'], ['program', 'VARCHAR'], ['doi', 'VARCHAR'], ['license', 'VARCHAR'], ['sm_license', 'VARCHAR'],
        ['head', 'BOOLEAN'], ['n_patients', 'BIGINT'], ['pid_kind', 'VARCHAR'], ['pid_prefix', 'VARCHAR'], ['pid_width', 'INTEGER'],
        ['pid_suffix', 'VARCHAR'], ['pid_offset', 'BIGINT'], ['uid_style', 'VARCHAR'], ['c4a', 'VARCHAR'], ['c4b', 'VARCHAR'],
        ['fixed_sex', 'VARCHAR'], ['year_lo', 'INTEGER'], ['year_hi', 'INTEGER'], ['since', 'INTEGER'], ['st_max', 'INTEGER'],
        ['template_pick', 'VARCHAR[]'],
      ],
      plan.collections.map((c) => {
        const p = pidParts(c.pid);
        const total = Object.values(c.profile).reduce((a, b) => a + b, 0);
        // 100 slots filled in proportion to the template weights; a study picks one slot.
        const slots: string[] = [];
        for (const [t, w] of Object.entries(c.profile)) {
          if (!tplNames.includes(t)) throw new Error(`unknown template ${t}`);
          const n = Math.max(1, Math.round((100 * w) / total));
          for (let i = 0; i < n; i++) slots.push(t);
        }
        const stMax = c.id === 'nlst' ? 3 : (c.profile.sm ?? 0) / total > 0.5 ? 2 : 4;
        return [
          c.idx, c.id, c.name, c.cancer, c.location, c.species, c.program, c.doi, c.license, c.smLicense,
          c.head ?? false, c.nPatients, p.kind, p.prefix, p.width, p.suffix, c.pidOffset, c.uid ?? 'tcia',
          String(c.uidGroup[0]), String(c.uidGroup[1]), c.sex ?? null, c.years![0], c.years![1], c.since!, stMax, slots,
        ];
      }),
    ),
  );
  await run(
    valuesTable(
      'tpl',
      [['template', 'VARCHAR'], ['body_parts', 'VARCHAR[]'], ['descriptions', 'VARCHAR[]']],
      Object.entries(TEMPLATES).map(([t, v]) => [t, v.bodyParts, v.descriptions]),
    ),
  );
  await run(
    valuesTable(
      'tpl_items',
      [['template', 'VARCHAR'], ['item', 'INTEGER'], ['modality', 'VARCHAR'], ['nmin', 'INTEGER'], ['nmax', 'INTEGER']],
      Object.entries(TEMPLATES).flatMap(([t, v]) => v.items.map((it, i) => [t, i, it.modality, it.min, it.max])),
    ),
  );
  await run(
    valuesTable(
      'mod_params',
      [
        ['modality', 'VARCHAR'], ['n_med', 'DOUBLE'], ['n_sigma', 'DOUBLE'], ['n_min', 'INTEGER'], ['n_max', 'INTEGER'],
        ['b_med', 'DOUBLE'], ['b_sigma', 'DOUBLE'], ['pyramid', 'BOOLEAN'], ['image', 'BOOLEAN'], ['manufacturers', 'VARCHAR[]'],
        ['models', 'VARCHAR[]'], ['sop_uid', 'VARCHAR'], ['sop_name', 'VARCHAR'], ['descriptions', 'VARCHAR[]'],
      ],
      Object.entries(MOD_PARAMS).map(([m, p]) => {
        const eq = (EQUIPMENT[m] ?? []).flatMap(([man, models]) => models.map((mo) => [man, mo] as const));
        return [
          m, p.n[0], p.n[1], p.n[2], p.n[3], p.b[0], p.b[1], p.pyramid ?? false, p.image,
          eq.map((e) => e[0]), eq.map((e) => e[1]), SOP_CLASS[m]![0], SOP_CLASS[m]![1], SERIES_DESCRIPTIONS[m] ?? [m],
        ];
      }),
    ),
  );
  await run(
    valuesTable(
      'ar',
      [
        ['ar_idx', 'INTEGER'], ['analysis_result_id', 'VARCHAR'], ['title', 'VARCHAR'], ['doi', 'VARCHAR'], ['src_modality', 'VARCHAR'],
        ['derived', 'VARCHAR[]'], ['coverage', 'DOUBLE'], ['license', 'VARCHAR'], ['algorithm', 'VARCHAR'], ['algorithm_type', 'VARCHAR'],
        ['properties', 'VARCHAR[]'], ['category', 'VARCHAR'], ['regions', 'VARCHAR[]'], ['since', 'INTEGER'], ['collections', 'VARCHAR[]'],
      ],
      plan.analysisResults.map((a) => [
        a.idx, a.id, a.title, a.doi, a.sourceModality, a.derived, a.coverage, a.license, a.algorithm, a.algorithmType,
        a.properties, a.category, a.regions, a.since, a.collections,
      ]),
    ),
  );
  await run(`CREATE TABLE ar_src AS SELECT ar.*, unnest(collections) AS collection_id FROM ar`);
}

async function generateSeries(ctx: GenContext): Promise<void> {
  const { run } = ctx;
  await run(`CREATE TABLE g_patient AS
    WITH p AS (SELECT idx, unnest(range(n_patients)) AS p FROM coll)
    SELECT c.*, p.p, c.idx::BIGINT * 10000000 + p.p AS pkey,
      CASE c.pid_kind
        WHEN 'tcga' THEN 'TCGA-' || lpad(((c.idx * 3 + p.p % 3) % 100)::VARCHAR, 2, '0') || '-' || lpad((p.p // 3 + 1)::VARCHAR, 4, '0')
        WHEN 'cptac' THEN ['C3L-', 'C3N-'][1 + (p.p % 2)::INTEGER] || lpad((c.pid_offset + p.p + 1)::VARCHAR, 5, '0')
        WHEN 'nlst' THEN (100000 + c.pid_offset + p.p + 1)::VARCHAR
        ELSE c.pid_prefix || lpad((c.pid_offset + p.p + 1)::VARCHAR, c.pid_width, '0') || c.pid_suffix
      END AS PatientID,
      CASE WHEN c.fixed_sex IS NOT NULL THEN c.fixed_sex
           WHEN u(c.idx::BIGINT * 10000000 + p.p, 'sexn') < 0.02 THEN NULL
           WHEN u(c.idx::BIGINT * 10000000 + p.p, 'sexn') < 0.025 THEN 'O'
           WHEN u(c.idx::BIGINT * 10000000 + p.p, 'sex') < 0.5 THEN 'M' ELSE 'F' END AS sex,
      clampi(round(62 + 11 * gauss(c.idx::BIGINT * 10000000 + p.p, 'age')), 18, 89)::INTEGER AS age_base,
      make_date(c.year_lo + ui(c.idx::BIGINT * 10000000 + p.p, 'yr', 0, c.year_hi - c.year_lo)::INTEGER, 1, 1)
        + ui(c.idx::BIGINT * 10000000 + p.p, 'doy', 0, 364)::INTEGER AS base_date
    FROM p JOIN coll c USING (idx)`);

  await run(`CREATE TABLE g_study AS
    WITH s AS (SELECT pkey, unnest(range(ui(pkey, 'nst', 1, st_max))) AS s FROM g_patient)
    SELECT gp.*, s.s, gp.pkey * 16 + s.s AS skey,
      gp.template_pick[1 + floor(u(gp.pkey * 16 + s.s, 'tpl') * len(gp.template_pick))::INTEGER] AS template,
      gp.base_date + (s.s * 365 + ui(gp.pkey * 16 + s.s, 'sday', 0, 60))::INTEGER AS study_date,
      row_number() OVER (ORDER BY gp.pkey * 16 + s.s) AS study_idx
    FROM s JOIN g_patient gp USING (pkey)`);

  // Image series from the study templates; keys are even.
  await run(`CREATE TABLE g_ser AS
    WITH x AS (
      SELECT st.skey, st.collection_id, ti.item, ti.modality, unnest(range(ui(st.skey, 'n' || ti.item, ti.nmin, ti.nmax))) AS j
      FROM g_study st JOIN tpl_items ti ON ti.template = st.template)
    SELECT skey, collection_id, item, modality, j, ((skey * 8 + item) * 64 + j) * 2 AS key, NULL::INTEGER AS ar_idx, NULL::BIGINT AS src_key, 0 AS d
    FROM x`);
  // Derived series of analysis results, in the study of their source; keys are odd.
  await run(`INSERT INTO g_ser
    SELECT s.skey, s.collection_id, s.item, unnest(a.derived) AS modality, s.j,
      (((s.key // 2) * 64 + a.ar_idx) * 4 + generate_subscripts(a.derived, 1)) * 2 + 1 AS key,
      a.ar_idx, s.key AS src_key, generate_subscripts(a.derived, 1) AS d
    FROM g_ser s JOIN ar_src a ON a.collection_id = s.collection_id AND a.src_modality = s.modality
    WHERE s.ar_idx IS NULL AND u(s.key, 'ar' || a.ar_idx) < a.coverage`);

  await run(`CREATE TABLE g_series AS
    SELECT s.*, st.pkey, st.template, st.s AS study_no,
      CASE WHEN s.ar_idx IS NOT NULL THEN 'highdicom' WHEN s.modality = 'SM' THEN 'pixelmed' ELSE st.uid_style END AS uid_style,
      st.c4a, st.c4b, st.uid_style AS study_uid_style,
      CASE WHEN s.modality = 'CT' AND s.ar_idx IS NULL AND u(s.key, 'loc') < 0.08 THEN ui(s.key, 'nloc', 1, 3)
           ELSE clampi(round(mp.n_med * exp(mp.n_sigma * gauss(s.key, 'ninst'))), mp.n_min, mp.n_max)::BIGINT END AS n,
      (mp.b_med * exp(mp.b_sigma * gauss(s.key, 'bytes')) * CASE WHEN st.template = 'dbt' THEN 3 ELSE 1 END) AS b,
      mp.pyramid,
      row_number() OVER (ORDER BY s.key) AS idx
    FROM g_ser s JOIN g_study st USING (skey) JOIN mod_params mp ON mp.modality = s.modality`);
  await run(`CREATE TABLE g_series2 AS
    SELECT *, coalesce(sum(n) OVER (ORDER BY idx ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS inst_offset
    FROM g_series`);
  await run(`CREATE TABLE g_size AS
    SELECT key, sum(inst_size(key, j, b, pyramid)) AS bytes
    FROM (SELECT key, b, pyramid, unnest(range(n)) AS j FROM g_series2) GROUP BY key`);
}

async function buildIndex(ctx: GenContext): Promise<void> {
  const { run, plan } = ctx;
  const V = plan.currentVersion;
  // All columns of the series table, plus helper columns (prefixed g_) used by later steps.
  await run(`CREATE TABLE t_series AS
    SELECT
      c.collection_id,
      a.analysis_result_id,
      st.PatientID,
      uid(s.uid_style, s.c4a, s.c4b, 2, s.idx, s.key) AS SeriesInstanceUID,
      uid(s.study_uid_style, s.c4a, s.c4b, 1, st.study_idx, st.skey) AS StudyInstanceUID,
      coalesce(a.doi, c.doi) AS source_DOI,
      CASE WHEN c.species <> 'Human' OR u(st.skey, 'agen') < 0.12 THEN NULL ELSE printf('%03dY', st.age_base + st.s) END AS PatientAge,
      st.sex AS PatientSex,
      CASE WHEN s.modality = 'SM' AND u(st.skey, 'smdate') < 0.4 THEN NULL ELSE strftime(st.study_date, '%Y-%m-%d') END AS StudyDate,
      CASE WHEN u(st.skey, 'sdn') < 0.1 THEN NULL ELSE pick(tp.descriptions, st.skey, 'sdesc') END AS StudyDescription,
      CASE WHEN len(tp.body_parts) = 0 OR s.modality IN ('SM', 'ANN') OR u(st.skey, 'bpn') < 0.07 THEN NULL
           ELSE pick(tp.body_parts, st.skey, 'bp') END AS BodyPartExamined,
      s.modality AS Modality,
      CASE WHEN st.template = 'dbt' AND s.modality = 'MG' THEN ${lit(SOP_CLASS.DBT![0])} ELSE mp.sop_uid END AS SOPClassUID,
      CASE WHEN st.template = 'dbt' AND s.modality = 'MG' THEN ${lit(SOP_CLASS.DBT![1])} ELSE mp.sop_name END AS sop_class_name,
      CASE WHEN s.modality = 'SM' THEN pick(['1.2.840.10008.1.2.4.50', '1.2.840.10008.1.2.4.50', '1.2.840.10008.1.2.4.91', '1.2.840.10008.1.2.1,1.2.840.10008.1.2.4.50'], s.key, 'ts')
           WHEN NOT mp.image OR s.modality = 'RTDOSE' THEN '1.2.840.10008.1.2.1'
           WHEN s.modality = 'MG' THEN pick(['1.2.840.10008.1.2.1', '1.2.840.10008.1.2.4.90'], s.key, 'ts')
           ELSE pick(['1.2.840.10008.1.2.1', '1.2.840.10008.1.2.1', '1.2.840.10008.1.2.1', '1.2.840.10008.1.2', '1.2.840.10008.1.2.4.70'], s.key, 'ts') END AS TransferSyntaxUID,
      NULL::VARCHAR AS transfer_syntax_name,
      CASE WHEN s.modality IN ('CT', 'MR', 'PT', 'NM', 'MG', 'DX', 'XA', 'RTDOSE') THEN 'MONOCHROME2'
           WHEN s.modality = 'CR' THEN 'MONOCHROME1'
           WHEN s.modality = 'SM' THEN pick(['YBR_FULL_422', 'YBR_FULL_422', 'RGB', 'MONOCHROME2,YBR_FULL_422'], s.key, 'pi')
           WHEN s.modality = 'US' THEN pick(['RGB', 'YBR_FULL_422'], s.key, 'pi') ELSE NULL END AS PhotometricInterpretation,
      CASE WHEN NOT mp.image THEN NULL WHEN s.modality = 'CT' AND u(s.key, 'pr') < 0.97 THEN '1' ELSE '0' END AS PixelRepresentation,
      CASE WHEN len(mp.manufacturers) = 0 THEN NULL ELSE mp.manufacturers[1 + floor(u2(st.pkey, s.modality, 'eq') * len(mp.manufacturers))::INTEGER] END AS Manufacturer,
      CASE WHEN len(mp.models) = 0 THEN NULL ELSE mp.models[1 + floor(u2(st.pkey, s.modality, 'eq') * len(mp.models))::INTEGER] END AS ManufacturerModelName,
      CASE WHEN s.ar_idx IS NOT NULL THEN CASE WHEN u(s.key, 'sdt') < 0.5 THEN NULL ELSE strftime(DATE '2019-01-01' + ui(s.key, 'sdd', 0, 2000)::INTEGER, '%Y-%m-%d') END
           WHEN s.modality = 'SM' AND u(st.skey, 'smdate') < 0.4 THEN NULL
           ELSE strftime(st.study_date, '%Y-%m-%d') END AS SeriesDate,
      CASE WHEN s.modality = 'CT' AND s.n <= 3 AND s.ar_idx IS NULL THEN 'SCOUT'
           WHEN s.ar_idx IS NOT NULL THEN a.algorithm || ' ' || s.modality
           WHEN u(s.key, 'desn') < 0.04 THEN NULL ELSE pick(mp.descriptions, s.key, 'desc') END AS SeriesDescription,
      CASE WHEN s.ar_idx IS NOT NULL THEN (1000 + s.ar_idx * 10 + s.d)::VARCHAR ELSE (s.item * 100 + s.j + 1)::VARCHAR END AS SeriesNumber,
      s.n AS instanceCount,
      coalesce(a.license, CASE WHEN s.modality = 'SM' THEN c.sm_license END, c.license) AS license_short_name,
      least(${V}, CASE WHEN s.ar_idx IS NOT NULL THEN a.since + floor(pow(u(s.key, 'iv'), 3) * (${V + 1} - a.since))
           ELSE c.since + floor(pow(u(st.skey, 'iv'), 2) * (${V + 1} - c.since)) END)::BIGINT AS series_init_idc_version,
      NULL::BIGINT AS series_revised_idc_version,
      CASE WHEN coalesce(a.license, CASE WHEN s.modality = 'SM' THEN c.sm_license END, c.license) LIKE '%NC%' THEN 'idc-open-data-cr'
           WHEN c.head THEN 'idc-open-data-two' ELSE 'idc-open-data' END AS aws_bucket,
      uuid4(s.key, 'crdc_series') AS crdc_series_uuid,
      NULL::VARCHAR AS series_aws_url,
      g.bytes / 1e6 AS series_size_MB,
      s.key AS g_key, s.src_key AS g_src_key, s.idx AS g_idx, s.ar_idx AS g_ar_idx, s.item AS g_item, s.j AS g_j, s.d AS g_d,
      s.skey AS g_skey, st.pkey AS g_pkey, c.idx AS g_coll_idx, s.uid_style AS g_uid_style, s.c4a AS g_c4a, s.c4b AS g_c4b,
      s.b AS g_b, s.pyramid AS g_pyramid, s.inst_offset AS g_inst_offset, st.template AS g_template, c.location AS g_location
    FROM g_series2 s
    JOIN g_study st USING (skey)
    JOIN coll c ON c.idx = st.idx
    JOIN tpl tp ON tp.template = st.template
    JOIN mod_params mp ON mp.modality = s.modality
    JOIN g_size g ON g.key = s.key
    LEFT JOIN ar a ON a.ar_idx = s.ar_idx`);
  await run(`UPDATE t_series SET
      transfer_syntax_name = ts_name(TransferSyntaxUID),
      series_revised_idc_version = CASE WHEN u(g_key, 'rev') < 0.08 AND series_init_idc_version < ${V}
        THEN series_init_idc_version + ui(g_key, 'revv', 1, ${V} - series_init_idc_version) ELSE series_init_idc_version END,
      series_aws_url = 's3://' || aws_bucket || '/' || crdc_series_uuid || '/*'`);
}

async function buildSpecialized(ctx: GenContext): Promise<void> {
  const { run } = ctx;
  await run(`CREATE TABLE t_seg_index AS
    SELECT s.SeriesInstanceUID,
      CASE WHEN u(s.g_key, 'segt') < 0.85 THEN 'BINARY' WHEN u(s.g_key, 'segt') < 0.95 THEN 'FRACTIONAL' ELSE 'LABELMAP' END AS SegmentationType,
      len(props)::BIGINT AS total_segments,
      a.algorithm_type AS AlgorithmType, a.algorithm AS AlgorithmName,
      src.SeriesInstanceUID AS segmented_SeriesInstanceUID,
      [a.category] AS SegmentedPropertyCategory_CodeMeanings,
      props AS SegmentedPropertyType_CodeMeanings,
      a.regions AS AnatomicRegion_CodeMeanings
    FROM (SELECT *, coalesce(nullif(list_filter(a2.properties, lambda x, i: u2(g_key, i, 'prop') < 0.45), []), [a2.properties[1 + (g_key % len(a2.properties))::INTEGER]]) AS props
          FROM t_series JOIN ar a2 ON a2.ar_idx = t_series.g_ar_idx WHERE Modality = 'SEG') s
    JOIN ar a ON a.ar_idx = s.g_ar_idx
    JOIN t_series src ON src.g_key = s.g_src_key
    ORDER BY SegmentationType DESC, AlgorithmType, AlgorithmName, s.SeriesInstanceUID`);
  await run(`CREATE TABLE t_ann_index AS
    SELECT s.SeriesInstanceUID, '2D' AS AnnotationCoordinateType, src.SeriesInstanceUID AS referenced_SeriesInstanceUID
    FROM t_series s JOIN t_series src ON src.g_key = s.g_src_key WHERE s.Modality = 'ANN' ORDER BY 1`);
  await run(`CREATE TABLE t_ann_group_index AS
    SELECT s.SeriesInstanceUID, (gn + 1)::BIGINT AS AnnotationGroupNumber,
      uid('highdicom', '', '', 5, s.g_idx * 8 + gn, s.g_key * 8 + gn) AS AnnotationGroupUID,
      ['Nuclei', 'Tumor region', 'Lymphocytes', 'Stroma'][1 + gn::INTEGER] AS AnnotationGroupLabel,
      a.algorithm_type AS AnnotationGroupGenerationType,
      (1000 + floor(u2(s.g_key, gn, 'nann') * 200000))::BIGINT AS NumberOfAnnotations,
      ['POLYGON', 'POINT', 'POLYGON', 'ELLIPSE'][1 + gn::INTEGER] AS GraphicType,
      'SCT:91723000' AS AnnotationPropertyCategory_code, 'Anatomical structure' AS AnnotationPropertyCategory_CodeMeaning,
      ['SCT:84640000', 'SCT:108369006', 'SCT:56972008', 'SCT:1153298005'][1 + gn::INTEGER] AS AnnotationPropertyType_code,
      ['Nucleus', 'Neoplasm', 'Lymphocyte', 'Stroma'][1 + gn::INTEGER] AS AnnotationPropertyType_CodeMeaning,
      CASE WHEN a.algorithm_type = 'AUTOMATIC' THEN a.algorithm END AS AlgorithmName
    FROM (SELECT *, unnest(range(ui(g_key, 'ngrp', 1, 3))) AS gn FROM t_series WHERE Modality = 'ANN') s
    JOIN ar a ON a.ar_idx = s.g_ar_idx ORDER BY 1, 2`);
  await run(`CREATE TABLE t_rtstruct_index AS
    WITH r AS (
      SELECT s.*, coalesce(src.SeriesInstanceUID, ref.SeriesInstanceUID) AS referenced_SeriesInstanceUID,
        list_sort(coalesce(nullif(list_filter(['GTV', 'CTV', 'PTV', 'Heart', 'Lung_L', 'Lung_R', 'Esophagus', 'SpinalCord', 'External', 'Parotid_L', 'Parotid_R', 'Brainstem'],
          lambda x, i: u2(s.g_key, i, 'roi') < 0.4), []), ['GTV'])) AS rois
      FROM t_series s
      LEFT JOIN t_series src ON src.g_key = s.g_src_key
      LEFT JOIN t_series ref ON s.g_src_key IS NULL AND ref.g_skey = s.g_skey AND ref.g_item = 0 AND ref.g_j = 0 AND ref.g_ar_idx IS NULL
      WHERE s.Modality = 'RTSTRUCT')
    SELECT SeriesInstanceUID, len(rois)::BIGINT AS total_rois, rois AS ROINames,
      CASE WHEN u(g_key, 'rga') < 0.7 THEN ['MANUAL'] WHEN u(g_key, 'rga') < 0.9 THEN ['AUTOMATIC'] ELSE ['AUTOMATIC', 'MANUAL'] END AS ROIGenerationAlgorithms,
      list_sort(list_distinct(list_transform(rois, lambda x: CASE WHEN x IN ('GTV', 'CTV', 'PTV') THEN x WHEN x = 'External' THEN 'EXTERNAL' ELSE 'ORGAN' END))) AS RTROIInterpretedTypes,
      referenced_SeriesInstanceUID
    FROM r ORDER BY 1`);
  await run(`CREATE TABLE t_ct_index AS
    SELECT SeriesInstanceUID,
      CASE WHEN SeriesDescription = 'SCOUT' THEN ['ORIGINAL', 'PRIMARY', 'LOCALIZER'] WHEN u(g_key, 'it') < 0.1 THEN ['DERIVED', 'SECONDARY', 'REFORMATTED'] ELSE ['ORIGINAL', 'PRIMARY', 'AXIAL'] END AS ImageType,
      round(0.5 + 0.45 * u(g_key, 'ps'), 6) AS PixelSpacing_row_mm, round(0.5 + 0.45 * u(g_key, 'ps'), 6) AS PixelSpacing_col_mm,
      512::BIGINT AS Rows, 512::BIGINT AS Columns,
      pick([0.625, 1.0, 1.25, 1.25, 2.0, 2.5, 3.0, 5.0], g_key, 'st') AS SliceThickness,
      pick([80.0, 100.0, 120.0, 120.0, 120.0, 140.0], g_key, 'kvp') AS KVP,
      CASE WHEN u(g_key, 'hel') < 0.85 THEN ['HELICAL MODE'] ELSE ['AXIAL MODE'] END AS ScanOptions,
      [pick(['B30f', 'B45f', 'B70f', 'STANDARD', 'LUNG', 'BONE', 'FC51', 'YA'], g_key, 'kern')] AS ConvolutionKernel,
      CASE WHEN u(g_key, 'tilt') < 0.9 THEN 0.0 ELSE round(-15 + 30 * u(g_key, 'tiltv'), 1) END AS GantryDetectorTilt,
      round(40 + 200 * u(g_key, 'mamin')) AS XRayTubeCurrent_min, round(240 + 300 * u(g_key, 'mamax')) AS XRayTubeCurrent_max,
      pick(['BODY FILTER', 'LARGE', 'MEDIUM', 'FLAT'], g_key, 'flt') AS FilterType,
      round(20 + 80 * u(g_key, 'exmin')) AS Exposure_min, round(100 + 300 * u(g_key, 'exmax')) AS Exposure_max,
      round(400 + 400 * u(g_key, 'etmin')) AS ExposureTime_min, round(800 + 600 * u(g_key, 'etmax')) AS ExposureTime_max,
      500.0 AS DataCollectionDiameter, round(300 + 150 * u(g_key, 'rd')) AS ReconstructionDiameter,
      CASE WHEN u(g_key, 'hel') < 0.85 THEN pick([0.984, 1.375, 1.5, 0.75], g_key, 'pitch') END AS SpiralPitchFactor
    FROM t_series WHERE Modality = 'CT' AND g_ar_idx IS NULL ORDER BY 1`);
  await run(`CREATE TABLE t_mr_index AS
    SELECT SeriesInstanceUID, pick([1.5, 3.0, 3.0], g_pkey, 'tesla') AS MagneticFieldStrength,
      pick([['SE'], ['GR'], ['SE', 'IR'], ['EP']], g_key, 'seq') AS ScanningSequence,
      pick([['SK', 'SP'], ['SP'], ['SK', 'SP', 'OSP'], ['NONE']], g_key, 'var') AS SequenceVariant,
      pick(['2D', '2D', '3D'], g_key, 'acq') AS MRAcquisitionType,
      [round(2 + 110 * u(g_key, 'te'), 2)] AS EchoTime, round(5 + 5000 * u(g_key, 'tr'), 1) AS RepetitionTime,
      ui(g_key, 'etl', 1, 24) AS EchoTrainLength, pick([90.0, 150.0, 12.0, 15.0, 20.0], g_key, 'flip') AS FlipAngle,
      round(100 + 600 * u(g_key, 'bw'), 1) AS PixelBandwidth,
      round(42.577 * pick([1.5, 3.0, 3.0], g_pkey, 'tesla'), 6) AS ImagingFrequency, '1H' AS ImagedNucleus,
      round(0.4 + 0.8 * u(g_key, 'mps'), 6) AS PixelSpacing_row_mm, round(0.4 + 0.8 * u(g_key, 'mps'), 6) AS PixelSpacing_col_mm,
      pick([256, 320, 384, 512], g_key, 'mrow')::BIGINT AS Rows, pick([256, 320, 384, 512], g_key, 'mrow')::BIGINT AS Columns,
      pick([1.0, 3.0, 3.0, 4.0, 5.0], g_key, 'mst') AS SliceThickness,
      CASE WHEN u(g_key, 'ti') < 0.15 THEN round(100 + 2400 * u(g_key, 'tiv')) END AS InversionTime,
      pick(['Body', 'HeadNeck_20', 'BreastCoil', 'Endorectal', 'Head_32'], g_key, 'coil') AS ReceiveCoilName,
      pick(['*tse2d1_25', '*fl3d1', 'ep_b50_800', '*tir2d1_12'], g_key, 'sqn') AS SequenceName,
      CASE WHEN SeriesDescription LIKE 'DWI%' OR SeriesDescription = 'ADC' THEN [0.0, 50.0, 800.0] ELSE []::DOUBLE[] END AS DiffusionBValue,
      CASE WHEN SeriesDescription LIKE 'DCE%' THEN ui(g_key, 'ntp', 5, 60) ELSE 1 END AS NumberOfTemporalPositions
    FROM t_series WHERE Modality = 'MR' AND g_ar_idx IS NULL ORDER BY 1`);
  await run(`CREATE TABLE t_pt_index AS
    SELECT SeriesInstanceUID, pick(['WHOLE BODY/IMAGE', 'STATIC/IMAGE', 'DYNAMIC/IMAGE'], g_key, 'ptst') AS SeriesType,
      pick(['BQML', 'BQML', 'CNTS'], g_key, 'units') AS Units, pick(['START', 'START', 'ADMIN'], g_key, 'dc') AS DecayCorrection,
      CASE WHEN u(g_key, 'nac') < 0.2 THEN ['DECY', 'RAN'] ELSE ['ATTN', 'SCAT', 'DECY', 'RAN'] END AS CorrectedImage,
      'DLYD' AS RandomsCorrectionMethod, pick(['OSEM', 'OSEM3D', 'FBP', 'VPFXS'], g_key, 'recon') AS ReconstructionMethod,
      [round(120000 + 120000 * u(g_key, 'afd'))] AS ActualFrameDuration, 'Model-based' AS ScatterCorrectionMethod,
      'CT-derived mu-map' AS AttenuationCorrectionMethod, 'Fluorine F18' AS RadionuclideCodeMeaning,
      round(1.5e8 + 5e8 * u(g_key, 'dose')) AS RadionuclideTotalDose,
      printf('%02d:%02d:%02d.000000', ui(g_key, 'h', 7, 15), ui(g_key, 'm', 0, 59), ui(g_key, 's', 0, 59)) AS RadiopharmaceuticalStartTime,
      'Fluorodeoxyglucose F^18^' AS Radiopharmaceutical,
      round(2.5 + 2.0 * u(g_key, 'pps'), 6) AS PixelSpacing_row_mm, round(2.5 + 2.0 * u(g_key, 'pps'), 6) AS PixelSpacing_col_mm,
      pick([128, 144, 168, 200], g_key, 'prow')::BIGINT AS Rows, pick([128, 144, 168, 200], g_key, 'prow')::BIGINT AS Columns,
      pick([2.0, 3.27, 4.0, 5.0], g_key, 'pst') AS SliceThickness, instanceCount AS NumberOfSlices, 1::BIGINT AS NumberOfTimeSlices
    FROM t_series WHERE Modality = 'PT' AND g_ar_idx IS NULL ORDER BY 1`);
  const prep = `
      ['Paraffin wax'] AS embeddingMedium_CodeMeaning, ['SCT:311731000'] AS embeddingMedium_code_designator_value_str,
      ['Formalin'] AS tissueFixative_CodeMeaning, ['SCT:431510009'] AS tissueFixative_code_designator_value_str,
      CASE WHEN u(g_key, 'stain') < 0.9 THEN ['hematoxylin stain', 'water soluble eosin stain'] ELSE ['Ki-67 antibody'] END AS staining_usingSubstance_CodeMeaning,
      CASE WHEN u(g_key, 'stain') < 0.9 THEN ['SCT:12710003', 'SCT:36879007'] ELSE ['SCT:1268588007'] END AS staining_usingSubstance_code_designator_value_str`;
  await run(`CREATE TABLE t_sm_index AS
    SELECT SeriesInstanceUID,
      CASE WHEN PatientID LIKE 'TCGA-%' THEN PatientID || '-0' || ui(g_key, 'smp', 1, 2) || 'A-0' || ui(g_key, 'sl', 1, 9) || '-TS' || ui(g_key, 'ts', 1, 9)
           ELSE PatientID || '-S' || (g_j + 1) END AS ContainerIdentifier,
      ${prep},
      pick([0.00025, 0.00025, 0.0005, 0.00049], g_key, 'mag') AS min_PixelSpacing_2sf,
      ui(g_key, 'w', 20000, 150000) AS max_TotalPixelMatrixColumns, ui(g_key, 'h', 15000, 90000) AS max_TotalPixelMatrixRows,
      CASE WHEN pick([0.00025, 0.00025, 0.0005, 0.00049], g_key, 'mag') < 0.0004 THEN 40 ELSE 20 END::BIGINT AS ObjectiveLensPower,
      'SCT:' || (100000 + hash(g_location) % 900000)::VARCHAR AS primaryAnatomicStructure_code_designator_value_str,
      g_location AS primaryAnatomicStructure_CodeMeaning,
      CASE WHEN u(g_key, 'norm') < 0.13 THEN 'SCT:17621005' ELSE 'SCT:86049000' END AS primaryAnatomicStructureModifier_code_designator_value_str,
      CASE WHEN u(g_key, 'norm') < 0.13 THEN 'Normal' WHEN u(g_key, 'norm') < 0.135 THEN 'Neoplasm, Metastatic' ELSE 'Neoplasm, Primary' END AS primaryAnatomicStructureModifier_CodeMeaning,
      'DCM:111744' AS illuminationType_code_designator_value_str, 'Brightfield illumination' AS illuminationType_CodeMeaning,
      NULL::VARCHAR AS admittingDiagnosis_code_designator_value_str, NULL::VARCHAR AS admittingDiagnosis_CodeMeaning
    FROM t_series WHERE Modality = 'SM' ORDER BY primaryAnatomicStructure_CodeMeaning, staining_usingSubstance_CodeMeaning[1], SeriesInstanceUID`);
  await run(`CREATE TABLE t_sm_instance_index AS
    SELECT uid(g_uid_style, g_c4a, g_c4b, 3, g_inst_offset + j, hash(g_key, j)) AS SOPInstanceUID, SeriesInstanceUID,
      ${prep},
      round(pick([0.00025, 0.00025, 0.0005, 0.00049], g_key, 'mag') * pow(2, j), 8) AS PixelSpacing_0,
      CASE WHEN j = instanceCount - 1 AND instanceCount > 3 THEN ['ORIGINAL', 'PRIMARY', 'LABEL', 'NONE']
           WHEN j = instanceCount - 2 AND instanceCount > 3 THEN ['DERIVED', 'PRIMARY', 'OVERVIEW', 'NONE']
           WHEN j = 0 THEN ['ORIGINAL', 'PRIMARY', 'VOLUME', 'NONE'] ELSE ['DERIVED', 'PRIMARY', 'VOLUME', 'RESAMPLED'] END AS ImageType,
      string_split(TransferSyntaxUID, ',')[1 + (j % len(string_split(TransferSyntaxUID, ',')))::INTEGER] AS TransferSyntaxUID,
      inst_size(g_key, j, g_b, g_pyramid) AS instance_size,
      greatest(256, ui(g_key, 'w', 20000, 150000) // (2 ** j)::BIGINT) AS TotalPixelMatrixColumns,
      greatest(256, ui(g_key, 'h', 15000, 90000) // (2 ** j)::BIGINT) AS TotalPixelMatrixRows,
      uuid4(hash(g_key, j), 'crdc_instance') AS crdc_instance_uuid
    FROM (SELECT *, unnest(range(instanceCount)) AS j FROM t_series WHERE Modality = 'SM') ORDER BY SeriesInstanceUID, SOPInstanceUID`);
  await run(`CREATE TABLE t_contrast_index AS
    SELECT SeriesInstanceUID,
      CASE WHEN Modality = 'MR' THEN [pick(['Gadavist', 'MAGNEVIST', 'Dotarem', 'MULTIHANCE'], g_key, 'ag')] ELSE [pick(['OMNIPAQUE 350', 'ISOVUE-300', 'Visipaque 320', 'C+'], g_key, 'ag')] END AS ContrastBolusAgent,
      CASE WHEN u(g_key, 'ing') < 0.3 THEN []::VARCHAR[] WHEN Modality = 'MR' THEN ['GADOLINIUM'] ELSE ['IODINE'] END AS ContrastBolusIngredient,
      CASE WHEN u(g_key, 'route') < 0.5 THEN ['IV'] WHEN u(g_key, 'route') < 0.55 THEN ['ORAL', 'IV'] ELSE []::VARCHAR[] END AS ContrastBolusRoute
    FROM t_series WHERE Modality IN ('CT', 'MR', 'PT', 'XA') AND g_ar_idx IS NULL AND u(g_key, 'contrast') < 0.35 ORDER BY 1`);
  await run(`CREATE TABLE t_volume_geometry_index AS
    WITH v AS (
      SELECT SeriesInstanceUID, u(g_key, 'vg1') > 0.01 AS single_orientation, u(g_key, 'vg2') > 0.05 AS orthogonal_orientation,
        u(g_key, 'vg3') > 0.03 AS unique_slice_positions, u(g_key, 'vg4') > 0.005 AS consistent_in_plane_row,
        u(g_key, 'vg5') > 0.005 AS consistent_in_plane_col, u(g_key, 'vg6') > 0.01 AS consistent_pixel_spacing,
        u(g_key, 'vg7') > 0.01 AS consistent_image_dimensions,
        CASE WHEN instanceCount = 1 THEN NULL ELSE u(g_key, 'vg8') > 0.06 END AS uniform_slice_spacing,
        CASE WHEN u(g_key, 'vg2') > 0.05 THEN 0.0 ELSE round(1 + 20 * u(g_key, 'obl'), 2) END AS obliquity_degrees
      FROM t_series WHERE Modality IN ('CT', 'MR', 'PT') AND g_ar_idx IS NULL AND coalesce(SeriesDescription, '') <> 'SCOUT')
    SELECT *, (single_orientation AND orthogonal_orientation AND unique_slice_positions AND consistent_in_plane_row AND consistent_in_plane_col
      AND consistent_pixel_spacing AND consistent_image_dimensions AND coalesce(uniform_slice_spacing, false)) AS regularly_spaced_3d_volume
    FROM v ORDER BY regularly_spaced_3d_volume DESC, SeriesInstanceUID`);
}

async function buildMetadataTables(ctx: GenContext): Promise<void> {
  const { run, plan } = ctx;
  const V = plan.currentVersion;
  await run(
    valuesTable(
      't_version_metadata_index',
      [['idc_version', 'BIGINT'], ['version_timestamp', 'VARCHAR']],
      Array.from({ length: V }, (_, i) => [i + 1, `${releaseDate(i + 1)} 00:00:00+00:00`]),
    ),
  );
  await run(
    valuesTable(
      'lic',
      [['license_short_name', 'VARCHAR'], ['long_name', 'VARCHAR'], ['url', 'VARCHAR']],
      Object.entries(LICENSES).map(([k, v]) => [k, v.long, v.url]),
    ),
  );
  await run(`CREATE TABLE t_collections_index AS
    WITH counts AS (
      SELECT collection_id, count(DISTINCT PatientID) AS subjects,
        string_agg(DISTINCT Modality, ', ' ORDER BY Modality) FILTER (WHERE g_ar_idx IS NULL) AS modalities,
        string_agg(DISTINCT Modality, ', ' ORDER BY Modality) FILTER (WHERE g_ar_idx IS NULL AND Modality <> 'SM') AS radiology,
        bool_or(Modality = 'SM') AS has_sm
      FROM t_series GROUP BY collection_id),
    src AS (
      SELECT c.collection_id,
        list_value(
          {'source_id': c.collection_id, 'source_title': c.collection_name, 'source_type': 'original_collection', 'source_doi': c.doi,
           'source_url': 'https://doi.org/' || c.doi,
           'modalities': CASE WHEN c.sm_license IS NOT NULL THEN coalesce(k.radiology, k.modalities) ELSE k.modalities END,
           'license': {'license_url': l.url, 'license_long_name': l.long_name, 'license_short_name': c.license},
           'citation': c.collection_name || ' collection. The Cancer Imaging Archive. https://doi.org/' || c.doi,
           'Access': 'Public', 'ImageTypes': CASE WHEN c.sm_license IS NOT NULL THEN coalesce(k.radiology, k.modalities) ELSE k.modalities END}) AS own,
        CASE WHEN c.sm_license IS NOT NULL AND k.has_sm THEN list_value(
          {'source_id': c.collection_id || '_pathology', 'source_title': c.collection_name || ' pathology', 'source_type': 'original_collection',
           'source_doi': c.doi, 'source_url': 'https://doi.org/' || c.doi, 'modalities': 'SM',
           'license': {'license_url': l2.url, 'license_long_name': l2.long_name, 'license_short_name': c.sm_license},
           'citation': c.collection_name || ' pathology. https://doi.org/' || c.doi, 'Access': 'Public', 'ImageTypes': 'SM'}) ELSE NULL END AS extra
      FROM coll c JOIN counts k USING (collection_id) JOIN lic l ON l.license_short_name = c.license
      LEFT JOIN lic l2 ON l2.license_short_name = c.sm_license)
    SELECT c.collection_name, c.collection_id, CASE WHEN c.cancer = 'Phantom' THEN 'Phantom' ELSE c.cancer END AS cancer_types,
      c.location AS tumor_locations, k.subjects::BIGINT AS subjects, c.species,
      CASE WHEN s.extra IS NULL THEN s.own ELSE list_concat(s.own, s.extra) END AS sources,
      coalesce(p.supporting, 'Image Analyses') AS supporting_data, c.program AS program_id,
      CASE WHEN u(c.idx, 'status') < 0.9 THEN 'Complete' ELSE 'Ongoing' END AS status,
      strftime(DATE '2020-01-01' + ui(c.idx, 'upd', 0, 2300)::INTEGER, '%Y-%m-%d') AS updated,
      '<p>' || c.collection_name || ' contains ' || k.modalities || ' imaging of ' || lower(c.cancer) || ' (' || c.location || ') subjects.</p>' AS description
    FROM coll c JOIN counts k USING (collection_id) JOIN src s USING (collection_id)
    LEFT JOIN coll_support p USING (collection_id)
    ORDER BY c.collection_id`);
  await run(`CREATE TABLE t_analysis_results_index AS
    WITH agg AS (
      SELECT g_ar_idx AS ar_idx, count(DISTINCT PatientID)::BIGINT AS subjects,
        string_agg(DISTINCT collection_id, ', ' ORDER BY collection_id) AS collections,
        string_agg(DISTINCT Modality, ', ' ORDER BY Modality) AS modalities
      FROM t_series WHERE g_ar_idx IS NOT NULL GROUP BY 1)
    SELECT a.analysis_result_id, a.title AS analysis_result_title, a.doi AS source_DOI, 'https://doi.org/' || a.doi AS source_url,
      g.subjects, g.collections, g.modalities,
      strftime(DATE '2021-01-01' + ui(a.ar_idx, 'arupd', 0, 1900)::INTEGER, '%Y-%m-%d') AS updated,
      l.url AS license_url, l.long_name AS license_long_name, a.license AS license_short_name,
      '<p>' || a.title || '. Derived ' || g.modalities || ' objects produced with ' || a.algorithm || '.</p>' AS description,
      a.title || '. https://doi.org/' || a.doi AS citation
    FROM ar a JOIN agg g USING (ar_idx) JOIN lic l ON l.license_short_name = a.license
    ORDER BY a.analysis_result_id`);
  // Earlier versions of revised series, and series removed before this release.
  await run(`CREATE TABLE t_prior_versions_index AS
    WITH revised AS (
      SELECT collection_id, PatientID, SeriesInstanceUID, StudyInstanceUID, Modality, aws_bucket, uuid4(g_key, 'prior') AS crdc_series_uuid,
        round(series_size_MB * (0.9 + 0.2 * u(g_key, 'psz')), 2) AS series_size_MB,
        series_init_idc_version AS min_idc_version, series_revised_idc_version - 1 AS max_idc_version
      FROM t_series WHERE series_revised_idc_version > series_init_idc_version),
    removed AS (
      SELECT collection_id, PatientID, uid(g_uid_style, g_c4a, g_c4b, 4, g_idx, g_key) AS SeriesInstanceUID, StudyInstanceUID, Modality, aws_bucket,
        uuid4(g_key, 'removed') AS crdc_series_uuid, round(series_size_MB * (0.5 + u(g_key, 'rsz')), 2) AS series_size_MB,
        greatest(1, series_init_idc_version - ui(g_key, 'rmin', 1, 6))::BIGINT AS min_idc_version,
        (series_init_idc_version - 1)::BIGINT AS max_idc_version
      FROM t_series WHERE u(g_key, 'removed') < 0.015 AND series_init_idc_version > 2),
    b AS (SELECT * FROM revised UNION ALL SELECT * FROM removed)
    SELECT collection_id, PatientID, SeriesInstanceUID, StudyInstanceUID, Modality,
      CASE WHEN aws_bucket = 'idc-open-data' AND max_idc_version < 20 THEN 'public-datasets-idc' ELSE ${cloud2Bucket('aws_bucket')} END AS gcs_bucket,
      crdc_series_uuid, series_size_MB,
      CASE WHEN aws_bucket = 'idc-open-data' AND max_idc_version >= 20 THEN NULL ELSE 's3://' || aws_bucket || '/' || crdc_series_uuid || '/*' END AS series_aws_url,
      CASE WHEN aws_bucket = 'idc-open-data' AND max_idc_version < 20 THEN 'public-datasets-idc' ELSE ${cloud2Bucket('aws_bucket')} END AS gcs_bucket_1,
      CASE WHEN aws_bucket = 'idc-open-data' AND max_idc_version >= 20 THEN NULL ELSE aws_bucket END AS aws_bucket,
      min_idc_version, max_idc_version
    FROM b ORDER BY collection_id, min_idc_version, Modality, SeriesInstanceUID`);
}

/** SQL mapping a primary-store bucket column to the second store's bucket, from the store metadata. */
function cloud2Bucket(col: string): string {
  const cases = Object.entries(DEFAULT_STORES.cloud2.bucket_map).map(([a, b]) => `WHEN ${lit(a)} THEN ${lit(b)}`);
  return `CASE ${col} ${cases.join(' ')} ELSE ${col} END`;
}

/** Columns of a registry table, in registry order, as a SELECT list over a t_ table. */
function selectList(table: string, exclude: string[] = []): string {
  const def = TABLES.find((t) => t.name === table)!;
  return def.columns
    .filter((c) => !exclude.includes(c.name))
    .map((c) => `"${c.name}"::${c.duckdb} AS "${c.name}"`)
    .join(', ');
}

export const GENERATED_TABLES = [
  'index', 'prior_versions_index', 'collections_index', 'analysis_results_index', 'version_metadata_index',
  'sm_index', 'sm_instance_index', 'seg_index', 'ann_index', 'ann_group_index', 'rtstruct_index',
  'ct_index', 'mr_index', 'pt_index', 'contrast_index', 'volume_geometry_index', 'clinical_index',
] as const;

async function sha256(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest('hex');
}

async function copyOut(ctx: GenContext, source: string, file: string): Promise<number> {
  const r = await ctx.conn.runAndReadAll(`SELECT count(*) FROM (${source})`);
  await ctx.run(`COPY (${source}) TO ${lit(file)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 122880)`);
  return Number(r.getRows()[0]![0]);
}

export async function generate(opts: GenerateOptions): Promise<DatasetManifest> {
  const plan = makePlan(opts.scale, opts.seed);
  const progress = opts.onProgress ?? (() => {});
  const tmpOut = `${opts.out}.partial-${process.pid}`;
  await rm(tmpOut, { recursive: true, force: true });
  await mkdir(join(tmpOut, 'clinical'), { recursive: true });
  const instance = await DuckDBInstance.create(':memory:', {
    threads: String(opts.threads ?? 2),
    memory_limit: opts.memoryLimit ?? '6GB',
    preserve_insertion_order: 'true',
  });
  const conn = await instance.connect();
  const ctx: GenContext = { conn, plan, seed: opts.seed, run: async (sql) => void (await conn.run(sql)) };
  const steps = ['dimensions', 'series', 'index', 'specialized', 'metadata', 'clinical', 'v2', 'write'];
  let done = 0;
  const step = async (name: string, fn: () => Promise<void>) => {
    progress(name, done, steps.length);
    await fn();
    done++;
  };
  try {
    for (const m of macros(opts.seed)) await ctx.run(m);
    await step('dimensions', () => loadDimensions(ctx));
    await step('series', () => generateSeries(ctx));
    await step('index', () => buildIndex(ctx));
    await step('specialized', () => buildSpecialized(ctx));
    const clinical = { tables: [] as { name: string; rows: number }[] };
    await step('metadata', async () => {
      await ctx.run(
        valuesTable('coll_support', [['collection_id', 'VARCHAR'], ['supporting', 'VARCHAR']], plan.collections.map((c) => [c.id, c.supporting ?? null])),
      );
      await buildMetadataTables(ctx);
    });
    await step('clinical', async () => {
      clinical.tables = await generateClinical(ctx, tmpOut);
    });
    const v2Files: Record<string, number> = {};
    await step('v2', async () => {
      Object.assign(v2Files, await generateV2(ctx, tmpOut, opts.instances ?? true));
    });
    const rowCounts: Record<string, number> = {};
    await step('write', async () => {
      for (const t of GENERATED_TABLES) {
        const def = TABLES.find((d) => d.name === t)!;
        const src = t === 'index' ? 't_series ORDER BY collection_id, PatientID, StudyInstanceUID, SeriesInstanceUID' : `t_${t}`;
        const exclude = t === 'index' ? ['series_cloud1_url'] : [];
        rowCounts[t] = await copyOut(ctx, `SELECT ${selectList(t, exclude)} FROM ${src}`, join(tmpOut, `${def.file}.parquet`));
      }
      for (const c of clinical.tables) rowCounts[`clinical.${c.name}`] = c.rows;
      for (const [k, v] of Object.entries(v2Files)) rowCounts[`v2.${k}`] = v;
    });
    const totals = (
      await conn.runAndReadAll(
        `SELECT count(DISTINCT collection_id), count(DISTINCT PatientID), count(DISTINCT StudyInstanceUID), count(*), sum(instanceCount), sum(series_size_MB) FROM t_series`,
      )
    ).getRows()[0]!;
    const bibliography = buildBibliography(plan);
    await writeFile(join(tmpOut, 'bibliography.json'), JSON.stringify(bibliography, null, 2) + '\n');
    const files = await listFiles(tmpOut);
    const checksums: Record<string, string> = {};
    for (const f of files) checksums[f] = await sha256(join(tmpOut, f));
    const manifest: DatasetManifest = {
      format: 'idqs-dataset/1',
      release: `v${plan.currentVersion}`,
      index_version: `${plan.currentVersion}.2.2`,
      synthetic: true,
      generator: { name: 'idqs', seed: opts.seed, scale: opts.scale, instances: opts.instances ?? true },
      totals: {
        collections: Number(totals[0]),
        patients: Number(totals[1]),
        studies: Number(totals[2]),
        series: Number(totals[3]),
        instances: Number(totals[4]),
        size_TB: Number(totals[5]) / 1e6,
      },
      row_counts: rowCounts,
      stores: DEFAULT_STORES,
      checksums,
    };
    await writeFile(join(tmpOut, 'dataset.json'), JSON.stringify(manifest, null, 2) + '\n');
    await rm(opts.out, { recursive: true, force: true });
    await rename(tmpOut, opts.out);
    progress('done', steps.length, steps.length);
    return manifest;
  } catch (e) {
    await rm(tmpOut, { recursive: true, force: true });
    throw e;
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

async function listFiles(dir: string, prefix = ''): Promise<string[]> {
  const out: string[] = [];
  for (const e of (await readdir(join(dir, prefix), { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
    const rel = prefix ? `${prefix}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...(await listFiles(dir, rel)));
    else if ((await stat(join(dir, rel))).isFile()) out.push(rel);
  }
  return out;
}
