/**
 * RE2 patterns (what upstream's schema `pattern` and CEL `matches` use) as JavaScript RegExps:
 * inline flags `(?i)`, `(?s)`, `(?m)` become flags of the whole expression (an inline flag
 * scoped to a group widens to the whole pattern), `(?P<name>` becomes `(?<name>`, `\A` and `\z`
 * anchor, POSIX classes (`[[:alpha:]]`) expand; a pattern JavaScript's unicode mode refuses
 * (escaped punctuation such as `\-`) is compiled without it. Compiled patterns are kept.
 */
const POSIX: Record<string, string> = {
  alpha: 'a-zA-Z',
  digit: '0-9',
  alnum: 'a-zA-Z0-9',
  upper: 'A-Z',
  lower: 'a-z',
  space: '\\s',
  xdigit: '0-9A-Fa-f',
  word: '\\w',
  punct: '!-\\/:-@\\[-`{-~',
  blank: ' \\t',
  cntrl: '\\x00-\\x1f\\x7f',
  print: ' -~',
  graph: '!-~',
};

const CACHE = new Map<string, RegExp | Error>();

/** The JavaScript source and flags of an RE2 pattern. */
export function re2Source(pattern: string): { source: string; flags: string } {
  let flags = '';
  let source = pattern.replace(/\(\?([imsU]+)\)/g, (_, f: string) => {
    for (const c of f) if (c !== 'U' && !flags.includes(c)) flags += c;
    return '';
  });
  source = source.replace(/\(\?([imsU]+):/g, (_, f: string) => {
    for (const c of f) if (c !== 'U' && !flags.includes(c)) flags += c;
    return '(?:';
  });
  source = source
    .replace(/\(\?P</g, '(?<')
    .replace(/\\A/g, '^')
    .replace(/\\z/g, '$(?![\\s\\S])');
  source = source.replace(/\[:(\w+):\]/g, (m, name: string) => POSIX[name] ?? m);
  return { source, flags };
}

/** The compiled pattern (extra: more flags, e.g. `g`); throws with the reason when it is not a valid expression. */
export function re2(pattern: string, extra = ''): RegExp {
  const key = `${extra}/${pattern}`;
  let re = CACHE.get(key);
  if (!re) {
    const { source, flags } = re2Source(pattern);
    try {
      re = new RegExp(source, flags + extra + 'u');
    } catch {
      try {
        re = new RegExp(source, flags + extra);
      } catch (e) {
        re = e as Error;
      }
    }
    if (CACHE.size < 10_000) CACHE.set(key, re);
  }
  if (re instanceof Error) throw re;
  re.lastIndex = 0;
  return re;
}
