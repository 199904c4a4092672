/**
 * Property-name escaping for CEL field access, as upstream apiextensions (model/escaping.go):
 * a property `foo-bar` is reached as `self.foo__dash__bar`, a reserved word `in` as `self.__in__`.
 * A name that cannot be escaped is not accessible as a field (only through a map of its parent).
 */

const RESERVED = new Set([
  'true',
  'false',
  'null',
  'in',
  'as',
  'break',
  'const',
  'continue',
  'else',
  'for',
  'function',
  'if',
  'import',
  'let',
  'loop',
  'package',
  'namespace',
  'return',
  'var',
  'void',
  'while',
]);
const ESCAPABLE = /^[a-zA-Z_.\-/][a-zA-Z0-9_.\-/]*$/;

/** The CEL identifier of a property, or undefined when it cannot be expressed. */
export function escapeName(name: string): string | undefined {
  if (RESERVED.has(name)) return `__${name}__`;
  if (!ESCAPABLE.test(name)) return undefined;
  return name.replace(/__|[.\-/]/g, (m) =>
    m === '__' ? '__underscores__' : m === '.' ? '__dot__' : m === '-' ? '__dash__' : '__slash__',
  );
}

/** The property name of an escaped CEL identifier (inverse of escapeName). */
export function unescapeName(ident: string): string {
  const m = /^__(\w+)__$/.exec(ident);
  if (m && RESERVED.has(m[1]!)) return m[1]!;
  return ident.replace(
    /__(underscores|dot|dash|slash)__/g,
    (_, w: string) => ({ underscores: '__', dot: '.', dash: '-', slash: '/' })[w]!,
  );
}
