// Public facts and distributions the generator draws from: real collection ids
// with their cancer types, locations, species, programs, DOIs and licenses;
// study templates per imaging profile; analysis results; vocabularies.

export interface RealCollection {
  id: string;
  name: string;
  cancer: string;
  location: string;
  species: string;
  program: string;
  doi: string;
  license: string;
  /** Relative number of patients at scale 1.0. */
  patients: number;
  /** Study templates with weights. */
  profile: Record<string, number>;
  supporting?: string;
  /** PatientID pattern: {n} zero-padded index, {tcga} a TCGA-style barcode. */
  pid: string;
  uid?: 'tcia' | 'nlst';
  /** Collection may contain head scans (kept in the second bucket of the primary store). */
  head?: boolean;
  sex?: 'F' | 'M';
  years?: [number, number];
  /** Release in which the collection first appeared. */
  since?: number;
  clinicalTables?: string[];
}

const CT = { ct_chest: 1 };
const TCGA_PROFILE = { sm: 6, ct_chest: 1, ct_abd: 1, mr_brain: 0.5, petct: 0.3 };

export const REAL_COLLECTIONS: RealCollection[] = [
  { id: 'nlst', name: 'NLST', cancer: 'Lung Cancer', location: 'Chest', species: 'Human', program: 'NCI Trials', doi: '10.7937/TCIA.HMQ8-J677', license: 'CC BY 4.0', patients: 17000, profile: { ct_chest: 1 }, supporting: 'Clinical', pid: '{nlst}', uid: 'nlst', years: [1999, 2004], since: 4, clinicalTables: ['nlst_canc', 'nlst_ctab', 'nlst_ctabc', 'nlst_prsn', 'nlst_screen'] },
  { id: 'lidc_idri', name: 'LIDC-IDRI', cancer: 'Lung Cancer', location: 'Chest', species: 'Human', program: 'Community', doi: '10.7937/K9/TCIA.2015.LO9QL9SX', license: 'CC BY 3.0', patients: 1010, profile: { ct_chest: 8, dx: 1 }, supporting: 'Image Analyses', pid: 'LIDC-IDRI-{n4}', since: 1 },
  { id: 'nsclc_radiomics', name: 'NSCLC-Radiomics', cancer: 'Non-small Cell Lung Cancer', location: 'Chest', species: 'Human', program: 'Community', doi: '10.7937/K9/TCIA.2015.PF0M9REI', license: 'CC BY-NC 3.0', patients: 422, profile: { rt: 1 }, supporting: 'Clinical', pid: 'LUNG1-{n3}', since: 2 },
  { id: 'nsclc_radiomics_interobserver1', name: 'NSCLC-Radiomics-Interobserver1', cancer: 'Non-small Cell Lung Cancer', location: 'Chest', species: 'Human', program: 'Community', doi: '10.7937/tcia.2019.cwvlpd26', license: 'CC BY-NC 3.0', patients: 22, profile: { rt: 1 }, pid: 'interobs{n2}', since: 7 },
  { id: 'nsclc_radiogenomics', name: 'NSCLC Radiogenomics', cancer: 'Non-small Cell Lung Cancer', location: 'Chest', species: 'Human', program: 'Community', doi: '10.7937/K9/TCIA.2017.7hs46erv', license: 'CC BY 3.0', patients: 211, profile: { ct_chest: 3, petct: 1, sm: 0.5 }, supporting: 'Clinical, Genomics', pid: 'R01-{n3}', since: 2 },
  { id: 'lctsc', name: 'LCTSC', cancer: 'Lung Cancer', location: 'Chest', species: 'Human', program: 'Community', doi: '10.7937/K9/TCIA.2017.3r3fvz08', license: 'CC BY 3.0', patients: 60, profile: { rt: 1 }, pid: 'LCTSC-Train-S1-{n3}', since: 2 },
  { id: '4d_lung', name: '4D-Lung', cancer: 'Non-small Cell Lung Cancer', location: 'Chest', species: 'Human', program: 'Community', doi: '10.7937/K9/TCIA.2016.ELN8YGLE', license: 'CC BY 3.0', patients: 20, profile: { rt: 1, ct_chest: 2 }, pid: '1{n2}_HM10395', since: 2 },
  { id: 'tcga_luad', name: 'TCGA-LUAD', cancer: 'Lung Adenocarcinoma', location: 'Chest', species: 'Human', program: 'TCGA', doi: '10.7937/K9/TCIA.2016.JGNIHEP5', license: 'CC BY 3.0', patients: 520, profile: TCGA_PROFILE, supporting: 'Clinical, Genomics', pid: '{tcga}', since: 1, clinicalTables: ['tcga_luad_clinical'] },
  { id: 'tcga_lusc', name: 'TCGA-LUSC', cancer: 'Lung Squamous Cell Carcinoma', location: 'Chest', species: 'Human', program: 'TCGA', doi: '10.7937/K9/TCIA.2016.TYGKKFMQ', license: 'CC BY 3.0', patients: 500, profile: TCGA_PROFILE, supporting: 'Clinical, Genomics', pid: '{tcga}', since: 1 },
  { id: 'tcga_brca', name: 'TCGA-BRCA', cancer: 'Breast Cancer', location: 'Breast', species: 'Human', program: 'TCGA', doi: '10.7937/K9/TCIA.2016.AB2NAZRP', license: 'CC BY 3.0', patients: 1098, profile: { sm: 10, mr_breast: 1, mg: 0.3 }, supporting: 'Clinical, Genomics', pid: '{tcga}', sex: 'F', since: 1 },
  { id: 'tcga_gbm', name: 'TCGA-GBM', cancer: 'Glioblastoma', location: 'Brain', species: 'Human', program: 'TCGA', doi: '10.7937/K9/TCIA.2016.RNYFUYE9', license: 'CC BY 3.0', patients: 600, profile: { sm: 3, mr_brain: 2 }, supporting: 'Clinical, Genomics', pid: '{tcga}', head: true, since: 1 },
  { id: 'tcga_lgg', name: 'TCGA-LGG', cancer: 'Low Grade Glioma', location: 'Brain', species: 'Human', program: 'TCGA', doi: '10.7937/K9/TCIA.2016.L4LTD3TK', license: 'CC BY 3.0', patients: 515, profile: { sm: 3, mr_brain: 1 }, supporting: 'Clinical, Genomics', pid: '{tcga}', head: true, since: 1 },
  { id: 'tcga_kirc', name: 'TCGA-KIRC', cancer: 'Kidney Renal Clear Cell Carcinoma', location: 'Kidney', species: 'Human', program: 'TCGA', doi: '10.7937/K9/TCIA.2016.V6PBVTDR', license: 'CC BY 3.0', patients: 530, profile: { sm: 4, ct_abd: 2, mr_abd: 0.5 }, supporting: 'Clinical, Genomics', pid: '{tcga}', since: 1 },
  { id: 'tcga_ov', name: 'TCGA-OV', cancer: 'Ovarian Cancer', location: 'Ovary', species: 'Human', program: 'TCGA', doi: '10.7937/K9/TCIA.2016.NDO1MDFQ', license: 'CC BY 3.0', patients: 590, profile: { sm: 4, ct_abd: 1 }, supporting: 'Clinical, Genomics', pid: '{tcga}', sex: 'F', since: 1 },
  { id: 'tcga_prad', name: 'TCGA-PRAD', cancer: 'Prostate Cancer', location: 'Prostate', species: 'Human', program: 'TCGA', doi: '10.7937/K9/TCIA.2016.YXOGLM4Y', license: 'CC BY 3.0', patients: 500, profile: { sm: 5, mr_prostate: 1 }, supporting: 'Clinical, Genomics', pid: '{tcga}', sex: 'M', since: 1 },
  { id: 'tcga_coad', name: 'TCGA-COAD', cancer: 'Colon Adenocarcinoma', location: 'Colon', species: 'Human', program: 'TCGA', doi: '10.7937/K9/TCIA.2016.HJJHBOXZ', license: 'CC BY 3.0', patients: 460, profile: { sm: 5, ct_abd: 1 }, supporting: 'Clinical, Genomics', pid: '{tcga}', since: 1 },
  { id: 'tcga_hnsc', name: 'TCGA-HNSC', cancer: 'Head and Neck Squamous Cell Carcinoma', location: 'Head-Neck', species: 'Human', program: 'TCGA', doi: '10.7937/K9/TCIA.2016.LXKQ47MS', license: 'CC BY 3.0', patients: 530, profile: { sm: 4, ct_head: 1, petct: 0.5 }, supporting: 'Clinical, Genomics', pid: '{tcga}', head: true, since: 1 },
  { id: 'tcga_lihc', name: 'TCGA-LIHC', cancer: 'Liver Hepatocellular Carcinoma', location: 'Liver', species: 'Human', program: 'TCGA', doi: '10.7937/K9/TCIA.2016.IMMQW8UQ', license: 'CC BY 3.0', patients: 380, profile: { sm: 4, ct_abd: 1, mr_abd: 1 }, supporting: 'Clinical, Genomics', pid: '{tcga}', since: 1 },
  { id: 'tcga_ucec', name: 'TCGA-UCEC', cancer: 'Uterine Corpus Endometrial Carcinoma', location: 'Uterus', species: 'Human', program: 'TCGA', doi: '10.7937/K9/TCIA.2016.GKJ0ZWAC', license: 'CC BY 3.0', patients: 560, profile: { sm: 4, ct_abd: 1, mr_abd: 0.5 }, supporting: 'Clinical, Genomics', pid: '{tcga}', sex: 'F', since: 1 },
  { id: 'cptac_ccrcc', name: 'CPTAC-CCRCC', cancer: 'Clear Cell Renal Cell Carcinoma', location: 'Kidney', species: 'Human', program: 'CPTAC', doi: '10.7937/K9/TCIA.2018.OBLAMN27', license: 'CC BY 3.0', patients: 222, profile: { sm: 4, ct_abd: 1 }, supporting: 'Clinical, Genomics, Proteomics', pid: 'C3{cptac}', since: 3 },
  { id: 'cptac_luad', name: 'CPTAC-LUAD', cancer: 'Lung Adenocarcinoma', location: 'Chest', species: 'Human', program: 'CPTAC', doi: '10.7937/K9/TCIA.2018.PAT12TBS', license: 'CC BY 3.0', patients: 244, profile: { sm: 4, ct_chest: 1 }, supporting: 'Clinical, Genomics, Proteomics', pid: 'C3{cptac}', since: 3 },
  { id: 'cptac_lscc', name: 'CPTAC-LSCC', cancer: 'Lung Squamous Cell Carcinoma', location: 'Chest', species: 'Human', program: 'CPTAC', doi: '10.7937/K9/TCIA.2018.6EMUB5L2', license: 'CC BY 3.0', patients: 212, profile: { sm: 4, ct_chest: 1 }, supporting: 'Clinical, Genomics, Proteomics', pid: 'C3{cptac}', since: 3 },
  { id: 'cptac_pda', name: 'CPTAC-PDA', cancer: 'Pancreatic Ductal Adenocarcinoma', location: 'Pancreas', species: 'Human', program: 'CPTAC', doi: '10.7937/K9/TCIA.2018.SC20FO18', license: 'CC BY 3.0', patients: 168, profile: { sm: 4, ct_abd: 1, mr_abd: 0.5 }, supporting: 'Clinical, Genomics, Proteomics', pid: 'C3{cptac}', since: 3 },
  { id: 'cptac_ucec', name: 'CPTAC-UCEC', cancer: 'Uterine Corpus Endometrial Carcinoma', location: 'Uterus', species: 'Human', program: 'CPTAC', doi: '10.7937/K9/TCIA.2018.3R3JUISW', license: 'CC BY 3.0', patients: 250, profile: { sm: 4, ct_abd: 1 }, supporting: 'Clinical, Genomics, Proteomics', pid: 'C3{cptac}', sex: 'F', since: 3 },
  { id: 'cptac_gbm', name: 'CPTAC-GBM', cancer: 'Glioblastoma', location: 'Brain', species: 'Human', program: 'CPTAC', doi: '10.7937/K9/TCIA.2018.3RJE41Q1', license: 'CC BY 3.0', patients: 189, profile: { sm: 3, mr_brain: 1 }, supporting: 'Clinical, Genomics, Proteomics', pid: 'C3{cptac}', head: true, since: 3 },
  { id: 'cptac_cm', name: 'CPTAC-CM', cancer: 'Cutaneous Melanoma', location: 'Skin', species: 'Human', program: 'CPTAC', doi: '10.7937/K9/TCIA.2018.ODU24GZE', license: 'CC BY 3.0', patients: 94, profile: { sm: 5, ct_chest: 0.3 }, supporting: 'Clinical, Genomics, Proteomics', pid: 'C3{cptac}', since: 3 },
  { id: 'cptac_sar', name: 'CPTAC-SAR', cancer: 'Sarcoma', location: 'Various', species: 'Human', program: 'CPTAC', doi: '10.7937/TCIA.2019.9bt23r95', license: 'CC BY 3.0', patients: 88, profile: { sm: 4, mr_abd: 0.5, ct_abd: 0.5 }, supporting: 'Clinical, Genomics, Proteomics', pid: 'C3{cptac}', since: 4 },
  { id: 'c4kc_kits', name: 'C4KC-KiTS', cancer: 'Kidney Cancer', location: 'Kidney', species: 'Human', program: 'Community', doi: '10.7937/TCIA.2019.IX49E8NX', license: 'CC BY 4.0', patients: 210, profile: { ct_abd: 1 }, supporting: 'Clinical, Image Analyses', pid: 'KiTS-{n5}', since: 5, clinicalTables: ['c4kc_kits_clinical'] },
  { id: 'prostatex', name: 'PROSTATEx', cancer: 'Prostate Cancer', location: 'Prostate', species: 'Human', program: 'Community', doi: '10.7937/K9TCIA.2017.MURS5CL', license: 'CC BY 3.0', patients: 346, profile: { mr_prostate: 1 }, pid: 'ProstateX-{n4}', sex: 'M', since: 2 },
  { id: 'qin_prostate_repeatability', name: 'QIN-PROSTATE-Repeatability', cancer: 'Prostate Cancer', location: 'Prostate', species: 'Human', program: 'QIN', doi: '10.7937/K9/TCIA.2018.MR1CKGND', license: 'CC BY 3.0', patients: 15, profile: { mr_prostate: 1 }, supporting: 'Image Analyses', pid: 'PCAMPMRI-{n5}', sex: 'M', since: 2 },
  { id: 'rider_lung_ct', name: 'RIDER Lung CT', cancer: 'Non-small Cell Lung Cancer', location: 'Chest', species: 'Human', program: 'RIDER', doi: '10.7937/K9/TCIA.2015.U1X8A5NR', license: 'CC BY 3.0', patients: 32, profile: CT, pid: 'RIDER-{n10}', since: 1 },
  { id: 'rider_lung_pet_ct', name: 'RIDER Lung PET-CT', cancer: 'Lung Cancer', location: 'Chest', species: 'Human', program: 'RIDER', doi: '10.7937/K9/TCIA.2015.OFIP7TVM', license: 'CC BY 3.0', patients: 243, profile: { petct: 2, ct_chest: 1 }, pid: 'RIDER-{n10}', since: 1 },
  { id: 'rider_neuro_mri', name: 'RIDER NEURO MRI', cancer: 'Brain Cancer', location: 'Brain', species: 'Human', program: 'RIDER', doi: '10.7937/K9/TCIA.2015.VOSN3HN1', license: 'CC BY 3.0', patients: 19, profile: { mr_brain: 1 }, pid: 'RIDER Neuro MRI-{n7}', head: true, since: 1 },
  { id: 'rider_pilot', name: 'RIDER Pilot', cancer: 'Lung Cancer', location: 'Chest', species: 'Human', program: 'RIDER', doi: '10.5555/idqs.rider_pilot', license: 'CC BY 3.0', patients: 8, profile: CT, pid: 'RIDER-{n10}', since: 1 },
  { id: 'soft_tissue_sarcoma', name: 'Soft-tissue-Sarcoma', cancer: 'Soft-tissue Sarcoma', location: 'Extremities', species: 'Human', program: 'Community', doi: '10.7937/K9/TCIA.2015.7GO2GSKS', license: 'CC BY 3.0', patients: 51, profile: { petct: 1, mr_abd: 1, rt: 0.5 }, supporting: 'Clinical', pid: 'STS_{n3}', since: 2, clinicalTables: ['soft_tissue_sarcoma_clinical'] },
  { id: 'vestibular_schwannoma_seg', name: 'Vestibular-Schwannoma-SEG', cancer: 'Vestibular Schwannoma', location: 'Brain', species: 'Human', program: 'Community', doi: '10.7937/TCIA.9YTJ-5Q73', license: 'CC BY 4.0', patients: 242, profile: { mr_brain: 1, rt: 0.5 }, supporting: 'Clinical', pid: 'VS-SEG-{n3}', head: true, since: 6, clinicalTables: ['vestibular_schwannoma_seg_clinical'] },
  { id: 'breast_cancer_screening_dbt', name: 'Breast-Cancer-Screening-DBT', cancer: 'Breast Cancer', location: 'Breast', species: 'Human', program: 'Community', doi: '10.7937/e4wt-cd02', license: 'CC BY-NC 4.0', patients: 3000, profile: { dbt: 1 }, supporting: 'Clinical', pid: 'DBT-P{n5}', sex: 'F', since: 11, clinicalTables: ['breast_cancer_screening_dbt_clinical'] },
  { id: 'midrc_ricord_1a', name: 'MIDRC-RICORD-1A', cancer: 'COVID-19', location: 'Lung', species: 'Human', program: 'Community', doi: '10.7937/VTW4-X588', license: 'CC BY-NC 4.0', patients: 110, profile: CT, supporting: 'Clinical, Image Analyses', pid: 'MIDRC-RICORD-1A-{n6}', since: 8, clinicalTables: ['midrc_ricord_1a_clinical'] },
  { id: 'mouse_astrocytoma', name: 'Mouse-Astrocytoma', cancer: 'Astrocytoma', location: 'Brain', species: 'Mouse', program: 'Community', doi: '10.7937/K9TCIA.2017.SGW7CAQW', license: 'CC BY 3.0', patients: 45, profile: { mr_brain: 1 }, pid: 'M{n3}', head: true, since: 4 },
  { id: 'mouse_mammary', name: 'Mouse-Mammary', cancer: 'Breast Cancer', location: 'Breast', species: 'Mouse', program: 'Community', doi: '10.7937/K9/TCIA.2015.9P42KSE6', license: 'CC BY 3.0', patients: 32, profile: { mr_breast: 1 }, pid: 'MM{n3}', sex: 'F', since: 4 },
  { id: 'icdc_glioma', name: 'ICDC-Glioma', cancer: 'Glioma', location: 'Brain', species: 'Canine', program: 'ICDC', doi: '10.7937/TCIA.SVQT-Q016', license: 'CC BY 4.0', patients: 81, profile: { mr_brain: 1, sm: 1 }, supporting: 'Clinical', pid: 'GLIOMA01-i_{n4}', head: true, since: 12, clinicalTables: ['icdc_glioma_clinical'] },
  { id: 'cmb_lca', name: 'CMB-LCA', cancer: 'Lung Cancer', location: 'Lung', species: 'Human', program: 'CMB', doi: '10.7937/3CX3-S132', license: 'CC BY 4.0', patients: 70, profile: { sm: 2, ct_chest: 1 }, supporting: 'Clinical', pid: 'MSB-{n5}', since: 15, clinicalTables: ['cmb_lca_clinical'] },
  { id: 'cmb_mel', name: 'CMB-MEL', cancer: 'Melanoma', location: 'Skin', species: 'Human', program: 'CMB', doi: '10.7937/GWSP-WH72', license: 'CC BY 4.0', patients: 47, profile: { sm: 2, ct_chest: 0.5 }, supporting: 'Clinical', pid: 'MSB-{n5}', since: 15, clinicalTables: ['cmb_mel_clinical'] },
  { id: 'cmb_mml', name: 'CMB-MML', cancer: 'Multiple Myeloma', location: 'Bone Marrow', species: 'Human', program: 'CMB', doi: '10.7937/SZKB-SW39', license: 'CC BY 4.0', patients: 60, profile: { sm: 2, petct: 0.5, dx: 0.5 }, supporting: 'Clinical', pid: 'MSB-{n5}', since: 15, clinicalTables: ['cmb_mml_clinical'] },
  { id: 'cmb_pca', name: 'CMB-PCA', cancer: 'Prostate Cancer', location: 'Prostate', species: 'Human', program: 'CMB', doi: '10.7937/25T7-6Y12', license: 'CC BY 4.0', patients: 25, profile: { sm: 2, mr_prostate: 1 }, supporting: 'Clinical', pid: 'MSB-{n5}', sex: 'M', since: 15, clinicalTables: ['cmb_pca_clinical'] },
  { id: 'ea1141', name: 'EA1141', cancer: 'Breast Cancer', location: 'Breast', species: 'Human', program: 'NCI Trials', doi: '10.5555/idqs.ea1141', license: 'CC BY 4.0', patients: 1444, profile: { mr_breast: 1, dbt: 1 }, supporting: 'Clinical', pid: 'EA1141-{n5}', sex: 'F', since: 20, clinicalTables: ['ea1141_demographics', 'ea1141_mri', 'ea1141_risk_model', 'ea1141_screening', 'ea1141_status_12mo', 'ea1141_status_6mo', 'ea1141_tomosynthesis'] },
];

