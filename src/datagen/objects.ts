// Small, valid DICOM Part 10 files for some series of a generated dataset, laid
// out as the public object stores are: <bucket>/<crdc_series_uuid>/<crdc_instance_uuid>.dcm.
// They carry the identifiers of the index and of the instance table (Patient,
// Study, Series and SOP Instance UIDs, SOP Class, Modality, ...), so a
// downloader test can check that what it fetched is what the index promised.
// The pixel data is a tiny synthetic image (16..32 pixels a side), not a
// plausible scan: the files are for moving and identifying, not viewing.

import { DuckDBInstance } from '@duckdb/node-api';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { lit } from '../core/data/sql.ts';

const EXPLICIT_VR_LITTLE_ENDIAN = '1.2.840.10008.1.2.1';
/** Implementation Class UID of the generator (a UUID-derived 2.25 UID). */
const IMPLEMENTATION_UID = '2.25.218873917562512364715530367466353913927';
const IMAGE_MODALITIES = new Set(['CT', 'MR', 'PT', 'MG', 'DX', 'CR', 'XA', 'US', 'SM', 'NM', 'RTDOSE', 'RF', 'OT']);

export interface ObjectsOptions {
  /** Dataset folder in the release layout, with v2/dicom_instances.parquet (generated with instances). */
  from: string;
  /** Folder to write <bucket>/<crdc_series_uuid>/<crdc_instance_uuid>.dcm into (replaced). */
  out: string;
  /** How many series to write. */
  series: number;
}

export interface ObjectsResult {
  out: string;
  series: number;
  objects: number;
  bytes: number;
  collections: string[];
  /** Collections all of whose series were written. */
  complete_collections: string[];
}

interface SeriesRow {
  collection_id: string;
  PatientID: string;
  StudyInstanceUID: string;
  SeriesInstanceUID: string;
  Modality: string | null;
  SOPClassUID: string | null;
  StudyDate: string | null;
  SeriesDescription: string | null;
  SeriesNumber: string | null;
  Manufacturer: string | null;
  aws_bucket: string;
  crdc_series_uuid: string;
  complete: boolean;
  instances: { SOPInstanceUID: string; crdc_instance_uuid: string }[];
}

type VR = 'UI' | 'CS' | 'DA' | 'LO' | 'PN' | 'SH' | 'IS' | 'US' | 'UL' | 'OB' | 'OW';
const LONG_VRS = new Set<VR>(['OB', 'OW']);

/** One data element in explicit VR little endian. */
function element(group: number, el: number, vr: VR, value: Buffer | string | number): Buffer {
  let v: Buffer;
  if (vr === 'US') {
    v = Buffer.alloc(2);
    v.writeUInt16LE(value as number);
  } else if (vr === 'UL') {
    v = Buffer.alloc(4);
    v.writeUInt32LE(value as number);
  } else if (Buffer.isBuffer(value)) {
    v = value;
  } else {
    v = Buffer.from(String(value), 'latin1');
  }
  if (v.length % 2 === 1) v = Buffer.concat([v, Buffer.from([vr === 'UI' || vr === 'OB' ? 0 : 0x20])]);
  const long = LONG_VRS.has(vr);
  const head = Buffer.alloc(long ? 12 : 8);
  head.writeUInt16LE(group, 0);
  head.writeUInt16LE(el, 2);
  head.write(vr, 4, 'latin1');
  if (long) head.writeUInt32LE(v.length, 8);
  else head.writeUInt16LE(v.length, 6);
  return Buffer.concat([head, v]);
}

/** DA from the index's YYYY-MM-DD. */
function dicomDate(d: string | null): string {
  return d ? d.replaceAll('-', '').slice(0, 8) : '';
}

