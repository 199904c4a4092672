/**
 * The static pass over a parsed rule (what cel-go's checker and cost estimator do at CRD write):
 * every identifier, field, function and overload resolved against the schema-typed `self` and
 * the environment's signatures, the result type, and the estimated worst-case cost, with sizes
 * from the schema (maxLength, maxItems, maxProperties, else the most a request can hold).
 */
import type { CelFunc } from '@bufbuild/cel';
import { celEnvs } from './lazy.js';
import { CONSTANT_COST, MIN_SIZE_COST } from './cost-classes.js';
import { OPT_INDEX, OPT_SELECT } from './optional-syntax.js';
import { BOOL, DYN, INT, accepts, fieldType, fromCelType, typeName, type T } from './types.js';

/** The shape of @bufbuild/cel's parsed Expr that the pass reads. */
export interface Node {
  id: bigint;
  exprKind: { case: string | undefined; value?: unknown };
}

interface Constant {
  constantKind: { case: string; value: unknown };
}
interface Select {
  operand: Node;
  field: string;
  testOnly: boolean;
}
interface Call {
  target?: Node;
  function: string;
  args: Node[];
}
interface StructEntry {
  keyKind: { case: string; value: unknown };
  value: Node;
}
interface Comprehension {
  iterVar: string;
  iterRange: Node;
  accuVar: string;
  accuInit: Node;
  loopCondition: Node;
  loopStep: Node;
  result: Node;
}

export interface Issue {
  offset: number;
  message: string;
}
interface Scope {
  vars: Map<string, T>;
  parent?: Scope;
}
interface Result {
  t: T;
  cost: number;
}

const lookup = (s: Scope | undefined, name: string): T | undefined =>
  s ? (s.vars.get(name) ?? lookup(s.parent, name)) : undefined;
const CONSTS: Record<string, T> = {
  int64Value: INT,
  uint64Value: { k: 'uint' },
  doubleValue: { k: 'double' },
  boolValue: BOOL,
  nullValue: { k: 'null_type' },
  bytesValue: { k: 'bytes' },
};
/** calls that cost nothing themselves (the evaluator's logic), and calls whose cost does not grow with their arguments */
const FREE = new Set(['_&&_', '_||_', '!_', '@not_strictly_false', '_?_:_', '_[_]']);
const LOGIC = new Set(['_&&_', '_||_', '!_', '@not_strictly_false', '@in', '_==_', '_!=_']);

export class Analyzer {
  readonly issues: Issue[] = [];
  /** was oldSelf referenced */
  usesOldSelf = false;

  constructor(private readonly positions: Record<string, number>) {}

  private fail(n: Node, message: string): Result {
    this.issues.push({ offset: this.positions[String(n.id)] ?? 0, message });
    return { t: DYN, cost: 0 };
  }

  run(n: Node, scope: Scope): Result {
    const v = n.exprKind.value;
    switch (n.exprKind.case) {
      case 'constExpr': {
        const c = (v as Constant).constantKind;
        if (c.case === 'stringValue') return { t: { k: 'string', max: String(c.value).length }, cost: 0 };
        return { t: CONSTS[c.case] ?? DYN, cost: 0 };
      }
      case 'identExpr':
        return this.ident(n, (v as { name: string }).name, scope);
      case 'selectExpr':
        return this.select(n, v as Select, scope);
      case 'callExpr':
        return this.call(n, v as Call, scope);
      case 'listExpr': {
        const parts = (v as { elements: Node[] }).elements.map((e) => this.run(e, scope));
        const cost = parts.reduce((a, p) => a + p.cost, 10);
        return { t: { k: 'list', elem: parts[0]?.t ?? DYN, max: parts.length }, cost };
      }
      case 'structExpr': {
        const st = v as { messageName: string; entries: StructEntry[] };
        if (st.messageName) return this.fail(n, `undeclared reference to '${st.messageName}' (in container '')`);
        let cost = 30;
        for (const e of st.entries) {
          cost += this.run(e.value, scope).cost;
          if (e.keyKind.case === 'mapKey') cost += this.run(e.keyKind.value as Node, scope).cost;
        }
        return { t: { k: 'map', elem: DYN, max: st.entries.length }, cost };
      }
      case 'comprehensionExpr':
        return this.comprehension(n, v as Comprehension, scope);
      default:
        return this.fail(n, 'unsupported expression');
    }
  }

