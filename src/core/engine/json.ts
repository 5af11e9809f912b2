// Conversion of engine values to JSON-safe values: 64-bit integers become
// numbers while exact (strings beyond 2^53), dates and times ISO strings,
// lists arrays, structs objects, blobs lowercase hex, NaN/Infinity null.

import {
  DuckDBTypeId,
  JsonDuckDBValueConverter,
  bytesFromBlobValue,
  doubleFromDecimalValue,
  type DuckDBType,
  type DuckDBValue,
  type DuckDBValueConverter,
} from '@duckdb/node-api';

export type JsonValue = null | boolean | number | string | JsonValue[] | { [k: string]: JsonValue };

export function bigintToJson(v: bigint): number | string {
  return v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(v) : v.toString();
}

export const jsonConverter: DuckDBValueConverter<JsonValue> = (value: DuckDBValue, type: DuckDBType, converter) => {
  if (value === null) return null;
  switch (type.typeId) {
    case DuckDBTypeId.BIGINT:
    case DuckDBTypeId.UBIGINT:
    case DuckDBTypeId.HUGEINT:
    case DuckDBTypeId.UHUGEINT:
      return bigintToJson(value as bigint);
    case DuckDBTypeId.FLOAT:
    case DuckDBTypeId.DOUBLE: {
      const n = value as number;
      return Number.isFinite(n) ? n : null;
    }
    case DuckDBTypeId.DECIMAL:
      return doubleFromDecimalValue(value);
    case DuckDBTypeId.BLOB:
      return Buffer.from(bytesFromBlobValue(value)).toString('hex');
    default:
      return JsonDuckDBValueConverter(value, type, converter) as JsonValue;
  }
};
