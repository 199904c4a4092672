/**
 * cel-go's optional field selection `a.?f` and optional index `a[?i]` (cel.OptionalTypes, on
 * for CRD rules in v1.32), which the @bufbuild/cel parser does not read. Before parsing, the
 * source is rewritten into syntax it reads (`a.__opt__f`, `a[__optidx__(i)]`, string literals
 * left alone); after parsing, those marks become calls of the library's `@optsel` and
 * `@optindex` (library/optional.ts), and so does every plain selection or index that follows
 * one in the same chain, as cel-go qualifies the rest of a chain "if present" once a
 * qualifier is optional (`a.?b.c` is optional.none() when b or c is absent).
 */
/** The shape of @bufbuild/cel's parsed Expr that lowering reads and rewrites (as analyze.ts's Node). */
interface Node {
  id: bigint;
  exprKind: { case: string | undefined; value?: unknown };
}

const SELECT_MARK = '__opt__';
const INDEX_MARK = '__optidx__';
export const OPT_SELECT = '@optsel';
export const OPT_INDEX = '@optindex';

export interface Rewritten {
  text: string;
  /** an offset of text as an offset of the original source */
  original(offset: number): number;
}

/** The end (exclusive) of the string literal starting at i (quotes, triple quotes, raw prefix handled by the caller). */
function stringEnd(src: string, i: number, raw: boolean): number {
  const q = src[i]!;
  const triple = src.startsWith(q.repeat(3), i);
  const close = triple ? q.repeat(3) : q;
  let j = i + close.length;
  while (j < src.length) {
    if (!raw && src[j] === '\\') {
      j += 2;
      continue;
    }
    if (src.startsWith(close, j)) return j + close.length;
    if (!triple && src[j] === '\n') return j;
    j++;
  }
  return j;
}

/** Rewrites `.?f` and `[?i]` (outside string literals); the source is returned as is when it has neither. */
export function rewriteOptionalSyntax(src: string): Rewritten {
  if (!src.includes('?')) return { text: src, original: (o) => o };
  let out = '';
  /** [offset in out, characters inserted there] */
  const inserted: [number, number][] = [];
  const brackets: boolean[] = [];
  const put = (s: string, extra: number) => {
    if (extra) inserted.push([out.length, extra]);
    out += s;
  };
  for (let i = 0; i < src.length; ) {
    const c = src[i]!;
    if (c === '"' || c === "'") {
      const raw = i > 0 && /[rR]/.test(src[i - 1]!) && !/[\w]/.test(src[i - 2] ?? '');
      const end = stringEnd(src, i, raw);
      out += src.slice(i, end);
      i = end;
    } else if (c === '.' && src[i + 1] === '?' && /^\?\s*[_a-zA-Z]/.test(src.slice(i + 1))) {
      const ws = /^\?\s*/.exec(src.slice(i + 1))![0].length;
      put(`.${SELECT_MARK}`, SELECT_MARK.length - ws);
      i += 1 + ws;
    } else if (c === '[') {
      const m = /^\[\s*\?/.exec(src.slice(i));
      brackets.push(!!m);
      if (m) {
        put(`[${INDEX_MARK}(`, INDEX_MARK.length + 1 - (m[0].length - 1));
        i += m[0].length;
      } else {
        out += c;
        i++;
      }
    } else if (c === ']') {
      if (brackets.pop()) put(')]', 1);
      else out += c;
      i++;
    } else {
      out += c;
      i++;
    }
  }
  return {
    text: out,
    original: (o) => o - inserted.filter(([at]) => at < o).reduce((a, [, n]) => a + n, 0),
  };
}

type Kind = Node['exprKind'];
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

/** ids for the string constants lowering adds (past any the parser gives) */
let nextId = 1n << 40n;

function stringConst(value: string): Node {
  return {
    id: nextId++,
    exprKind: { case: 'constExpr', value: { constantKind: { case: 'stringValue', value } } },
  } as Node;
}

function toCall(n: Node, fn: string, args: Node[]): void {
  (n as { exprKind: Kind }).exprKind = { case: 'callExpr', value: { function: fn, args } } as Kind;
}

/** Lowers the marks of rewriteOptionalSyntax in place; true when n is an optional chain. */
export function lowerOptionals(n: Node | undefined): boolean {
  if (!n) return false;
  const v = n.exprKind.value as Record<string, unknown>;
  switch (n.exprKind.case) {
    case 'selectExpr': {
      const s = v as unknown as Select;
      const chained = lowerOptionals(s.operand);
      const marked = s.field.startsWith(SELECT_MARK);
      if (!marked && (!chained || s.testOnly)) return false;
      toCall(n, OPT_SELECT, [s.operand, stringConst(marked ? s.field.slice(SELECT_MARK.length) : s.field)]);
      return true;
    }
    case 'callExpr': {
      const c = v as unknown as Call;
      lowerOptionals(c.target);
      const chained = c.args.map((a) => lowerOptionals(a))[0] === true;
      if (c.function !== '_[_]' || c.args.length !== 2) return false;
      const index = c.args[1]!;
      const ic = index.exprKind.case === 'callExpr' ? (index.exprKind.value as unknown as Call) : undefined;
      const marked = ic?.function === INDEX_MARK && !ic.target && ic.args.length === 1;
      if (!marked && !chained) return false;
      toCall(n, OPT_INDEX, [c.args[0]!, marked ? ic.args[0]! : index]);
      return true;
    }
    case 'listExpr':
      for (const e of (v as { elements: Node[] }).elements) lowerOptionals(e);
      return false;
    case 'structExpr':
      for (const e of (v as { entries: { keyKind: { case: string; value: unknown }; value: Node }[] }).entries) {
        lowerOptionals(e.value);
        if (e.keyKind.case === 'mapKey') lowerOptionals(e.keyKind.value as Node);
      }
      return false;
    case 'comprehensionExpr':
      for (const k of ['iterRange', 'accuInit', 'loopCondition', 'loopStep', 'result']) lowerOptionals(v[k] as Node);
      return false;
    default:
      return false;
  }
}