// A study template is a list of series groups: modality and how many series.
export interface TemplateItem {
  modality: string;
  min: number;
  max: number;
}
export interface StudyTemplate {
  items: TemplateItem[];
  bodyParts: string[];
  descriptions: string[];
}

export const TEMPLATES: Record<string, StudyTemplate> = {
  ct_chest: { items: [{ modality: 'CT', min: 1, max: 6 }], bodyParts: ['CHEST', 'CHEST', 'CHEST', 'LUNG'], descriptions: ['CT CHEST W/O CONTRAST', 'CT CHEST WITH CONTRAST', 'LOW DOSE CT SCREENING', 'CHEST'] },
  ct_abd: { items: [{ modality: 'CT', min: 1, max: 7 }], bodyParts: ['ABDOMEN', 'ABDOMENPELVIS', 'PELVIS', 'KIDNEY', 'LIVER', 'CHESTABDPELVIS'], descriptions: ['CT ABDOMEN PELVIS W CONTRAST', 'CT ABD/PELVIS', 'CT CAP WITH CONTRAST'] },
  ct_head: { items: [{ modality: 'CT', min: 1, max: 4 }], bodyParts: ['HEAD', 'HEADNECK', 'NECK', 'HEADNECK'], descriptions: ['CT SOFT TISSUE NECK W CONTRAST', 'CT HEAD/NECK'] },
  petct: { items: [{ modality: 'PT', min: 1, max: 2 }, { modality: 'CT', min: 1, max: 2 }], bodyParts: ['WHOLEBODY', 'WHOLEBODY', 'CHEST'], descriptions: ['PET/CT WHOLE BODY', 'PET CT SKULL BASE TO THIGH'] },
  mr_prostate: { items: [{ modality: 'MR', min: 4, max: 9 }], bodyParts: ['PROSTATE'], descriptions: ['MR PROSTATE W/WO CONTRAST', 'MRI PROSTATE'] },
  mr_brain: { items: [{ modality: 'MR', min: 4, max: 11 }], bodyParts: ['BRAIN', 'HEAD', 'BRAIN'], descriptions: ['MRI BRAIN W/WO CONTRAST', 'MR HEAD', 'BRAIN TUMOR PROTOCOL'] },
  mr_breast: { items: [{ modality: 'MR', min: 3, max: 8 }], bodyParts: ['BREAST'], descriptions: ['MR BREAST BILATERAL', 'DCE BREAST MRI'] },
  mr_abd: { items: [{ modality: 'MR', min: 3, max: 8 }], bodyParts: ['ABDOMEN', 'PELVIS', 'LIVER'], descriptions: ['MR ABDOMEN W/WO CONTRAST', 'MRI PELVIS'] },
  sm: { items: [{ modality: 'SM', min: 1, max: 6 }], bodyParts: [], descriptions: ['Histopathology', 'Slide microscopy'] },
  rt: { items: [{ modality: 'CT', min: 1, max: 1 }, { modality: 'RTSTRUCT', min: 1, max: 1 }, { modality: 'RTPLAN', min: 0, max: 1 }, { modality: 'RTDOSE', min: 0, max: 1 }], bodyParts: ['CHEST', 'LUNG', 'HEADNECK'], descriptions: ['RT PLANNING CT', 'RADIOTHERAPY PLANNING'] },
  mg: { items: [{ modality: 'MG', min: 2, max: 4 }], bodyParts: ['BREAST'], descriptions: ['MAMMO SCREENING BILATERAL', 'DIAGNOSTIC MAMMOGRAM'] },
  dbt: { items: [{ modality: 'MG', min: 2, max: 4 }], bodyParts: ['BREAST'], descriptions: ['DBT SCREENING', 'TOMO BILATERAL SCREENING'] },
  dx: { items: [{ modality: 'DX', min: 1, max: 2 }, { modality: 'CR', min: 0, max: 1 }], bodyParts: ['CHEST'], descriptions: ['XR CHEST PA AND LATERAL', 'CHEST 2 VIEWS'] },
  us: { items: [{ modality: 'US', min: 1, max: 3 }], bodyParts: ['ABDOMEN', 'BREAST', 'KIDNEY'], descriptions: ['US ABDOMEN', 'ULTRASOUND'] },
  nm: { items: [{ modality: 'NM', min: 1, max: 2 }], bodyParts: ['WHOLEBODY'], descriptions: ['NM BONE SCAN WHOLE BODY'] },
  xa: { items: [{ modality: 'XA', min: 1, max: 3 }], bodyParts: ['LIVER', 'ABDOMEN'], descriptions: ['ANGIOGRAPHY', 'TACE'] },
};

