/**
 * The validation rules declared on one schema level, compiled; and their checks when a CRD is
 * written (upstream ValidateCustomResourceDefinitionOpenAPISchema): compile errors, reason,
 * message, fieldPath, optionalOldSelf, and the estimated cost per rule (times how many values it
 * may run on) and for the whole schema, refused past upstream's static limits.
 */
import type { StatusCause } from '../../api/status.js';
import { compileExpression, type Compiled } from '../../cel/compile.js';
import { MAX_REQUEST_BYTES, isObj, type Raw } from '../../cel/types.js';
import { forbidden, invalid, notSupported, required } from '../strategies/field-errors.js';

export interface RuleSpec {
  rule: string;
  message?: string;
  messageExpression?: string;
  reason?: string;
  /** normalized (`spec.foo`, no leading dot), relative to the rule's value */
  fieldPath?: string;
  optionalOldSelf?: boolean;
}

export interface CompiledRule extends RuleSpec {
  compiled: Compiled;
  messageProgram?: Compiled;
}

/** upstream StaticEstimatedCostLimit (one rule) and StaticEstimatedCRDCostLimit (a whole schema) */
export const RULE_COST_LIMIT = 10_000_000;
export const SCHEMA_COST_LIMIT = 100_000_000;
const REASONS = ['FieldValueDuplicate', 'FieldValueForbidden', 'FieldValueInvalid', 'FieldValueRequired'];
const COST_HINT =
  '(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)';

function specsOf(s: Raw): Raw[] {
  const list = s['x-plat-validations'];
  return Array.isArray(list) ? list.filter(isObj) : [];
}

/** `.a.b['c']` against the schema: the normalized path (`a.b[c]`), or why it is not a valid one. */
export function normalizeFieldPath(path: string, schema: Raw): string | Error {
  let s: Raw | undefined = schema;
  let out = '';
  const re = /\.([^.[\]]+)|\['((?:[^'\\]|\\.)*)'\]/gy;
  let m: RegExpExecArray | null;
  let at = 0;
  while (at < path.length && (m = re.exec(path))) {
    at = re.lastIndex;
    const name = m[1] ?? m[2]!.replace(/\\(.)/g, '$1');
    if (isObj(s?.properties)) {
      s = (s.properties as Raw)[name] as Raw | undefined;
      if (!isObj(s)) return new Error('does not refer to a valid field');
      out += out ? `.${name}` : name;
    } else if (isObj(s?.additionalProperties)) {
      s = s.additionalProperties;
      out += `[${name}]`;
    } else return new Error('does not refer to a valid field');
  }
  if (at !== path.length || !path) return new Error(`expected [ or . but got: ${path.slice(at)}`);
  return out;
}

function specOf(r: Raw, schema: Raw): RuleSpec {
  const fp = typeof r.fieldPath === 'string' ? normalizeFieldPath(r.fieldPath, schema) : undefined;
  return {
    rule: String(r.rule ?? ''),
    ...(typeof r.message === 'string' ? { message: r.message } : {}),
    ...(typeof r.messageExpression === 'string' ? { messageExpression: r.messageExpression } : {}),
    ...(typeof r.reason === 'string' ? { reason: r.reason } : {}),
    ...(typeof fp === 'string' ? { fieldPath: fp } : {}),
    ...(r.optionalOldSelf === true ? { optionalOldSelf: true } : {}),
  };
}

function compileOne(spec: RuleSpec, schema: Raw): CompiledRule {
  const scope = { schema, optionalOldSelf: spec.optionalOldSelf };
  const compiled = spec.rule.trim() ? compileExpression(spec.rule, scope, 'bool') : { usesOldSelf: false, cost: 0 };
  const out: CompiledRule = { ...spec, compiled };
  if (spec.messageExpression?.trim()) out.messageProgram = compileExpression(spec.messageExpression, scope, 'string');
  return out;
}

/** The compiled rules of one schema level (compile errors stay inside; they were refused at CRD write). */
export function compileRuleList(s: Raw): CompiledRule[] {
  return specsOf(s).map((r) => compileOne(specOf(r, s), s));
}

interface Costs {
  total: number;
  paths: string[];
  causes: StatusCause[];
}

const factor = (cost: number, limit: number) =>
  cost / limit > 100 ? 'more than 100x' : `${(cost / limit).toFixed(1)}x`;

