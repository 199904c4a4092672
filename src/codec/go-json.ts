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

/** Go's json scanner over bytes: the first syntax error's message, or undefined when valid. */
export function goJsonSyntaxError(data: Uint8Array): string | undefined {
  const stack: ('obj-key' | 'obj-value' | 'arr')[] = [];
  const bad = (c: number, context: string) => `invalid character ${quoteChar(c)} ${context}`;
  let step: Step;
  let done = false;
  const literal =
    (word: string, i: number): Step =>
    (c) => {
      if (c !== word.charCodeAt(i)) return bad(c, `in literal ${word} (expecting ${quoteChar(word.charCodeAt(i))})`);
      step = i + 1 === word.length ? endValue : literal(word, i + 1);
      return undefined;
    };
  const beginValue: Step = (c) => {
    if (SPACE.has(c)) return undefined;
    switch (c) {
      case 0x7b:
        stack.push('obj-key');
        step = beginStringOrEmpty;
        return undefined;
      case 0x5b:
        stack.push('arr');
        step = beginValueOrEmpty;
        return undefined;
      case 0x22:
        step = inString;
        return undefined;
      case 0x2d:
        step = neg;
        return undefined;
      case 0x30:
        step = zero;
        return undefined;
      case 0x74:
        step = literal('true', 1);
        return undefined;
      case 0x66:
        step = literal('false', 1);
        return undefined;
      case 0x6e:
        step = literal('null', 1);
        return undefined;
    }
    if (isDigit(c)) {
      step = digits;
      return undefined;
    }
    return bad(c, 'looking for beginning of value');
  };
  const beginStringOrEmpty: Step = (c) => {
    if (SPACE.has(c)) return undefined;
    if (c === 0x7d) {
      stack.pop();
      return afterValue();
    }
    return beginString(c);
  };
  const beginString: Step = (c) => {
    if (SPACE.has(c)) return undefined;
    if (c === 0x22) {
      step = inString;
      return undefined;
    }
    return bad(c, 'looking for beginning of object key string');
  };
  const beginValueOrEmpty: Step = (c) => {
    if (SPACE.has(c)) return undefined;
    if (c === 0x5d) {
      stack.pop();
      return afterValue();
    }
    return beginValue(c);
  };
  const inString: Step = (c) => {
    if (c === 0x22) {
      step = endValue;
      return undefined;
    }
    if (c === 0x5c) {
      step = inEscape;
      return undefined;
    }
    return c < 0x20 ? bad(c, 'in string literal') : undefined;
  };
  const inEscape: Step = (c) => {
    if ([0x62, 0x66, 0x6e, 0x72, 0x74, 0x5c, 0x2f, 0x22].includes(c)) {
      step = inString;
      return undefined;
    }
    if (c === 0x75) {
      step = hex(4);
      return undefined;
    }
    return bad(c, 'in string escape code');
  };
  const hex =
    (left: number): Step =>
    (c) => {
      if (!isHex(c)) return bad(c, 'in \\u hexadecimal character escape');
      step = left === 1 ? inString : hex(left - 1);
      return undefined;
    };
  const neg: Step = (c) => {
    if (c === 0x30) {
      step = zero;
      return undefined;
    }
    if (isDigit(c)) {
      step = digits;
      return undefined;
    }
    return bad(c, 'in numeric literal');
  };
  const digits: Step = (c) => (isDigit(c) ? undefined : zero(c));
  const zero: Step = (c) => {
    if (c === 0x2e) {
      step = dot;
      return undefined;
    }
    if (c === 0x65 || c === 0x45) {
      step = exp;
      return undefined;
    }
    return endValue(c);
  };
  const dot: Step = (c) => {
    if (isDigit(c)) {
      step = dotDigits;
      return undefined;
    }
    return bad(c, 'after decimal point in numeric literal');
  };
  const dotDigits: Step = (c) => {
    if (isDigit(c)) return undefined;
    if (c === 0x65 || c === 0x45) {
      step = exp;
      return undefined;
    }
    return endValue(c);
  };
  const exp: Step = (c) => {
    if (c === 0x2b || c === 0x2d) {
      step = expSign;
      return undefined;
    }
    return expSign(c);
  };
  const expSign: Step = (c) => {
    if (isDigit(c)) {
      step = expDigits;
      return undefined;
    }
    return bad(c, 'in exponent of numeric literal');
  };
  const expDigits: Step = (c) => (isDigit(c) ? undefined : endValue(c));
  const endTop: Step = (c) => (SPACE.has(c) ? undefined : bad(c, 'after top-level value'));
  /** a value just ended: the container decides what may follow */
  function afterValue(): undefined {
    step = stack.length ? endValue : endTop;
    if (!stack.length) done = true;
    return undefined;
  }
  const endValue: Step = (c) => {
    const top = stack[stack.length - 1];
    if (top === undefined) {
      done = true;
      step = endTop;
      return endTop(c);
    }
    step = endValue; // reached from a number's last digit too
    if (SPACE.has(c)) return undefined;
    if (top === 'obj-key') {
      if (c === 0x3a) {
        stack[stack.length - 1] = 'obj-value';
        step = beginValue;
        return undefined;
      }
      return bad(c, 'after object key');
    }
    if (top === 'obj-value') {
      if (c === 0x2c) {
        stack[stack.length - 1] = 'obj-key';
        step = beginString;
        return undefined;
      }
      if (c === 0x7d) {
        stack.pop();
        return afterValue();
      }
      return bad(c, 'after object key:value pair');
    }
    if (c === 0x2c) {
      step = beginValue;
      return undefined;
    }
    if (c === 0x5d) {
      stack.pop();
      return afterValue();
    }
    return bad(c, 'after array element');
  };
  step = beginValue;
  for (const c of data) {
    const err = step(c);
    if (err) return err;
  }
  // at the end a number (or literal) at top level is complete; anything else open is an EOF error
  if (
    !done &&
    !(
      stack.length === 0 &&
      (step === digits || step === zero || step === dotDigits || step === expDigits || step === endValue)
    )
  ) {
    return 'unexpected end of JSON input';
  }
  return undefined;
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
