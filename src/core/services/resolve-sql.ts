// The query that resolves the identifier lines of a saved manifest and writes
// the answer's text itself: for each line its JSON object (or TSV row), in line
// order, joined into blocks, with per-block counts of each class. The engine
// does this vectorised on every core; building one JS object per line and
// serialising it took several times longer for 100,000 lines.
//
// The text must be what JSON.stringify wrote for the objects the service used
// to build (ResolvedLine): the same keys in the same order, absent keys absent,
// null where a value is NULL. Strings of the data go through to_json (JSON
// escaping); text that came from the user (buckets, header and invalid lines)
// is escaped by the caller with JSON.stringify and pasted as is.

/** A JSON string of a VARCHAR, or null. */
const jstr = (x: string) => `coalesce(to_json(${x})::VARCHAR, 'null')`;

/**
 * A DOUBLE as JavaScript writes it (String(n), JSON.stringify(n)), or `ifNull`: to_json gives the same shortest
 * digits and forms except "5.0" for integral values and "1e21" for "1e+21".
 */
function jsNum(x: string, ifNull: string): string {
  const j = `to_json(${x})::VARCHAR`;
  return `coalesce(CASE WHEN ${x} = trunc(${x}) AND abs(${x}) < 1e21 THEN CAST(CAST(${x} AS HUGEINT) AS VARCHAR)
    WHEN contains(${j}, 'e') AND NOT contains(${j}, 'e-') THEN replace(${j}, 'e', 'e+') ELSE ${j} END, ${ifNull})`;
}

/** An integer, or `ifNull`. */
const int = (x: string, ifNull: string) => `coalesce(CAST(${x} AS VARCHAR), ${ifNull})`;

/** A TSV cell of a string of the data: empty for NULL; tabs and line breaks become spaces. */
const cell = (x: string) => `coalesce(translate(${x}, chr(9) || chr(13) || chr(10), '   '), '')`;

/** The inside of a JSON string of a VARCHAR (its text escaped, without the quotes). */
const jinner = (x: string) => `(to_json(${x})::VARCHAR)[2:-2]`;

export type ResolveFormat = 'json' | 'tsv';

/** Lines per block: big enough that a block costs little per line, small enough to hand out in parts. */
export const BLOCK_LINES = 2000;

/**
 * The SQL over 8 bound values: line numbers, kinds ('u' a folder, 'd' a DICOM UID), identifiers and bucket
 * numbers of the identifier lines (each a comma-joined list, or NULL when there are none), the buckets as JSON
 * ([{i, j: escaped JSON text without quotes, t: TSV cell, k: known to the stores}]), and the other lines (headers,
 * invalid lines): their line numbers and the numbers of their texts (comma-joined lists), and those texts as a JSON
 * list (what follows the line number in its JSON object or TSV row, each distinct text once). Rows: blk, txt (the lines of a block, joined, as UTF-8 bytes: a BLOB
 * reaches JS without being decoded into a string and encoded again), and the counts of
 * current, revised, removed, unknown lines in it, by blk.
 */
