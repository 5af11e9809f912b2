// The TID 1500 measurement tables. Every structured report (SR) of an image
// series has measurement groups: one per segment of the segmentation made
// over the same series (analysis results ship both), else one to three
// findings (nodules in lung collections, lesions elsewhere). Each group has
// numeric measurements (volume, sphericity, surface, diameter, mean HU; SUVbw
// in studies with PET) drawn from one latent size per group, and lung nodules get the
// LIDC-style coded ratings. measurement_groups carries the content item the
// other two are read from, as IDC's views derive them.

import { lit } from '../../core/data/sql.ts';
import { CODE, CODE_V } from '../../core/registry/full-metadata.ts';
import type { GenContext } from '../context.ts';
import { QUALITATIVE, SKEW } from '../generate-v2.ts';
import { codeOf, SOP_UID } from './series-facts.ts';

interface Quantity {
  meaning: string;
  code: string;
  scheme: string;
  derivation?: [string, string];
  unit: [string, string];
  when: string;
  value: string;
}

// gk keys a group's draws; vol is its volume in mm3 and sph its sphericity (see fm_groups).
const QUANTITIES: Quantity[] = [
  { meaning: 'Volume', code: '118565006', scheme: 'SCT', unit: ['mm3', 'cubic millimeter'], when: 'true', value: 'vol' },
  { meaning: 'Sphericity', code: 'QCDE', scheme: 'IBSI', unit: ['1', 'no units'], when: `src_mod <> 'PT'`, value: 'sph' },
  { meaning: 'Surface area of mesh', code: 'C0JK', scheme: 'IBSI', unit: ['mm2', 'square millimeter'], when: `src_mod <> 'PT'`, value: 'pow(pi(), 1 / 3) * pow(6 * vol, 2 / 3) / sph' },
  { meaning: 'Maximum 3D diameter', code: 'L0JK', scheme: 'IBSI', unit: ['mm', 'millimeter'], when: `src_mod <> 'PT'`, value: '2 * cbrt(3 * vol / (4 * pi())) * (1.05 + 0.6 * (1 - sph))' },
  { meaning: 'Attenuation Coefficient', code: '112031', scheme: 'DCM', derivation: ['373098007', 'Mean'], unit: ['[hnsf\'U]', 'Hounsfield unit'], when: `src_mod = 'CT'`,
    value: `CASE WHEN organ THEN 45 + 25 * gauss(gk, 'fm:hu') ELSE -650 + 700 * u(gk, 'fm:hu') END` },
  { meaning: 'SUVbw', code: '126401', scheme: 'DCM', derivation: ['56851009', 'Maximum'], unit: ['g/ml{SUVbw}', 'Standardized Uptake Value body weight'], when: 'pet', value: 'suv' },
  { meaning: 'SUVbw', code: '126401', scheme: 'DCM', derivation: ['373098007', 'Mean'], unit: ['g/ml{SUVbw}', 'Standardized Uptake Value body weight'], when: 'pet',
    value: `suv * (0.45 + 0.25 * u(gk, 'fm:suvm'))` },
];

const code3 = (v: string, s: string, m: string) => `{'CodeValue': ${lit(v)}, 'CodingSchemeDesignator': ${lit(s)}, 'CodeMeaning': ${lit(m)}}::${CODE}`;
const code4 = (v: string, s: string, m: string) => `{'CodeValue': ${v}, 'CodingSchemeDesignator': ${s}, 'CodingSchemeVersion': NULL, 'CodeMeaning': ${m}}::${CODE_V}`;
const asV = (c: string) => `CASE WHEN ${c} IS NULL THEN NULL ELSE ${code4(`${c}.CodeValue`, `${c}.CodingSchemeDesignator`, `${c}.CodeMeaning`)} END`;
const NULL_CODE = `NULL::${CODE}`;

const KEYS = `PatientID, SOPInstanceUID, SeriesInstanceUID, SeriesDescription, measurementGroup_number, segmentationInstanceUID, segmentationSeriesUID,
  segmentationSegmentNumber, sourceSegmentedSeriesUID, trackingIdentifier, trackingUniqueIdentifier`;

