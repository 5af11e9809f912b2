// What derived objects contain: segment labels (SNOMED CT code meanings and
// their categories), algorithms, RT structure names and annotation groups,
// for each analysis result and for the segmentations collections ship
// themselves. Written from the public descriptions of these datasets; the
// index tables of the release do not carry them.

import type { Structure } from './anatomy.ts';

export type Label = [meaning: string, category: string];

export interface SegSpec {
  algorithm: string | null;
  /** AlgorithmType as seg_index spells it: one type, or several comma-joined. */
  type: string;
  segType: 'BINARY' | 'FRACTIONAL';
  labels: Label[];
  /** Each series carries a random subset of at least this many labels (all when absent). */
  subsetMin?: number;
}

const A = 'Anatomical Structure';
const M = 'Morphologically Altered Structure';
const T = 'Tissue';
const C = 'Cell';

const NEOPLASM: Label = ['Neoplasm', M];
const NODULE: Label = ['Nodule', M];

/** Organs TotalSegmentator delineates on CT (a subset of its classes). */
const TOTALSEG: Label[] = [
  'Spleen', 'Kidney', 'Gallbladder', 'Liver', 'Stomach', 'Aorta', 'Inferior vena cava', 'Portal vein and splenic vein', 'Pancreas',
  'Adrenal gland', 'Upper lobe of left lung', 'Lower lobe of left lung', 'Upper lobe of right lung', 'Middle lobe of right lung',
  'Lower lobe of right lung', 'Esophagus', 'Trachea', 'Small intestine', 'Duodenum', 'Colon', 'Urinary bladder', 'Heart', 'Pulmonary artery',
  'Thoracic vertebra', 'Lumbar vertebra', 'Rib', 'Sternum', 'Humerus', 'Scapula', 'Clavicle', 'Femur', 'Hip', 'Sacrum',
  'Gluteus maximus muscle', 'Iliopsoas muscle', 'Autochthon muscle', 'Thyroid gland', 'Spinal cord', 'Brachiocephalic trunk',
  'Left common carotid artery', 'Left subclavian artery', 'Superior vena cava', 'Left atrium of heart', 'Left ventricle of heart',
].map((x) => [x, A]);

/** Organ (and tumor) labels of an AI model run on a collection, by the collection's structure. */
function organModel(s: Structure | undefined, modality: string): Label[] {
  switch (s?.meaning) {
    case 'Lung':
      return modality === 'PT' ? [NEOPLASM] : [['Lung', A], NEOPLASM];
    case 'Kidney':
      return [['Kidney', A], NEOPLASM, ['Cyst', M]];
    case 'Liver':
      return [['Liver', A], NEOPLASM];
    case 'Prostate':
      return [['Prostate', A], NEOPLASM];
    case 'Breast':
      return modality === 'MR' ? [['Breast', A], ['Fibroglandular tissue of breast', T], NEOPLASM] : [NEOPLASM];
    case 'Brain':
      return [['Necrosis', M], ['Edema', M], ['Enhancing tumor', M]];
    default:
      return [NEOPLASM];
  }
}

/** Segmentation spec of an analysis result's SEG series in a collection. */
export function analysisSegSpec(id: string, s: Structure | undefined, source: string): SegSpec {
  switch (id) {
    case 'totalsegmentator_ct_segmentations':
      return { algorithm: 'TotalSegmentator', type: 'AUTOMATIC', segType: 'BINARY', labels: TOTALSEG, subsetMin: 20 };
    case 'bamf_aimi_annotations':
      return { algorithm: `BAMF-${s?.meaning ?? 'Tumor'}-${source}`, type: 'AUTOMATIC', segType: 'BINARY', labels: organModel(s, source) };
    case 'nnu_net_bpr_annotations':
      return { algorithm: 'nnU-Net', type: 'AUTOMATIC', segType: 'BINARY', labels: [['Lung', A], ['Heart', A], NEOPLASM], subsetMin: 1 };
    case 'pan_cancer_nuclei_seg_dicom':
      return { algorithm: 'Pan-Cancer-Nuclei-Seg', type: 'AUTOMATIC', segType: 'BINARY', labels: [['Nucleus', C]] };
    case 'tcga_sbu_til_maps':
      return { algorithm: 'SBU TIL-Map', type: 'AUTOMATIC', segType: 'FRACTIONAL', labels: [['Lymphocyte', C], NEOPLASM], subsetMin: 1 };
    case 'rms_mutation_prediction_expert_annotations':
      return {
        algorithm: 'RMS tissue classifier', type: 'AUTOMATIC,MANUAL', segType: 'BINARY',
        labels: [['Rhabdomyosarcoma', M], ['Stroma', T], ['Necrosis', M], ['Skeletal muscle tissue', T]], subsetMin: 2,
      };
    case 'dicom_lidc_idri_nodules':
    case 'lidc_annot_nlst501':
      return { algorithm: null, type: 'MANUAL', segType: 'BINARY', labels: [NODULE] };
    case 'qiba_volct_1b':
    case 'qin_lungct_seg':
      return { algorithm: 'Lesion Sizing Toolkit', type: 'SEMIAUTOMATIC', segType: 'BINARY', labels: [NODULE] };
    case 'pancreas_ct_seg':
      return { algorithm: null, type: 'MANUAL', segType: 'BINARY', labels: [['Pancreas', A]] };
    case 'prostatex_seg_hires':
      return { algorithm: null, type: 'MANUAL', segType: 'BINARY', labels: [['Prostate', A]] };
    case 'prostatex_seg_zones':
      return {
        algorithm: null, type: 'MANUAL', segType: 'BINARY',
        labels: [['Peripheral zone of the prostate', A], ['Transition zone of the prostate', A], ['Anterior fibromuscular stroma of prostate', A], ['Urethra', A]],
      };
    case 'prostate_mri_us_biopsy_dicom_annotations':
      return { algorithm: 'UroNav', type: 'SEMIAUTOMATIC', segType: 'BINARY', labels: [['Prostate', A], NEOPLASM], subsetMin: 1 };
    case 'rcc_aid':
      return { algorithm: null, type: 'MANUAL', segType: 'BINARY', labels: [['Kidney', A], ['Mass', M], ['Cyst', M]], subsetMin: 1 };
    default:
      // Expert tumor delineations (nlstseg, rider_lungct_seg, eay131_tumor_annotations, ...).
      return { algorithm: null, type: 'MANUAL', segType: 'BINARY', labels: [NEOPLASM] };
  }
}

