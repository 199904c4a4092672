/**
 * Upstream's wording for bodies that do not parse: Go encoding/json's syntax errors (its
 * scanner: `invalid character 'a' looking for beginning of value`, `unexpected end of JSON
 * input`) and the apiserver's summary of the offending body. Runs only on the error path,
 * after JSON.parse has failed, so the hot path never scans twice.
 */

const SPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isHex = (c: number) => isDigit(c) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);
const GO_ESCAPES: Record<number, string> = {
  7: '\\a',
  8: '\\b',
  9: '\\t',
  10: '\\n',
  11: '\\v',
  12: '\\f',
  13: '\\r',
  0x5c: '\\\\',
};

/** Go's quoteChar: a byte as Go prints it in a syntax error (`'a'`, `'\n'`, `'\x01'`, `'"'`). */
export function quoteChar(c: number): string {
  if (c === 0x27) return "'\\''";
  if (c === 0x22) return "'\"'";
  if (GO_ESCAPES[c]) return `'${GO_ESCAPES[c]}'`;
  if (c < 0x20 || c === 0x7f) return `'\\x${c.toString(16).padStart(2, '0')}'`;
  if (c >= 0x80 && (c < 0xa1 || c === 0xad)) return `'\\u00${c.toString(16).padStart(2, '0')}'`;
  return `'${String.fromCharCode(c)}'`;
}

type Step = (c: number) => string | undefined;

const bad = (c: number, context: string): string => `invalid character ${quoteChar(c)} ${context}`;

/** Go's json scanner (encoding/json's state machine) over bytes, one state per method. */
class GoScanner {
  private readonly stack: ('obj-key' | 'obj-value' | 'arr')[] = [];
  private step: Step;
  private done = false;

  constructor() {
    this.step = this.beginValue;
  }

  /** The first syntax error's message, or undefined when data is one valid JSON value. */
  scan(data: Uint8Array): string | undefined {
    for (const c of data) {
      const err = this.step(c);
      if (err) return err;
    }
    // at the end a number (or literal) at top level is complete; anything else open is an EOF error
    const s = this.step;
    const complete =
      this.stack.length === 0 &&
      (s === this.digits || s === this.zero || s === this.dotDigits || s === this.expDigits || s === this.endValue);
    return !this.done && !complete ? 'unexpected end of JSON input' : undefined;
  }

