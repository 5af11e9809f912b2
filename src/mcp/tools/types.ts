// What a tool is: the capability it serves (its name comes from the catalog
// in src/contract/capabilities.ts), a description that teaches the workflow,
// an input schema (TypeBox, i.e. JSON Schema: the same kind of schema,
// validator and error messages as the REST routes), and a run function that
// calls the same core service as the capability's route and returns the same body.

import { Type, type Static, type TObject, type TProperties } from '@sinclair/typebox';
import type { AppContext } from '../../core/context.ts';
import type { CapabilityId } from '../../core/capabilities.ts';
import type { FilterObject } from '../../core/filters/v3.ts';
import { SURFACES } from '../../contract/capabilities.ts';
import { FilterSchema, RangeSchema } from '../../contract/filter-schema.ts';
import type { ToolLimits } from '../limits.ts';

export interface ToolEnv {
  ctx: AppContext;
  limits: ToolLimits;
  /** Base URL of the HTTP API for the download commands the cohort tools return. */
  apiBase: string;
}

export interface ToolDef {
  name: string;
  capability: CapabilityId;
  title: string;
  description: string;
  input: TObject;
  run: (args: Record<string, unknown>, env: ToolEnv) => unknown;
}

/** A tool whose run function sees its arguments typed by its input schema. */
export function defineTool<P extends TProperties>(def: {
  capability: CapabilityId;
  title: string;
  description: string;
  input: P;
  run: (args: Static<TObject<P>>, env: ToolEnv) => unknown;
}): ToolDef {
  const name = SURFACES[def.capability].tool;
  if (name === null) throw new Error(`capability ${def.capability} has no tool in the catalog`);
  return {
    ...def,
    name,
    input: Type.Object(def.input, { additionalProperties: false }) as unknown as TObject,
    run: def.run as ToolDef['run'],
  };
}

/** Cohort filter arguments, at the top level of a tool's arguments: {terms, ranges}. */
export const filterInput = {
  terms: Type.Optional(
    Type.Record(Type.String(), Type.Array(Type.String()), {
      description:
        'Attribute name to accepted values: OR within an attribute, AND across attributes, e.g. {"collection_id": ["nlst"], "Modality": ["CT"]}. ' +
        'Attribute names come from list_attributes (kind term); values are case-sensitive: copy them from get_attribute_values.',
    }),
  ),
  ranges: Type.Optional(
    Type.Record(Type.String(), RangeSchema, {
      description: 'Range attribute (kind range in list_attributes) to inclusive bounds, e.g. {"instanceCount": {"gte": 50}} or {"StudyDate": {"gte": "2001-01-01"}}.',
    }),
  ),
  any_of: FilterSchema.properties.any_of,
};

export function filterOf(args: { terms?: Record<string, string[]>; ranges?: FilterObject['ranges']; any_of?: FilterObject[] }): FilterObject {
  const f: FilterObject = {};
  if (args.terms !== undefined) f.terms = args.terms;
  if (args.ranges !== undefined) f.ranges = args.ranges;
  if (args.any_of !== undefined) f.any_of = args.any_of;
  return f;
}
