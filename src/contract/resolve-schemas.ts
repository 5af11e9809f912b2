// Wire shapes of the resolve capability (what a saved manifest or UID list
// became in the served release): the REST route and the MCP tool declare them,
// the downloader takes its types from them (types only).

import { Type, type Static } from '@sinclair/typebox';
import { Stores } from './cohort-schemas.ts';

// Nullable types as type arrays, not anyOf: the response serializer then writes them
// directly instead of validating every value against each branch (100,000 lines).
const NullableString = (o: { description?: string } = {}) => Type.Unsafe<string | null>({ type: ['string', 'null'], ...o });
const NullableNumber = () => Type.Unsafe<number | null>({ type: ['number', 'null'] });
const NullableInteger = (o: { description?: string } = {}) => Type.Unsafe<number | null>({ type: ['integer', 'null'], ...o });
const OneOf = <T extends string>(values: readonly T[], description: string) => Type.Unsafe<T>({ type: 'string', enum: [...values], description });

export const PriorVersionWire = Type.Object({
  crdc_series_uuid: Type.String({ description: 'Folder of this version in the buckets.' }),
  min_idc_version: Type.Integer({ description: 'First release that had this version.' }),
  max_idc_version: Type.Integer({ description: 'Last release that had this version.' }),
  series_aws_url: NullableString({ description: 's3://<bucket>/<crdc_series_uuid>/* in cloud1: the objects of earlier versions stay in the stores.' }),
  aws_bucket: NullableString(),
  series_size_MB: NullableNumber(),
});

export const CurrentVersionWire = Type.Object({
  crdc_series_uuid: Type.String(),
  since_idc_version: NullableInteger({ description: 'Release of this revision (series_revised_idc_version).' }),
  series_aws_url: NullableString(),
  aws_bucket: NullableString(),
  series_size_MB: NullableNumber(),
  license_short_name: NullableString(),
});

export const RESOLVE_CLASSES = ['current', 'revised', 'removed', 'unknown', 'header', 'invalid'] as const;

export const ResolvedLineWire = Type.Object({
  line: Type.Integer({ description: 'Line number (1-based) in text, or position in ids.' }),
  class: OneOf(
    RESOLVE_CLASSES,
    'current: the series (or study) as the release has it; revised: the release has another version of the series; removed: the release no longer has it; ' +
      'unknown: an identifier neither the release nor its prior versions know; header: a line of column names; invalid: not an identifier or URL (see message).',
  ),
  kind: Type.Optional(OneOf(['crdc_series_uuid', 'SeriesInstanceUID', 'StudyInstanceUID', 'DICOM UID'] as const, 'What the identifier is; "DICOM UID" when it matches no series or study.')),
  id: Type.Optional(Type.String({ description: 'The identifier read from the line (UUIDs in lower case).' })),
  bucket: Type.Optional(Type.String({ description: 'Bucket of a URL line.' })),
  collection_id: Type.Optional(Type.String()),
  PatientID: Type.Optional(Type.String()),
  StudyInstanceUID: Type.Optional(Type.String()),
  SeriesInstanceUID: Type.Optional(Type.String()),
  Modality: Type.Optional(NullableString()),
  named: Type.Optional(PriorVersionWire),
  current: Type.Optional(CurrentVersionWire),
  versions: Type.Optional(Type.Array(PriorVersionWire, { description: 'Every earlier version of the series, oldest first.' })),
  last_idc_version: Type.Optional(Type.Integer({ description: 'Last release that had a removed series or study.' })),
  series_current: Type.Optional(Type.Integer({ description: 'Of a study: its series in this release.' })),
  series_removed: Type.Optional(Type.Integer({ description: 'Of a study: its series this release no longer has.' })),
  message: Type.Optional(Type.String({ description: 'Why a line is invalid or unknown, or a remark (e.g. a bucket no store has).' })),
});

export const ResolveTotalsWire = Type.Object({
  lines: Type.Integer({ description: 'Lines received: the sum of every other total.' }),
  blank: Type.Integer(),
  comments: Type.Integer(),
  header: Type.Integer(),
  current: Type.Integer(),
  revised: Type.Integer(),
  removed: Type.Integer(),
  unknown: Type.Integer(),
  invalid: Type.Integer(),
});

const ResolveFormat = OneOf(
  ['json', 'tsv'] as const,
  'json (the default): the document below. tsv: the same lines as a tab-separated table (text/tab-separated-values), about half the size: ' +
    'a first # line with the release and the totals, a line of column names, then a row per line; buckets instead of URLs (s3://<bucket>/<crdc_series_uuid>/*); ' +
    'versions holds every earlier version as "<crdc_series_uuid> v<min>-v<max> <aws_bucket>", separated by ";".',
);

export const ResolveBody = Type.Union(
  [
    Type.Object(
      {
        text: Type.String({ description: 'A manifest or list as saved: s5cmd cp lines, s3:// or gs:// URLs, UIDs or crdc_series_uuids, one per line; # comments and a header line allowed.' }),
        format: Type.Optional(ResolveFormat),
      },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        ids: Type.Array(Type.String(), { minItems: 1, description: 'Identifiers or URLs, one per entry (the same forms as the lines of text).' }),
        format: Type.Optional(ResolveFormat),
      },
      { additionalProperties: false },
    ),
  ],
  { description: 'Either text (a saved manifest) or ids.' },
);

export const ResolveResponse = Type.Object({
  idc_version: Type.String({ description: 'The release the lines were resolved against.' }),
  totals: ResolveTotalsWire,
  lines: Type.Array(ResolvedLineWire, { description: 'Every line that is not blank or a comment, in order.' }),
  stores: Stores,
});

export type ResolvedLineWireData = Static<typeof ResolvedLineWire>;
export type ResolveWire = Static<typeof ResolveResponse>;
