// The text a model reads first: short server instructions (sent at
// initialize) and a longer usage guide served as the resource idqs://guide.

export const INSTRUCTIONS = [
  'IDQS answers questions about a public body of medical imaging (DICOM: patient > study > series > instance) from its metadata; nothing is modified and no credentials are needed.',
  'The main table index has one row per series; collection_id (source dataset) and analysis_result_id (derived dataset) are independent grouping axes.',
  'Workflow: 1) ground names first: list_attributes and get_attribute_values (values are case-sensitive) before filtering; list_tables and get_table_schema before run_sql. ' +
    '2) size a cohort with get_cohort_counts before listing it with build_cohort or get_cohort_urls. ' +
    '3) use terms/ranges filters for attribute selections and run_sql for relational or aggregate questions (specialized <modality>_index tables join on SeriesInstanceUID; clinical tables via list_clinical_tables, queried as clinical.<table>). ' +
    '4) the data is very large: report counts and size_TB before any download, check get_licenses, and cite with get_citations.',
  'Keep limits small (max_rows, page_size, limit); truncated=true or has_more=true means there is more. Errors carry a code and a message that says what to fix (often "Did you mean ..."). The resource idqs://guide has details.',
].join('\n');

/** Put first when the served data is generated, so a model never presents made-up identifiers as real. */
export const DEMO_DATA_NOTICE =
  'This server serves GENERATED DEMO DATA: every patient, study and series identifier is made up, and nothing found here exists in the real collections; say so whenever you report results. ' +
  'Its operator serves the real release with: idqs serve --release latest';

/** The instructions sent at initialize, for the data served. */
export function instructionsFor(synthetic: boolean): string {
  return synthetic ? `${DEMO_DATA_NOTICE}\n${INSTRUCTIONS}` : INSTRUCTIONS;
}

export const GUIDE = `# IDQS agent guide

## Data model
- Patient > Study > Series > Instance. The **series** is the unit that is filtered, counted and downloaded.
- Table \`index\`: one row per series, with \`collection_id\` (source dataset; a patient belongs to one collection),
  \`analysis_result_id\` (derived dataset such as segmentations; can span several collections; null for original data),
  Modality, BodyPartExamined, sizes (\`series_size_MB\`), URLs (\`series_cloud1_url\`) and licenses.
- Filtering one collection_id does not capture every series of an analysis result, and the reverse.
- The whole body of data is over 100 TB: always report counts and size_TB before suggesting a download.

## Tools
- Discovery: get_idc_version, get_stats, list_collections, get_collection, list_analysis_results, list_attributes, get_attribute_values.
- Cohort (filter = \`terms\` and \`ranges\` arguments): get_cohort_counts, build_cohort (one page of series plus download commands),
  get_cohort_urls (bounded list of s3:// series URLs), get_cohort_facets (per-attribute value counts within the cohort), get_licenses, get_citations.
- SQL: list_tables, get_table_schema, run_sql. Clinical: list_clinical_tables, get_clinical_table_schema, get_clinical_table.
- Side: get_viewer_url (OHIF for radiology, Slim for slide microscopy).
- Results are the same JSON as the HTTP API's /v3 routes (list tools wrap their array as {"result": [...]} in structured content).

## Workflow
1. Find data: get_stats, get_attribute_values for collection_id or Modality, get_collection.
2. Ground the filter: list_attributes (kind term -> terms, kind range -> ranges), then get_attribute_values for exact,
   case-sensitive values. Example filter: terms {"collection_id": ["nlst"], "Modality": ["CT"]}, ranges {"instanceCount": {"gte": 50}}.
   null in terms selects series without a value ({"BodyPartExamined": [null]}); all_terms {"Modality": ["CT", "PT"]} selects the studies having all the values.
3. Size it: get_cohort_counts. Read warnings (values that exist only in another casing, ignored empty lists).
4. List it: build_cohort with a small page_size (has_more means more pages), or get_cohort_urls for URLs.
5. Before reuse: get_licenses (commercial_use_allowed) and get_citations (cite the datasets and idc_acknowledgment).

Explore narrow, then widen: small limits first, raise them only when needed.

## SQL (run_sql)
- One read-only SELECT/WITH statement; names from list_tables / get_table_schema. Engine errors are returned verbatim
  with suggestions ("Did you mean ..."): fix the name and retry.
- Specialized tables \`<modality>_index\` join on SeriesInstanceUID, e.g. segmentations:
  \`SELECT i.collection_id, count(*) FROM index i JOIN seg_index s ON s.segmented_SeriesInstanceUID = i.SeriesInstanceUID
  WHERE list_contains(s.SegmentedPropertyType_CodeMeanings, 'Liver') GROUP BY 1\`.
- Columns typed STRING[] are lists: use list_contains(column, 'value'), not = or LIKE.
- Clinical tables: \`clinical.<table_name>\`, joined with \`dicom_patient_id = index.PatientID\`. They are not harmonized:
  read get_clinical_table_schema (labels, coded values) first.
- truncated=false is the only sign that a result is complete; aggregate in SQL rather than raising max_rows.

## Errors
Tool errors have isError=true and {"error": {"code", "message"}}: invalid_request (arguments do not match the schema),
invalid_query (bad filter, SQL or value), not_found, query_timeout, busy. The message says what to change.
`;
