// Kinds of collections for clinical data (what cancer, which organ), and the
// histologies (ICD-O-3 morphology code and text) of each kind.

export type Kind =
  | 'lung' | 'breast' | 'prostate' | 'brain' | 'headneck' | 'liver' | 'kidney' | 'colon' | 'gyn' | 'pancreas'
  | 'sarcoma' | 'heme' | 'skin' | 'covid' | 'phantom' | 'other';

export function kindOf(c: { cancer_types: string | null; tumor_locations: string | null }): Kind {
  const s = `${c.cancer_types ?? ''} ${c.tumor_locations ?? ''}`.toLowerCase();
  if (s.includes('covid')) return 'covid';
  if (s.includes('phantom')) return 'phantom';
  if (s.includes('breast')) return 'breast';
  if (s.includes('prostate')) return 'prostate';
  if (/glio|astro|brain|schwannoma|mening/.test(s)) return 'brain';
  if (s.includes('head')) return 'headneck';
  if (/liver|hepat/.test(s)) return 'liver';
  if (/kidney|renal/.test(s)) return 'kidney';
  if (/colon|colorect|rect/.test(s)) return 'colon';
  if (/ovar|uter|endomet|cervi/.test(s)) return 'gyn';
  if (s.includes('pancrea')) return 'pancreas';
  if (s.includes('sarcoma')) return 'sarcoma';
  if (/lymphoma|myeloma|leuk|marrow/.test(s)) return 'heme';
  if (s.includes('melanoma') || s.includes('skin')) return 'skin';
  if (s.includes('lung') || s.includes('chest')) return 'lung';
  return 'other';
}

export const HISTOLOGY: Record<Kind, [string, string][]> = {
  lung: [['8140/3', 'Adenocarcinoma'], ['8070/3', 'Squamous cell carcinoma'], ['8046/3', 'Non-small cell carcinoma, NOS'], ['8012/3', 'Large cell carcinoma'], ['8041/3', 'Small cell carcinoma'], ['8560/3', 'Adenosquamous carcinoma']],
  breast: [['8500/3', 'Infiltrating duct carcinoma'], ['8520/3', 'Lobular carcinoma'], ['8522/3', 'Infiltrating duct and lobular carcinoma'], ['8500/2', 'Ductal carcinoma in situ'], ['8480/3', 'Mucinous adenocarcinoma']],
  prostate: [['8550/3', 'Acinar cell carcinoma'], ['8140/3', 'Adenocarcinoma, NOS'], ['8500/3', 'Ductal adenocarcinoma']],
  brain: [['9440/3', 'Glioblastoma'], ['9400/3', 'Astrocytoma, NOS'], ['9450/3', 'Oligodendroglioma, NOS'], ['9401/3', 'Astrocytoma, anaplastic'], ['9382/3', 'Mixed glioma']],
  headneck: [['8070/3', 'Squamous cell carcinoma, NOS'], ['8071/3', 'Squamous cell carcinoma, keratinizing'], ['8083/3', 'Basaloid squamous cell carcinoma'], ['8052/3', 'Papillary squamous cell carcinoma']],
  liver: [['8170/3', 'Hepatocellular carcinoma, NOS'], ['8160/3', 'Cholangiocarcinoma'], ['8171/3', 'Hepatocellular carcinoma, fibrolamellar']],
  kidney: [['8310/3', 'Clear cell adenocarcinoma, NOS'], ['8260/3', 'Papillary adenocarcinoma, NOS'], ['8317/3', 'Renal cell carcinoma, chromophobe type'], ['8290/0', 'Oncocytoma']],
  colon: [['8140/3', 'Adenocarcinoma, NOS'], ['8480/3', 'Mucinous adenocarcinoma'], ['8490/3', 'Signet ring cell carcinoma']],
  gyn: [['8441/3', 'Serous cystadenocarcinoma, NOS'], ['8380/3', 'Endometrioid adenocarcinoma, NOS'], ['8310/3', 'Clear cell adenocarcinoma, NOS'], ['8980/3', 'Carcinosarcoma, NOS']],
  pancreas: [['8500/3', 'Infiltrating duct carcinoma, NOS'], ['8246/3', 'Neuroendocrine carcinoma, NOS'], ['8470/3', 'Mucinous cystadenocarcinoma, NOS']],
  sarcoma: [['8890/3', 'Leiomyosarcoma, NOS'], ['8850/3', 'Liposarcoma, NOS'], ['8802/3', 'Giant cell sarcoma'], ['9040/3', 'Synovial sarcoma, NOS'], ['8811/3', 'Myxofibrosarcoma']],
  heme: [['9680/3', 'Diffuse large B-cell lymphoma'], ['9690/3', 'Follicular lymphoma, NOS'], ['9650/3', 'Hodgkin lymphoma, NOS'], ['9732/3', 'Plasma cell myeloma']],
  skin: [['8743/3', 'Superficial spreading melanoma'], ['8721/3', 'Nodular melanoma'], ['8744/3', 'Acral lentiginous melanoma'], ['8742/3', 'Lentigo maligna melanoma']],
  covid: [],
  phantom: [],
  other: [['8140/3', 'Adenocarcinoma, NOS'], ['8070/3', 'Squamous cell carcinoma, NOS'], ['8010/3', 'Carcinoma, NOS'], ['8246/3', 'Neuroendocrine carcinoma, NOS']],
};
