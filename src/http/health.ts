/** /livez, /readyz, /healthz with verbose, exclude and per-check paths, as the spec says. */
export interface HealthCheck {
  name: string;
  /** resolves to undefined when healthy, or a reason */
  run(): Promise<string | undefined>;
}

export interface HealthResult {
  code: number;
  body: string;
}

export async function runChecks(
  endpoint: string,
  checks: HealthCheck[],
  query: URLSearchParams,
  only?: string,
): Promise<HealthResult> {
  if (only !== undefined) {
    const c = checks.find((x) => x.name === only);
    if (!c) return { code: 404, body: '404 page not found\n' };
    const err = await c.run();
    return err ? { code: 500, body: `internal server error: ${err}\n` } : { code: 200, body: 'ok' };
  }
  const excluded = new Set(query.getAll('exclude').flatMap((s) => s.split(',')));
  const lines: string[] = [];
  let failed = false;
  for (const c of checks) {
    if (excluded.has(c.name)) {
      lines.push(`[+]${c.name} excluded: ok`);
      excluded.delete(c.name);
      continue;
    }
    const err = await c.run();
    if (err) {
      failed = true;
      lines.push(`[-]${c.name} failed: reason withheld`);
    } else lines.push(`[+]${c.name} ok`);
  }
  const verbose = query.has('verbose');
  if (excluded.size)
    lines.push(`warn: some health checks cannot be excluded: no matches for "${[...excluded].join('", "')}"`);
  if (failed) return { code: 500, body: `${lines.join('\n')}\n${endpoint} check failed\n` };
  return { code: 200, body: verbose ? `${lines.join('\n')}\n${endpoint} check passed\n` : 'ok' };
}
