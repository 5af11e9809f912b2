// Placeholder until the /v2 tables land.
import type { GenContext } from './generate.ts';

export async function generateV2(_ctx: GenContext, _out: string, _instances: boolean): Promise<Record<string, number>> {
  return {};
}
