/**
 * YAML encoding of decoded JSON values (issue 26 item 2): linear in the size of the value, never
 * recursive, and resumable, so a large reply can be encoded in slices between other work.
 *
 * The output is the `yaml` library's `stringify` output for the same value (block style, two
 * spaces, sequences indented under their key, strings styled by the library's own
 * `stringifyString`), with one difference: a collection nested FLOW_DEPTH or more collections
 * deep is written in flow style, as JSON (`{"a": [1, 2]}`, which every YAML parser reads), so
 * indentation never grows past 2 × FLOW_DEPTH columns. Block style indents every line by its
 * depth; a deeply nested value (a 994-level managedFields entry) made the old output, and the
 * library's work, grow with the square of the depth.
 */
import { Document } from 'yaml';
import { stringifyNumber, stringifyString } from 'yaml/util';

/** collections this deep (the top-level value is depth 0) and deeper are written in flow style */
export const FLOW_DEPTH = 64;

const STEP = '  ';
/** entries written between two looks at the slice's clock */
const CHECK_EVERY = 256;
const doc = new Document();
/** the stringify context the library builds for its defaults (createStringifyContext) */
const OPTIONS = {
  blockQuote: true,
  defaultKeyType: null,
  defaultStringType: 'PLAIN',
  directives: null,
  doubleQuotedAsJSON: false,
  doubleQuotedMinMultiLineLength: 40,
  falseStr: 'false',
  flowCollectionPadding: true,
  indentSeq: true,
  lineWidth: 80,
  minContentWidth: 20,
  nullStr: 'null',
  simpleKeys: false,
  singleQuote: null,
  trailingComma: false,
  trueStr: 'true',
  verifyAliasOrder: true,
  commentString: (s: string) => s.replace(/^(?!$)(?: $)?/gm, '#'),
};
type StringifyContext = Parameters<typeof stringifyString>[1];

/** A string scalar as the library writes it at this indentation (a fresh context: the library may set flags on it). */
function scalarString(value: string, indent: string, implicitKey: boolean, indentAtStart?: number): string {
  const ctx = {
    anchors: new Set<string>(),
    doc,
    flowCollectionPadding: ' ',
    indent,
    indentStep: STEP,
    inFlow: null,
    options: OPTIONS,
    implicitKey,
    actualString: true,
    ...(indentAtStart !== undefined ? { indentAtStart } : {}),
  } as unknown as StringifyContext;
  return stringifyString({ value } as Parameters<typeof stringifyString>[0], ctx);
}

/** A non-collection value in block context (strings styled by the library). */
function blockScalar(v: unknown, indent: string, indentAtStart?: number): string {
  if (typeof v === 'string') return scalarString(v, indent, false, indentAtStart);
  if (typeof v === 'number') return stringifyNumber({ value: v } as Parameters<typeof stringifyNumber>[0]);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  return 'null';
}

/** A non-collection value in flow style: JSON, with the characters YAML does not allow unescaped escaped. */
function flowScalar(v: unknown): string {
  if (typeof v === 'string')
    return JSON.stringify(v).replace(
      /[\x7f-\x9f\ufeff\ufffe\uffff]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
    );
  if (typeof v === 'number')
    return Number.isFinite(v) ? String(v) : Number.isNaN(v) ? '.nan' : v < 0 ? '-.inf' : '.inf';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  return 'null';
}

type Collection = Record<string, unknown> | unknown[];

function isCollection(v: unknown): v is Collection {
  return v !== null && typeof v === 'object';
}

function isEmpty(v: Collection): boolean {
  if (Array.isArray(v)) return v.length === 0;
  for (const _ in v) return false;
  return true;
}

/**
 * One open collection: its entries, the next one to write, and the indentation strings its
 * entries are written with (block: `indent` separates entries, `inner` is the entries' own
 * context; flow: unused).
 */
interface Frame {
  seq: boolean;
  flow: boolean;
  depth: number;
  keys: string[] | undefined;
  values: unknown[] | Record<string, unknown>;
  next: number;
  indent: string;
  inner: string;
}

/**
 * A resumable encoder: `step` writes until the value is done or the slice's time is up. Its
 * state is an explicit stack, so depth costs heap, not call stack.
 */
