// Radiology acquisition tables (ct_index, mr_index, pt_index, contrast_index,
// volume_geometry_index). Parameters follow from what the series is: its
// real-sounding description (diffusion, dynamic, multi-echo, contrast,
// localizer), its scanner's vendor, and its collection (PET tracer, share of
// series that form regular 3D volumes).

import { lit, valuesTable } from '../core/data/sql.ts';
import type { GenContext } from './context.ts';

/** PET tracer by collection (public descriptions of the collections); FDG elsewhere. */
const TRACERS: Record<string, [radiopharmaceutical: string, radionuclide: string][]> = {
  acrin_flt_breast: [['Fluorothymidine F^18^', 'Fluorine F18']],
  naf_prostate: [['Sodium fluoride F^18^', 'Fluorine F18']],
  psma_pet_ct_lesions: [['PSMA-11 Ga^68^', 'Gallium Ga68'], ['PSMA-1007 F^18^', 'Fluorine F18']],
  cmb_pca: [['Piflufolastat F^18^', 'Fluorine F18'], ['Fluorodeoxyglucose F^18^', 'Fluorine F18']],
  ct_vs_pet_ventilation_imaging: [['Galligas Ga^68^', 'Gallium Ga68']],
};
const FDG: [string, string] = ['Fluorodeoxyglucose F^18^', 'Fluorine F18'];

/** Share of a collection's CT/MR/PT series that are regular 3D volumes: varies by collection, lower for MR. */
const VOLUME_SHARE = `(0.55 + 0.43 * u(g_coll_idx, 'vq')) * CASE Modality WHEN 'MR' THEN 0.9 ELSE 1 END`;

const DIFFUSION = `regexp_matches(coalesce(SeriesDescription, ''), '(?i)(dwi|dti|diff|adc|trace|b[-_ ]?[0-9]{2,4}|ivim)')`;
const DYNAMIC_MR = `regexp_matches(coalesce(SeriesDescription, ''), '(?i)(dce|dyn|perf|dsc|twist|vibe.*sub|tricks)')`;
const MULTI_ECHO = `regexp_matches(coalesce(SeriesDescription, ''), '(?i)(echo|dixon|t2.?map|mge|swi|dual|me[- ]|pd.?t2|ideal)')`;
const LOCALIZER = `(instanceCount <= 3 OR regexp_matches(coalesce(SeriesDescription, ''), '(?i)(scout|topogram|locali[sz]er|surview|scanogram)'))`;
const CONTRAST = `regexp_matches(coalesce(SeriesDescription, '') || ' ' || coalesce(StudyDescription, ''), '(?i)(c\\+|contrast|post|gad|arterial|venous|portal|delay|dce|w/| wc|enh)')`;

