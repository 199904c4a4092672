/**
 * The front thread's read cache: the latest committed JSON of every object, exactly the string
 * its owning actor encoded, kept current from the change events (which the front thread sees
 * before any write is acknowledged, so a client always reads its own writes). A plain JSON GET
 * of the newest state is answered from here without a thread hop; everything else (another
 * encoding or version, resourceVersion, subresources, views) still goes to the actor.
 */
import type { ChangeEvent, CachedObject } from './protocol.js';
import type { Informer } from './informer.js';

/** bytes: the GET reply body (json and a newline) as UTF-8, encoded on the object's first GET */
interface Cached {
  json: string;
  apiVersion: string;
  bytes?: Uint8Array;
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

  set(namespace: string, name: string, c: Cached): void {
    let names = this.byNamespace.get(namespace);
    if (!names) this.byNamespace.set(namespace, (names = new Map()));
    const before = names.size;
    names.set(name, c);
    this.size += names.size - before;
  }

  delete(namespace: string, name: string): void {
    const names = this.byNamespace.get(namespace);
    if (!names?.delete(name)) return;
    this.size--;
    if (names.size === 0) this.byNamespace.delete(namespace);
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

  private type(typeKey: string): TypeObjects {
    let m = this.types.get(typeKey);
    if (!m) this.types.set(typeKey, (m = new TypeObjects()));
    return m;
  }

  load(objects: readonly CachedObject[]): void {
    for (const o of objects) this.type(o.typeKey).set(o.namespace, o.name, { json: o.json, apiVersion: o.apiVersion });
  }

  observe(events: readonly ChangeEvent[]): void {
    for (const ev of events) {
      if (ev.type === 'DELETED') this.types.get(ev.typeKey)?.delete(ev.namespace, ev.name);
      else this.type(ev.typeKey).set(ev.namespace, ev.name, { json: ev.json, apiVersion: ev.apiVersion });
    }
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
   * in apiVersion, kept until its next change: a repeated GET copies bytes into the socket
   * instead of measuring and converting a string each time. undefined: ask the actor.
   */
  body(typeKey: string, namespace: string, name: string, apiVersion: string): Uint8Array | undefined {
    const c = this.types.get(typeKey)?.get(namespace, name);
    if (!c || c.apiVersion !== apiVersion) return undefined;
    return (c.bytes ??= Buffer.from(c.json + '\n'));
  }
}
