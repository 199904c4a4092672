/**
 * The per-registry document cache of discovery.ts and openapi-documents.ts: each document is built
 * once per registry generation and the same object returned on later calls.
 */
import type { Registry } from './registry.js';

const cache = new WeakMap<Registry, Map<string, unknown>>();

/** Builds a document once per registry and key; later calls return the same object. */
export function memo<T>(registry: Registry, key: string, build: () => T): T {
  let docs = cache.get(registry);
  // served custom resources change the registry: documents are rebuilt once per generation
  if (!docs || docs.get('\u0000generation') !== registry.generation) {
    cache.set(registry, (docs = new Map<string, unknown>([['\u0000generation', registry.generation]])));
  }
  if (!docs.has(key)) docs.set(key, build());
  return docs.get(key) as T;
}
