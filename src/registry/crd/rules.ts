/**
 * CRD validation rules (`x-plat-validations` / `x-kubernetes-validations`, upstream
 * apiextensions schema/cel): compiled once per CRD version into a tree that mirrors the parts
 * of the schema that hold rules; evaluated per write in the shard actor with `self` (and
 * `oldSelf` on update, for transition rules), a per-call and a per-object cost budget, and
 * ratcheting (a value equal to its old value is not re-validated by rules that ignore oldSelf).
 */
import type { StatusCause } from '../../api/status.js';
import { evaluate, type Compiled } from '../../cel/compile.js';
import { meter, PER_CALL_LIMIT } from '../../cel/env.js';
import { isObj, type Raw } from '../../cel/types.js';
import { optionalOf, toCelValue } from '../../cel/values.js';
import { goValue, same } from '../strategies/field-errors.js';
import { compileRuleList, type CompiledRule, type RuleSpec } from './rule-specs.js';

/** upstream RuntimeCELCostBudget: the whole object's rules together */
export const RUNTIME_BUDGET = 10_000_000;

export interface RuleNode {
  schema: Raw;
  rules: CompiledRule[];
  props?: Map<string, RuleNode>;
  items?: RuleNode;
  values?: RuleNode;
  /** list-type map keys (items correlate with old items by these), or 'set' */
  listType?: string;
  mapKeys?: string[];
}

/** The rule tree of a schema (undefined when no rule is declared anywhere in it). */
export function ruleTree(s: unknown): RuleNode | undefined {
  if (!isObj(s)) return undefined;
  const node: RuleNode = { schema: s, rules: compileRuleList(s) };
  let any = node.rules.length > 0;
  if (isObj(s.properties)) {
    for (const [k, ps] of Object.entries(s.properties)) {
      const child = ruleTree(ps);
      if (child) {
        (node.props ??= new Map()).set(k, child);
        any = true;
      }
    }
  }
  if (isObj(s.items)) {
    node.items = ruleTree(s.items);
    if (node.items) any = true;
    node.listType = typeof s['x-plat-list-type'] === 'string' ? s['x-plat-list-type'] : 'atomic';
    if (Array.isArray(s['x-plat-list-map-keys'])) node.mapKeys = s['x-plat-list-map-keys'] as string[];
  }
  if (isObj(s.additionalProperties)) {
    node.values = ruleTree(s.additionalProperties);
    if (node.values) any = true;
  }
  return any ? node : undefined;
}

interface Run {
  causes: StatusCause[];
  remaining: number;
  stop: boolean;
}

const childPath = (path: string, k: string) => (path ? `${path}.${k}` : k);

/** Causes for every rule of tree broken by obj (old: the stored object on update). */
export function validateRules(tree: RuleNode, obj: unknown, old: unknown): StatusCause[] {
  const run: Run = { causes: [], remaining: RUNTIME_BUDGET, stop: false };
  walk(tree, obj, old, '', run);
  return run.causes;
}

function walk(n: RuleNode, v: unknown, old: unknown, path: string, run: Run): void {
  if (v === null || v === undefined || run.stop) return;
  if (n.rules.length) evalRules(n, v, old, path, run);
  if (n.props && isObj(v)) {
    const o = isObj(old) ? old : undefined;
    for (const [k, child] of n.props) walk(child, v[k], o?.[k], childPath(path, k), run);
  } else if (n.values && isObj(v)) {
    const o = isObj(old) ? old : undefined;
    for (const k of Object.keys(v)) walk(n.values, v[k], o?.[k], `${path}[${k}]`, run);
  } else if (n.items && Array.isArray(v)) {
    const olds = Array.isArray(old) ? old : [];
    v.forEach((x, i) => walk(n.items!, x, correlate(n, x, olds), `${path}[${i}]`, run));
  }
}

/** The old item a list item is compared with: by keys (map lists), by value (sets); atomic lists do not correlate. */
function correlate(n: RuleNode, item: unknown, olds: unknown[]): unknown {
  if (n.listType === 'map' && n.mapKeys && isObj(item))
    return olds.find((o) => isObj(o) && n.mapKeys!.every((k) => same(o[k], item[k])));
  if (n.listType === 'set') return olds.find((o) => same(o, item));
  return undefined;
}

