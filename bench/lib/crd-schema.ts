/** The custom resource bench's CRD, objects and options, shared by bench/crd-create.ts and bench/crd-rules.ts. */
import { expect } from './http.js';
import type { Ctx } from '../scenarios/common.js';

export const NS = 'bench-crd';
export const GROUP = 'bench.example.com';

/** `--name N` from the command line, else def. */
export function arg(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
}

/** 30 fields: strings with bounds/patterns/enums, integers with bounds and defaults, booleans. */
export function schema(): {
  type: 'object';
  properties: { spec: { type: 'object'; properties: Record<string, unknown> } };
} {
  const props: Record<string, unknown> = {};
  for (let i = 1; i <= 30; i++) {
    const k = `f${String(i).padStart(2, '0')}`;
    if (i % 3 === 0) props[k] = { type: 'integer', minimum: 0, maximum: 1_000_000, default: i };
    else if (i % 5 === 0) props[k] = { type: 'string', enum: ['alpha', 'beta', 'gamma'] };
    else if (i % 7 === 0) props[k] = { type: 'boolean' };
    else props[k] = { type: 'string', maxLength: 64, pattern: '^[a-z0-9-]*$' };
  }
  return { type: 'object', properties: { spec: { type: 'object', properties: props } } };
}

/** The wrk round options of both benches (`--duration`, `--connections`, `--rounds`). */
export function benchCtx(): Ctx {
  return {
    durationSec: arg('duration', 5),
    connections: arg('connections', 32),
    rounds: arg('rounds', 2),
    serverNodeArgs: [],
    log: (m) => console.log(m),
  };
}

/** A valid spec for schema(). */
export function spec(): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (let i = 1; i <= 30; i++) {
    const k = `f${String(i).padStart(2, '0')}`;
    out[k] = i % 3 === 0 ? i * 1000 : i % 5 === 0 ? 'beta' : i % 7 === 0 ? true : `value-of-field-${i}`;
  }
  return out;
}

/** Creates the CRD `<plural>.GROUP` and waits until its namespaced collection is served; returns that path. */
export async function createCRD(url: string, plural: string, kind: string, openAPIV3Schema: unknown): Promise<string> {
  const crd = {
    apiVersion: 'apiextensions.plat.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural, kind },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema } }],
    },
  };
  await expect(url, 'POST', '/apis/apiextensions.plat.io/v1/customresourcedefinitions', JSON.stringify(crd), [201]);
  const path = `/apis/${GROUP}/v1/namespaces/${NS}/${plural}`;
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline && (await expect(url, 'GET', path, undefined, [200, 404])).status !== 200)
    await new Promise((r) => setTimeout(r, 50));
  return path;
}