/** Profiles for synthetic collections, each a weighted template mix. */
export const SYNTHETIC_PROFILES: { profile: Record<string, number>; cancer: string; location: string; sex?: 'F' | 'M'; head?: boolean }[] = [
  { profile: { ct_chest: 3, petct: 1 }, cancer: 'Lung Cancer', location: 'Lung' },
  { profile: { mr_breast: 2, mg: 1, us: 0.3 }, cancer: 'Breast Cancer', location: 'Breast', sex: 'F' },
  { profile: { mr_prostate: 1, us: 0.2 }, cancer: 'Prostate Cancer', location: 'Prostate', sex: 'M' },
  { profile: { mr_brain: 1 }, cancer: 'Glioma', location: 'Brain', head: true },
  { profile: { ct_head: 2, petct: 1, rt: 1 }, cancer: 'Head and Neck Cancer', location: 'Head-Neck', head: true },
  { profile: { ct_abd: 2, mr_abd: 1, xa: 0.2 }, cancer: 'Liver Cancer', location: 'Liver' },
  { profile: { ct_abd: 2, mr_abd: 0.5 }, cancer: 'Pancreatic Cancer', location: 'Pancreas' },
  { profile: { sm: 3 }, cancer: 'Various', location: 'Various' },
  { profile: { sm: 4, ct_abd: 0.5 }, cancer: 'Breast Cancer', location: 'Breast', sex: 'F' },
  { profile: { sm: 3, mr_brain: 1 }, cancer: 'Glioma', location: 'Brain', head: true },
  { profile: { sm: 2, ct_abd: 1 }, cancer: 'Colorectal Cancer', location: 'Colon' },
  { profile: { rt: 2, ct_chest: 1 }, cancer: 'Non-small Cell Lung Cancer', location: 'Chest' },
  { profile: { dx: 2, ct_chest: 1 }, cancer: 'COVID-19', location: 'Chest' },
  { profile: { ct_chest: 1, mr_abd: 1, nm: 0.3 }, cancer: 'Phantom', location: 'Phantom' },
  { profile: { mr_abd: 2, ct_abd: 1 }, cancer: 'Sarcoma', location: 'Extremities' },
  { profile: { ct_abd: 1, us: 1 }, cancer: 'Kidney Cancer', location: 'Kidney' },
];