  private readonly literal =
    (word: string, i: number): Step =>
    (c) => {
      if (c !== word.charCodeAt(i)) return bad(c, `in literal ${word} (expecting ${quoteChar(word.charCodeAt(i))})`);
      this.step = i + 1 === word.length ? this.endValue : this.literal(word, i + 1);
      return undefined;
    };
  private readonly beginValue: Step = (c) => {
    if (SPACE.has(c)) return undefined;
    switch (c) {
      case 0x7b:
        this.stack.push('obj-key');
        this.step = this.beginStringOrEmpty;
        return undefined;
      case 0x5b:
        this.stack.push('arr');
        this.step = this.beginValueOrEmpty;
        return undefined;
      case 0x22:
        this.step = this.inString;
        return undefined;
      case 0x2d:
        this.step = this.neg;
        return undefined;
      case 0x30:
        this.step = this.zero;
        return undefined;
      case 0x74:
        this.step = this.literal('true', 1);
        return undefined;
      case 0x66:
        this.step = this.literal('false', 1);
        return undefined;
      case 0x6e:
        this.step = this.literal('null', 1);
        return undefined;
    }
    if (isDigit(c)) {
      this.step = this.digits;
      return undefined;
    }
    return bad(c, 'looking for beginning of value');
  };
  private readonly beginStringOrEmpty: Step = (c) => {
    if (SPACE.has(c)) return undefined;
    if (c === 0x7d) {
      this.stack.pop();
      return this.afterValue();
    }
    return this.beginString(c);
  };
  private readonly beginString: Step = (c) => {
    if (SPACE.has(c)) return undefined;
    if (c === 0x22) {
      this.step = this.inString;
      return undefined;
    }
    return bad(c, 'looking for beginning of object key string');
  };
  private readonly beginValueOrEmpty: Step = (c) => {
    if (SPACE.has(c)) return undefined;
    if (c === 0x5d) {
      this.stack.pop();
      return this.afterValue();
    }
    return this.beginValue(c);
  };
  private readonly inString: Step = (c) => {
    if (c === 0x22) {
      this.step = this.endValue;
      return undefined;
    }
    if (c === 0x5c) {
      this.step = this.inEscape;
      return undefined;
    }
    return c < 0x20 ? bad(c, 'in string literal') : undefined;
  };
  private readonly inEscape: Step = (c) => {
    if ([0x62, 0x66, 0x6e, 0x72, 0x74, 0x5c, 0x2f, 0x22].includes(c)) {
      this.step = this.inString;
      return undefined;
    }
    if (c === 0x75) {
      this.step = this.hex(4);
      return undefined;
    }
    return bad(c, 'in string escape code');
  };
  private readonly hex =
    (left: number): Step =>
    (c) => {
      if (!isHex(c)) return bad(c, 'in \\u hexadecimal character escape');
      this.step = left === 1 ? this.inString : this.hex(left - 1);
      return undefined;
    };
  private readonly neg: Step = (c) => {
    if (c === 0x30) {
      this.step = this.zero;
      return undefined;
    }
    if (isDigit(c)) {
      this.step = this.digits;
      return undefined;
    }
    return bad(c, 'in numeric literal');
  };
  private readonly digits: Step = (c) => (isDigit(c) ? undefined : this.zero(c));
  private readonly zero: Step = (c) => {
    if (c === 0x2e) {
      this.step = this.dot;
      return undefined;
    }
    if (c === 0x65 || c === 0x45) {
      this.step = this.exp;
      return undefined;
    }
    return this.endValue(c);
  };
  private readonly dot: Step = (c) => {
    if (isDigit(c)) {
      this.step = this.dotDigits;
      return undefined;
    }
    return bad(c, 'after decimal point in numeric literal');
  };
  private readonly dotDigits: Step = (c) => {
    if (isDigit(c)) return undefined;
    if (c === 0x65 || c === 0x45) {
      this.step = this.exp;
      return undefined;
    }
    return this.endValue(c);
  };
  private readonly exp: Step = (c) => {
    if (c === 0x2b || c === 0x2d) {
      this.step = this.expSign;
      return undefined;
    }
    return this.expSign(c);
  };
  private readonly expSign: Step = (c) => {
    if (isDigit(c)) {
      this.step = this.expDigits;
      return undefined;
    }
    return bad(c, 'in exponent of numeric literal');
  };
  private readonly expDigits: Step = (c) => (isDigit(c) ? undefined : this.endValue(c));
  private readonly endTop: Step = (c) => (SPACE.has(c) ? undefined : bad(c, 'after top-level value'));
  /** a value just ended: the container decides what may follow */
  private afterValue(): undefined {
    this.step = this.stack.length ? this.endValue : this.endTop;
    if (!this.stack.length) this.done = true;
    return undefined;
  }
  private readonly endValue: Step = (c) => {
    const top = this.stack[this.stack.length - 1];
    if (top === undefined) {
      this.done = true;
      this.step = this.endTop;
      return this.endTop(c);
    }
    this.step = this.endValue; // reached from a number's last digit too
    if (SPACE.has(c)) return undefined;
    if (top === 'obj-key') {
      if (c === 0x3a) {
        this.stack[this.stack.length - 1] = 'obj-value';
        this.step = this.beginValue;
        return undefined;
      }
      return bad(c, 'after object key');
    }
    if (top === 'obj-value') {
      if (c === 0x2c) {
        this.stack[this.stack.length - 1] = 'obj-key';
        this.step = this.beginString;
        return undefined;
      }
      if (c === 0x7d) {
        this.stack.pop();
        return this.afterValue();
      }
      return bad(c, 'after object key:value pair');
    }
    if (c === 0x2c) {
      this.step = this.beginValue;
      return undefined;
    }
    if (c === 0x5d) {
      this.stack.pop();
      return this.afterValue();
    }
    return bad(c, 'after array element');
  };
}

/** Go's json scanner over bytes: the first syntax error's message, or undefined when valid. */
export function goJsonSyntaxError(data: Uint8Array): string | undefined {
  return new GoScanner().scan(data);
}

/** upstream summarizeData (max 30 bytes): the text of an object body, else hex; `<empty>` for none. */
export function summarizeData(data: Uint8Array): string {
  if (data.length === 0) return '<empty>';
  const head = data.subarray(0, 30);
  const more = data.length > 30 ? ' ...' : '';
  return data[0] === 0x7b ? Buffer.from(head).toString('utf8') + more : Buffer.from(head).toString('hex') + more;
}

/** Go's %+v of a decoded JSON value (map keys sorted, as fmt prints maps). */
export function goValue(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (Array.isArray(v)) return `[${v.map(goValue).join(' ')}]`;
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `map[${Object.keys(o)
      .sort()
      .map((k) => `${k}:${goValue(o[k])}`)
      .join(' ')}]`;
  }
  return String(v);
}
