// The folder of a series in every bucket is its crdc_series_uuid, a UUID:
// s3://<bucket>/<crdc_series_uuid>/*. Pure: no engine, so the downloader
// checks a manifest's folders by the same rule as the series look-up.

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

export function isSeriesUuid(v: string): boolean {
  return UUID.test(v);
}