export async function buildMeasurementGroups(ctx: GenContext): Promise<void> {
  // The segmentation of each report: the SEG series of the same analysis result over the same image series.
  await ctx.run(`CREATE OR REPLACE TEMP TABLE fm_sr AS
    WITH sr AS (SELECT s.*, src.SeriesInstanceUID AS src_uid, src.Modality AS src_mod, coalesce(c.cancer_types ILIKE '%lung%', false) AS lung, c.tumor_locations
        , src.Modality = 'PT' OR s.g_skey IN (SELECT g_skey FROM t_series WHERE Modality = 'PT') AS pet
      FROM t_series s JOIN t_series src ON src.g_key = s.g_src_key JOIN coll c ON c.idx = s.g_coll_idx WHERE s.Modality = 'SR'),
    seg AS (SELECT g_src_key, g_ar_idx, arg_min({'k': g_key, 'uid': SeriesInstanceUID, 'sop': ${SOP_UID('g_key', '0')}}, g_key) AS seg
      FROM t_series WHERE Modality = 'SEG' AND g_src_key IS NOT NULL GROUP BY ALL)
    SELECT sr.g_key, sr.g_idx, sr.PatientID, sr.SeriesInstanceUID, sr.SeriesDescription, ${SOP_UID('sr.g_key', '0')} AS SOPInstanceUID,
      sr.src_uid, sr.src_mod, sr.pet, sr.lung, sr.tumor_locations, seg.seg.k AS seg_key, seg.seg.uid AS seg_uid, seg.seg.sop AS seg_sop
    FROM sr LEFT JOIN seg ON seg.g_src_key = sr.g_src_key AND seg.g_ar_idx IS NOT DISTINCT FROM sr.g_ar_idx`);
  await ctx.run(`CREATE OR REPLACE TEMP TABLE fm_groups AS
    WITH g AS (
      SELECT r.*, m.SegmentNumber, m.label, m.category, m.region FROM fm_sr r JOIN fm_segments m ON m.g_key = r.seg_key
      UNION ALL
      SELECT r.*, NULL, CASE WHEN r.lung THEN 'Nodule' ELSE 'Lesion' END, 'Morphologically Altered Structure', r.tumor_locations
      FROM fm_sr r, unnest(range(1, 2 + ui(r.g_key, 'fm:ng', 0, 2))) AS x(i) WHERE r.seg_key IS NULL),
    n AS (SELECT *, (row_number() OVER (PARTITION BY g_key ORDER BY SegmentNumber NULLS LAST, label) - 1)::BIGINT AS measurementGroup_number FROM g)
    SELECT n.*, hash(g_key, measurementGroup_number) AS gk, category = 'Anatomical Structure' AS organ,
      label = 'Nodule' AND src_mod = 'CT' AS nodule,
      seg_sop AS segmentationInstanceUID, seg_uid AS segmentationSeriesUID, SegmentNumber AS segmentationSegmentNumber,
      src_uid AS sourceSegmentedSeriesUID, label || ' ' || (measurementGroup_number + 1) AS trackingIdentifier,
      uid('highdicom', '', '', 8, g_idx * 256 + measurementGroup_number, hash(g_key, measurementGroup_number, 'trk')) AS trackingUniqueIdentifier
    FROM n`);
  await ctx.run(`ALTER TABLE fm_groups ADD COLUMN vol DOUBLE`);
  await ctx.run(`UPDATE fm_groups SET vol = CASE WHEN organ THEN exp(ln(250000) + 0.8 * gauss(gk, 'fm:v')) ELSE exp(ln(2500) + 1.3 * gauss(gk, 'fm:v')) END`);
  await ctx.run(`ALTER TABLE fm_groups ADD COLUMN sph DOUBLE`);
  await ctx.run(`ALTER TABLE fm_groups ADD COLUMN suv DOUBLE`);
  await ctx.run(`UPDATE fm_groups SET sph = least(0.98, 0.35 + 0.6 * pow(u(gk, 'fm:sph'), 0.6)), suv = exp(ln(5) + 0.6 * gauss(gk, 'fm:suv'))`);
}

/** finding and findingSite of a group, as CODE_V structs. */
const FINDING = `${asV(codeOf('label'))} AS finding, ${asV(codeOf('region'))} AS findingSite`;

export function quantitativeQuery(): string {
  const parts = QUANTITIES.map(
    (q) => `SELECT ${KEYS}, ${code3(q.code, q.scheme, q.meaning)} AS Quantity,
      ${q.derivation ? code3(q.derivation[0], 'SCT', q.derivation[1]) : NULL_CODE} AS derivationModifier, ${NULL_CODE} AS lateralityModifier,
      round(${q.value}, 6)::DECIMAL(38,9) AS Value, ${code4(lit(q.unit[0]), `'UCUM'`, lit(q.unit[1]))} AS Units, ${FINDING}
    FROM fm_groups WHERE ${q.when}`,
  );
  return `SELECT * FROM (${parts.join('\nUNION ALL\n')}) ORDER BY SeriesInstanceUID, measurementGroup_number, Quantity.CodeMeaning, derivationModifier.CodeMeaning NULLS FIRST`;
}

export function qualitativeQuery(): string {
  const parts = Object.entries(QUALITATIVE).map(([name, vals]) => {
    const meaning = name.replaceAll('_', ' ');
    const v = `${lit(vals)}[1 + floor(pow(u(gk, ${lit(`fm:q:${name}`)}), ${SKEW[name]}) * ${vals.length})::INTEGER]`;
    return `SELECT ${KEYS}, ${codeOf(lit(meaning))}::${CODE} AS Quantity, ${asV(codeOf(v))} AS Value, ${FINDING} FROM fm_groups WHERE nodule`;
  });
  return `SELECT * FROM (${parts.join('\nUNION ALL\n')}) ORDER BY SeriesInstanceUID, measurementGroup_number, Quantity.CodeMeaning`;
}