/** upstream's Invalid value shown for rule failures: the schema's type (`"object"`). */
const shownType = (s: Raw) => goValue(typeof s.type === 'string' ? s.type : '');

function causeFor(r: CompiledRule, n: RuleNode, path: string, detail: string): StatusCause {
  const field = r.fieldPath ? childPath(path, r.fieldPath) : path;
  switch (r.reason) {
    case 'FieldValueForbidden':
      return { reason: r.reason, message: `Forbidden: ${detail}`, field };
    case 'FieldValueRequired':
      return { reason: r.reason, message: `Required value: ${detail}`, field };
    case 'FieldValueDuplicate':
      return { reason: r.reason, message: `Duplicate value: ${shownType(n.schema)}`, field };
    default:
      return { reason: 'FieldValueInvalid', message: `Invalid value: ${shownType(n.schema)}: ${detail}`, field };
  }
}

const invalidAt = (n: RuleNode, path: string, detail: string): StatusCause => ({
  reason: 'FieldValueInvalid',
  message: `Invalid value: ${shownType(n.schema)}: ${detail}`,
  field: path,
});

const ruleText = (r: RuleSpec) => r.message?.trim() || r.rule.trim();
const OUT_OF_BUDGET = 'validation failed due to running out of cost budget, no further validation rules will be run';

function evalRules(n: RuleNode, v: unknown, old: unknown, path: string, run: Run): void {
  const self = toCelValue(v, n.schema);
  const hasOld = old !== undefined && old !== null;
  const oldSelf = hasOld ? toCelValue(old, n.schema) : undefined;
  const unchanged = hasOld && same(v, old);
  for (const r of n.rules) {
    // a rule stored before this server checked it at CRD write fails closed, as upstream reports it
    if (r.compiled.error) {
      run.causes.push(invalidAt(n, path, `rule compile error: ${r.compiled.error}`));
      continue;
    }
    if (!r.compiled.program) continue;
    if (r.compiled.usesOldSelf && !hasOld && !r.optionalOldSelf) continue;
    if (unchanged && !r.compiled.usesOldSelf) continue;
    if (run.remaining <= 0) {
      run.causes.push(invalidAt(n, path, OUT_OF_BUDGET));
      run.stop = true;
      return;
    }
    const vars = { self, oldSelf: r.optionalOldSelf ? optionalOf(oldSelf) : oldSelf };
    const out = metered(r.compiled, vars, run);
    if ('error' in out) {
      if (out.cost) {
        run.causes.push(
          invalidAt(
            n,
            path,
            `'${out.error}': no further validation rules will be run due to call cost exceeds limit for rule: ${ruleText(r)}`,
          ),
        );
        run.stop = true;
        return;
      }
      const why =
        out.error === 'no such overload'
          ? `'no such overload': call arguments did not match a supported operator, function or macro signature for rule: ${ruleText(r)}`
          : `${out.error} evaluating rule: ${ruleText(r)}`;
      run.causes.push(invalidAt(n, path, why));
      continue;
    }
    if (run.stop) return;
    if (out.value === true) continue;
    run.causes.push(causeFor(r, n, path, detailOf(r, vars, run)));
  }
}

function metered(c: Compiled, vars: Record<string, unknown>, run: Run): ReturnType<typeof evaluate> {
  meter.used = 0;
  meter.limit = PER_CALL_LIMIT;
  const out = evaluate(c.program!, vars);
  run.remaining -= meter.used;
  if (run.remaining < 0 && !('error' in out && out.cost)) {
    run.causes.push({ reason: 'FieldValueInvalid', message: `Invalid value: "object": ${OUT_OF_BUDGET}`, field: '' });
    run.stop = true;
  }
  return out;
}

/** The message of a failed rule: messageExpression's string when it evaluates to a usable one, else message, else `failed rule: <rule>`. */
function detailOf(r: CompiledRule, vars: Record<string, unknown>, run: Run): string {
  if (r.messageProgram?.program) {
    const out = metered(r.messageProgram, vars, run);
    if ('value' in out && typeof out.value === 'string') {
      const s = out.value.trim();
      if (s && !s.includes('\n') && s.length <= 5000) return s;
    }
  }
  return r.message?.trim() || `failed rule: ${r.rule.trim()}`;
}