export const SYNTHETIC_WORDS = [
  'ACRIN', 'QIN', 'Duke', 'Stanford', 'UPenn', 'HCC', 'Pediatric', 'Pancreas', 'Adrenal', 'Colorectal', 'Hepatic', 'Renal',
  'Glioma', 'Meningioma', 'Thymoma', 'Ovarian', 'Cervical', 'Esophageal', 'Gastric', 'Bladder', 'Thyroid', 'Sarcoma',
  'Lymphoma', 'Myeloma', 'Melanoma', 'Mesothelioma', 'Radiogenomics', 'Radiomics', 'Response', 'Screening', 'Phantom',
  'Perfusion', 'Diffusion', 'Therapy', 'Outcome', 'Recurrence', 'Metastasis', 'Biopsy', 'Atlas', 'Multiparametric',
];

export interface AnalysisResultSpec {
  id: string;
  title: string;
  doi: string;
  /** Source collections by id, or by program prefix (e.g. "tcga_*"). */
  sources: string[];
  sourceModality: string;
  derived: string[];
  coverage: number;
  license: string;
  algorithm: string;
  algorithmType: string;
  properties: string[];
  category: string;
  regions: string[];
  since: number;
}

export const REAL_ANALYSIS_RESULTS: AnalysisResultSpec[] = [
  { id: 'totalsegmentator_ct_segmentations', title: 'TotalSegmentator segmentations and radiomics features for NLST CT images', doi: '10.5555/idqs.totalsegmentator_ct_segmentations', sources: ['nlst'], sourceModality: 'CT', derived: ['SEG', 'SR'], coverage: 0.55, license: 'CC BY 4.0', algorithm: 'TotalSegmentator', algorithmType: 'AUTOMATIC', properties: ['Liver', 'Spleen', 'Kidney', 'Pancreas', 'Aorta', 'Heart', 'Lung', 'Vertebra', 'Rib', 'Esophagus', 'Trachea', 'Stomach', 'Gallbladder', 'Adrenal gland'], category: 'Anatomical Structure', regions: ['Thorax', 'Abdomen'], since: 18 },
  { id: 'nnunet_bpr_annotations', title: 'AI-derived annotations of NLST and NSCLC-Radiomics CT images', doi: '10.5555/idqs.nnunet_bpr_annotations', sources: ['nlst', 'nsclc_radiomics'], sourceModality: 'CT', derived: ['SEG', 'SR'], coverage: 0.25, license: 'CC BY 4.0', algorithm: 'nnU-Net', algorithmType: 'AUTOMATIC', properties: ['Lung', 'Heart', 'Neoplasm', 'Lung nodule'], category: 'Anatomical Structure', regions: ['Thorax'], since: 14 },
  { id: 'bamf_aimi_annotations', title: 'AI-generated annotations for imaging collections (AIMI)', doi: '10.5555/idqs.bamf_aimi_annotations', sources: ['nsclc_radiogenomics', 'prostatex', 'c4kc_kits', 'tcga_kirc', 'tcga_lihc', 'rider_lung_pet_ct'], sourceModality: 'CT', derived: ['SEG'], coverage: 0.5, license: 'CC BY 4.0', algorithm: 'BAMF nnU-Net', algorithmType: 'AUTOMATIC', properties: ['Kidney', 'Liver', 'Neoplasm', 'Lung', 'Prostate'], category: 'Anatomical Structure', regions: ['Abdomen', 'Thorax'], since: 17 },
  { id: 'prostate_mri_us_biopsy_dicom_annotations', title: 'DICOM annotations of prostate MRI for biopsy guidance', doi: '10.5555/idqs.prostate_mri_us_biopsy_dicom_annotations', sources: ['prostatex', 'qin_prostate_repeatability'], sourceModality: 'MR', derived: ['SEG'], coverage: 0.4, license: 'CC BY 4.0', algorithm: 'Manual contouring', algorithmType: 'MANUAL', properties: ['Prostate', 'Neoplasm', 'Peripheral zone of prostate', 'Transition zone of prostate'], category: 'Anatomical Structure', regions: ['Pelvis'], since: 17 },
  { id: 'pan_cancer_nuclei_seg_dicom', title: 'Pan-cancer nucleus segmentations of TCGA whole-slide images', doi: '10.5555/idqs.pan_cancer_nuclei_seg_dicom', sources: ['tcga_*'], sourceModality: 'SM', derived: ['ANN'], coverage: 0.35, license: 'CC BY 4.0', algorithm: 'Mask R-CNN nuclei', algorithmType: 'AUTOMATIC', properties: ['Nucleus'], category: 'Tissue', regions: [], since: 19 },
  { id: 'cptac_crcc_tumor_annotations', title: 'Tumor annotations for CPTAC-CCRCC radiology', doi: '10.5555/idqs.cptac_crcc_tumor_annotations', sources: ['cptac_ccrcc'], sourceModality: 'CT', derived: ['SEG'], coverage: 0.6, license: 'CC BY 4.0', algorithm: 'Manual', algorithmType: 'MANUAL', properties: ['Kidney', 'Neoplasm'], category: 'Morphologically Altered Structure', regions: ['Abdomen'], since: 16 },
  { id: 'cptac_ucec_tumor_annotations', title: 'Tumor annotations for CPTAC-UCEC radiology', doi: '10.5555/idqs.cptac_ucec_tumor_annotations', sources: ['cptac_ucec'], sourceModality: 'CT', derived: ['SEG'], coverage: 0.6, license: 'CC BY 4.0', algorithm: 'Manual', algorithmType: 'MANUAL', properties: ['Uterus', 'Neoplasm'], category: 'Morphologically Altered Structure', regions: ['Pelvis'], since: 16 },
  { id: 'cptac_pda_tumor_annotations', title: 'Tumor annotations for CPTAC-PDA radiology', doi: '10.5555/idqs.cptac_pda_tumor_annotations', sources: ['cptac_pda'], sourceModality: 'CT', derived: ['SEG'], coverage: 0.6, license: 'CC BY 4.0', algorithm: 'Manual', algorithmType: 'MANUAL', properties: ['Pancreas', 'Neoplasm'], category: 'Morphologically Altered Structure', regions: ['Abdomen'], since: 16 },
  { id: 'lidc_idri_seg_sr', title: 'Standardized representation of LIDC-IDRI nodule annotations', doi: '10.7937/TCIA.2018.h7umfurq', sources: ['lidc_idri'], sourceModality: 'CT', derived: ['SEG', 'SR'], coverage: 0.7, license: 'CC BY 3.0', algorithm: 'Radiologist annotation', algorithmType: 'MANUAL', properties: ['Lung nodule', 'Nodule'], category: 'Morphologically Altered Structure', regions: ['Thorax'], since: 4 },
];

