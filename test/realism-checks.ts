// Realism checks of a built dataset: what published IDC queries rely on (the
// items of the realism issue) and invariants that tie the tables together.
// Expected values are facts of the real release (v25, idc-index-data 25.0.5),
// written here, or SQL over the dataset itself; never the generator's code.
// data-realism.test.ts runs them on the test dataset.

import assert from 'node:assert/strict';

export interface Db {
  scalar: (sql: string) => Promise<number>;
  rows: (sql: string) => Promise<Record<string, unknown>[]>;
}

export interface Check {
  name: string;
  run: (db: Db) => Promise<void>;
}

const SM_SEG = `FROM seg_index s JOIN "index" src ON src.SeriesInstanceUID = s.segmented_SeriesInstanceUID`;

/** Location words of TCIA's collection pages, which slide metadata never uses for a structure. */
const TCIA_LOCATIONS = `('Chest', 'Head-Neck', 'Various', 'Extremities', 'Abdomen, Pelvis', 'Chest-Abdomen-Pelvis', 'Intraocular', 'Testicles', 'Mesothelium')`;

/** Body parts of head imaging (what brain collections show in the real release). */
const HEAD_PARTS = `('BRAIN', 'HEAD', 'HEADNECK', 'NECK', 'SKULL', 'CSPINE', 'SPINE', 'UNKNOWN', 'OTHER')`;

