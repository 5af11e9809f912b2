// Wire shapes of series, stores and licenses that more than one surface
// reads: the REST routes declare them (validation and OpenAPI), and the
// downloader, a client of those routes, takes its types from them (types
// only: it loads no schema library for them).

import { Type, type Static } from '@sinclair/typebox';

const NullableString = (description?: string) => Type.Union([Type.String(), Type.Null()], description ? { description } : {});

export const ManifestRow = Type.Object({
  collection_id: Type.String(),
  PatientID: Type.String(),
  StudyInstanceUID: Type.String(),
  SeriesInstanceUID: Type.String(),
  Modality: NullableString(),
  SeriesDescription: NullableString(),
  instanceCount: Type.Union([Type.Integer(), Type.Null()]),
  series_size_MB: Type.Union([Type.Number(), Type.Null()]),
  aws_bucket: NullableString('Bucket of the series in the primary store (cloud1).'),
  crdc_series_uuid: NullableString('Folder of the series in every bucket.'),
  series_cloud1_url: NullableString('s3://<bucket>/<crdc_series_uuid>/* in the primary store.'),
  series_aws_url: NullableString('Alias of series_cloud1_url (the public service’s name).'),
  license_short_name: NullableString(),
  analysis_result_id: NullableString('Derived dataset the series belongs to; null for original data.'),
});

export const Store = Type.Object({
  name: Type.String({ description: 'Public name of the store (aws, gcs).' }),
  endpoint: Type.String({ description: 'S3-compatible endpoint; requests are anonymous (no credentials).' }),
  bucket_map: Type.Record(Type.String(), Type.String(), { description: 'aws_bucket of a series → bucket of this store (same folder <crdc_series_uuid>/).' }),
});

export const Stores = Type.Record(Type.String(), Store, {
  description: 'Object stores, keyed cloud1 and cloud2: where the downloader fetches the series from.',
});

export const CommercialUse = Type.Union([Type.Boolean(), Type.Null()], {
  description: 'False for non-commercial (NC) licenses, true for licenses known to allow it, null when the license is missing or not recognised.',
});

export const LicenseItem = Type.Object({
  license_short_name: NullableString('Null groups the series without a license.'),
  license_long_name: Type.Optional(Type.String()),
  license_url: Type.Optional(Type.String()),
  series: Type.Integer(),
  size_TB: Type.Number(),
  size_MB: Type.Number(),
  commercial_use_allowed: CommercialUse,
});

/** Most UUIDs one series look-up takes. */
export const SERIES_LOOKUP_MAX = 10_000;

export const SeriesLookupBody = Type.Object(
  {
    crdc_series_uuid: Type.Array(Type.String(), {
      minItems: 1,
      maxItems: SERIES_LOOKUP_MAX,
      description: `Folders of series (the <crdc_series_uuid> of s3://<bucket>/<crdc_series_uuid>/*), at most ${SERIES_LOOKUP_MAX}.`,
    }),
  },
  { additionalProperties: false },
);

export const SeriesLookupResponse = Type.Object({
  series: Type.Array(ManifestRow, { description: 'The series found, ordered by collection_id, PatientID, StudyInstanceUID, SeriesInstanceUID.' }),
  missing: Type.Array(Type.String(), { description: 'UUIDs asked for that no series of the index has, in the order asked.' }),
  size_TB: Type.Number({ description: 'Size of the series found, decimal terabytes.' }),
  size_MB: Type.Number({ description: 'Size of the series found, decimal megabytes.' }),
  licenses: Type.Array(LicenseItem, { description: 'Series and size per license of the series found, most series first.' }),
  stores: Stores,
});

export type ManifestRowWire = Static<typeof ManifestRow>;
export type StoreWire = Static<typeof Store>;
export type LicenseItemWire = Static<typeof LicenseItem>;
export type SeriesLookupWire = Static<typeof SeriesLookupResponse>;