export function resolveSql(format: ResolveFormat): string {
  const json = format === 'json';
  // Per version of a series the release no longer has: its JSON object, its part of the TSV versions cell.
  const versionText = json
    ? `'{"crdc_series_uuid":"' || u || '","min_idc_version":' || mn || ',"max_idc_version":' || mx || ',"series_aws_url":' || ${jstr('url')} ||
        ',"aws_bucket":' || ${jstr('b')} || ',"series_size_MB":' || ${jsNum('sz', `'null'`)} || '}'`
    : `rtrim(u || ' v' || mn || '-v' || mx || ' ' || coalesce(b, ''))`;
  // Per series: what a line naming it says after its identifier (collection to current version), its
  // earlier versions, and the last release of a removed one.
  const seriesText = json
    ? `',"collection_id":' || ${jstr('coll')} || ',"PatientID":' || ${jstr('pid')} || ',"StudyInstanceUID":' || ${jstr('st')} ||
        ',"SeriesInstanceUID":' || ${jstr('sid')} || ',"Modality":' || ${jstr('m')} ||
        CASE WHEN has_cur THEN ',"current":{"crdc_series_uuid":' || ${jstr('cu')} || ',"since_idc_version":' || ${int('since', `'null'`)} ||
          ',"series_aws_url":' || ${jstr('curl')} || ',"aws_bucket":' || ${jstr('cb')} || ',"series_size_MB":' || ${jsNum('csz', `'null'`)} ||
          ',"license_short_name":' || ${jstr('lic')} || '}' ELSE '' END`
    : `${cell('coll')} || chr(9) || ${cell('pid')} || chr(9) || ${cell('st')} || chr(9) || ${cell('sid')} || chr(9) || ${cell('m')} || chr(9) ||
        CASE WHEN has_cur THEN ${cell('cu')} || chr(9) || ${int('since', `''`)} || chr(9) || ${cell('cb')} || chr(9) || ${jsNum('csz', `''`)} || chr(9) || ${cell('lic')}
        ELSE chr(9) || chr(9) || chr(9) || chr(9) END`;
  const versionsText = json ? `CASE WHEN n > 0 THEN ',"versions":[' || vt || ']' ELSE '' END` : `coalesce(vt, '')`;
  const lastText = json ? `CASE WHEN has_cur THEN '' ELSE ',"last_idc_version":' || last END` : `CASE WHEN has_cur THEN '' ELSE CAST(last AS VARCHAR) END`;

  // The line of a folder: class, then what the JSON object or TSV row says.
  const uCls = `CASE WHEN h.u IS NULL THEN 'unknown' WHEN h.is_cur THEN 'current' WHEN s.has_cur THEN 'revised' ELSE 'removed' END`;
  const unknownFolder = `'no version of any series of this release or of prior_versions_index has this crdc_series_uuid'`;
  // A bucket no store has: said after the reason (if any), with where the release places the series.
  const where = `' (the release places this series in ' || coalesce(CASE WHEN s.has_cur THEN s.cb END, CASE WHEN NOT h.is_cur THEN o.b END, 'another bucket') || ')'`;
  const badBucket = (bucket: string, rest: (x: string) => string) =>
    `CASE WHEN h.u IS NULL THEN ${unknownFolder} || '; ' ELSE '' END || 'the bucket ' || ${bucket} || ' is not one of the stores'' buckets' ||
      CASE WHEN h.u IS NULL THEN '' ELSE ${rest(where)} END`;
  const uText = json
    ? `'{"line":' || q.line || ',"class":"' || ${uCls} || '","kind":"crdc_series_uuid","id":"' || q.id || '"' ||
        CASE WHEN q.bi IS NULL THEN '' ELSE ',"bucket":"' || bk.j || '"' END ||
        CASE WHEN h.u IS NULL THEN '' ELSE s.stext || CASE WHEN h.is_cur THEN '' ELSE s.vtext END || s.ltext ||
          CASE WHEN h.is_cur THEN '' ELSE ',"named":' || o.vt END END ||
        CASE WHEN q.bi IS NOT NULL AND NOT bk.k THEN ',"message":"' || ${badBucket('bk.j', jinner)} || '"'
             WHEN h.u IS NULL THEN ',"message":"' || ${unknownFolder} || '"' ELSE '' END || '}'`
    : `q.line || chr(9) || ${uCls} || chr(9) || 'crdc_series_uuid' || chr(9) || q.id || chr(9) || coalesce(bk.t, '') || chr(9) ||
        CASE WHEN h.u IS NULL THEN repeat(chr(9), 13)
             ELSE s.stext || chr(9) || CASE WHEN h.is_cur THEN repeat(chr(9), 3) ELSE o.u || chr(9) || o.mn || chr(9) || o.mx || chr(9) || ${cell('o.b')} END END || chr(9) ||
        CASE WHEN h.u IS NULL OR h.is_cur THEN '' ELSE s.vtext END || chr(9) || CASE WHEN h.u IS NULL THEN '' ELSE s.ltext END || chr(9) || chr(9) || chr(9) ||
        CASE WHEN q.bi IS NOT NULL AND NOT bk.k THEN ${badBucket('bk.t', cell)} WHEN h.u IS NULL THEN ${unknownFolder} ELSE '' END`;

  // The line of a DICOM UID: a series, a study, or neither.
  const dCls = `CASE WHEN s.sid IS NOT NULL THEN CASE WHEN NOT s.has_cur THEN 'removed' WHEN s.n > 0 THEN 'revised' ELSE 'current' END
    WHEN t.u IS NOT NULL THEN CASE WHEN t.n > 0 THEN 'current' ELSE 'removed' END ELSE 'unknown' END`;
  const dKind = `CASE WHEN s.sid IS NOT NULL THEN 'SeriesInstanceUID' WHEN t.u IS NOT NULL THEN 'StudyInstanceUID' ELSE 'DICOM UID' END`;
  const unknownUid = `'no series or study of this release or of prior_versions_index has this UID'`;
  const studyLast = `CASE WHEN t.n = 0 AND t.last IS NOT NULL THEN t.last END`;
  const dText = json
    ? `'{"line":' || q.line || ',"class":"' || ${dCls} || '","kind":"' || ${dKind} || '","id":"' || q.id || '"' ||
        CASE WHEN s.sid IS NOT NULL THEN s.stext || s.vtext || s.ltext
             WHEN t.u IS NOT NULL THEN ',"collection_id":' || ${jstr('t.c')} || ',"PatientID":' || ${jstr('t.p')} || ',"StudyInstanceUID":"' || q.id ||
               '","series_current":' || t.n || ',"series_removed":' || t.gone || coalesce(',"last_idc_version":' || ${studyLast}, '')
             ELSE ',"message":"' || ${unknownUid} || '"' END || '}'`
    : `q.line || chr(9) || ${dCls} || chr(9) || ${dKind} || chr(9) || q.id || chr(9) ||
        CASE WHEN s.sid IS NOT NULL THEN chr(9) || s.stext || repeat(chr(9), 5) || s.vtext || chr(9) || s.ltext || repeat(chr(9), 3)
             WHEN t.u IS NOT NULL THEN chr(9) || ${cell('t.c')} || chr(9) || ${cell('t.p')} || chr(9) || q.id || repeat(chr(9), 13) ||
               coalesce(CAST(${studyLast} AS VARCHAR), '') || chr(9) || t.n || chr(9) || t.gone || chr(9)
             ELSE repeat(chr(9), 19) || ${unknownUid} END`;

  return `WITH
  q AS MATERIALIZED (
    SELECT CAST(l AS INTEGER) AS line, k, id, CAST(nullif(b, '') AS INTEGER) AS bi
    FROM (SELECT unnest(string_split($1, ',')) AS l, unnest(string_split($2, ',')) AS k, unnest(string_split($3, ',')) AS id, unnest(string_split($4, ',')) AS b)),
  bk AS (SELECT unnest(json_transform($5, '[{"i":"INTEGER","j":"VARCHAR","t":"VARCHAR","k":"BOOLEAN"}]'), recursive := true)),
  tails AS (SELECT json_transform($8, '["VARCHAR"]') AS t),
  other AS (
    SELECT CAST(l AS INTEGER) AS l, ${json ? `'{"line":' || ` : ''}l || tails.t[CAST(m AS INTEGER) + 1] AS x
    FROM (SELECT unnest(string_split($6, ',')) AS l, unnest(string_split($7, ',')) AS m), tails),
  qu AS MATERIALIZED (SELECT DISTINCT id AS u FROM q WHERE k = 'u'),
  qs AS MATERIALIZED (SELECT DISTINCT id AS u FROM q WHERE k = 'd'),
  pv AS MATERIALIZED (SELECT DISTINCT SeriesInstanceUID AS sid FROM prior_versions_index WHERE crdc_series_uuid IN (SELECT u FROM qu) OR SeriesInstanceUID IN (SELECT u FROM qs)),
  cur AS MATERIALIZED (
    SELECT SeriesInstanceUID AS sid, collection_id AS coll, PatientID AS pid, StudyInstanceUID AS st, Modality AS m, crdc_series_uuid AS cu,
      series_revised_idc_version AS since, series_cloud1_url AS curl, aws_bucket AS cb, series_size_MB AS csz, license_short_name AS lic,
      crdc_series_uuid IN (SELECT u FROM qu) AS asked
    FROM "index" WHERE crdc_series_uuid IN (SELECT u FROM qu) OR SeriesInstanceUID IN (SELECT u FROM qs UNION ALL SELECT sid FROM pv)),
  -- A version may have several rows (one per bucket it sat in): one per folder, the URL where there is one.
  old AS MATERIALIZED (
    SELECT *, ${versionText} AS vt FROM (
      SELECT SeriesInstanceUID AS sid, crdc_series_uuid AS u, any_value(collection_id) AS c, any_value(PatientID) AS p, any_value(StudyInstanceUID) AS st,
        any_value(Modality) AS m, min(min_idc_version) AS mn, max(max_idc_version) AS mx, max(series_aws_url) AS url, max(aws_bucket) AS b, max(series_size_MB) AS sz
      FROM prior_versions_index WHERE SeriesInstanceUID IN (SELECT sid FROM pv UNION ALL SELECT sid FROM cur) GROUP BY 1, 2)),
  -- Earlier versions of a series in the order of the releases that had them (by last, then first release).
  -- (A list sorted after grouping: ordered aggregates sort each group apart, several times slower.)
  vs AS (
    SELECT sid, len(l) AS n, l[-1].mx AS last, l[1].c AS c, l[1].p AS p, l[1].st AS st, l[1].m AS m, array_to_string(list_transform(l, x -> x.vt), '${json ? ',' : ';'}') AS vt
    FROM (SELECT sid, list_sort(list({'mx': mx, 'mn': mn, 'u': u, 'vt': vt, 'c': c, 'p': p, 'st': st, 'm': m})) AS l FROM old GROUP BY sid)),
  ser AS MATERIALIZED (
    SELECT sid, has_cur, cb, n, ${seriesText} AS stext, ${versionsText} AS vtext, ${lastText} AS ltext FROM (
      SELECT coalesce(cur.sid, vs.sid) AS sid, cur.sid IS NOT NULL AS has_cur, coalesce(cur.coll, vs.c) AS coll, coalesce(cur.pid, vs.p) AS pid,
        coalesce(cur.st, vs.st) AS st, CASE WHEN cur.sid IS NOT NULL THEN cur.m ELSE vs.m END AS m, cu, since, curl, cb, csz, lic,
        coalesce(vs.n, 0) AS n, vs.last, vs.vt
      FROM cur FULL OUTER JOIN vs ON cur.sid = vs.sid)),
  -- The series of each folder asked: the current one, else the first version of a series that had it.
  hit AS (
    SELECT u, first(sid ORDER BY pri, sid, mx, mn) AS sid, min(pri) = 0 AS is_cur FROM (
      SELECT cu AS u, sid, 0 AS pri, 0 AS mx, 0 AS mn FROM cur WHERE asked
      UNION ALL SELECT u, sid, 1, mx, mn FROM old WHERE u IN (SELECT u FROM qu)) GROUP BY u),
  -- UIDs that are no series: studies, in the release or only in prior versions.
  sq AS (SELECT u FROM qs WHERE u NOT IN (SELECT sid FROM ser)),
  sc AS (SELECT StudyInstanceUID AS u, any_value(collection_id) AS c, any_value(PatientID) AS p, count(*) AS n FROM "index" WHERE StudyInstanceUID IN (SELECT u FROM sq) GROUP BY 1),
  sg AS (SELECT StudyInstanceUID AS u, any_value(collection_id) AS c, any_value(PatientID) AS p, count(DISTINCT SeriesInstanceUID) AS n, max(max_idc_version) AS last
    FROM prior_versions_index WHERE StudyInstanceUID IN (SELECT u FROM sq)
      AND SeriesInstanceUID NOT IN (SELECT SeriesInstanceUID FROM "index" WHERE StudyInstanceUID IN (SELECT u FROM sq)) GROUP BY 1),
  t AS (SELECT coalesce(sc.u, sg.u) AS u, coalesce(sc.c, sg.c) AS c, coalesce(sc.p, sg.p) AS p, coalesce(sc.n, 0) AS n, coalesce(sg.n, 0) AS gone, sg.last
    FROM sc FULL OUTER JOIN sg ON sc.u = sg.u),
  lines AS (
    SELECT q.line, ${uCls} AS cls, ${uText} AS x FROM q
      LEFT JOIN bk ON bk.i = q.bi LEFT JOIN hit h ON h.u = q.id LEFT JOIN ser s ON s.sid = h.sid
      LEFT JOIN old o ON o.sid = h.sid AND o.u = q.id
    WHERE q.k = 'u'
    UNION ALL
    SELECT q.line, ${dCls}, ${dText} FROM q LEFT JOIN ser s ON s.sid = q.id LEFT JOIN t ON t.u = q.id WHERE q.k = 'd'
    UNION ALL
    SELECT l, 'other', x FROM other)
SELECT (line - 1) // ${BLOCK_LINES} AS blk, encode(string_agg(x, ${json ? `','` : 'chr(10)'} ORDER BY line)) AS txt,
  count(*) FILTER (WHERE cls = 'current') AS current, count(*) FILTER (WHERE cls = 'revised') AS revised,
  count(*) FILTER (WHERE cls = 'removed') AS removed, count(*) FILTER (WHERE cls = 'unknown') AS unknown
FROM lines GROUP BY blk ORDER BY blk`;
}