export const CHECKS: Check[] = [
  // 1. Slide-microscopy derived objects.
  {
    name: 'slides have derived objects: SEG of slides with Nucleus segments; pan_cancer_nuclei_seg_dicom ships ANN and SEG; tcga_luad has SEG',
    run: async (db) => {
      assert.ok((await db.scalar(`SELECT count(*) ${SM_SEG} WHERE src.Modality = 'SM'`)) > 0, 'no SEG segments a slide');
      assert.ok((await db.scalar(`SELECT count(*) FROM seg_index WHERE list_contains(SegmentedPropertyType_CodeMeanings, 'Nucleus')`)) > 0, "no segment 'Nucleus'");
      const pan = (await db.rows(`SELECT DISTINCT Modality AS m FROM "index" WHERE analysis_result_id = 'pan_cancer_nuclei_seg_dicom' ORDER BY 1`)).map((r) => r.m);
      assert.deepEqual(pan, ['ANN', 'SEG']);
      assert.ok((await db.scalar(`SELECT count(*) FROM "index" WHERE collection_id = 'tcga_luad' AND Modality = 'SEG'`)) > 0, 'tcga_luad has no SEG');
    },
  },
  {
    name: 'parametric maps and presentation states exist; some SR lives in a study with a slide',
    run: async (db) => {
      assert.ok((await db.scalar(`SELECT count(*) FROM "index" WHERE SOPClassUID = '1.2.840.10008.5.1.4.1.1.30'`)) > 0, 'no Parametric Map');
      assert.ok((await db.scalar(`SELECT count(*) FROM "index" WHERE Modality = 'PR'`)) > 0, 'no presentation state');
      assert.ok(
        (await db.scalar(`SELECT count(*) FROM "index" sr JOIN "index" sm USING (StudyInstanceUID) WHERE sr.Modality = 'SR' AND sm.Modality = 'SM'`)) > 0,
        'no SR in a study with a slide',
      );
    },
  },
  {
    name: 'slides are not all brightfield, and annotation groups have more than three labels',
    run: async (db) => {
      assert.ok((await db.scalar(`SELECT count(DISTINCT illuminationType_CodeMeaning) FROM sm_index`)) >= 2);
      assert.ok((await db.scalar(`SELECT count(DISTINCT AnnotationGroupLabel) FROM ann_group_index`)) > 3);
    },
  },
  // 2. Collections IDC's tutorials use.
  {
    name: 'collections of the IDC tutorials exist, and acrin_6698 has its clinical table',
    run: async (db) => {
      for (const id of ['acrin_6698', 'hcc_tace_seg', 'rms_mutation_prediction', 'acrin_nsclc_fdg_pet', 'upenn_gbm', 'ccdi_mci']) {
        assert.ok((await db.scalar(`SELECT count(*) FROM "index" WHERE collection_id = '${id}'`)) > 0, `no series of ${id}`);
        assert.equal(await db.scalar(`SELECT count(*) FROM collections_index WHERE collection_id = '${id}'`), 1, `${id} not in collections_index`);
      }
      assert.ok((await db.scalar(`SELECT count(*) FROM clinical_index WHERE collection_id = 'acrin_6698' AND short_table_name = 'acrin_6698_clinical'`)) > 0);
    },
  },
  // 3. Pathology metadata.
  {
    name: 'TCGA slide barcodes use sample codes 01, 06 and 11, in agreement with the slide modifier',
    run: async (db) => {
      const codes = (await db.rows(`SELECT DISTINCT split_part(ContainerIdentifier, '-', 4)[1:2] AS c FROM sm_index WHERE ContainerIdentifier LIKE 'TCGA-%' ORDER BY 1`)).map((r) => r.c);
      for (const c of ['01', '06', '11']) assert.ok(codes.includes(c), `no TCGA slide with sample code ${c}: ${codes.join(', ')}`);
      assert.equal(
        await db.scalar(`SELECT count(*) FROM sm_index WHERE ContainerIdentifier LIKE 'TCGA-%' AND (
          (split_part(ContainerIdentifier, '-', 4)[1:2] = '11') <> (primaryAnatomicStructureModifier_CodeMeaning = 'Normal') OR
          (split_part(ContainerIdentifier, '-', 4)[1:2] = '06') <> (primaryAnatomicStructureModifier_CodeMeaning = 'Neoplasm, Metastatic'))`),
        0,
      );
    },
  },
  {
    name: 'frozen TCGA sections are not embedded in paraffin, diagnostic slides are',
    run: async (db) => {
      const kinds = await db.rows(`SELECT regexp_extract(ContainerIdentifier, '-(TS|BS|DX)[0-9A-Z]$', 1) AS k, embeddingMedium_CodeMeaning AS e, count(*)::INTEGER AS n
        FROM sm_index WHERE ContainerIdentifier LIKE 'TCGA-%' GROUP BY ALL`);
      assert.ok(kinds.some((r) => r.k === 'DX') && kinds.some((r) => r.k === 'TS' || r.k === 'BS'), JSON.stringify(kinds));
      for (const r of kinds) {
        const paraffin = (r.e as string[]).includes('Paraffin wax');
        assert.equal(paraffin, r.k === 'DX', `${String(r.k)} slides embedded in ${JSON.stringify(r.e)}`);
      }
    },
  },
  {
    name: 'slide anatomy is a SNOMED structure, stains vary, admitting diagnoses are present',
    run: async (db) => {
      assert.equal(await db.scalar(`SELECT count(*) FROM sm_index WHERE primaryAnatomicStructure_CodeMeaning IN ${TCIA_LOCATIONS}`), 0);
      assert.equal(
        await db.scalar(`SELECT count(*) FROM sm_index s JOIN "index" i USING (SeriesInstanceUID) WHERE i.collection_id IN ('tcga_luad', 'tcga_lusc', 'cptac_luad') AND primaryAnatomicStructure_CodeMeaning <> 'Lung'`),
        0,
      );
      assert.ok((await db.scalar(`SELECT count(DISTINCT staining_usingSubstance_CodeMeaning) FROM sm_index`)) > 2);
      assert.ok((await db.scalar(`SELECT count(*) FROM sm_index WHERE admittingDiagnosis_CodeMeaning IS NOT NULL`)) > 0);
    },
  },
  // 4. Collections agree with their own metadata.
  {
    name: "a collection's body parts agree with where its tumors are (brain collections image the head; tcga_luad and tcga_lusc the chest)",
    run: async (db) => {
      // Real v25: every series of a collection located in the brain is NULL or one of these (upenn_gbm, remind, tcga_lgg).
      const bad = await db.rows(`SELECT c.collection_id, avg((coalesce(i.BodyPartExamined, 'BRAIN') NOT IN ${HEAD_PARTS})::INTEGER) AS share
        FROM collections_index c JOIN "index" i USING (collection_id) WHERE c.tumor_locations = 'Brain' GROUP BY 1 HAVING share > 0.1`);
      assert.deepEqual(bad, []);
      // Real v25: tcga_luad has CHEST, LUNG or NULL; tcga_lusc LUNG or NULL.
      const lung = await db.rows(`SELECT DISTINCT collection_id, BodyPartExamined AS bp FROM "index"
        WHERE collection_id IN ('tcga_luad', 'tcga_lusc') AND BodyPartExamined NOT IN ('CHEST', 'LUNG', 'THORAX')`);
      assert.deepEqual(lung, []);
    },
  },
  {
    name: 'source modalities in collections_index are the modalities of the original series of each source DOI',
    run: async (db) => {
      const bad = await db.rows(`WITH s AS (SELECT collection_id, lower(src.source_doi) AS doi, src.modalities AS m FROM collections_index, unnest(sources) AS t(src)
          WHERE src.source_type <> 'analysis_result'),
        i AS (SELECT collection_id, lower(source_DOI) AS doi, string_agg(DISTINCT Modality, ', ' ORDER BY Modality) AS m FROM "index"
          WHERE analysis_result_id IS NULL GROUP BY ALL)
        SELECT * FROM s FULL JOIN i USING (collection_id, doi) WHERE s.m IS DISTINCT FROM i.m`);
      assert.deepEqual(bad, []);
    },
  },
  {
    name: 'analysis_results_index lists exactly the collections, modalities and subjects of its series',
    run: async (db) => {
      const bad = await db.rows(`WITH i AS (SELECT analysis_result_id, string_agg(DISTINCT collection_id, ', ' ORDER BY collection_id) AS c,
          string_agg(DISTINCT Modality, ', ' ORDER BY Modality) AS m, count(DISTINCT PatientID) AS p FROM "index" WHERE analysis_result_id IS NOT NULL GROUP BY 1)
        SELECT * FROM analysis_results_index a FULL JOIN i USING (analysis_result_id) WHERE a.collections IS DISTINCT FROM i.c OR a.modalities IS DISTINCT FROM i.m OR a.subjects IS DISTINCT FROM i.p`);
      assert.deepEqual(bad, []);
    },
  },
  // 5. Radiology.
  {
    name: 'brain tumors are segmented on MR, and some segmentations are semi-automatic',
    run: async (db) => {
      assert.ok(
        (await db.scalar(`${'SELECT count(*)'} ${SM_SEG} JOIN collections_index c ON c.collection_id = src.collection_id WHERE src.Modality = 'MR' AND c.tumor_locations = 'Brain'`)) > 0,
        'no segmentation of a brain MR',
      );
      assert.ok((await db.scalar(`SELECT count(*) FROM seg_index WHERE AlgorithmType LIKE '%SEMIAUTOMATIC%'`)) > 0);
    },
  },
  {
    name: 'PET: several tracers; static series have no NumberOfTimeSlices',
    run: async (db) => {
      assert.ok((await db.scalar(`SELECT count(DISTINCT Radiopharmaceutical) FROM pt_index`)) >= 2);
      assert.equal(await db.scalar(`SELECT count(*) FROM pt_index WHERE SeriesType NOT LIKE 'DYNAMIC%' AND NumberOfTimeSlices IS NOT NULL`), 0);
      assert.equal(await db.scalar(`SELECT count(*) FROM pt_index WHERE SeriesType LIKE 'DYNAMIC%' AND coalesce(NumberOfTimeSlices, 0) < 2`), 0);
    },
  },
  {
    name: 'MR: some multi-echo series; b-values only on diffusion series (NULL elsewhere, never an empty list)',
    run: async (db) => {
      assert.ok((await db.scalar(`SELECT count(*) FROM mr_index WHERE len(EchoTime) > 1`)) > 0);
      assert.equal(await db.scalar(`SELECT count(*) FROM mr_index WHERE DiffusionBValue = []`), 0);
      assert.ok((await db.scalar(`SELECT count(*) FROM mr_index WHERE DiffusionBValue IS NULL`)) > 0);
      assert.ok((await db.scalar(`SELECT count(*) FROM mr_index WHERE len(DiffusionBValue) > 1`)) > 0);
    },
  },
  {
    name: 'the share of regular 3D volumes differs between collections more than sampling alone would make it',
    run: async (db) => {
      // Dispersion index of the per-collection shares: about 1 when every collection has the same share.
      const d = await db.scalar(`WITH t AS (SELECT i.collection_id, count(*) AS n, avg(v.regularly_spaced_3d_volume::INTEGER) AS s
          FROM volume_geometry_index v JOIN "index" i USING (SeriesInstanceUID) GROUP BY 1 HAVING count(*) >= 10),
        p AS (SELECT sum(s * n) / sum(n) AS p FROM t)
        SELECT sum((s - p) * (s - p) * n / (p * (1 - p))) / (count(*) - 1) FROM t, p`);
      assert.ok(d > 3, `dispersion index ${d}`);
    },
  },
  // 6. Segmentation types agree with their SOP class.
  {
    name: 'LABELMAP segmentations, and only they, use the Label Map Segmentation SOP class',
    run: async (db) => {
      assert.equal(
        await db.scalar(`SELECT count(*) FROM seg_index s JOIN "index" i USING (SeriesInstanceUID)
          WHERE (s.SegmentationType = 'LABELMAP') <> (i.SOPClassUID = '1.2.840.10008.5.1.4.1.1.66.7')`),
        0,
      );
    },
  },
  // 7. Scale.
  {
    name: 'every collection and analysis result of the real release (179 and 26 in v25) is present',
    run: async (db) => {
      assert.equal(await db.scalar(`SELECT count(*) FROM collections_index`), 179);
      assert.equal(await db.scalar(`SELECT count(DISTINCT collection_id) FROM "index"`), 179);
      assert.equal(await db.scalar(`SELECT count(*) FROM analysis_results_index`), 26);
    },
  },
  {
    name: 'slides are as common among original series as in the real release (76,300 of 570,108: 13.4%)',
    run: async (db) => {
      const share = await db.scalar(`SELECT avg((Modality = 'SM')::INTEGER) FROM "index" WHERE analysis_result_id IS NULL`);
      assert.ok(Math.abs(share / (76300 / 570108) - 1) < 0.35, `slides are ${share} of the original series`);
    },
  },
  // 8. Analysis results carry their real DOIs.
  {
    name: 'analysis results carry their real DOIs',
    run: async (db) => {
      assert.equal(await db.scalar(`SELECT count(*) FROM analysis_results_index WHERE source_DOI LIKE '10.5555/%'`), 0);
      assert.equal(await db.scalar(`SELECT count(*) FROM "index" WHERE source_DOI LIKE '10.5555/%'`), 0);
      const doi = async (id: string) => (await db.rows(`SELECT source_DOI AS d FROM analysis_results_index WHERE analysis_result_id = '${id}'`))[0]?.d;
      assert.equal(await doi('pan_cancer_nuclei_seg_dicom'), '10.5281/zenodo.11099004');
      assert.equal(await doi('totalsegmentator_ct_segmentations'), '10.5281/zenodo.8347011');
      assert.equal(await doi('nnu_net_bpr_annotations'), '10.5281/zenodo.7473970');
    },
  },
  // Invariants.
  {
    name: 'derived objects reference an image series of their own study, patient and collection',
    run: async (db) => {
      for (const [table, col] of [['seg_index', 'segmented_SeriesInstanceUID'], ['ann_index', 'referenced_SeriesInstanceUID'], ['rtstruct_index', 'referenced_SeriesInstanceUID']]) {
        const bad = await db.scalar(`SELECT count(*) FROM ${table} t JOIN "index" d USING (SeriesInstanceUID) LEFT JOIN "index" s ON s.SeriesInstanceUID = t.${col}
          WHERE s.SeriesInstanceUID IS NULL OR s.StudyInstanceUID <> d.StudyInstanceUID OR s.PatientID <> d.PatientID OR s.collection_id <> d.collection_id
            OR s.Modality IN ('SEG', 'SR', 'ANN', 'RTSTRUCT', 'RTPLAN', 'RTDOSE', 'PR', 'KO', 'REG')`);
        assert.equal(bad, 0, table);
      }
      assert.equal(await db.scalar(`SELECT count(*) FROM ann_index a JOIN "index" s ON s.SeriesInstanceUID = a.referenced_SeriesInstanceUID WHERE s.Modality <> 'SM'`), 0);
    },
  },
];
