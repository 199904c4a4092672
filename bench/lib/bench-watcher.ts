/**
 * The watcher the in-process watch benches register with the hub: every ConfigMap of the
 * bench-watch namespace from the start, JSON, no selector, no bookmarks; sink is the bench's own.
 * test/helpers/hub-watchers.ts builds its watchers on it (all namespaces).
 */
import type { Watcher, WatchSink } from '../../src/http/watch-hub.js';

export function benchWatcher(sink: WatchSink): Watcher {
  return {
    typeKey: '/configmaps',
    namespace: 'bench-watch',
    matcher: undefined,
    fromRV: 0,
    startRV: 0,
    bookmarks: false,
    kind: 'ConfigMap',
    apiVersion: 'v1',
    closed: false,
    enc: { format: 'json', pretty: false },
    headersSent: false,
    sink,
  };
}
