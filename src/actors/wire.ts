/**
 * The packed form of what crosses the thread boundary for every write (a batch's ops, its
 * results and change events): structured cloning writes and reads every property name and
 * value of every object (each key a string the receiver internalizes again), which cost ≈ 7 µs
 * of CPU per create between the two threads. Here the values of known shapes travel as one
 * Float64Array of numbers and references plus one array of the distinct values (strings,
 * opaque values): a value equal to the one in the same slot of the record before (a batch's
 * type key, namespace, apiVersion, label and field keys...) is sent once, and the receiver
 * builds its objects with fixed shapes instead of property by property.
 *
 * A slot is a record's n-th value (records reset the count), so writer and reader agree on
 * which earlier value "same" means without sending it. Any value a slot holds that is not a
 * number the writer puts into `s`, which is structured-cloned as before (objects, arrays,
 * byte arrays, whatever a rare field holds): the packing never changes a value, only its route.
 */

import type { Op, Result } from '../registry/ops.js';

/** A packed list of records: n holds numbers and, per value slot, an index into s or a code. */
export interface Packed {
  s: unknown[];
  n: Float64Array;
}

/** the value is the same as the one in the same slot of the record before */
const SAME = -1;
/** the value is undefined (never sent, and not remembered for the slot) */
const UNDEF = -2;

export class Packer {
  private readonly s: unknown[] = [];
  private readonly n: number[] = [];
  private readonly last: unknown[] = [];
  private k = 0;

  /** Starts the next record (slots count from 0 again). */
  record(): void {
    this.k = 0;
  }

  num(x: number): void {
    this.n.push(x);
  }

  /** Any value (a string mostly): sent once per run of equal values in its slot. */
  ref(x: unknown): void {
    const k = this.k++;
    if (x === undefined) this.n.push(UNDEF);
    else if (this.last[k] === x) this.n.push(SAME);
    else {
      this.last[k] = x;
      this.n.push(this.s.length);
      this.s.push(x);
    }
  }

  /**
   * A value that differs from record to record (an object's JSON, its uid): sent as is, without
   * comparing it (equal-length texts compare by content) and without taking a slot.
   */
  put(x: unknown): void {
    if (x === undefined) this.n.push(UNDEF);
    else {
      this.n.push(this.s.length);
      this.s.push(x);
    }
  }

  /** A string map (labels, selectable fields), or undefined: its size, then key and value per entry. */
  map(m: Record<string, unknown> | undefined): void {
    if (m === undefined) {
      this.n.push(-1);
      return;
    }
    const at = this.n.length;
    this.n.push(0);
    let c = 0;
    for (const key in m) {
      this.ref(key);
      this.ref(m[key]);
      c++;
    }
    this.n[at] = c;
  }

  /** A string list (a user's groups), or undefined. */
  list(a: readonly unknown[] | undefined): void {
    if (a === undefined) {
      this.n.push(-1);
      return;
    }
    this.n.push(a.length);
    for (const x of a) this.ref(x);
  }

  done(): Packed {
    return { s: this.s, n: new Float64Array(this.n) };
  }
}

export class Unpacker {
  private readonly s: unknown[];
  private readonly n: Float64Array;
  private readonly last: unknown[] = [];
  private j = 0;
  private k = 0;

  constructor(p: Packed) {
    this.s = p.s;
    this.n = p.n;
  }

  record(): void {
    this.k = 0;
  }

  num(): number {
    return this.n[this.j++]!;
  }

  ref<T = string>(): T {
    const k = this.k++;
    const i = this.n[this.j++]!;
    if (i === UNDEF) return undefined as T;
    if (i === SAME) return this.last[k] as T;
    const x = this.s[i];
    this.last[k] = x;
    return x as T;
  }

  take<T = string>(): T {
    const i = this.n[this.j++]!;
    return (i === UNDEF ? undefined : this.s[i]) as T;
  }

  map<T = string>(): Record<string, T> | undefined {
    const c = this.n[this.j++]!;
    if (c < 0) return undefined;
    const o: Record<string, T> = {};
    for (let i = 0; i < c; i++) {
      const key = this.ref();
      const v = this.ref<T>();
      // a key named __proto__ would set the prototype through assignment: define it as cloning does
      if (key === '__proto__')
        Object.defineProperty(o, key, { value: v, enumerable: true, writable: true, configurable: true });
      else o[key] = v;
    }
    return o;
  }

  list<T = string>(): T[] | undefined {
    const c = this.n[this.j++]!;
    if (c < 0) return undefined;
    const a: T[] = new Array(c);
    for (let i = 0; i < c; i++) a[i] = this.ref<T>();
    return a;
  }
}

/** The wire form of Batch.ops (Batch.wire, wire-ops.ts). */
export interface PackedOps extends Packed {
  count: number;
  /** the ops not packed, in order */
  rest: Op[];
}

/** The wire form of BatchReply's results and events (BatchReply.wire, wire-reply.ts). */
export interface PackedReply extends Packed {
  results: number;
  events: number;
  /** the results not packed, in order */
  rest: Result[];
}
