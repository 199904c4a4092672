/**
 * The front thread's read cache: the latest committed JSON of every object, exactly the string
 * its owning actor encoded, kept current from the change events (which the front thread sees
 * before any write is acknowledged, so a client always reads its own writes). A plain JSON GET
 * of the newest state is answered from here without a thread hop; everything else (another
 * encoding or version, resourceVersion, subresources, views) still goes to the actor.
 */
import type { ChangeEvent, CachedObject } from './protocol.js';
import type { Informer } from './informer.js';
import { FifoHolders } from '../api/fifo-holders.js';

/** bytes: the GET reply body (json and a newline) as UTF-8, encoded on the object's first GET (see Bodies) */
interface Cached {
  json: string;
  apiVersion: string;
  bytes?: Uint8Array;
}

/** How many objects keep their GET body bytes besides their JSON (the objects read most recently). */
export const BODIES_MAX = 4096;

/**
 * The objects holding GET body bytes, first in first out: a repeated GET of an object read
 * recently copies bytes, while the JSON stays the one form every object keeps (a copy of every
 * object's JSON as bytes would double the cache: 2.1 KB more per Pod at 150,000 Pods). An
 * object that let go of its bytes encodes them again on its next GET, the same bytes.
 */
class Bodies {
  private readonly holders = new FifoHolders<Cached>(BODIES_MAX, (oldest) => {
    oldest.bytes = undefined;
  });

  set max(max: number) {
    this.holders.max = max;
  }

  of(c: Cached): Uint8Array {
    if (c.bytes) return c.bytes;
    const bytes = Buffer.from(c.json + '\n');
    c.bytes = bytes;
    this.holders.add(c);
    return bytes;
  }

  /** A replaced or deleted object's bytes are garbage: it leaves the order now. */
  forget(c: Cached | undefined): void {
    if (c?.bytes) this.holders.delete(c);
  }

  get size(): number {
    return this.holders.size;
  }
}

/**
 * One type's objects by namespace, then name: a lookup hashes the request's two strings and
 * builds no key (it runs on every cached GET); each namespace keeps its objects in insertion order.
 */
class TypeObjects {
  size = 0;
  private readonly byNamespace = new Map<string, Map<string, Cached>>();

  get(namespace: string, name: string): Cached | undefined {
    return this.byNamespace.get(namespace)?.get(name);
  }

  /** Answers the object replaced, if any. */
  set(namespace: string, name: string, c: Cached): Cached | undefined {
    let names = this.byNamespace.get(namespace);
    if (!names) this.byNamespace.set(namespace, (names = new Map()));
    const before = names.get(name);
    names.set(name, c);
    if (!before) this.size++;
    return before;
  }

  /** Answers the object deleted, if any. */
  delete(namespace: string, name: string): Cached | undefined {
    const names = this.byNamespace.get(namespace);
    const c = names?.get(name);
    if (!c || !names?.delete(name)) return undefined;
    this.size--;
    if (names.size === 0) this.byNamespace.delete(namespace);
    return c;
  }

  inNamespace(namespace: string): Iterable<Cached> {
    return this.byNamespace.get(namespace)?.values() ?? [];
  }
}

export class ReadCache implements Informer {
  /**
   * Whether plain GETs may be answered from here. Off on a shared store (etcd): another
   * server's write reaches this cache only through the etcd watch, so a GET of the newest state
   * goes to the actor, which first syncs with etcd (a consistent read, as upstream's).
   */
  servesGets = true;
  private readonly types = new Map<string, TypeObjects>();
  private readonly bodies = new Bodies();

  private type(typeKey: string): TypeObjects {
    let m = this.types.get(typeKey);
    if (!m) this.types.set(typeKey, (m = new TypeObjects()));
    return m;
  }

  load(objects: readonly CachedObject[]): void {
    for (const o of objects)
      this.bodies.forget(this.type(o.typeKey).set(o.namespace, o.name, { json: o.json, apiVersion: o.apiVersion }));
  }

  observe(events: readonly ChangeEvent[]): void {
    for (const ev of events) {
      if (ev.type === 'DELETED') this.bodies.forget(this.types.get(ev.typeKey)?.delete(ev.namespace, ev.name));
      else
        this.bodies.forget(
          this.type(ev.typeKey).set(ev.namespace, ev.name, { json: ev.json, apiVersion: ev.apiVersion }),
        );
    }
  }

  /** How many objects hold GET body bytes now (at most `bodiesMax`). */
  get bodiesHeld(): number {
    return this.bodies.size;
  }

  /** Sets how many objects keep GET body bytes (tests); applies from the next GET that encodes. */
  set bodiesMax(max: number) {
    this.bodies.max = max;
  }

  /** How many objects of the type exist (apiserver_storage_objects). */
  count(typeKey: string): number {
    return this.types.get(typeKey)?.size ?? 0;
  }

  /** The JSON of every object of the type in a namespace (small kinds only). */
  *inNamespace(typeKey: string, namespace: string): Iterable<string> {
    for (const c of this.types.get(typeKey)?.inNamespace(namespace) ?? []) yield c.json;
  }

  /** The object's JSON when it is stored in apiVersion; undefined otherwise (ask the actor). */
  get(typeKey: string, namespace: string, name: string, apiVersion: string): string | undefined {
    const c = this.types.get(typeKey)?.get(namespace, name);
    return c && c.apiVersion === apiVersion ? c.json : undefined;
  }

  /**
   * The object's plain JSON GET body (its JSON and a newline) as UTF-8 bytes when it is stored
   * in apiVersion, kept until its next change or until BODIES_MAX objects read since took its
   * place: a repeated GET copies bytes into the socket instead of measuring and converting a
   * string each time. undefined: ask the actor.
   */
  body(typeKey: string, namespace: string, name: string, apiVersion: string): Uint8Array | undefined {
    const c = this.types.get(typeKey)?.get(namespace, name);
    if (!c || c.apiVersion !== apiVersion) return undefined;
    return this.bodies.of(c);
  }
}
