/**
 * `==` and `!=` with upstream's list semantics for CRD data: lists typed `x-plat-list-type:
 * set` compare without order, `map` lists by their key fields (values.ts marks them as self
 * and oldSelf are built). These overloads replace the standard ones (same overload ids);
 * values they do not take apart (timestamps, durations, types) compare as the standard `==`.
 */
import { CelScalar, celEnv, celFunc, type CelFunc, type CelValue } from '@bufbuild/cel';
import { celEquals } from '../values.js';

const { BOOL, DYN } = CelScalar;

const STANDARD = celEnv().funcs.find('_==_');

function leaf(a: CelValue, b: CelValue): boolean {
  return STANDARD?.call(0, undefined, [a, b]) === true;
}

export const EQUALITY: CelFunc[] = [
  celFunc('_==_', [DYN, DYN], BOOL, (a, b) => celEquals(a, b, leaf)),
  celFunc('_!=_', [DYN, DYN], BOOL, (a, b) => !celEquals(a, b, leaf)),
];
