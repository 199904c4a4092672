/**
 * Label selectors, ported from k8s.io/apimachinery (labels/selector.go, the label syntax checks
 * of util/validation, metav1.LabelSelectorAsSelector). Selectors are parsed once into
 * requirement arrays; `matches` only loops over them. Field selectors and the per-kind
 * selectable fields are in field-selectors.ts.
 */

export class SelectorError extends Error {
  override name = 'SelectorError';
}

// ---------------------------------------------------------------- label syntax validation

const QNAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const QNAME_MSG = `must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`;
const DNS_MSG = `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`;
const VALUE_MSG = `a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`;
const byteLen = (s: string): number => Buffer.byteLength(s, 'utf8');

/** validation.IsQualifiedName */
export function qualifiedNameErrors(k: string): string[] {
  const parts = k.split('/');
  if (parts.length > 2)
    return [`a qualified name ${QNAME_MSG} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`];
  const errs: string[] = [];
  const name = parts[parts.length - 1]!,
    prefix = parts.length === 2 ? parts[0]! : undefined;
  if (prefix === '') errs.push('prefix part must be non-empty');
  else if (prefix !== undefined) {
    if (byteLen(prefix) > 253) errs.push('prefix part must be no more than 253 characters');
    if (!DNS1123_SUBDOMAIN.test(prefix)) errs.push(`prefix part ${DNS_MSG}`);
  }
  if (name === '') errs.push('name part must be non-empty');
  else if (byteLen(name) > 63) errs.push('name part must be no more than 63 characters');
  if (!QNAME.test(name)) errs.push(`name part ${QNAME_MSG}`);
  return errs;
}

/** validation.IsValidLabelValue */
const labelValueErrors = (v: string): string[] =>
  [byteLen(v) > 63 ? 'must be no more than 63 characters' : '', LABEL_VALUE.test(v) ? '' : VALUE_MSG].filter(Boolean);

const INT64 = /^[+-]?[0-9]+$/,
  MIN_I64 = -(2n ** 63n),
  MAX_I64 = 2n ** 63n - 1n;
/** strconv.ParseInt(s, 10, 64); undefined on error. */
function parseInt64(s: string): bigint | undefined {
  const n = INT64.test(s) ? BigInt(s) : undefined;
  return n === undefined || n < MIN_I64 || n > MAX_I64 ? undefined : n;
}

// ---------------------------------------------------------------- label selectors

/** `=`, `==`, `!=`, `in`, `notin`, `exists`, `!` (does not exist), `gt`, `lt` — upstream selection.Operator values. */
export type LabelOperator = '=' | '==' | '!=' | 'in' | 'notin' | 'exists' | '!' | 'gt' | 'lt';

/** `values` as given (parsed `in`/`notin` sets are sorted and de-duplicated, as upstream). */
export interface LabelRequirement {
  readonly key: string;
  readonly operator: LabelOperator;
  readonly values: readonly string[];
}

export interface LabelSelector {
  readonly requirements: readonly LabelRequirement[]; // sorted by key (stable), as upstream
  readonly empty: boolean; // no requirements: selects everything
  readonly matchesNothing: boolean; // only the selector of a nil metav1.LabelSelector (labels.Nothing())
  matches(labels: Record<string, string> | undefined | null): boolean;
  /** value required for `key` by `=`, `==` or single-valued `in` (upstream RequiresExactMatch) */
  requiresExactMatch(key: string): string | undefined;
  toString(): string;
}

/** `set` only for >1 values; `num` is the gt/lt bound. */
interface CompiledReq extends LabelRequirement {
  readonly set: ReadonlySet<string> | undefined;
  readonly num: bigint | undefined;
}

/** Go's string order (bytes of UTF-8), as upstream sorts requirements and values. */
export const byteOrder = (a: string, b: string): number =>
  a === b ? 0 : Buffer.compare(Buffer.from(a), Buffer.from(b));

