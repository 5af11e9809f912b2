// Derived objects: seg_index, ann_index, ann_group_index and rtstruct_index.
// Each object references an image series of its own study (the source series
// of an analysis result, or the study's image of the most specific modality
// for objects a collection ships itself), with labels from derived-specs.ts
// that follow from the collection's anatomy.

import { lit, valuesTable, type Lit } from '../core/data/sql.ts';
import { structuresOf } from './anatomy.ts';
import type { GenContext } from './context.ts';
import { analysisSegSpec, annGroups, collectionSegSpec, rtRois, type SegSpec } from './derived-specs.ts';
import { IMAGE_MODALITIES, LABELMAP_SEG_STORAGE, SOURCE_PRIORITY } from './vocab.ts';

function specRow(kind: string, key: number, desc: string | null, s: SegSpec): Lit[] {
  return [kind, key, desc, s.algorithm, s.type, s.segType, s.labels.map((l) => l[0]), s.labels.map((l) => l[1]), s.subsetMin ?? null];
}

/** Segmentation specs: one per analysis-result part, one per (collection, SEG description). */
async function loadSegSpecs(ctx: GenContext): Promise<void> {
  const { plan } = ctx;
  const rows: Lit[][] = [];
  for (const a of plan.analysisResults) {
    for (const p of a.parts) {
      if (p.modality !== 'SEG') continue;
      const c = plan.collections[p.collIdx]!;
      rows.push(specRow('part', p.partIdx, null, analysisSegSpec(a.id, structuresOf(c.tumor_locations, c.cancer_types)[0], p.source)));
    }
  }
  for (const c of plan.collections) {
    const seg = c.modalities.SEG;
    if (!seg) continue;
    const s = structuresOf(c.tumor_locations, c.cancer_types)[0];
    for (const [d] of seg.descriptions) rows.push(specRow('coll', c.idx, d, collectionSegSpec(d, s)));
  }
  await ctx.run(
    valuesTable(
      'seg_spec',
      [['kind', 'VARCHAR'], ['key', 'INTEGER'], ['description', 'VARCHAR'], ['algorithm', 'VARCHAR'], ['type', 'VARCHAR'], ['seg_type', 'VARCHAR'],
        ['labels', 'VARCHAR[]'], ['cats', 'VARCHAR[]'], ['subset_min', 'INTEGER']],
      rows,
    ),
  );
  await ctx.run(
    valuesTable(
      'coll_anat',
      [['idx', 'INTEGER'], ['region', 'VARCHAR'], ['structure', 'VARCHAR']],
      plan.collections.map((c) => {
        const s = structuresOf(c.tumor_locations, c.cancer_types)[0];
        return [c.idx, s?.region ?? null, s?.meaning ?? null];
      }),
    ),
  );
}

/** The image series each object a collection ships itself refers to: an image of its study, most specific modality first. */
async function referencedImages(ctx: GenContext): Promise<void> {
  const prio = (first: string[]) => lit([...first, ...SOURCE_PRIORITY.filter((m) => !first.includes(m))]);
  await ctx.run(`CREATE TEMP TABLE g_ref AS
    WITH r AS (WITH d AS (SELECT g_key, g_skey, Modality FROM t_series WHERE g_part_idx IS NULL AND Modality IN ('SEG', 'RTSTRUCT', 'ANN')),
    img AS (SELECT g_key AS img_key, g_skey, Modality AS img_mod, SeriesInstanceUID AS img_uid FROM t_series
      WHERE g_part_idx IS NULL AND Modality IN (${IMAGE_MODALITIES.map((m) => lit(m)).join(', ')}))
    SELECT d.g_key, arg_min({'uid': img.img_uid, 'mod': img.img_mod}, {'p': list_position(CASE d.Modality WHEN 'RTSTRUCT' THEN ${prio(['CT', 'MR', 'PT'])} ELSE ${prio([])} END, img.img_mod),
      'h': hash(d.g_key, img.img_key)}) AS ref
    FROM d JOIN img USING (g_skey) GROUP BY d.g_key)
    SELECT g_key, ref.uid AS ref_uid, ref.mod AS ref_mod FROM r`);
  await ctx.run(`INSERT INTO g_ref SELECT d.g_key, s.SeriesInstanceUID, s.Modality FROM t_series d JOIN t_series s ON s.g_key = d.g_src_key
    WHERE d.g_part_idx IS NOT NULL AND d.Modality IN ('SEG', 'RTSTRUCT', 'ANN')`);
}

