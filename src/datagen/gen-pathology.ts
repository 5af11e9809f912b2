// Slide microscopy tables (sm_index, sm_instance_index). A slide's specimen
// preparation is read from its description, as real slide descriptions spell
// it ('FFPE HE TP DX1', 'Frozen HE NT TS1', 'BCL2 T', 't-CyCIF', ...):
// frozen or paraffin, the stain, tumor or normal tissue; TCGA barcodes take
// their sample type (01 primary, 06 metastatic, 11 normal) and slide code
// from it. Anatomy and diagnosis come from the collection (anatomy.ts).

import { valuesTable } from '../core/data/sql.ts';
import { diagnosisOf, structuresOf, VARIOUS } from './anatomy.ts';
import type { GenContext } from './context.ts';

const D = `upper(coalesce(SeriesDescription, ''))`;

/** Preparation columns of a slide, from its description (see the file comment). */
const PREP = `
  CASE WHEN regexp_matches(${D}, 'EDTA|SMEAR|ASPIRATE') THEN 'smear'
       WHEN regexp_matches(${D}, 'FROZEN|^FZ|OCT ') THEN 'frozen' ELSE 'paraffin' END AS prep,
  CASE WHEN regexp_matches(${D}, 'CYCIF|IMC|MIHC') THEN 'multiplex'
       WHEN regexp_matches(${D}, 'WG|GIEMSA') THEN 'giemsa'
       WHEN regexp_matches(${D}, 'UNSTAINED') THEN 'none'
       WHEN regexp_matches(${D}, '(^| )(HE|H&E)( |$)') OR ${D} = '' OR regexp_matches(${D}, 'PASSAGE|HE ') THEN 'he'
       ELSE 'ihc' END AS stain,
  CASE WHEN regexp_matches(${D}, '(^| )TM( |$)|METAST') OR (collection_id = 'tcga_skcm' AND NOT regexp_matches(${D}, ' (TP|NT) ')) THEN 'metastatic'
       WHEN regexp_matches(${D}, '(^| )(NT|N)( |$)|NORMAL') THEN 'normal' ELSE 'primary' END AS sample,
  regexp_extract(${D}, '(TS|BS|DX)[0-9A-Z]', 0) AS slide,
  CASE WHEN regexp_extract(${D}, '^([A-Z0-9-]+) ', 1) IN ('FF', 'FFPE', 'FZ', 'PE', 'NA', 'NONE', 'OCT', 'EDTA', 'FROZEN', 'PG', 'HE')
    THEN '' ELSE regexp_extract(${D}, '^([A-Z0-9-]+) ', 1) END AS marker`;

const EMBED = `CASE prep WHEN 'frozen' THEN ['Tissue freezing medium'] WHEN 'smear' THEN []::VARCHAR[] ELSE ['Paraffin wax'] END AS embeddingMedium_CodeMeaning,
  CASE prep WHEN 'frozen' THEN ['SCT:433469005'] WHEN 'smear' THEN []::VARCHAR[] ELSE ['SCT:311731000'] END AS embeddingMedium_code_designator_value_str,
  CASE prep WHEN 'paraffin' THEN ['Formalin'] ELSE []::VARCHAR[] END AS tissueFixative_CodeMeaning,
  CASE prep WHEN 'paraffin' THEN ['SCT:431510009'] ELSE []::VARCHAR[] END AS tissueFixative_code_designator_value_str,
  CASE stain WHEN 'he' THEN ['hematoxylin stain', 'water soluble eosin stain'] WHEN 'giemsa' THEN ['May-Grunwald Giemsa stain']
    WHEN 'none' THEN []::VARCHAR[] WHEN 'multiplex' THEN list_filter(['DAPI', 'CD3', 'CD8', 'CD20', 'CD45', 'CD68', 'Pan-cytokeratin', 'Ki-67', 'alpha-SMA'],
      lambda x, i: i = 1 OR u2(g_key, i, 'mx') < 0.6)
    ELSE [coalesce(nullif(marker, ''), 'Ki-67') || ' antibody'] END AS staining_usingSubstance_CodeMeaning,
  CASE stain WHEN 'he' THEN ['SCT:12710003', 'SCT:36879007'] WHEN 'none' THEN []::VARCHAR[]
    ELSE list_transform(CASE stain WHEN 'giemsa' THEN ['May-Grunwald Giemsa stain'] WHEN 'multiplex' THEN list_filter(['DAPI', 'CD3', 'CD8', 'CD20', 'CD45', 'CD68', 'Pan-cytokeratin', 'Ki-67', 'alpha-SMA'],
      lambda x, i: i = 1 OR u2(g_key, i, 'mx') < 0.6) ELSE [coalesce(nullif(marker, ''), 'Ki-67')] END, lambda x: '99IDQS:' || replace(x, ' ', '_')) END
    AS staining_usingSubstance_code_designator_value_str`;