/** The bytes of one instance: preamble, DICM, file meta group, then the data set. */
export function dicomFile(s: SeriesRow, inst: { SOPInstanceUID: string; crdc_instance_uuid: string }, number: number): Buffer {
  const sopClass = s.SOPClassUID ?? '1.2.840.10008.5.1.4.1.1.7';
  const metaBody = Buffer.concat([
    element(0x0002, 0x0001, 'OB', Buffer.from([0, 1])),
    element(0x0002, 0x0002, 'UI', sopClass),
    element(0x0002, 0x0003, 'UI', inst.SOPInstanceUID),
    element(0x0002, 0x0010, 'UI', EXPLICIT_VR_LITTLE_ENDIAN),
    element(0x0002, 0x0012, 'UI', IMPLEMENTATION_UID),
    element(0x0002, 0x0013, 'SH', 'IDQS_GEN'),
  ]);
  const parts: Buffer[] = [
    Buffer.alloc(128),
    Buffer.from('DICM', 'latin1'),
    element(0x0002, 0x0000, 'UL', metaBody.length),
    metaBody,
    element(0x0008, 0x0016, 'UI', sopClass),
    element(0x0008, 0x0018, 'UI', inst.SOPInstanceUID),
    element(0x0008, 0x0020, 'DA', dicomDate(s.StudyDate)),
    element(0x0008, 0x0060, 'CS', s.Modality ?? ''),
    element(0x0008, 0x0070, 'LO', (s.Manufacturer ?? '').slice(0, 64)),
    element(0x0008, 0x103e, 'LO', (s.SeriesDescription ?? '').slice(0, 64)),
    element(0x0010, 0x0010, 'PN', s.PatientID.slice(0, 64)),
    element(0x0010, 0x0020, 'LO', s.PatientID.slice(0, 64)),
    element(0x0020, 0x000d, 'UI', s.StudyInstanceUID),
    element(0x0020, 0x000e, 'UI', s.SeriesInstanceUID),
    element(0x0020, 0x0011, 'IS', (s.SeriesNumber ?? '').slice(0, 12)),
    element(0x0020, 0x0013, 'IS', String(number)),
  ];
  if (IMAGE_MODALITIES.has(s.Modality ?? '')) {
    // A small 16-bit monochrome image whose side depends on the instance (so object sizes differ).
    const side = 16 + (createHash('sha256').update(inst.crdc_instance_uuid).digest()[0]! % 17);
    const pixels = Buffer.alloc(side * side * 2);
    for (let i = 0; i < side * side; i++) pixels.writeUInt16LE(((i % side) * 37 + Math.floor(i / side) * 11 + number) & 0x0fff, i * 2);
    parts.push(
      element(0x0028, 0x0002, 'US', 1),
      element(0x0028, 0x0004, 'CS', 'MONOCHROME2'),
      element(0x0028, 0x0010, 'US', side),
      element(0x0028, 0x0011, 'US', side),
      element(0x0028, 0x0100, 'US', 16),
      element(0x0028, 0x0101, 'US', 12),
      element(0x0028, 0x0102, 'US', 11),
      element(0x0028, 0x0103, 'US', 0),
      element(0x7fe0, 0x0010, 'OW', pixels),
    );
  }
  return Buffer.concat(parts);
}

/**
 * Choose `series` series, whole collections first (collections with the fewest
 * instances first, so the files stay few), in manifest order within each
 * collection, and read their instances from the instance table.
 */
async function chooseSeries(from: string, series: number): Promise<SeriesRow[]> {
  const index = join(from, 'idc_index.parquet');
  const instances = join(from, 'v2', 'dicom_instances.parquet');
  if (!existsSync(index)) throw new Error(`${from} has no idc_index.parquet: not a dataset folder`);
  if (!existsSync(instances)) throw new Error(`${from} has no v2/dicom_instances.parquet: generate the dataset with instances to write objects`);
  const db = await DuckDBInstance.create(':memory:', { threads: '2' });
  const conn = await db.connect();
  try {
    const rows = (
      await conn.runAndReadAll(`
      WITH coll AS (SELECT collection_id, sum(instanceCount) AS inst, count(*) AS n FROM read_parquet(${lit(index)}) GROUP BY 1),
      chosen AS (
        SELECT i.*, c.n AS coll_series,
          row_number() OVER (ORDER BY c.inst, c.collection_id, i.PatientID, i.StudyInstanceUID, i.SeriesInstanceUID) AS rk
        FROM read_parquet(${lit(index)}) i JOIN coll c USING (collection_id)
        QUALIFY rk <= ${Number(series)})
      SELECT s.collection_id, s.PatientID, s.StudyInstanceUID, s.SeriesInstanceUID, s.Modality, s.SOPClassUID, s.StudyDate,
        s.SeriesDescription, s.SeriesNumber, s.Manufacturer, s.aws_bucket, s.crdc_series_uuid,
        count(*) OVER (PARTITION BY s.collection_id) = s.coll_series AS complete,
        (SELECT list({'SOPInstanceUID': d.SOPInstanceUID, 'crdc_instance_uuid': d.crdc_instance_uuid} ORDER BY d.file_row_number)
         FROM read_parquet(${lit(instances)}, file_row_number = true) d WHERE d.SeriesInstanceUID = s.SeriesInstanceUID) AS instances
      FROM chosen s ORDER BY s.rk`)
    ).getRowObjectsJson();
    return rows as unknown as SeriesRow[];
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

/** Write the objects of `series` series (whole, smallest collections first) under `out`, replacing it. */
export async function writeObjects(opts: ObjectsOptions): Promise<ObjectsResult> {
  if (!Number.isInteger(opts.series) || opts.series < 1) throw new Error('the number of series to write objects for must be a positive integer');
  const chosen = await chooseSeries(opts.from, opts.series);
  const tmp = `${opts.out}.partial-${process.pid}`;
  await rm(tmp, { recursive: true, force: true });
  let objects = 0;
  let bytes = 0;
  try {
    for (const s of chosen) {
      const dir = join(tmp, s.aws_bucket, s.crdc_series_uuid);
      await mkdir(dir, { recursive: true });
      let n = 0;
      for (const inst of s.instances ?? []) {
        const buf = dicomFile(s, inst, ++n);
        await writeFile(join(dir, `${inst.crdc_instance_uuid}.dcm`), buf);
        objects++;
        bytes += buf.length;
      }
    }
    await rm(opts.out, { recursive: true, force: true });
    await rename(tmp, opts.out);
  } catch (e) {
    await rm(tmp, { recursive: true, force: true });
    throw e;
  }
  const collections = [...new Set(chosen.map((s) => s.collection_id))];
  const complete = collections.filter((c) => chosen.filter((s) => s.collection_id === c).every((s) => s.complete));
  return { out: opts.out, series: chosen.length, objects, bytes, collections, complete_collections: complete };
}
