/** Reads the server's Prometheus text: request counters and, when present, process metrics. */

export type Counts = Map<string, number>;

const LINE = /^apiserver_request_total\{([^}]*)\}\s+([0-9.eE+-]+)$/;
const LABEL = /(\w+)="((?:[^"\\]|\\.)*)"/g;

/** apiserver_request_total summed by verb|group|resource|code, resource requests only. */
export function requestCounts(text: string): Counts {
  const out: Counts = new Map();
  for (const line of text.split('\n')) {
    const m = LINE.exec(line);
    if (!m) continue;
    const l: Record<string, string> = {};
    for (const [, k, v] of m[1]!.matchAll(LABEL)) l[k!] = v!;
    if (!l.resource || l.subresource) continue;
    const k = `${l.verb}|${l.group ?? ''}|${l.resource}|${l.code}`;
    out.set(k, (out.get(k) ?? 0) + Number(m[2]));
  }
  return out;
}

export function delta(before: Counts, after: Counts): Counts {
  const out: Counts = new Map();
  for (const [k, v] of after) {
    const d = v - (before.get(k) ?? 0);
    if (d) out.set(k, d);
  }
  return out;
}

/** A plain gauge or counter without labels (process_resident_memory_bytes...). */
export function scalar(text: string, name: string): number | undefined {
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})?\\s+([0-9.eE+-]+)$`, 'm').exec(text);
  return m ? Number(m[1]) : undefined;
}
