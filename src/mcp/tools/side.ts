// Side tools: viewer links, citations and licenses of a cohort.

import { Type } from '@sinclair/typebox';
import { CITATION_FORMATS, DEFAULT_CITATION_FORMAT, citations } from '../../core/services/citations.ts';
import { cohortLicenses } from '../../core/services/licenses.ts';
import { VIEWERS, viewerUrl } from '../../core/services/viewer.ts';
import { defineTool, filterInput, filterOf, type ToolDef } from './types.ts';
import { AS_OF_DESCRIPTION } from '../../contract/release-schemas.ts';

const asOf = { as_of: Type.Optional(Type.Union([Type.String(), Type.Integer()], { description: AS_OF_DESCRIPTION })) };

export function sideTools(): ToolDef[] {
  return [
    defineTool({
      capability: 'get_viewer_url',
      title: 'Viewer URL',
      description:
        'A link that opens a study (and a series, when given) in the web DICOM viewer: OHIF for radiology, Slim for slide microscopy. ' +
        'Give series_instance_uid, study_instance_uid or both (then the series must belong to the study); UIDs come from build_cohort or run_sql.',
      input: {
        series_instance_uid: Type.Optional(Type.String({ description: 'SeriesInstanceUID; its study is looked up.' })),
        study_instance_uid: Type.Optional(Type.String({ description: 'StudyInstanceUID; optional when series_instance_uid is given.' })),
        viewer: Type.Optional(Type.String({ description: `One of ${VIEWERS.join(', ')}; default slim for slide microscopy, else ohif_v3. volview links the series as s3 folders (not for SM, XC or a study in several buckets).` })),
      },
      run: (a, { ctx }) => viewerUrl(ctx, a),
    }),
    defineTool({
      capability: 'get_citations',
      title: 'Cohort citations',
      description:
        'Citations of the datasets of a cohort (one per source DOI; all datasets when no filter is given) plus idc_acknowledgment, the platform paper. ' +
        `Always give the user both. Formats: ${CITATION_FORMATS.join(', ')} (default ${DEFAULT_CITATION_FORMAT}).`,
      input: {
        ...filterInput,
        citation_format: Type.Optional(Type.String({ description: `One of ${CITATION_FORMATS.join(', ')} (default ${DEFAULT_CITATION_FORMAT}).` })),
        ...asOf,
      },
      run: (a, { ctx }) => citations(ctx, { filters: filterOf(a), citation_format: a.citation_format, ...(a.as_of === undefined ? {} : { as_of: a.as_of }) }),
    }),
    defineTool({
      capability: 'get_licenses',
      title: 'Cohort licenses',
      description:
        'Series and size per license for a cohort and whether commercial use is allowed (CC BY vs CC BY-NC). Check before suggesting reuse or download.',
      input: { ...filterInput, ...asOf },
      run: (a, { ctx }) => cohortLicenses(ctx, filterOf(a), a.as_of),
    }),
  ];
}