/** Checks of the rules on one schema level; path is `...properties[spec]`, ext the extension's written prefix. */
function checkLevel(
  s: Raw,
  path: string,
  ext: string,
  cardinality: number,
  costs: Costs,
  uncorrelatable?: string,
): void {
  specsOf(s).forEach((raw, i) => {
    const at = `${path}.${ext}-validations[${i}]`;
    const spec = specOf(raw, s);
    const c = compileOne(spec, s);
    const out = costs.causes;
    if (!spec.rule.trim()) out.push(required(`${at}.rule`));
    else if (c.compiled.error) out.push(invalid(`${at}.rule`, spec.rule, c.compiled.error));
    if (spec.message !== undefined && !spec.message.trim())
      out.push(required(`${at}.message`, 'message must be non-empty if specified'));
    else if (spec.message?.includes('\n'))
      out.push(invalid(`${at}.message`, spec.message, 'message must not contain line breaks'));
    if (c.messageProgram?.error)
      out.push(
        invalid(`${at}.messageExpression`, spec.messageExpression, `messageExpression ${c.messageProgram.error}`),
      );
    if (spec.reason !== undefined && !REASONS.includes(spec.reason))
      out.push(notSupported(`${at}.reason`, spec.reason, REASONS));
    if (typeof raw.fieldPath === 'string' && spec.fieldPath === undefined) {
      const why = normalizeFieldPath(raw.fieldPath, s) as Error;
      out.push(invalid(`${at}.fieldPath`, raw.fieldPath, `fieldPath must be a valid path: ${why.message}`));
    }
    if (spec.optionalOldSelf && !c.compiled.error && !c.compiled.usesOldSelf)
      out.push(forbidden(`${at}.optionalOldSelf`, 'may not be set if oldSelf is not used in rule'));
    if (c.compiled.usesOldSelf && uncorrelatable) {
      out.push(
        invalid(
          `${at}.rule`,
          spec.rule,
          `oldSelf cannot be used on the uncorrelatable portion of the schema within ${uncorrelatable}`,
        ),
      );
    }
    if (c.compiled.error) return;
    const cost = (c.compiled.cost + (c.messageProgram?.cost ?? 0)) * cardinality;
    if (cost > RULE_COST_LIMIT)
      out.push(
        forbidden(
          `${at}.rule`,
          `estimated rule cost exceeds budget by factor of ${factor(cost, RULE_COST_LIMIT)} ${COST_HINT}`,
        ),
      );
    costs.total += cost;
    if (cost > SCHEMA_COST_LIMIT / 100) costs.paths.push(`${at}.rule`);
  });
}

/** how many values of a child schema one value of s holds at most, when the schema bounds it */
function bound(s: Raw): number | undefined {
  if (typeof s.maxItems === 'number') return s.maxItems;
  if (typeof s.maxProperties === 'number') return s.maxProperties;
  return undefined;
}

/**
 * How many times a rule on schema s may run per object: the product of its ancestors' bounds,
 * or, under an unbounded list or map, as many values of s as fit in a request (upstream maxCardinality).
 */
function cardinalityOf(s: Raw, parents: number | undefined): number {
  if (parents !== undefined) return parents;
  const min = s.type === 'string' ? 2 : s.type === 'object' || s.type === 'array' ? 2 : 1;
  return Math.floor(MAX_REQUEST_BYTES / (min + 1));
}

/**
 * parents: the product of the enclosing lists' and maps' bounds (undefined: one of them is
 * unbounded); uncorrelatable: the items path of the outermost enclosing list that is not a
 * list-type map (its items have no old value to compare with: transition rules are refused there).
 */
function walkSchema(
  s: unknown,
  path: string,
  ext: string,
  parents: number | undefined,
  costs: Costs,
  uncorrelatable?: string,
): void {
  if (!isObj(s)) return;
  checkLevel(s, path, ext, cardinalityOf(s, parents), costs, uncorrelatable);
  const inner = (n: number | undefined) => (parents === undefined || n === undefined ? undefined : parents * n);
  if (isObj(s.properties))
    for (const [k, ps] of Object.entries(s.properties))
      walkSchema(ps, `${path}.properties[${k}]`, ext, parents, costs, uncorrelatable);
  if (isObj(s.items)) {
    const items = `${path}.items`;
    walkSchema(
      s.items,
      items,
      ext,
      inner(bound(s)),
      costs,
      uncorrelatable ?? (s['x-plat-list-type'] === 'map' ? undefined : items),
    );
  }
  if (isObj(s.additionalProperties))
    walkSchema(s.additionalProperties, `${path}.additionalProperties`, ext, inner(bound(s)), costs, uncorrelatable);
}

/** Every cause of the rules in a version's schema (root at path), the schema-wide cost limit included. */
export function ruleCauses(schema: unknown, path: string, ext: string): StatusCause[] {
  const costs: Costs = { total: 0, paths: [], causes: [] };
  walkSchema(schema, path, ext, 1, costs);
  if (costs.total > SCHEMA_COST_LIMIT) {
    for (const p of costs.paths)
      costs.causes.push(
        forbidden(p, 'contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema'),
      );
    costs.causes.push(
      forbidden(
        path,
        `${ext}-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of ${factor(costs.total, SCHEMA_COST_LIMIT)} ${COST_HINT}`,
      ),
    );
  }
  return costs.causes;
}

/**
 * The root schema as rules see it (upstream WithTypeAndObjectMeta): apiVersion, kind and
 * metadata.name / metadata.generateName are fields of `self` at the root.
 */
export function withTypeAndObjectMeta(s: Raw): Raw {
  const props = isObj(s.properties) ? s.properties : {};
  const meta = { type: 'object', properties: { name: { type: 'string' }, generateName: { type: 'string' } } };
  return {
    ...s,
    type: 'object',
    properties: { ...props, apiVersion: { type: 'string' }, kind: { type: 'string' }, metadata: meta },
  };
}