export const SEGMENT_PROPERTIES = ['Liver', 'Kidney', 'Spleen', 'Neoplasm', 'Lung', 'Heart', 'Brain', 'Prostate', 'Bladder', 'Pancreas', 'Lymph node', 'Bone', 'Muscle', 'Colon'];

/** Manufacturers and models per modality. */
export const EQUIPMENT: Record<string, [string, string[]][]> = {
  CT: [['SIEMENS', ['Sensation 16', 'SOMATOM Definition AS+', 'Emotion 6']], ['GE MEDICAL SYSTEMS', ['LightSpeed VCT', 'LightSpeed16', 'Discovery CT750 HD']], ['Philips', ['Brilliance 64', 'iCT 256']], ['TOSHIBA', ['Aquilion', 'Aquilion ONE']], ['Canon Medical Systems', ['Aquilion Prime SP']]],
  MR: [['SIEMENS', ['Skyra', 'Avanto', 'TrioTim', 'Verio']], ['GE MEDICAL SYSTEMS', ['SIGNA HDxt', 'DISCOVERY MR750', 'Signa Excite']], ['Philips Medical Systems', ['Achieva', 'Ingenia', 'Intera']]],
  PT: [['GE MEDICAL SYSTEMS', ['Discovery ST', 'Discovery 690']], ['SIEMENS', ['Biograph 64', 'Biograph mCT']], ['Philips Medical Systems', ['GEMINI TF']]],
  SM: [['Aperio', ['ScanScope', 'Aperio GT 450']], ['Leica Biosystems', ['Aperio AT2']], ['Hamamatsu', ['NanoZoomer 2.0-HT', 'NanoZoomer S360']], ['3DHISTECH', ['Pannoramic 250 Flash']]],
  MG: [['Hologic, Inc.', ['Selenia Dimensions', 'Lorad Selenia']], ['GE MEDICAL SYSTEMS', ['Senographe Essential']]],
  DX: [['Carestream Health', ['DRX-Evolution']], ['Agfa', ['DX-D 400']], ['Philips Medical Systems', ['DigitalDiagnost']]],
  CR: [['FUJIFILM Corporation', ['FCR CAPSULA']], ['Agfa', ['CR 85']], ['Carestream Health', ['DirectView CR']]],
  US: [['Philips Medical Systems', ['iU22', 'EPIQ 7G']], ['GE Healthcare', ['LOGIQ E9']], ['SIEMENS', ['ACUSON S2000']]],
  NM: [['SIEMENS', ['Symbia T']], ['GE MEDICAL SYSTEMS', ['Infinia']]],
  XA: [['SIEMENS', ['AXIOM-Artis']], ['Philips Medical Systems', ['Allura Xper']]],
  RTSTRUCT: [['Varian Medical Systems', ['ARIA RadOnc']], ['Elekta', ['Monaco']], ['Philips', ['Pinnacle3']]],
  RTPLAN: [['Varian Medical Systems', ['ARIA RadOnc']], ['Elekta', ['Monaco']]],
  RTDOSE: [['Varian Medical Systems', ['Eclipse']], ['Philips', ['Pinnacle3']]],
  SEG: [['highdicom', ['highdicom']], ['QIICR', ['dcmqi']]],
  SR: [['highdicom', ['highdicom']], ['QIICR', ['dcmqi']]],
  ANN: [['highdicom', ['highdicom']]],
};

