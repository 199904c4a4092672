/** Reads audit log files written by a test server: polls (bounded) until the wanted events are there. */
import { existsSync, readFileSync } from 'node:fs';

export type AuditEvent = Record<string, any>;

export function readAudit(path: string): AuditEvent[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l));
}

/** Waits until pick(events) returns at least `count` events (writes are asynchronous), or fails after timeoutMs. */
export async function waitForAudit(
  path: string,
  pick: (e: AuditEvent) => boolean,
  count = 1,
  timeoutMs = 10_000,
): Promise<AuditEvent[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = readAudit(path).filter(pick);
    if (found.length >= count || Date.now() > deadline) return found;
    await new Promise((r) => setTimeout(r, 25));
  }
}