/** Labels a series carries, as 1-based indexes: all, or the spec's first `subset_min` and each other with probability 0.5. */
const CHOSEN = `CASE WHEN sp.subset_min IS NULL THEN range(1, len(sp.labels) + 1)
  ELSE list_filter(range(1, len(sp.labels) + 1), lambda i: i <= sp.subset_min OR u2(s.g_key, i, 'lab') < 0.5) END`;

export async function buildDerived(ctx: GenContext): Promise<void> {
  const { run } = ctx;
  await loadSegSpecs(ctx);
  await referencedImages(ctx);
  await run(`CREATE TABLE t_seg_index AS
    WITH seg AS (SELECT SeriesInstanceUID, SOPClassUID, SeriesDescription, g_key, g_part_idx, g_coll_idx FROM t_series WHERE Modality = 'SEG'),
    j AS (
      SELECT s.*, sp.algorithm, sp.type, sp.seg_type, sp.labels, sp.cats, sp.subset_min FROM seg s JOIN seg_spec sp ON sp.kind = 'part' AND sp.key = s.g_part_idx
      UNION ALL
      SELECT s.*, sp.algorithm, sp.type, sp.seg_type, sp.labels, sp.cats, sp.subset_min FROM seg s JOIN seg_spec sp
        ON sp.kind = 'coll' AND s.g_part_idx IS NULL AND sp.key = s.g_coll_idx AND sp.description IS NOT DISTINCT FROM s.SeriesDescription),
    s AS (SELECT s.*, ca.region, r.ref_uid, r.ref_mod, ${CHOSEN.replaceAll('sp.', 's.')} AS chosen
      FROM j s JOIN g_ref r ON r.g_key = s.g_key JOIN coll_anat ca ON ca.idx = s.g_coll_idx)
    SELECT SeriesInstanceUID,
      CASE WHEN SOPClassUID = ${lit(LABELMAP_SEG_STORAGE)} THEN 'LABELMAP' ELSE seg_type END AS SegmentationType,
      len(chosen)::BIGINT AS total_segments,
      type AS AlgorithmType, algorithm AS AlgorithmName,
      ref_uid AS segmented_SeriesInstanceUID,
      list_sort(list_distinct(list_transform(chosen, lambda i: cats[i]))) AS SegmentedPropertyCategory_CodeMeanings,
      list_sort(list_distinct(list_transform(chosen, lambda i: labels[i]))) AS SegmentedPropertyType_CodeMeanings,
      CASE WHEN ref_mod = 'SM' OR region IS NULL THEN []::VARCHAR[] ELSE [region] END AS AnatomicRegion_CodeMeanings
    FROM s ORDER BY SegmentationType DESC, AlgorithmType, AlgorithmName, SeriesInstanceUID`);
  await run(`CREATE TABLE t_ann_index AS
    SELECT s.SeriesInstanceUID, '2D' AS AnnotationCoordinateType, r.ref_uid AS referenced_SeriesInstanceUID
    FROM t_series s JOIN g_ref r ON r.g_key = s.g_key WHERE s.Modality = 'ANN' ORDER BY 1`);
  await buildAnnGroups(ctx);
  await run(`CREATE TABLE t_rtstruct_index AS
    WITH r AS (
      SELECT s.SeriesInstanceUID, s.g_key, r.ref_uid, rs.rois,
        list_sort(list_filter(rs.rois, lambda x, i: i = 1 OR u2(s.g_key, i, 'roi') < 0.7)) AS names
      FROM t_series s JOIN g_ref r ON r.g_key = s.g_key
      JOIN rt_spec rs ON rs.idx = s.g_coll_idx AND rs.analysis = (s.g_part_idx IS NOT NULL)
      WHERE s.Modality = 'RTSTRUCT')
    SELECT SeriesInstanceUID, len(names)::BIGINT AS total_rois, names AS ROINames,
      CASE WHEN u(g_key, 'rga') < 0.8 THEN ['MANUAL'] WHEN u(g_key, 'rga') < 0.9 THEN ['SEMIAUTOMATIC'] ELSE ['AUTOMATIC', 'MANUAL'] END AS ROIGenerationAlgorithms,
      list_sort(list_distinct(list_transform(names, lambda x: CASE WHEN x ILIKE 'GTV%' OR x IN ('Tumor', 'Lesion', 'TV') THEN 'GTV'
        WHEN x ILIKE 'CTV%' THEN 'CTV' WHEN x ILIKE 'PTV%' THEN 'PTV' WHEN x IN ('External', 'BODY') THEN 'EXTERNAL' ELSE 'ORGAN' END))) AS RTROIInterpretedTypes,
      ref_uid AS referenced_SeriesInstanceUID
    FROM r ORDER BY 1`);
}