export const SOP_CLASS: Record<string, [string, string]> = {
  CT: ['1.2.840.10008.5.1.4.1.1.2', 'CT Image Storage'],
  MR: ['1.2.840.10008.5.1.4.1.1.4', 'MR Image Storage'],
  PT: ['1.2.840.10008.5.1.4.1.1.128', 'Positron Emission Tomography Image Storage'],
  SM: ['1.2.840.10008.5.1.4.1.1.77.1.6', 'VL Whole Slide Microscopy Image Storage'],
  SEG: ['1.2.840.10008.5.1.4.1.1.66.4', 'Segmentation Storage'],
  SR: ['1.2.840.10008.5.1.4.1.1.88.34', 'Comprehensive 3D SR Storage'],
  ANN: ['1.2.840.10008.5.1.4.1.1.91.1', 'Microscopy Bulk Simple Annotations Storage'],
  RTSTRUCT: ['1.2.840.10008.5.1.4.1.1.481.3', 'RT Structure Set Storage'],
  RTPLAN: ['1.2.840.10008.5.1.4.1.1.481.5', 'RT Plan Storage'],
  RTDOSE: ['1.2.840.10008.5.1.4.1.1.481.2', 'RT Dose Storage'],
  MG: ['1.2.840.10008.5.1.4.1.1.1.2', 'Digital Mammography X-Ray Image Storage - For Presentation'],
  DBT: ['1.2.840.10008.5.1.4.1.1.13.1.3', 'Breast Tomosynthesis Image Storage'],
  DX: ['1.2.840.10008.5.1.4.1.1.1.1', 'Digital X-Ray Image Storage - For Presentation'],
  CR: ['1.2.840.10008.5.1.4.1.1.1', 'Computed Radiography Image Storage'],
  US: ['1.2.840.10008.5.1.4.1.1.6.1', 'Ultrasound Image Storage'],
  NM: ['1.2.840.10008.5.1.4.1.1.20', 'Nuclear Medicine Image Storage'],
  XA: ['1.2.840.10008.5.1.4.1.1.12.1', 'X-Ray Angiographic Image Storage'],
};