/** Segmentation spec of a collection's own SEG series, from its description and anatomy. */
export function collectionSegSpec(description: string | null, s: Structure | undefined): SegSpec {
  const d = (description ?? '').toLowerCase();
  const semi = /thresh|volser|analysis mask|voi|semi/.test(d);
  const base = { algorithm: semi ? 'Threshold region growing' : null, type: semi ? 'SEMIAUTOMATIC' : 'MANUAL', segType: 'BINARY' as const };
  if (/nodule/.test(d)) return { ...base, labels: [NODULE] };
  if (/lymph/.test(d)) return { ...base, labels: [['Lymph node', A]] };
  if (/breast tissue/.test(d)) return { ...base, labels: [['Breast', A]] };
  if (/cerebrum|ventricle/.test(d)) return { ...base, labels: [['Cerebrum', A], ['Cerebral ventricle', A]], subsetMin: 1 };
  if (/spine|vertebra/.test(d)) return { ...base, labels: [['Vertebral column', A], NEOPLASM], subsetMin: 1 };
  if (/liver/.test(d)) return { ...base, labels: [['Liver', A]] };
  if (s?.meaning === 'Brain') return { ...base, labels: [NEOPLASM, ['Edema', M], ['Necrosis', M], ['Brain', A]], subsetMin: 1 };
  if (s && !['Soft tissue', 'Bone'].includes(s.meaning)) return { ...base, labels: [NEOPLASM, [s.meaning, A]], subsetMin: 1 };
  return { ...base, labels: [NEOPLASM] };
}

/** ROI names of RT structure sets, by structure. */
export function rtRois(s: Structure | undefined, analysis: boolean): string[] {
  if (analysis) return ['Tumor', 'GTV', 'Lesion'];
  switch (s?.meaning) {
    case 'Lung':
      return ['GTV-1', 'Lung-Left', 'Lung-Right', 'Heart', 'Esophagus', 'SpinalCord', 'External'];
    case 'Brain':
      return ['TV', 'Cochlea_L', 'Cochlea_R', 'Brainstem', 'External'];
    case 'Head and neck':
      return ['GTVp', 'GTVn', 'CTV_High', 'Parotid_L', 'Parotid_R', 'SpinalCord', 'Mandible', 'External'];
    case 'Prostate':
      return ['Prostate', 'Bladder', 'Rectum', 'FemoralHead_L', 'FemoralHead_R', 'PTV', 'External'];
    case 'Pancreas':
      return ['GTV', 'Duodenum', 'Stomach', 'Bowel', 'Liver', 'Kidney_L', 'Kidney_R'];
    default:
      return ['GTV', 'CTV', 'PTV', 'External', 'BODY'];
  }
}

export interface AnnGroup {
  label: string;
  property: [meaning: string, code: string];
  category: [meaning: string, code: string];
  graphic: string;
}

const CELL: [string, string] = ['Cell', 'SCT:4421005'];
const TISSUE_CAT: [string, string] = ['Tissue', 'SCT:85756007'];
const STRUCT_CAT: [string, string] = ['Anatomical structure', 'SCT:91723000'];

/** Annotation groups of microscopy bulk annotations, by analysis result or collection. */
export function annGroups(key: string): AnnGroup[] {
  if (key === 'pan_cancer_nuclei_seg_dicom') return [{ label: 'Nuclei', property: ['Nucleus', 'SCT:84640000'], category: STRUCT_CAT, graphic: 'POLYGON' }];
  if (key === 'bonemarrowwsi_pediatricleukemia') {
    return [
      ['Neutrophil', 'SCT:30451008'], ['Lymphocyte', 'SCT:56972008'], ['Monocyte', 'SCT:67776007'], ['Eosinophil', 'SCT:14291002'],
      ['Blast cell', 'SCT:312256009'], ['Erythroblast', 'SCT:34058008'], ['Plasma cell', 'SCT:14135008'],
    ].map(([m, c]) => ({ label: `${m} bounding boxes`, property: [m!, c!] as [string, string], category: CELL, graphic: 'RECTANGLE' }));
  }
  return [
    ['Tumor', 'Neoplasm', 'SCT:108369006'], ['Necrosis', 'Necrosis', 'SCT:6574001'], ['Stroma', 'Stroma', 'SCT:55123005'],
    ['Epidermis', 'Epidermis', 'SCT:55988001'], ['Dermis', 'Dermis', 'SCT:53534000'], ['Inflammation', 'Inflammation', 'SCT:257552002'],
  ].map(([l, m, c]) => ({ label: l!, property: [m!, c!] as [string, string], category: TISSUE_CAT, graphic: 'POLYGON' }));
}