async function buildAnnGroups(ctx: GenContext): Promise<void> {
  const { plan } = ctx;
  const rows: Lit[][] = [];
  const add = (kind: string, key: number, groups: ReturnType<typeof annGroups>, automatic: boolean, algorithm: string | null) =>
    groups.forEach((g, i) =>
      rows.push([kind, key, i, groups.length, g.label, automatic ? 'AUTOMATIC' : 'MANUAL', g.graphic, g.category[1], g.category[0], g.property[1], g.property[0], algorithm]),
    );
  for (const a of plan.analysisResults) for (const p of a.parts) if (p.modality === 'ANN') add('part', p.partIdx, annGroups(a.id), true, 'Pan-Cancer-Nuclei-Seg');
  for (const c of plan.collections) if (c.modalities.ANN) add('coll', c.idx, annGroups(c.id), false, null);
  const rt: Lit[][] = plan.collections.flatMap((c) => {
    const s = structuresOf(c.tumor_locations, c.cancer_types)[0];
    return [[c.idx, false, rtRois(s, false)], [c.idx, true, rtRois(s, true)]];
  });
  await ctx.run(valuesTable('rt_spec', [['idx', 'INTEGER'], ['analysis', 'BOOLEAN'], ['rois', 'VARCHAR[]']], rt));
  await ctx.run(
    valuesTable(
      'ann_spec',
      [['kind', 'VARCHAR'], ['key', 'INTEGER'], ['gn', 'INTEGER'], ['ngroups', 'INTEGER'], ['label', 'VARCHAR'], ['gen', 'VARCHAR'], ['graphic', 'VARCHAR'],
        ['cat_code', 'VARCHAR'], ['cat', 'VARCHAR'], ['prop_code', 'VARCHAR'], ['prop', 'VARCHAR'], ['algorithm', 'VARCHAR']],
      rows,
    ),
  );
  // Every series has group 1; further groups with probability 0.6.
  await ctx.run(`CREATE TABLE t_ann_group_index AS
    WITH g AS (
      SELECT s.SeriesInstanceUID, s.g_key, s.g_idx, a.*
      FROM t_series s JOIN ann_spec a ON a.kind = CASE WHEN s.g_part_idx IS NULL THEN 'coll' ELSE 'part' END AND a.key = coalesce(s.g_part_idx, s.g_coll_idx)
      WHERE s.Modality = 'ANN' AND (a.gn = 0 OR u2(s.g_key, a.gn, 'grp') < 0.6)),
    n AS (SELECT *, row_number() OVER (PARTITION BY SeriesInstanceUID ORDER BY gn) AS num FROM g)
    SELECT SeriesInstanceUID, num::BIGINT AS AnnotationGroupNumber,
      uid('highdicom', '', '', 5, g_idx * 16 + num, g_key * 16 + num) AS AnnotationGroupUID,
      label AS AnnotationGroupLabel, gen AS AnnotationGroupGenerationType,
      CASE WHEN prop = 'Nucleus' THEN 5000 + floor(pow(u2(g_key, num, 'nann'), 1.5) * 400000)
           WHEN graphic = 'RECTANGLE' THEN 5 + floor(u2(g_key, num, 'nann') * 600) ELSE 1 + floor(u2(g_key, num, 'nann') * 40) END::BIGINT AS NumberOfAnnotations,
      graphic AS GraphicType, cat_code AS AnnotationPropertyCategory_code, cat AS AnnotationPropertyCategory_CodeMeaning,
      prop_code AS AnnotationPropertyType_code, prop AS AnnotationPropertyType_CodeMeaning,
      CASE WHEN gen = 'AUTOMATIC' THEN algorithm END AS AlgorithmName
    FROM n ORDER BY 1, 2`);
}
