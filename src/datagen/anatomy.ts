// Anatomy of a collection in the words of the DICOM objects: the SNOMED CT
// structure its tumors are in (what slide metadata and segment regions say,
// e.g. 'Lung' where the collection's tumor_locations says 'Chest'), the
// region, and the admitting diagnosis of its slides. Codes are SNOMED CT.

export interface Structure {
  meaning: string;
  code: string;
  /** AnatomicRegion of segmentations of this structure. */
  region: string;
}

const S = (meaning: string, code: string, region: string): Structure => ({ meaning, code: `SCT:${code}`, region });

/** Keyword of a tumor location (lower case) -> structure; first match wins, so specific words come first. */
const BY_KEYWORD: [RegExp, Structure][] = [
  [/lymph/, S('Lymph node', '59441001', 'Thorax')],
  [/marrow|blood|leuk/, S('Bone marrow', '14016003', 'Bone')],
  [/bone|spine|vertebr/, S('Bone', '272673000', 'Bone')],
  [/lung|chest|thora/, S('Lung', '39607008', 'Thorax')],
  [/breast/, S('Breast', '76752008', 'Breast')],
  [/brain|head$|glio|cereb/, S('Brain', '12738006', 'Brain')],
  [/head-neck|head and neck|neck|oral|larynx|phary/, S('Head and neck', '774007', 'Head and Neck')],
  [/kidney|renal/, S('Kidney', '64033007', 'Abdomen')],
  [/liver|hepat/, S('Liver', '10200004', 'Abdomen')],
  [/pancrea/, S('Pancreas', '15776009', 'Abdomen')],
  [/colon|colorect/, S('Colon', '71854001', 'Abdomen')],
  [/rect/, S('Rectum', '34402009', 'Pelvis')],
  [/prostate/, S('Prostate', '41216001', 'Pelvis')],
  [/ovar/, S('Ovary', '15497006', 'Pelvis')],
  [/uter|endomet/, S('Uterus', '35039007', 'Pelvis')],
  [/cervi/, S('Cervix uteri', '71252005', 'Pelvis')],
  [/bladder/, S('Urinary bladder', '89837001', 'Pelvis')],
  [/stomach|gastr/, S('Stomach', '69695003', 'Abdomen')],
  [/esoph/, S('Esophagus', '32849002', 'Thorax')],
  [/thyroid/, S('Thyroid gland', '69748006', 'Neck')],
  [/adrenal/, S('Adrenal gland', '23451007', 'Abdomen')],
  [/skin|melan/, S('Skin', '39937001', 'Skin')],
  [/testi/, S('Testis', '40689003', 'Pelvis')],
  [/thymus/, S('Thymus', '9875009', 'Thorax')],
  [/intraocular|eye|uvea/, S('Eye', '81745001', 'Head')],
  [/bile/, S('Bile duct', '28273000', 'Abdomen')],
  [/mesothel|pleura/, S('Pleura', '3120008', 'Thorax')],
  [/extremit|soft tissue|sarcoma|leg|arm/, S('Soft tissue', '87784001', 'Lower limb')],
  [/abdomen/, S('Abdomen', '113345001', 'Abdomen')],
  [/pelvis/, S('Pelvis', '12921003', 'Pelvis')],
];

/** Structures of 'Various' collections, one per patient. */
export const VARIOUS: Structure[] = [
  S('Kidney', '64033007', 'Abdomen'), S('Brain', '12738006', 'Brain'), S('Soft tissue', '87784001', 'Lower limb'), S('Bone', '272673000', 'Bone'),
  S('Liver', '10200004', 'Abdomen'), S('Lung', '39607008', 'Thorax'), S('Lymph node', '59441001', 'Thorax'), S('Adrenal gland', '23451007', 'Abdomen'),
];

/** The structures a collection's tumor_locations name, most specific first ([] for 'Various' or unknown). */
export function structuresOf(locations: string | null, cancer: string | null): Structure[] {
  const out: Structure[] = [];
  for (const part of `${locations ?? ''}`.split(/,\s*/)) {
    const w = part.toLowerCase().trim();
    const hit = BY_KEYWORD.find(([re]) => re.test(w));
    if (hit && !out.some((s) => s.code === hit[1].code)) out.push(hit[1]);
  }
  if (out.length === 0 && cancer) {
    const hit = BY_KEYWORD.find(([re]) => re.test(cancer.toLowerCase()));
    if (hit) out.push(hit[1]);
  }
  return out;
}

/** Admitting diagnosis of slides, by keyword of the collection's cancer type (SNOMED CT disorders). */
const DIAGNOSES: [RegExp, string, string][] = [
  [/lung adeno/, 'Adenocarcinoma of lung', '254626006'],
  [/lung squamous|squamous cell carcinoma of lung/, 'Squamous cell carcinoma of lung', '254634000'],
  [/lung|nsclc|non-small/, 'Primary malignant neoplasm of lung', '93880001'],
  [/breast/, 'Malignant neoplasm of breast', '254837009'],
  [/glioblastoma/, 'Glioblastoma multiforme', '393563007'],
  [/glioma|astrocytoma/, 'Glioma', '393564001'],
  [/kidney|renal|clear cell/, 'Renal cell carcinoma', '702391001'],
  [/hepatocellular|liver/, 'Hepatocellular carcinoma', '25370001'],
  [/colon|colorectal|rectal/, 'Malignant tumor of colon', '363406005'],
  [/ovar/, 'Malignant tumor of ovary', '363443007'],
  [/prostate/, 'Malignant tumor of prostate', '399068003'],
  [/pancrea/, 'Malignant tumor of pancreas', '363418001'],
  [/stomach|gastr/, 'Malignant tumor of stomach', '363349007'],
  [/bladder|urothel/, 'Malignant tumor of urinary bladder', '399326009'],
  [/thyroid/, 'Malignant tumor of thyroid gland', '363478007'],
  [/esoph/, 'Malignant tumor of esophagus', '363402007'],
  [/endometri|uter/, 'Endometrial carcinoma', '254878006'],
  [/cervi/, 'Malignant tumor of cervix', '363354003'],
  [/melanoma/, 'Malignant melanoma of skin', '93655004'],
  [/sarcoma/, 'Sarcoma', '424413001'],
  [/leukemia/, 'Leukemia', '93143009'],
  [/lymphoma/, 'Malignant lymphoma', '118600007'],
  [/myeloma/, 'Multiple myeloma', '109989006'],
];

export function diagnosisOf(cancer: string | null): { meaning: string; code: string } | null {
  const w = (cancer ?? '').toLowerCase();
  const hit = DIAGNOSES.find(([re]) => re.test(w));
  return hit ? { meaning: hit[1], code: `SCT:${hit[2]}` } : null;
}