export const TRANSFER_SYNTAX: Record<string, string> = {
  '1.2.840.10008.1.2': 'Implicit VR Little Endian',
  '1.2.840.10008.1.2.1': 'Explicit VR Little Endian',
  '1.2.840.10008.1.2.4.50': 'JPEG Baseline',
  '1.2.840.10008.1.2.4.70': 'JPEG Lossless',
  '1.2.840.10008.1.2.4.90': 'JPEG 2000 Lossless',
  '1.2.840.10008.1.2.4.91': 'JPEG 2000',
};

export const SERIES_DESCRIPTIONS: Record<string, string[]> = {
  CT: ['AXIAL 1.25mm', 'CHEST 5.0 B30f', 'LUNG 1.0 B60f', 'ABD/PEL 3mm', 'Recon 2: 1.25mm STD', 'SCOUT', 'ARTERIAL PHASE', 'PORTAL VENOUS'],
  MR: ['T2 TSE AX', 'T1 AX PRE', 'T1 AX POST GAD', 'DWI b50-800', 'ADC', 'FLAIR AX', 'DCE DYNAMIC', 'T2 SAG'],
  PT: ['PET WB AC', 'PET WB NAC', 'PET AC 3D'],
  SM: ['Slide image', 'tissue', 'label', 'overview'],
  SEG: ['Segmentation', 'AI Segmentation', 'Nodule segmentation'],
  SR: ['Measurement report', 'Radiomics features', 'Nodule annotations'],
  ANN: ['Nuclei annotations', 'Pan-cancer nuclei'],
  RTSTRUCT: ['RTSTRUCT', 'Structure set', 'RT ROI'],
  RTPLAN: ['RT Plan'],
  RTDOSE: ['RT Dose'],
  MG: ['L CC', 'R CC', 'L MLO', 'R MLO'],
  DX: ['CHEST PA', 'CHEST LAT'],
  CR: ['CHEST AP PORTABLE'],
  US: ['US IMAGES'],
  NM: ['WB ANT/POST'],
  XA: ['DSA'],
};

