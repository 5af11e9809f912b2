// The downloader's parsers: manifest files, layout templates, ListObjectsV2
// XML and size flags (no processes, no network).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseSize } from '../src/download/command.ts';
import { DEFAULT_LAYOUT, parseLayout, parseManifest, renderLayout } from '../src/download/layout.ts';
import { cohortFilters } from '../src/download/run.ts';
import { parseListResult } from '../src/core/s3.ts';
import { DuckDBInstance } from '@duckdb/node-api';
import { folderName, folderNameSql } from '../src/core/rules/folder-name.ts';

test('manifest: URL lines, s5cmd cp lines, comments and blanks; duplicates listed once; errors name the line', () => {
  const t = parseManifest(
    [
      '# Run with: s5cmd --no-sign-request run x',
      '',
      's3://idc-open-data/0a/*',
      "cp 's3://idc-open-cr/1b/*' 'idqs-data/c/p/s/1.2/'",
      'cp --show-progress "s3://b/2c/*" out/',
      's3://idc-open-data/0a/*',
      's3://b/exact/key.dcm',
    ].join('\n'),
  );
  assert.deepEqual(
    t.map((x) => [x.bucket, x.prefix]),
    [['idc-open-data', '0a/'], ['idc-open-cr', '1b/'], ['b', '2c/'], ['b', 'exact/key.dcm']],
  );
  assert.throws(() => parseManifest('s3://a/b/*\nhttp://x/y', 'm.txt'), /m\.txt:2: expected an s3:\/\/ URL/);
  assert.throws(() => parseManifest('s3://bucket-only/*', 'm.txt'), /m\.txt:1: .*whole bucket/);
  assert.throws(() => parseManifest('s3://a/b*c/*', 'm.txt'), /only a trailing \*/);
  assert.throws(() => parseManifest('cp x y', 'm.txt'), /m\.txt:1: a cp line without an s3:\/\/ source/);
});

test('layout: the longest variable name wins, values are made folder-safe, flat and braces work', () => {
  const vars = { collection_id: 'c', PatientID: 'P/1', StudyInstanceUID: '1.2', SeriesInstanceUID: '1.3', Modality: 'CT', crdc_series_uuid: 'u' };
  const d = parseLayout(DEFAULT_LAYOUT);
  assert.deepEqual(d.vars, ['collection_id', 'PatientID', 'StudyInstanceUID', 'Modality', 'SeriesInstanceUID']);
  assert.equal(d.needsService, true);
  assert.equal(renderLayout(d, vars), 'c/P_1/1.2/CT_1.3');
  assert.equal(renderLayout(parseLayout('flat'), vars), '');
  assert.equal(renderLayout(parseLayout('%{Modality}x/%crdc_series_uuid'), vars), 'CTx/u');
  assert.equal(parseLayout('%crdc_series_uuid').needsService, false);
  assert.equal(renderLayout(d, { ...vars, PatientID: '..' }), 'c/_/1.2/CT_1.3');
  assert.throws(() => parseLayout('%Nope/x'), /unknown variable at "%Nope/);
  assert.throws(() => parseLayout('../%Modality'), /"\." and "\.\." folders/);
});

test('ListObjectsV2: entries, entities, paging token; a non-listing body is refused', () => {
  const xml = `<?xml version="1.0"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name>
    <Contents><Key>u/a&amp;b.dcm</Key><Size>12</Size><ETag>&quot;0123456789abcdef0123456789abcdef&quot;</ETag></Contents>
    <Contents><Key>u/c.dcm</Key><Size>0</Size><ETag>"x-2"</ETag></Contents>
    <IsTruncated>true</IsTruncated><NextContinuationToken>t+/=</NextContinuationToken></ListBucketResult>`;
  assert.deepEqual(parseListResult(xml), {
    objects: [{ key: 'u/a&b.dcm', size: 12, etag: '0123456789abcdef0123456789abcdef' }, { key: 'u/c.dcm', size: 0, etag: 'x-2' }],
    truncated: true,
    next: 't+/=',
  });
  assert.throws(() => parseListResult('<html>hello</html>'), /ListBucketResult/);
});

test('--confirm-above sizes and the cohort filter of --collection/--series/--filters', () => {
  assert.equal(parseSize('10GB'), 10e9);
  assert.equal(parseSize('1.5 tb'), 1.5e12);
  assert.equal(parseSize('500'), 500);
  assert.throws(() => parseSize('ten'), /size such as/);
  assert.deepEqual(cohortFilters({ collection: ['a'], filters: '{"filters":{"terms":{"Modality":["CT"]},"ranges":{"x":{"gte":1}}}}' }), {
    terms: { Modality: ['CT'], collection_id: ['a'] },
    ranges: { x: { gte: 1 } },
  });
  assert.throws(() => cohortFilters({ collection: ['a'], filters: '{"terms":{"collection_id":["b"]}}' }), /both in --filters and as --collection/);
  assert.throws(() => cohortFilters({ filters: '[1]' }), /must be a JSON object/);
});

test('folder names follow one rule in the downloader and in the s5cmd lines of manifest.txt (SQL)', async () => {
  const cases: [string | null, string][] = [
    ['.x', '_x'],
    ['..', '_'],
    ['...hidden.dcm', '_hidden.dcm'],
    ['a/b', 'a_b'],
    ['1.2.840.10008', '1.2.840.10008'],
    ['TCGA-02-0001', 'TCGA-02-0001'],
    ['é x', '__x'],
    ['a😀b', 'a_b'],
    ['a.', 'a.'],
    ['', '_'],
    [null, '_'],
  ];
  for (const [v, want] of cases) assert.equal(folderName(v), want, JSON.stringify(v));
  const vars = { collection_id: 'c', PatientID: '.x', StudyInstanceUID: '1.2', SeriesInstanceUID: '1.3', Modality: 'CT' };
  assert.equal(renderLayout(parseLayout(DEFAULT_LAYOUT), vars), 'c/_x/1.2/CT_1.3');
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  try {
    const values = cases.map(([v], i) => `(${v === null ? 'NULL' : `'${v.replaceAll("'", "''")}'`}, ${i})`).join(', ');
    const rows = (await c.runAndReadAll(`SELECT ${folderNameSql('v')} AS f FROM (VALUES ${values}) t(v, i) ORDER BY i`)).getRowObjects();
    assert.deepEqual(rows.map((r) => r.f), cases.map(([, want]) => want));
  } finally {
    c.closeSync();
    db.closeSync();
  }
});
