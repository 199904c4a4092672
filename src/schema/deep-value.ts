/**
 * JSON text and copies of decoded values that stay correct however deep the value nests. The
 * depth limit (depth.ts) holds for what is written now, but a stored object may nest deeper
 * (written by an older version whose CBOR and Protobuf decoders checked less), and it must
 * stay readable and deletable. JSON.stringify and structuredClone recurse natively and throw
 * RangeError past a few thousand levels (fewer on the main thread), so these helpers run the
 * native call and, only when it overflows, an iterative equivalent with an explicit stack.
 * JSON.parse is iterative in V8 (tested to 2,000,000 levels) and is used as is.
 */

/** JSON.stringify(value, null, indent) for the JSON data model, at any depth. */
export function stringifyValue(value: unknown, indent = 0): string {
  try {
    return indent ? JSON.stringify(value, null, indent) : JSON.stringify(value);
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
    return stringifyIterative(value, indent);
  }
}

/** structuredClone(value) for the JSON data model, at any depth. */
export function copyValue<T>(value: T): T {
  try {
    return structuredClone(value);
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
    return JSON.parse(stringifyIterative(value, 0)) as T;
  }
}

/** An open array or object: its members, the next one, whether one was written yet. */
interface Frame {
  items: unknown[] | undefined;
  obj: Record<string, unknown> | undefined;
  keys: string[];
  next: number;
  wrote: boolean;
}

/** What JSON.stringify writes for a member: toJSON applied; undefined when it leaves the member out. */
function prepare(v: unknown, key: string): unknown {
  if (v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON === 'function') {
    v = (v as { toJSON(k: string): unknown }).toJSON(key);
  }
  return typeof v === 'function' || typeof v === 'symbol' ? undefined : v;
}

/**
 * The same text as JSON.stringify for values made of plain objects, arrays and JSON scalars
 * (no replacer, no cycles), with an explicit stack: linear, no recursion.
 */
export function stringifyIterative(root: unknown, indent: number): string {
  const parts: string[] = [];
  const stack: Frame[] = [];
  const newline = (depth: number): void => {
    if (indent) parts.push('\n' + ' '.repeat(indent * depth));
  };
  const write = (v: unknown): void => {
    if (v === null || typeof v !== 'object') {
      parts.push(JSON.stringify(v) ?? 'null');
      return;
    }
    if (Array.isArray(v)) {
      parts.push('[');
      stack.push({ items: v, obj: undefined, keys: [], next: 0, wrote: false });
    } else {
      parts.push('{');
      stack.push({ items: undefined, obj: v as Record<string, unknown>, keys: Object.keys(v), next: 0, wrote: false });
    }
  };
  const top = prepare(root, '');
  if (top === undefined) return JSON.stringify(top);
  write(top);
  while (stack.length) {
    const f = stack[stack.length - 1]!;
    let member: { key: string | undefined; value: unknown } | undefined;
    if (f.items) {
      if (f.next < f.items.length) {
        const i = f.next++;
        member = { key: undefined, value: prepare(f.items[i], String(i)) ?? null };
      }
    } else {
      while (f.next < f.keys.length && !member) {
        const k = f.keys[f.next++]!;
        const v = prepare(f.obj![k], k);
        if (v !== undefined) member = { key: k, value: v };
      }
    }
    if (!member) {
      stack.pop();
      if (f.wrote) newline(stack.length);
      parts.push(f.items ? ']' : '}');
      continue;
    }
    if (f.wrote) parts.push(',');
    f.wrote = true;
    newline(stack.length);
    if (member.key !== undefined) parts.push(JSON.stringify(member.key), indent ? ': ' : ':');
    write(member.value);
  }
  return parts.join('');
}