export function measurementGroupsQuery(quantTable: string): string {
  const child = `STRUCT(RelationshipType VARCHAR, ValueType VARCHAR, ConceptNameCodeSequence ${CODE}[], TextValue VARCHAR, UID VARCHAR, ConceptCodeSequence ${CODE_V}[], MeasuredValueSequence STRUCT(NumericValue VARCHAR[], MeasurementUnitsCodeSequence ${CODE_V}[])[])`;
  const item = (vt: string, name: string, text = 'NULL', uid = 'NULL', concept = `[]`) =>
    `{'RelationshipType': ${lit(vt === 'NUM' ? 'CONTAINS' : 'HAS OBS CONTEXT')}, 'ValueType': ${lit(vt)}, 'ConceptNameCodeSequence': [${name}], 'TextValue': ${text}, 'UID': ${uid},
      'ConceptCodeSequence': ${concept}, 'MeasuredValueSequence': []}::${child}`;
  const fixed = [
    item('TEXT', code3('112039', 'DCM', 'Tracking Identifier'), 'g.trackingIdentifier'),
    item('UIDREF', code3('112040', 'DCM', 'Tracking Unique Identifier'), 'NULL', 'g.trackingUniqueIdentifier'),
    item('CODE', code3('121071', 'DCM', 'Finding'), 'NULL', 'NULL', `[${asV(codeOf('g.label'))}]`),
    item('CODE', code3('363698007', 'SCT', 'Finding Site'), 'NULL', 'NULL', `CASE WHEN g.region IS NULL THEN [] ELSE [${asV(codeOf('g.region'))}] END`),
    item('UIDREF', code3('121232', 'DCM', 'Source series for segmentation'), 'NULL', 'g.sourceSegmentedSeriesUID'),
  ];
  const num = `{'RelationshipType': 'CONTAINS', 'ValueType': 'NUM', 'ConceptNameCodeSequence': [q.Quantity], 'TextValue': NULL, 'UID': NULL, 'ConceptCodeSequence': [],
    'MeasuredValueSequence': [{'NumericValue': [q.Value::VARCHAR], 'MeasurementUnitsCodeSequence': [q.Units]}]}::${child}`;
  return `WITH nums AS (SELECT SeriesInstanceUID, measurementGroup_number, list(${num} ORDER BY q.Quantity.CodeMeaning, q.derivationModifier.CodeMeaning NULLS FIRST) AS items
      FROM ${quantTable} q GROUP BY ALL)
    SELECT ${KEYS.split(',').map((k) => `g.${k.trim()}`).join(', ')}, ${FINDING},
      {'RelationshipType': 'CONTAINS', 'ValueType': 'CONTAINER', 'ConceptNameCodeSequence': [${code3('125007', 'DCM', 'Measurement Group')}],
       'ContentSequence': [${fixed.join(', ')}] || coalesce(n.items, [])} AS contentSequence
    FROM fm_groups g LEFT JOIN nums n USING (SeriesInstanceUID, measurementGroup_number)
    ORDER BY g.SeriesInstanceUID, g.measurementGroup_number`;
}

/** One row per segment of each SEG instance, read from the SegmentSequence dicom_all carries. */
export function segmentationsQuery(): string {
  return `SELECT PatientID, StudyInstanceUID, SeriesInstanceUID, ${SOP_UID('g_key', 'j')} AS SOPInstanceUID, FrameOfReferenceUID, SegmentationType,
      seg.AnatomicRegionSequence[1] AS AnatomicRegion, ${NULL_CODE} AS AnatomicRegionModifier,
      seg.SegmentedPropertyCategoryCodeSequence[1] AS SegmentedPropertyCategory, seg.SegmentedPropertyTypeCodeSequence[1] AS SegmentedPropertyType,
      seg.SegmentAlgorithmType, seg.SegmentAlgorithmName[1] AS SegmentAlgorithmName, seg.SegmentNumber, seg.TrackingUID, seg.TrackingID,
      ReferencedSeriesSequence[1].SeriesInstanceUID AS segmented_SeriesInstanceUID,
      'https://viewer.imaging.datacommons.cancer.gov/v3/viewer/?StudyInstanceUIDs=' || StudyInstanceUID || '&initialSeriesInstanceUID=' || SeriesInstanceUID AS viewer_url
    FROM (SELECT *, unnest(range(instanceCount)) AS j FROM fm_series WHERE SegmentSequence IS NOT NULL) x, unnest(x.SegmentSequence) AS t(seg)
    ORDER BY g_idx, j, seg.SegmentNumber`;
}