export const LICENSES: Record<string, { long: string; url: string }> = {
  'CC BY 4.0': { long: 'Creative Commons Attribution 4.0 International License', url: 'https://creativecommons.org/licenses/by/4.0/' },
  'CC BY 3.0': { long: 'Creative Commons Attribution 3.0 Unported License', url: 'https://creativecommons.org/licenses/by/3.0/' },
  'CC BY-NC 4.0': { long: 'Creative Commons Attribution-NonCommercial 4.0 International License', url: 'https://creativecommons.org/licenses/by-nc/4.0/' },
  'CC BY-NC 3.0': { long: 'Creative Commons Attribution-NonCommercial 3.0 Unported License', url: 'https://creativecommons.org/licenses/by-nc/3.0/' },
};

/** Release dates of data releases (approximate), for version_metadata_index. */
export function releaseDate(v: number): string {
  const known: Record<number, string> = { 15: '2023-07-15', 16: '2023-09-15', 17: '2023-12-12', 18: '2024-04-18', 19: '2024-09-10', 20: '2024-11-20', 21: '2025-05-12', 22: '2025-09-08', 23: '2025-11-17', 24: '2026-05-11' };
  if (known[v]) return known[v];
  // Earlier releases: evenly spread from October 2020 (v1) to May 2023 (v14), before v15.
  const months = Math.round(((v - 1) * 31) / 13);
  const y = 2020 + Math.floor((months + 9) / 12);
  const m = ((months + 9) % 12) + 1;
  return `${y}-${String(m).padStart(2, '0')}-15`;
}