export async function buildRadiology(ctx: GenContext): Promise<void> {
  const { run, plan } = ctx;
  const tracers = plan.collections.map((c) => {
    const t = TRACERS[c.id] ?? [FDG];
    return [c.idx, t.map((x) => x[0]), t.map((x) => x[1])];
  });
  await run(valuesTable('pt_tracer', [['idx', 'INTEGER'], ['pharm', 'VARCHAR[]'], ['nuclide', 'VARCHAR[]']], tracers));
  await run(`CREATE TABLE t_ct_index AS
    SELECT SeriesInstanceUID,
      CASE WHEN ${LOCALIZER} THEN ['ORIGINAL', 'PRIMARY', 'LOCALIZER'] WHEN u(g_key, 'it') < 0.1 THEN ['DERIVED', 'SECONDARY', 'REFORMATTED'] ELSE ['ORIGINAL', 'PRIMARY', 'AXIAL'] END AS ImageType,
      round(0.5 + 0.45 * u(g_key, 'ps'), 6) AS PixelSpacing_row_mm, round(0.5 + 0.45 * u(g_key, 'ps'), 6) AS PixelSpacing_col_mm,
      CASE WHEN ${LOCALIZER} THEN pick([512, 888, 1024], g_key, 'lr') ELSE 512 END::BIGINT AS Rows, 512::BIGINT AS Columns,
      pick([0.625, 1.0, 1.25, 1.25, 2.0, 2.5, 3.0, 5.0], g_key, 'st') AS SliceThickness,
      pick([80.0, 100.0, 120.0, 120.0, 120.0, 140.0], g_key, 'kvp') AS KVP,
      CASE WHEN u(g_key, 'hel') < 0.85 THEN ['HELICAL MODE'] ELSE ['AXIAL MODE'] END AS ScanOptions,
      [CASE WHEN Manufacturer ILIKE 'SIEMENS%' THEN pick(['B30f', 'B45f', 'B70f', 'B31f', 'I30f'], g_key, 'kern')
            WHEN Manufacturer ILIKE 'GE%' THEN pick(['STANDARD', 'LUNG', 'BONE', 'SOFT'], g_key, 'kern')
            WHEN Manufacturer ILIKE 'Philips%' THEN pick(['B', 'C', 'D', 'L', 'YA'], g_key, 'kern')
            WHEN Manufacturer ILIKE 'TOSHIBA%' OR Manufacturer ILIKE 'Canon%' THEN pick(['FC01', 'FC10', 'FC51', 'FC86'], g_key, 'kern')
            ELSE pick(['STANDARD', 'B30f', 'FC10'], g_key, 'kern') END] AS ConvolutionKernel,
      CASE WHEN u(g_key, 'tilt') < 0.9 THEN 0.0 ELSE round(-15 + 30 * u(g_key, 'tiltv'), 1) END AS GantryDetectorTilt,
      round(40 + 200 * u(g_key, 'mamin')) AS XRayTubeCurrent_min, round(240 + 300 * u(g_key, 'mamax')) AS XRayTubeCurrent_max,
      pick(['BODY FILTER', 'LARGE', 'MEDIUM', 'FLAT'], g_key, 'flt') AS FilterType,
      round(20 + 80 * u(g_key, 'exmin')) AS Exposure_min, round(100 + 300 * u(g_key, 'exmax')) AS Exposure_max,
      round(400 + 400 * u(g_key, 'etmin')) AS ExposureTime_min, round(800 + 600 * u(g_key, 'etmax')) AS ExposureTime_max,
      500.0 AS DataCollectionDiameter, round(300 + 150 * u(g_key, 'rd')) AS ReconstructionDiameter,
      CASE WHEN u(g_key, 'hel') < 0.85 THEN pick([0.984, 1.375, 1.5, 0.75], g_key, 'pitch') END AS SpiralPitchFactor
    FROM t_series WHERE SOPClassUID = '1.2.840.10008.5.1.4.1.1.2' AND Modality = 'CT' ORDER BY 1`);
  await run(`CREATE TABLE t_mr_index AS
    WITH m AS (SELECT *, ${DIFFUSION} AS dwi, ${DYNAMIC_MR} AS dyn, ${MULTI_ECHO} AS multi,
        regexp_matches(coalesce(SeriesDescription, ''), '(?i)(flair|stir|ir|mprage)') AS ir,
        regexp_matches(coalesce(SeriesDescription, ''), '(?i)t2') AS t2,
        pick([1.5, 3.0, 3.0], g_pkey, 'tesla') AS tesla
      FROM t_series WHERE SOPClassUID = '1.2.840.10008.5.1.4.1.1.4' AND Modality = 'MR')
    SELECT SeriesInstanceUID, tesla AS MagneticFieldStrength,
      CASE WHEN dwi THEN ['EP'] WHEN ir THEN ['SE', 'IR'] WHEN t2 THEN ['SE'] WHEN dyn THEN ['GR'] ELSE pick([['SE'], ['GR']], g_key, 'seq') END AS ScanningSequence,
      CASE WHEN dwi THEN ['SK', 'SP'] WHEN dyn THEN ['SP', 'SS'] ELSE pick([['SK', 'SP'], ['SP'], ['SK', 'SP', 'OSP'], ['NONE']], g_key, 'var') END AS SequenceVariant,
      CASE WHEN dyn THEN '3D' ELSE pick(['2D', '2D', '3D'], g_key, 'acq') END AS MRAcquisitionType,
      CASE WHEN multi THEN list_sort([round(2 + 12 * u(g_key, 'te'), 2), round(20 + 100 * u(g_key, 'te2'), 2)])
           WHEN t2 THEN [round(70 + 50 * u(g_key, 'te'), 2)] WHEN dwi THEN [round(55 + 40 * u(g_key, 'te'), 2)]
           ELSE [round(2 + 18 * u(g_key, 'te'), 2)] END AS EchoTime,
      CASE WHEN t2 OR ir THEN round(2500 + 6000 * u(g_key, 'tr'), 1) WHEN dwi THEN round(3000 + 5000 * u(g_key, 'tr'), 1) ELSE round(4 + 700 * u(g_key, 'tr'), 1) END AS RepetitionTime,
      CASE WHEN dwi THEN 1 ELSE ui(g_key, 'etl', 1, 24) END AS EchoTrainLength,
      CASE WHEN dyn THEN pick([10.0, 12.0, 15.0], g_key, 'flip') WHEN t2 OR ir THEN pick([90.0, 150.0, 160.0], g_key, 'flip') ELSE pick([8.0, 15.0, 20.0, 90.0], g_key, 'flip') END AS FlipAngle,
      round(100 + 1500 * u(g_key, 'bw'), 1) AS PixelBandwidth,
      round(42.577 * tesla + 0.01 * u(g_key, 'freq'), 6) AS ImagingFrequency, '1H' AS ImagedNucleus,
      round(0.4 + 0.8 * u(g_key, 'mps'), 6) AS PixelSpacing_row_mm, round(0.4 + 0.8 * u(g_key, 'mps'), 6) AS PixelSpacing_col_mm,
      pick([256, 320, 384, 512], g_key, 'mrow')::BIGINT AS Rows, pick([256, 320, 384, 512], g_key, 'mrow')::BIGINT AS Columns,
      pick([1.0, 3.0, 3.0, 4.0, 5.0], g_key, 'mst') AS SliceThickness,
      CASE WHEN ir THEN round(100 + 2400 * u(g_key, 'tiv')) END AS InversionTime,
      pick(['Body', 'HeadNeck_20', 'BreastCoil', 'Endorectal', 'Head_32', '8HRBRAIN', 'Spine'], g_key, 'coil') AS ReceiveCoilName,
      CASE WHEN dwi THEN pick(['*ep_b0_800', 'ep_b50_400_800', '*ep_b1000t'], g_key, 'sqn') WHEN ir THEN '*tir2d1_12' WHEN t2 THEN '*tse2d1_15'
           ELSE pick(['*fl3d1', '*fl2d1', '*tfl3d1_16ns'], g_key, 'sqn') END AS SequenceName,
      CASE WHEN dwi THEN pick([[0.0, 800.0], [0.0, 1000.0], [0.0, 50.0, 400.0, 800.0], [0.0, 100.0, 600.0, 1400.0]], g_key, 'bv') END AS DiffusionBValue,
      CASE WHEN dyn THEN ui(g_key, 'ntp', 5, 60) END AS NumberOfTemporalPositions
    FROM m ORDER BY 1`);
  // Static PET has no NumberOfTimeSlices; dynamic PET spreads its instances over frames.
  await run(`CREATE TABLE t_pt_index AS
    WITH p AS (SELECT s.*, t.pharm, t.nuclide,
        CASE WHEN regexp_matches(coalesce(SeriesDescription, ''), '(?i)(gate|cine)') THEN 'GATED/IMAGE'
             WHEN regexp_matches(coalesce(SeriesDescription, ''), '(?i)(dyn|dynamic|4d|galligas)') OR (s.collection_id = 'acrin_flt_breast' AND u(g_key, 'dyn') < 0.3) THEN 'DYNAMIC/IMAGE'
             WHEN regexp_matches(coalesce(SeriesDescription, '') || coalesce(StudyDescription, ''), '(?i)(wb|whole|body|torso|skull|total)') THEN 'WHOLE BODY/IMAGE'
             ELSE 'STATIC/IMAGE' END AS series_type,
        ui(g_key, 'frames', 6, 40) AS frames
      FROM t_series s JOIN pt_tracer t ON t.idx = s.g_coll_idx WHERE SOPClassUID = '1.2.840.10008.5.1.4.1.1.128' AND Modality = 'PT')
    SELECT SeriesInstanceUID, series_type AS SeriesType,
      pick(['BQML', 'BQML', 'BQML', 'CNTS'], g_key, 'units') AS Units, pick(['START', 'START', 'ADMIN'], g_key, 'dc') AS DecayCorrection,
      CASE WHEN regexp_matches(coalesce(SeriesDescription, ''), '(?i)(nac|uncorr|no ?ac|noac)') THEN ['DECY', 'RAN', 'DTIM'] ELSE ['ATTN', 'SCAT', 'DECY', 'RAN', 'DTIM'] END AS CorrectedImage,
      'DLYD' AS RandomsCorrectionMethod, pick(['OSEM', 'OSEM3D', 'FBP', 'VPFXS', 'OSEM2D 4i8s'], g_key, 'recon') AS ReconstructionMethod,
      CASE WHEN series_type = 'DYNAMIC/IMAGE' THEN list_transform(range(least(frames, 12)), lambda f: CASE WHEN f < 6 THEN 30000.0 ELSE 300000.0 END)
           ELSE [round(120000 + 180000 * u(g_key, 'afd'))] END AS ActualFrameDuration,
      'Model-based' AS ScatterCorrectionMethod, 'CT-derived mu-map' AS AttenuationCorrectionMethod,
      nuclide[1 + floor(u(g_pkey, 'tracer') * len(nuclide))::INTEGER] AS RadionuclideCodeMeaning,
      round(1.5e8 + 5e8 * u(g_key, 'dose')) AS RadionuclideTotalDose,
      printf('%02d:%02d:%02d.000000', ui(g_key, 'h', 7, 15), ui(g_key, 'm', 0, 59), ui(g_key, 's', 0, 59)) AS RadiopharmaceuticalStartTime,
      pharm[1 + floor(u(g_pkey, 'tracer') * len(pharm))::INTEGER] AS Radiopharmaceutical,
      round(2.0 + 2.5 * u(g_key, 'pps'), 6) AS PixelSpacing_row_mm, round(2.0 + 2.5 * u(g_key, 'pps'), 6) AS PixelSpacing_col_mm,
      pick([128, 144, 168, 192, 200, 256], g_key, 'prow')::BIGINT AS Rows, pick([128, 144, 168, 192, 200, 256], g_key, 'prow')::BIGINT AS Columns,
      pick([2.0, 3.0, 3.27, 4.0, 5.0], g_key, 'pst') AS SliceThickness,
      CASE WHEN series_type = 'DYNAMIC/IMAGE' THEN greatest(1, instanceCount // frames) ELSE instanceCount END AS NumberOfSlices,
      CASE WHEN series_type = 'DYNAMIC/IMAGE' THEN frames END::BIGINT AS NumberOfTimeSlices
    FROM p ORDER BY 1`);
  await run(`CREATE TABLE t_contrast_index AS
    SELECT SeriesInstanceUID,
      CASE WHEN Modality = 'MR' THEN [pick(['Gadavist', 'MAGNEVIST', 'Dotarem', 'MULTIHANCE', 'Omniscan'], g_key, 'ag')]
           WHEN Modality = 'PT' THEN []::VARCHAR[]
           ELSE [pick(['OMNIPAQUE 350', 'ISOVUE-300', 'Visipaque 320', 'C+', 'Optiray 350'], g_key, 'ag')] END AS ContrastBolusAgent,
      CASE WHEN u(g_key, 'ing') < 0.3 AND Modality <> 'PT' THEN []::VARCHAR[] WHEN Modality = 'MR' THEN ['GADOLINIUM'] ELSE ['IODINE'] END AS ContrastBolusIngredient,
      CASE WHEN u(g_key, 'route') < 0.5 THEN ['IV'] WHEN u(g_key, 'route') < 0.55 THEN ['ORAL', 'IV'] ELSE []::VARCHAR[] END AS ContrastBolusRoute
    FROM t_series WHERE Modality IN ('CT', 'MR', 'PT', 'XA', 'RF') AND g_part_idx IS NULL AND (${CONTRAST} OR u(g_key, 'contrast') < 0.08)
      AND NOT (instanceCount <= 3 AND Modality = 'CT') ORDER BY 1`);
  await run(`CREATE TABLE t_volume_geometry_index AS
    WITH s AS (SELECT SeriesInstanceUID, g_key, instanceCount, u(g_key, 'vreg') < ${VOLUME_SHARE} AS ok, u(g_key, 'vwhy') AS why
      FROM t_series WHERE Modality IN ('CT', 'MR', 'PT') AND g_part_idx IS NULL AND SOPClassUID IN (${lit('1.2.840.10008.5.1.4.1.1.2')}, ${lit('1.2.840.10008.5.1.4.1.1.4')}, ${lit('1.2.840.10008.5.1.4.1.1.128')})
        AND NOT ${LOCALIZER} AND NOT regexp_matches(coalesce(SeriesDescription, ''), '(?i)mip')),
    v AS (
      SELECT SeriesInstanceUID,
        ok OR why >= 0.1 AS single_orientation, ok OR why < 0.1 OR why >= 0.3 AS orthogonal_orientation,
        ok OR why < 0.3 OR why >= 0.45 AS unique_slice_positions, TRUE AS consistent_in_plane_row, TRUE AS consistent_in_plane_col,
        ok OR why < 0.45 OR why >= 0.55 AS consistent_pixel_spacing, ok OR why < 0.55 OR why >= 0.65 AS consistent_image_dimensions,
        CASE WHEN instanceCount = 1 THEN NULL ELSE ok OR why < 0.65 END AS uniform_slice_spacing,
        CASE WHEN ok OR why < 0.1 OR why >= 0.3 THEN 0.0 ELSE round(1 + 20 * u(g_key, 'obl'), 2) END AS obliquity_degrees
      FROM s)
    SELECT *, (single_orientation AND orthogonal_orientation AND unique_slice_positions AND consistent_in_plane_row AND consistent_in_plane_col
      AND consistent_pixel_spacing AND consistent_image_dimensions AND coalesce(uniform_slice_spacing, false)) AS regularly_spaced_3d_volume
    FROM v ORDER BY regularly_spaced_3d_volume DESC, SeriesInstanceUID`);
}
