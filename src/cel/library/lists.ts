/**
 * Upstream's CEL `lists` library for CRDs (apiserver/pkg/cel/library/lists.go) and `sets`
 * (cel-go ext.Sets): isSorted, sum, min, max, indexOf, lastIndexOf; sets.contains,
 * sets.equivalent, sets.intersects.
 */
import { CelScalar, celFunc, celMethod, listType, type CelFunc, type CelList, type CelValue } from '@bufbuild/cel';
import { celCompare, celEquals } from '../values.js';

const { BOOL, INT, DYN } = CelScalar;
const LIST = listType(DYN);

function extreme(list: CelList, name: 'min' | 'max'): CelValue {
  if (list.size === 0) throw new Error(`${name} called on empty list`);
  let best: CelValue = list.get(0)!;
  for (const x of list) {
    const c = celCompare(x, best);
    if (name === 'min' ? c < 0 : c > 0) best = x;
  }
  return best;
}

function sum(list: CelList): CelValue {
  let int = 0n;
  let dbl = 0;
  let sawDouble = false;
  for (const x of list) {
    if (typeof x === 'bigint') int += x;
    else if (typeof x === 'number') {
      dbl += x;
      sawDouble = true;
    } else throw new Error('no such overload');
  }
  if (int > 9223372036854775807n || int < -9223372036854775808n) throw new Error('integer overflow');
  return sawDouble ? dbl + Number(int) : int;
}

function indexOf(list: CelList, v: CelValue, last: boolean): bigint {
  let found = -1;
  for (let i = 0; i < list.size; i++) {
    if (celEquals(list.get(i)!, v)) {
      found = i;
      if (!last) break;
    }
  }
  return BigInt(found);
}

const has = (list: CelList, v: CelValue): boolean => {
  for (const x of list) if (celEquals(x, v)) return true;
  return false;
};

export const LISTS: CelFunc[] = [
  celMethod('isSorted', LIST, [], BOOL, function () {
    for (let i = 1; i < this.size; i++) if (celCompare(this.get(i - 1)!, this.get(i)!) > 0) return false;
    return true;
  }),
  celMethod('sum', LIST, [], DYN, function () {
    return sum(this);
  }),
  celMethod('min', LIST, [], DYN, function () {
    return extreme(this, 'min');
  }),
  celMethod('max', LIST, [], DYN, function () {
    return extreme(this, 'max');
  }),
  celMethod('indexOf', LIST, [DYN], INT, function (v) {
    return indexOf(this, v, false);
  }),
  celMethod('lastIndexOf', LIST, [DYN], INT, function (v) {
    return indexOf(this, v, true);
  }),
];

export const SETS: CelFunc[] = [
  celFunc('sets.contains', [LIST, LIST], BOOL, (a, b) => [...b].every((x) => has(a, x))),
  celFunc(
    'sets.equivalent',
    [LIST, LIST],
    BOOL,
    (a, b) => [...b].every((x) => has(a, x)) && [...a].every((x) => has(b, x)),
  ),
  celFunc('sets.intersects', [LIST, LIST], BOOL, (a, b) => [...b].some((x) => has(a, x))),
];