  private ident(n: Node, name: string, scope: Scope): Result {
    const t = lookup(scope, name);
    if (!t) return this.fail(n, `undeclared reference to '${name}' (in container '')`);
    if (name === 'oldSelf') this.usesOldSelf = true;
    return { t, cost: 1 };
  }

  private select(n: Node, v: Select, scope: Scope): Result {
    const op = this.run(v.operand, scope);
    const out = (t: T): Result => ({ t: v.testOnly ? BOOL : t, cost: op.cost + 1 });
    if (op.t.k === 'dyn') return out(DYN);
    if (op.t.k === 'map') return out(op.t.elem ?? DYN);
    if (op.t.k === 'object') {
      const f = fieldType(op.t, v.field);
      return f ? out(f) : this.fail(n, `undefined field '${v.field}'`);
    }
    return this.fail(n, `type '${typeName(op.t)}' does not support field selection`);
  }

  private comprehension(n: Node, v: Comprehension, scope: Scope): Result {
    const range = this.run(v.iterRange, scope);
    const r = range.t;
    if (!['list', 'map', 'object', 'dyn'].includes(r.k)) {
      return this.fail(
        n,
        `expression of type '${typeName(r)}' cannot be range of a comprehension (must be list, map, or dynamic)`,
      );
    }
    const iter: T = r.k === 'list' ? (r.elem ?? DYN) : r.k === 'dyn' ? DYN : { k: 'string', max: 253 };
    const init = this.run(v.accuInit, scope);
    const accu: T = init.t.k === 'list' ? { k: 'list', elem: DYN, max: r.max } : init.t;
    const inner: Scope = {
      vars: new Map([
        [v.iterVar, iter],
        [v.accuVar, accu],
      ]),
      parent: scope,
    };
    const cond = this.run(v.loopCondition, inner);
    const step = this.run(v.loopStep, inner);
    const result = this.run(v.result, { vars: new Map([[v.accuVar, accu]]), parent: scope });
    const times = r.max ?? 1;
    return { t: result.t, cost: range.cost + init.cost + times * (cond.cost + step.cost + 1) + result.cost };
  }

  private call(n: Node, v: Call, scope: Scope): Result {
    let name = v.function;
    let target = v.target;
    // `sets.contains(a, b)`: a qualified function name, not a method of an identifier
    const targetName =
      target?.exprKind.case === 'identExpr' ? (target.exprKind.value as { name: string }).name : undefined;
    if (targetName !== undefined && !lookup(scope, targetName)) {
      const qualified = `${targetName}.${name}`;
      if (celEnvs().PLAIN_ENV.funcs.find(qualified)) {
        name = qualified;
        target = undefined;
      }
    }
    const t = target ? this.run(target, scope) : undefined;
    const args = v.args.map((a) => this.run(a, scope));
    const sizes = [...(t ? [sizeCost(t.t)] : []), ...args.map((x) => sizeCost(x.t))];
    const own = FREE.has(name)
      ? 0
      : CONSTANT_COST.has(name)
        ? 1
        : MIN_SIZE_COST.has(name)
          ? 1 + Math.min(...sizes)
          : 1 + sizes.reduce((a, x) => a + x, 0);
    const cost = own + (t?.cost ?? 0) + args.reduce((a, x) => a + x.cost, 0);
    const types = args.map((a) => a.t);
    if (LOGIC.has(name)) return this.logic(n, name, types, cost);
    if (name === '_?_:_') return { t: types[1]!.k === types[2]!.k ? types[1]! : DYN, cost };
    if (name === '_[_]') return this.index(n, types[0]!, types[1]!, cost);
    if (name === OPT_SELECT || name === OPT_INDEX) return this.optional(n, name, v, types, cost);
    const group = celEnvs().PLAIN_ENV.funcs.find(name);
    if (!group) return this.fail(n, `undeclared reference to '${name}' (in container '')`);
    const matching = [...group].filter((f) => matches(f, t?.t, types));
    if (!matching.length) {
      return this.fail(
        n,
        `found no matching overload for '${name}' applied to '${t ? typeName(t.t) + '.' : ''}(${types.map(typeName).join(', ')})'`,
      );
    }
    return { t: resultOf(matching, t?.t), cost };
  }

