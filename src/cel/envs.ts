/**
 * The CEL environments of CRD validation rules (see ./env.ts): the standard library, the strings
 * extension and the Kubernetes libraries, plain and metered. Loaded with the CEL runtime, on
 * first use (./lazy.ts celEnvs()), never by a static import from outside src/cel.
 */
import { CelScalar, celEnv, celFunc, type CelEnv, type CelFunc, type CelValue } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import { LISTS, SETS } from './library/lists.js';
import { MATCHES_METHOD, REGEX } from './library/regex.js';
import { QUANTITIES } from './library/quantity.js';
import { URLS } from './library/urls.js';
import { IPS } from './library/ip.js';
import { OPTIONALS } from './library/optional.js';
import { FORMAT_FUNCS } from './library/format.js';
import { EQUALITY } from './library/equality.js';
import { OPAQUE, opaqueValue } from './library/opaque.js';
import { CONSTANT_COST, MIN_SIZE_COST } from './cost-classes.js';
import { CostExceeded, meter } from './env.js';

/** The size-proportional part of a call's cost: 0.1 per character or element traversed, as upstream. */
function sizeCost(v: CelValue | undefined): number {
  if (typeof v === 'string') return Math.ceil(v.length / 10);
  if (v instanceof Uint8Array) return Math.ceil(v.length / 10);
  if (v && typeof v === 'object' && 'size' in v && typeof v.size === 'number') return Math.ceil(v.size / 10);
  return 0;
}

function metered(f: CelFunc): CelFunc {
  const constant = CONSTANT_COST.has(f.name);
  const smallest = MIN_SIZE_COST.has(f.name);
  const wrapper = {
    get id() {
      return f.id;
    },
    name: f.name,
    target: f.target,
    arguments: f.arguments,
    result: f.result,
    call(id: number, target: CelValue | undefined, args: CelValue[]) {
      let cost = 1;
      if (smallest) cost += Math.min(...[target, ...args].filter((v) => v !== undefined).map(sizeCost));
      else if (!constant) {
        cost += sizeCost(target);
        for (const a of args) cost += sizeCost(a);
      }
      meter.used += cost;
      if (meter.used > meter.limit) throw new CostExceeded();
      return f.call(id, target, args);
    },
  };
  return wrapper as unknown as CelFunc;
}

const STRING_OF = celFunc('string', [OPAQUE], CelScalar.STRING, (v) => {
  const t = (v as { get(k: string): unknown }).get('@type');
  return opaqueValue(v, String(t));
});

/** The libraries' functions, unmetered (the checker reads their signatures). */
export const LIBRARY: CelFunc[] = [
  ...strings,
  ...LISTS,
  ...SETS,
  ...REGEX,
  ...QUANTITIES,
  ...URLS,
  ...IPS,
  ...OPTIONALS,
  ...FORMAT_FUNCS,
  STRING_OF,
  MATCHES_METHOD,
  ...EQUALITY,
];

const PLAIN = celEnv({ funcs: LIBRARY });

/** The environment rules run in: every function of PLAIN, metered. */
export const RULE_ENV: CelEnv = celEnv({ funcs: [...PLAIN.funcs].map(metered) });

/** The unmetered environment (signatures for the checker, and tests). */
export const PLAIN_ENV: CelEnv = PLAIN;
