/** Go-style durations for flags and configuration files. */

/** Parses a Go-style duration ("30s", "1m", "500ms", "1h2m") into milliseconds. */
export function parseDuration(s: string): number | undefined {
  if (/^[0-9]+$/.test(s)) return Number(s) * 1000;
  const re = /([0-9]+(?:\.[0-9]+)?)(ms|s|m|h)/gy;
  let total = 0,
    m: RegExpExecArray | null,
    end = 0;
  while ((m = re.exec(s))) {
    total += Number(m[1]) * ({ ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const)[m[2] as 'ms'];
    end = re.lastIndex;
  }
  return end === s.length && end > 0 ? total : undefined;
}