function reqMatches(r: CompiledReq, labels: Record<string, string> | undefined | null): boolean {
  const has = labels != null && Object.hasOwn(labels, r.key);
  switch (r.operator) {
    case '=':
    case '==':
    case 'in':
      return has && hasValue(r, labels![r.key]!);
    case '!=':
    case 'notin':
      return !has || !hasValue(r, labels![r.key]!);
    case 'exists':
      return has;
    case '!':
      return !has;
    case 'gt':
    case 'lt': {
      const s = has && r.num !== undefined ? String(labels![r.key]) : '';
      const v = s.length < 16 && INT64.test(s) ? Number(s) : parseInt64(s); // short ints: no BigInt (number vs bigint compares exactly)
      return v !== undefined && (r.operator === 'gt' ? v > r.num! : v < r.num!);
    }
  }
}

const hasValue = (r: CompiledReq, v: string): boolean => (r.set ? r.set.has(v) : r.values[0] === v);

function reqString(r: LabelRequirement): string {
  const vals = () => (r.values.length === 1 ? r.values[0]! : [...r.values].sort(byteOrder).join(','));
  const o = r.operator;
  if (o === '!' || o === 'exists') return o === '!' ? `!${r.key}` : r.key;
  if (o === 'in' || o === 'notin') return `${r.key} ${o} (${vals()})`;
  return `${r.key}${o === 'gt' ? '>' : o === 'lt' ? '<' : o}${vals()}`;
}

class CompiledLabelSelector implements LabelSelector {
  readonly requirements: readonly CompiledReq[];
  readonly empty: boolean;
  constructor(
    reqs: CompiledReq[],
    readonly matchesNothing = false,
  ) {
    this.requirements = reqs.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    this.empty = !matchesNothing && reqs.length === 0;
  }
  matches(labels: Record<string, string> | undefined | null): boolean {
    if (this.matchesNothing) return false;
    const reqs = this.requirements;
    for (let i = 0; i < reqs.length; i++) if (!reqMatches(reqs[i]!, labels)) return false;
    return true;
  }
  requiresExactMatch(key: string): string | undefined {
    const r = this.requirements.find((x) => x.key === key);
    return r && (r.operator === '=' || r.operator === '==' || r.operator === 'in') && r.values.length === 1
      ? r.values[0]
      : undefined;
  }
  toString(): string {
    return this.requirements.map(reqString).join(',');
  }
}

/** labels.NewRequirement: validates and compiles one requirement (throws SelectorError). */
function newRequirement(key: string, operator: LabelOperator, values: string[]): CompiledReq {
  const errs: string[] = [];
  const keyErrs = qualifiedNameErrors(key);
  const q = JSON.stringify(key);
  if (keyErrs.length) errs.push(`invalid label key ${q}: ${keyErrs.join('; ')}`);
  let num: bigint | undefined;
  const n = values.length;
  if ((operator === 'in' || operator === 'notin') && n === 0)
    errs.push(`invalid values for key ${q}: for 'in', 'notin' operators, values set can't be empty`);
  if ((operator === '=' || operator === '==' || operator === '!=') && n !== 1)
    errs.push(`invalid values for key ${q}: exact-match compatibility requires one single value`);
  if ((operator === 'exists' || operator === '!') && n !== 0)
    errs.push(`invalid values for key ${q}: values set must be empty for exists and does not exist`);
  if (operator === 'gt' || operator === 'lt') {
    if (n !== 1) errs.push(`invalid values for key ${q}: for 'Gt', 'Lt' operators, exactly one value is required`);
    for (const v of values) {
      num = parseInt64(v);
      if (num === undefined)
        errs.push(
          `invalid value ${JSON.stringify(v)} for key ${q}: for 'Gt', 'Lt' operators, the value must be an integer`,
        );
    }
  }
  for (const v of values) {
    const ve = labelValueErrors(v);
    if (ve.length) errs.push(`invalid label value ${JSON.stringify(v)} for key ${q}: ${ve.join('; ')}`);
  }
  if (errs.length === 1) throw new SelectorError(errs[0]!);
  if (errs.length > 1) throw new SelectorError(`[${errs.join(', ')}]`);
  return {
    key,
    operator,
    values,
    set: values.length > 1 ? new Set(values) : undefined,
    num: values.length === 1 ? num : undefined,
  };
}