export class YamlEncoder {
  private readonly out: string[] = [];
  private readonly stack: Frame[] = [];
  private started = false;
  /** values written so far (the slice clock is read every CHECK_EVERY of them) */
  nodes = 0;

  constructor(private readonly value: unknown) {}

  /** Writes until done (true) or until `until` (a performance.now() time) has passed (false). */
  step(until = Infinity): boolean {
    if (!this.started) {
      this.started = true;
      this.write(this.value, 0, '', undefined, '');
    }
    let count = 0;
    while (this.stack.length > 0) {
      if (++count % CHECK_EVERY === 0 && performance.now() >= until) return false;
      this.advance(this.stack[this.stack.length - 1]!);
    }
    return true;
  }

  /** The YAML text (after step returned true). */
  text(): string {
    return this.out.join('') + '\n';
  }

  private push(v: Collection, depth: number, indent: string, inner: string): void {
    const seq = Array.isArray(v);
    this.stack.push({
      seq,
      flow: depth >= FLOW_DEPTH,
      depth,
      keys: seq ? undefined : Object.keys(v),
      values: v,
      next: 0,
      indent,
      inner,
    });
    if (depth >= FLOW_DEPTH) this.out.push(seq ? '[' : '{');
  }

  /** Writes the frame's next entry, or closes the frame. */
  private advance(f: Frame): void {
    const n = f.keys ? f.keys.length : (f.values as unknown[]).length;
    if (f.next >= n) {
      this.stack.pop();
      if (f.flow) this.out.push(f.seq ? ']' : '}');
      return;
    }
    const i = f.next++;
    this.nodes++;
    const v = f.keys ? (f.values as Record<string, unknown>)[f.keys[i]!] : (f.values as unknown[])[i];
    if (f.flow) {
      if (i > 0) this.out.push(', ');
      if (f.keys) this.out.push(flowScalar(f.keys[i]), ': ');
      return this.write(v, f.depth + 1, '', undefined, '');
    }
    if (i > 0) this.out.push('\n', f.indent);
    if (!f.keys) {
      this.out.push('- ');
      // an entry of a sequence: its context is the entries' indentation, a nested sequence opens on the same line
      return this.write(v, f.depth + 1, f.inner, undefined, '');
    }
    let key = scalarString(f.keys[i]!, f.inner, true);
    // the library makes a key longer than 1024 characters explicit (`? key` then `: value`)
    const explicit = key.length > 1024;
    key = explicit ? `? ${key}\n${f.indent}:` : `${key}:`;
    this.out.push(key);
    this.write(
      v,
      f.depth + 1,
      f.inner,
      explicit ? undefined : key.length + 1,
      explicit ? ' ' : '\n' + f.inner,
      explicit,
    );
  }

  /**
   * Writes a value (or opens its collection). `indent` is the value's context indentation;
   * `lead` what precedes a non-empty block collection (a pair's value starts on a new line).
   */
  private write(
    v: unknown,
    depth: number,
    indent: string,
    indentAtStart: number | undefined,
    lead: string,
    explicit = false,
  ): void {
    const afterKey = lead !== '';
    if (!isCollection(v)) {
      if (depth > FLOW_DEPTH) return void this.out.push(flowScalar(v));
      const s = blockScalar(v, indent, indentAtStart);
      // a value folded to start on the next line follows its key directly (as the library writes it)
      return void this.out.push(afterKey && s !== '' && s[0] !== '\n' ? ' ' : '', s);
    }
    if (depth >= FLOW_DEPTH) {
      if (afterKey) this.out.push(' ');
      return this.push(v, depth, '', '');
    }
    if (isEmpty(v)) return void this.out.push(afterKey ? ' ' : '', Array.isArray(v) ? '[]' : '{}');
    if (afterKey) this.out.push(explicit ? ' ' : lead);
    // entries are joined at the collection's context indentation; their own context is one step further in
    this.push(v, depth, indent, indent + STEP);
  }
}

/** The YAML text of a value, in one go (small values: Status replies, single objects). */
export function toYaml(value: unknown): string {
  const e = new YamlEncoder(value);
  e.step();
  return e.text();
}
