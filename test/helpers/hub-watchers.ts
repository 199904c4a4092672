/**
 * In-process watchers for the hub's tests (src/http/watch-hub.ts): a sink that decodes the
 * JSON lines it is written, and ConfigMap change events.
 */
import type { Watcher } from '../../src/http/watch-hub.js';
import { benchWatcher } from '../../bench/lib/bench-watcher.js';
import type { ChangeEvent, Encoding } from '../../src/actors/protocol.js';
import type { Chunk } from '../../src/codec/watch-encoding.js';

export const JSON_ENC: Encoding = { format: 'json', pretty: false };

export interface Seen {
  w: Watcher;
  lines: { type: string; rv: string; ns?: string; code?: number }[];
  closed: boolean;
}

export function watcher(over: Partial<Watcher> = {}): Seen {
  const seen: Seen = { w: undefined as unknown as Watcher, lines: [], closed: false };
  seen.w = {
    ...benchWatcher({
      write: (c: Chunk) => {
        for (const l of String(typeof c === 'string' ? c : Buffer.from(c)).split('\n')) {
          if (!l.trim()) continue;
          const e = JSON.parse(l) as {
            type: string;
            object: { code?: number; metadata?: { resourceVersion?: string; namespace?: string } };
          };
          const m = e.object.metadata;
          seen.lines.push({ type: e.type, rv: m?.resourceVersion ?? '', ns: m?.namespace, code: e.object.code });
        }
        return 0;
      },
      close: () => {
        seen.closed = true;
      },
      abort: () => {
        seen.closed = true;
      },
    }),
    namespace: '',
    enc: JSON_ENC,
    ...over,
  };
  return seen;
}

export function event(rv: number, namespace = 'a', labels?: Record<string, string>): ChangeEvent {
  return {
    typeKey: '/configmaps',
    type: 'MODIFIED',
    rv,
    namespace,
    name: 'c',
    json: JSON.stringify({
      kind: 'ConfigMap',
      apiVersion: 'v1',
      metadata: { name: 'c', namespace, labels, resourceVersion: String(rv) },
    }),
    labels,
    fields: { 'metadata.name': 'c', 'metadata.namespace': namespace },
    apiVersion: 'v1',
    uid: 'u',
  };
}

export const rvs = (s: Seen): string[] => s.lines.filter((l) => l.type !== 'BOOKMARK').map((l) => l.rv);