// Lexer tokens (upstream labels.Token).
const ERR = 0,
  EOS = 1,
  RPAR = 2,
  COMMA = 3,
  NOT = 4,
  DEQ = 5,
  EQ = 6,
  GT = 7,
  ID = 8,
  IN = 9,
  LT = 10,
  NEQ = 11,
  NOTIN = 12,
  LPAR = 13;
const STR2TOK = new Map<string, number>([
  [')', RPAR],
  [',', COMMA],
  ['!', NOT],
  ['==', DEQ],
  ['=', EQ],
  ['>', GT],
  ['in', IN],
  ['<', LT],
  ['!=', NEQ],
  ['notin', NOTIN],
  ['(', LPAR],
]);
const isWS = (c: number) => c === 32 || c === 9 || c === 13 || c === 10;
const isSpecial = (c: number) => c === 61 || c === 33 || c === 40 || c === 41 || c === 44 || c === 62 || c === 60;

interface Tok {
  tok: number;
  lit: string;
}

/** Byte-for-byte port of the upstream Lexer (including its NUL-terminates-input quirk). */
function lex(s: string): Tok[] {
  let pos = 0;
  const read = (): number => (pos < s.length ? s.charCodeAt(pos++) : 0);
  const out: Tok[] = [];
  for (;;) {
    let ch = read();
    while (isWS(ch)) ch = read();
    if (ch === 0) {
      out.push({ tok: EOS, lit: '' });
      return out;
    }
    pos--;
    let buf = '',
      last: Tok | undefined;
    const special = isSpecial(ch);
    for (let c = read(); c !== 0; c = read()) {
      if (special !== isSpecial(c) || isWS(c)) {
        pos--;
        break;
      }
      buf += String.fromCharCode(c);
      if (!special) continue;
      const t = STR2TOK.get(buf); // longest special-symbol token
      if (t !== undefined) last = { tok: t, lit: buf };
      else if (last) {
        pos--;
        break;
      }
    }
    if (!special) last = { tok: STR2TOK.get(buf) ?? ID, lit: buf };
    out.push(last ?? { tok: ERR, lit: `error expected: keyword found '${buf}'` });
  }
}

const BINARY_OPS = 'in, notin, =, ==, !=, gt, lt';
const OP_OF = new Map<number, LabelOperator>([
  [IN, 'in'],
  [EQ, '='],
  [DEQ, '=='],
  [GT, 'gt'],
  [LT, 'lt'],
  [NOTIN, 'notin'],
  [NEQ, '!='],
]);