  /** `a.?f` and `a[?i]` (a possibly an optional): f must be a field of a typed object, as for `a.f`; the result is an optional of the value's type. */
  private optional(n: Node, name: string, v: Call, types: T[], cost: number): Result {
    const on = types[0]!.opt ?? types[0]!;
    let inner: T = DYN;
    if (name === OPT_SELECT) {
      const field = String(
        (v.args[1]?.exprKind.value as { constantKind?: { value?: unknown } } | undefined)?.constantKind?.value,
      );
      if (on.k === 'object') {
        const f = fieldType(on, field);
        if (!f) return this.fail(n, `undefined field '${field}'`);
        inner = f;
      } else if (on.k === 'map') inner = on.elem ?? DYN;
    } else if (on.k === 'list' || on.k === 'map') inner = on.elem ?? DYN;
    return { t: { k: 'map', elem: DYN, opt: inner }, cost };
  }

  private logic(n: Node, name: string, types: T[], cost: number): Result {
    const [a, b] = types as [T, T];
    if ((name === '_==_' || name === '_!=_') && !comparable(a, b)) {
      return this.fail(n, `found no matching overload for '${name}' applied to '(${typeName(a)}, ${typeName(b)})'`);
    }
    if ((name === '_&&_' || name === '_||_' || name === '!_') && types.some((x) => x.k !== 'bool' && x.k !== 'dyn')) {
      return this.fail(n, `found no matching overload for '${name}' applied to '(${types.map(typeName).join(', ')})'`);
    }
    return { t: BOOL, cost };
  }

  private index(n: Node, on: T, key: T, cost: number): Result {
    if (on.k === 'list')
      return key.k === 'int' || key.k === 'uint' || key.k === 'dyn'
        ? { t: on.elem ?? DYN, cost }
        : this.fail(n, `found no matching overload for '_[_]' applied to '(${typeName(on)}, ${typeName(key)})'`);
    if (on.k === 'map') return { t: on.elem ?? DYN, cost };
    if (on.k === 'dyn' || on.k === 'object') return { t: DYN, cost };
    return this.fail(n, `found no matching overload for '_[_]' applied to '(${typeName(on)}, ${typeName(key)})'`);
  }
}

/** 0.1 per character or element a function may traverse (upstream's traversal cost factor). */
function sizeCost(t: T | undefined): number {
  if (!t || t.max === undefined) return 0;
  return ['string', 'bytes', 'list', 'map'].includes(t.k) ? Math.ceil(t.max / 10) : 0;
}

const NUMBERS = new Set(['int', 'uint', 'double']);
function comparable(a: T, b: T): boolean {
  if (a.k === 'dyn' || b.k === 'dyn' || a.k === 'null_type' || b.k === 'null_type') return true;
  if (NUMBERS.has(a.k) && NUMBERS.has(b.k)) return true;
  if ((a.k === 'map' || a.k === 'object') && (b.k === 'map' || b.k === 'object')) return true;
  return a.k === b.k;
}

function matches(f: CelFunc, target: T | undefined, args: T[]): boolean {
  if ((f.target === undefined) !== (target === undefined)) return false;
  if (f.target && target && !accepts(f.target, target)) return false;
  return f.arguments.length === args.length && f.arguments.every((p, i) => accepts(p, args[i]!));
}

/** The result type of the matching overloads (dyn unless they agree); list min/max/sum give the element type. */
function resultOf(funcs: CelFunc[], target: T | undefined): T {
  const results = funcs.map((f) => fromCelType(f.result));
  const first = results[0]!;
  if (first.k === 'dyn' && target?.k === 'list') return target.elem ?? DYN;
  return results.every((r) => r.k === first.k) ? first : DYN;
}
