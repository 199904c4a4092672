/**
 * Functions whose cost does not grow with their arguments (one unit per call, for the
 * estimator and the runtime meter alike); every other call also pays 0.1 per character or
 * element of its string, bytes, list and map arguments, as upstream's cost model does.
 */
export const CONSTANT_COST = new Set([
  'size',
  'int',
  'uint',
  'double',
  'bool',
  'dyn',
  'type',
  'duration',
  'timestamp',
  '-_',
  '_-_',
  '_*_',
  '_/_',
  '_%_',
  'charAt',
  'hasValue',
  'value',
  'orValue',
  'optional.of',
  'optional.none',
  'sign',
  'isInteger',
  'asInteger',
  'asApproximateFloat',
  'add',
  'sub',
  'isLessThan',
  'isGreaterThan',
  'compareTo',
  'family',
  'prefixLength',
  'getScheme',
  'getHost',
  'getHostname',
  'getPort',
]);

/** Comparisons: they stop at the shorter operand, so they pay for the smaller size only (as cel-go estimates them). */
export const MIN_SIZE_COST = new Set(['_==_', '_!=_', '_<_', '_<=_', '_>_', '_>=_', 'startsWith', 'endsWith']);