/** Port of the upstream recursive-descent Parser. */
class Parser {
  private pos = 0;
  constructor(private readonly items: Tok[]) {}
  /** Values context turns the keywords `in`/`notin` into identifiers. */
  private look(values: boolean, t = this.items[this.pos]!): Tok {
    return values && (t.tok === IN || t.tok === NOTIN) ? { tok: ID, lit: t.lit } : t;
  }
  private next(values: boolean): Tok {
    return this.look(values, this.items[this.pos++]);
  }
  parse(): CompiledReq[] {
    const reqs: CompiledReq[] = [];
    for (;;) {
      const t = this.look(true);
      if (t.tok === EOS) return reqs;
      if (t.tok !== ID && t.tok !== NOT)
        throw new SelectorError(`found '${t.lit}', expected: !, identifier, or 'end of string'`);
      try {
        reqs.push(this.requirement());
      } catch (e) {
        throw e instanceof SelectorError ? new SelectorError(`unable to parse requirement: ${e.message}`) : e;
      }
      const n = this.next(true); // after a requirement: ',' or end
      if (n.tok === EOS) return reqs;
      if (n.tok !== COMMA) throw new SelectorError(`found '${n.lit}', expected: ',' or 'end of string'`);
      const n2 = this.look(true);
      if (n2.tok !== ID && n2.tok !== NOT) throw new SelectorError(`found '${n2.lit}', expected: identifier after ','`);
    }
  }
  private requirement(): CompiledReq {
    let t = this.next(true);
    let op: LabelOperator | undefined;
    if (t.tok === NOT) {
      op = '!';
      t = this.next(true);
    }
    if (t.tok !== ID) throw new SelectorError(`found '${t.lit}', expected: identifier`);
    const key = t.lit,
      keyErrs = qualifiedNameErrors(key);
    if (keyErrs.length) throw new SelectorError(`invalid label key ${JSON.stringify(key)}: ${keyErrs.join('; ')}`);
    const la = this.look(true).tok;
    if (op === undefined && (la === EOS || la === COMMA)) op = 'exists';
    if (op !== undefined) return newRequirement(key, op, []);
    const o = this.next(false);
    op = OP_OF.get(o.tok);
    if (op === undefined) throw new SelectorError(`found '${o.lit}', expected: ${BINARY_OPS}`);
    return newRequirement(key, op, op === 'in' || op === 'notin' ? this.setValues() : [this.exactValue()]);
  }
  private setValues(): string[] {
    const open = this.next(true);
    if (open.tok !== LPAR) throw new SelectorError(`found '${open.lit}' expected: '('`);
    const first = this.look(true);
    if (first.tok === RPAR) {
      this.pos++;
      return [''];
    }
    if (first.tok !== ID && first.tok !== COMMA)
      throw new SelectorError(`found '${first.lit}', expected: ',', ')' or identifier`);
    const s = new Set<string>();
    for (;;) {
      const t = this.next(true);
      if (t.tok === ID) {
        s.add(t.lit);
        const n = this.look(true);
        if (n.tok === RPAR) break;
        if (n.tok !== COMMA) throw new SelectorError(`found '${n.lit}', expected: ',' or ')'`);
      } else if (t.tok === COMMA) {
        if (s.size === 0) s.add(''); // "(,"
        const n = this.look(true).tok;
        if (n === RPAR) {
          s.add('');
          break;
        } // ",)"
        if (n === COMMA) {
          this.pos++;
          s.add('');
        } // ",,"
      } else throw new SelectorError(`found '${t.lit}', expected: ',', or identifier`);
    }
    this.pos++; // the ')'
    return [...s].sort(byteOrder);
  }
  private exactValue(): string {
    if (this.look(true).tok === EOS || this.look(true).tok === COMMA) return '';
    const t = this.next(true);
    if (t.tok !== ID) throw new SelectorError(`found '${t.lit}', expected: identifier`);
    return t.lit;
  }
}

/** labels.Parse: the `labelSelector` query parameter syntax. "" selects everything. */
export function parseLabelSelector(s: string): LabelSelector {
  return new CompiledLabelSelector(new Parser(lex(s)).parse());
}

export interface LabelSelectorObject {
  matchLabels?: Record<string, string> | null;
  matchExpressions?:
    | { key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | string; values?: string[] | null }[]
    | null;
}

const NOTHING = new CompiledLabelSelector([], true);
const EXPR_OPS: Record<string, LabelOperator> = { In: 'in', NotIn: 'notin', Exists: 'exists', DoesNotExist: '!' };

/** metav1.LabelSelectorAsSelector: null/undefined selects nothing, {} selects everything. */
export function labelSelectorFromObject(sel: LabelSelectorObject | undefined | null): LabelSelector {
  if (sel == null) return NOTHING;
  const reqs: CompiledReq[] = [];
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) {
    if (typeof v !== 'string')
      throw new SelectorError(
        `invalid label value ${JSON.stringify(v)} for key ${JSON.stringify(k)}: must be a string`,
      );
    reqs.push(newRequirement(k, '=', [v]));
  }
  for (const e of sel.matchExpressions ?? []) {
    const op = Object.hasOwn(EXPR_OPS, e.operator) ? EXPR_OPS[e.operator] : undefined;
    if (!op) throw new SelectorError(`${JSON.stringify(e.operator)} is not a valid label selector operator`);
    reqs.push(newRequirement(String(e.key), op, [...(e.values ?? [])]));
  }
  return new CompiledLabelSelector(reqs);
}