export async function buildPathology(ctx: GenContext): Promise<void> {
  const { run, plan } = ctx;
  await run(
    valuesTable(
      'sm_coll',
      [['idx', 'INTEGER'], ['meanings', 'VARCHAR[]'], ['codes', 'VARCHAR[]'], ['dx', 'VARCHAR'], ['dx_code', 'VARCHAR']],
      plan.collections.map((c) => {
        const s = structuresOf(c.tumor_locations, c.cancer_types);
        const list = s.length ? s : VARIOUS;
        const dx = diagnosisOf(c.cancer_types);
        return [c.idx, list.map((x) => x.meaning), list.map((x) => x.code), dx?.meaning ?? null, dx?.code ?? null];
      }),
    ),
  );
  await run(`CREATE TEMP TABLE g_sm AS
    SELECT s.*, ${PREP}, c.meanings, c.codes, c.dx, c.dx_code,
      1 + floor(u(g_pkey, 'site') * len(c.meanings))::INTEGER AS site,
      pick([0.00025, 0.00025, 0.0005, 0.00049], g_key, 'mag') AS spacing,
      ui(g_key, 'w', 20000, 150000) AS width, ui(g_key, 'h', 15000, 90000) AS height
    FROM t_series s JOIN sm_coll c ON c.idx = s.g_coll_idx WHERE s.Modality = 'SM'`);
  await run(`CREATE TABLE t_sm_index AS
    SELECT SeriesInstanceUID,
      CASE WHEN PatientID LIKE 'TCGA-%' THEN PatientID || '-' || CASE sample WHEN 'normal' THEN '11' WHEN 'metastatic' THEN '06' ELSE '01' END
             || ['A', 'A', 'B'][1 + (g_j % 3)::INTEGER] || '-' || lpad(ui(g_key, 'portion', 1, 3)::VARCHAR, 2, '0') || '-'
             || coalesce(nullif(slide, ''), CASE prep WHEN 'frozen' THEN 'TS' ELSE 'DX' END || (g_j + 1)::VARCHAR)
           WHEN PatientID LIKE 'C3%' THEN PatientID || '-' || lpad((20 + g_j + 1)::VARCHAR, 2, '0')
           ELSE PatientID || '_' || (g_j + 1)::VARCHAR END AS ContainerIdentifier,
      ${EMBED},
      spacing AS min_PixelSpacing_2sf, width AS max_TotalPixelMatrixColumns, height AS max_TotalPixelMatrixRows,
      CASE WHEN spacing < 0.0004 THEN 40 ELSE 20 END::BIGINT AS ObjectiveLensPower,
      codes[site] AS primaryAnatomicStructure_code_designator_value_str,
      meanings[site] AS primaryAnatomicStructure_CodeMeaning,
      CASE sample WHEN 'normal' THEN 'SCT:17621005' WHEN 'metastatic' THEN 'SCT:14799000' ELSE 'SCT:86049000' END AS primaryAnatomicStructureModifier_code_designator_value_str,
      CASE sample WHEN 'normal' THEN 'Normal' WHEN 'metastatic' THEN 'Neoplasm, Metastatic' ELSE 'Neoplasm, Primary' END AS primaryAnatomicStructureModifier_CodeMeaning,
      CASE WHEN stain = 'multiplex' AND NOT regexp_matches(${D}, 'IMC|MIHC') THEN 'DCM:111743' ELSE 'DCM:111744' END AS illuminationType_code_designator_value_str,
      CASE WHEN stain = 'multiplex' AND NOT regexp_matches(${D}, 'IMC|MIHC') THEN 'Epifluorescence illumination' ELSE 'Brightfield illumination' END AS illuminationType_CodeMeaning,
      CASE WHEN u(g_pkey, 'dxn') < 0.85 THEN dx_code END AS admittingDiagnosis_code_designator_value_str,
      CASE WHEN u(g_pkey, 'dxn') < 0.85 THEN dx END AS admittingDiagnosis_CodeMeaning
    FROM g_sm ORDER BY primaryAnatomicStructure_CodeMeaning, staining_usingSubstance_CodeMeaning[1], collection_id, SeriesInstanceUID`);
  await run(`CREATE TABLE t_sm_instance_index AS
    SELECT uid(g_uid_style, g_c4a, g_c4b, 3, g_inst_offset + j, hash(g_key, j)) AS SOPInstanceUID, SeriesInstanceUID,
      ${EMBED},
      round(spacing * pow(2, least(j, 30)), 8) AS PixelSpacing_0,
      CASE WHEN j = instanceCount - 1 AND instanceCount > 3 THEN ['ORIGINAL', 'PRIMARY', 'LABEL', 'NONE']
           WHEN j = instanceCount - 2 AND instanceCount > 3 THEN ['DERIVED', 'PRIMARY', 'OVERVIEW', 'NONE']
           WHEN j = 0 THEN ['ORIGINAL', 'PRIMARY', 'VOLUME', 'NONE'] ELSE ['DERIVED', 'PRIMARY', 'VOLUME', 'RESAMPLED'] END AS ImageType,
      string_split(TransferSyntaxUID, ',')[1 + (j % len(string_split(TransferSyntaxUID, ',')))::INTEGER] AS TransferSyntaxUID,
      inst_size(g_key, j, instanceCount, g_bytes, g_pyramid) AS instance_size,
      greatest(256, width // (2 ** least(j, 30))::BIGINT) AS TotalPixelMatrixColumns,
      greatest(256, height // (2 ** least(j, 30))::BIGINT) AS TotalPixelMatrixRows,
      uuid4(hash(g_key, j), 'crdc_instance') AS crdc_instance_uuid
    FROM (SELECT *, unnest(range(instanceCount)) AS j FROM g_sm) ORDER BY SeriesInstanceUID, SOPInstanceUID`);
  await run(`DROP TABLE g_sm`);
}
