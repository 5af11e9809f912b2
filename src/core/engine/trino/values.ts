// Trino's JSON values as the JSON values the embedded engine's rows carry
// (../json.ts), so an answer is the same whichever engine gave it: decimals
// as numbers, NaN and infinities as null, binary as lowercase hex, rows as
// objects named by their fields, arrays element by element.

import type { JsonValue } from '../json.ts';
import type { TypeSignature } from './client.ts';

function argumentType(a: { kind: string; value: unknown } | undefined): TypeSignature | undefined {
  if (!a) return undefined;
  const v = a.value as { typeSignature?: TypeSignature; rawType?: string };
  return a.kind === 'NAMED_TYPE' ? v.typeSignature : (v as TypeSignature);
}

export function fromTrino(value: unknown, type: TypeSignature | undefined): JsonValue {
  if (value === null || value === undefined) return null;
  switch (type?.rawType) {
    case 'double':
    case 'real':
      return typeof value === 'number' && Number.isFinite(value) ? value : null;
    case 'decimal':
      return Number(value);
    case 'bigint':
      // Exact beyond 2^53 only as a string, as the embedded engine's rows say it.
      return typeof value === 'number' && !Number.isSafeInteger(value) ? BigInt(String(value)).toString() : (value as number);
    case 'varbinary':
      return Buffer.from(String(value), 'base64').toString('hex');
    case 'array': {
      const of = argumentType(type.arguments?.[0]);
      return (value as unknown[]).map((v) => fromTrino(v, of));
    }
    case 'row': {
      const out: Record<string, JsonValue> = {};
      (value as unknown[]).forEach((v, i) => {
        const a = type.arguments?.[i];
        const name = (a?.value as { fieldName?: { name?: string } } | undefined)?.fieldName?.name ?? `field${i + 1}`;
        out[name] = fromTrino(v, argumentType(a));
      });
      return out;
    }
    default:
      return value as JsonValue;
  }
}
