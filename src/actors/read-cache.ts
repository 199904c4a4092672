/**
 * The front thread's read cache: every object's existence and stored apiVersion, and the latest
 * committed JSON (exactly the string its owning actor encoded) of every object but those of bulk
 * kinds (JSONLESS_KINDS: Pods), kept current from the change events (which the front thread sees
 * before any write is acknowledged, so a client always reads its own writes). A plain JSON GET
 * of the newest state is answered from here without a thread hop when the JSON is held;
 * everything else (a bulk kind's object not written recently, another encoding or version,
 * resourceVersion, subresources, views) goes to the actor.
 *
 * A Pod keeps no JSON here (2.2 KB each, ≈ 315 MiB at 150,000 Pods) but for the RECENT_JSON_MAX
 * written most recently (a GET right after a write stays on the front); what ResourceQuota
 * counts of it comes summed by its actor (ChangeEvent.quota, actors/pod-quota.ts).
 */
import type { ChangeEvent, CachedObject, PodQuota } from './protocol.js';
import type { Informer } from './informer.js';
import { FifoHolders } from '../api/fifo-holders.js';
import { PODS_KEY } from './pod-quota.js';

/**
 * json: undefined for a bulk kind's object not among the recently written (ask the actor);
 * bytes: the GET reply body (json and a newline) as UTF-8, encoded on the object's first GET (see Bodies);
 * quota: a Pod's quota summary (absent: counts one, names no request or limit)
 */
interface Cached {
  json: string | undefined;
  apiVersion: string;
  bytes?: Uint8Array;
  quota?: PodQuota;
}

/** Kinds whose objects' JSON the front keeps only for the recently written (the bulk of a large cluster). */
export const JSONLESS_KINDS: ReadonlySet<string> = new Set([PODS_KEY]);

/** How many objects of JSONLESS_KINDS keep their JSON (those written most recently). */
export const RECENT_JSON_MAX = 4096;

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

  of(c: Cached & { json: string }): Uint8Array {
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
  /** the bulk kinds' objects holding their JSON, first in first out */
  private readonly recent = new FifoHolders<Cached>(RECENT_JSON_MAX, (oldest) => {
    this.bodies.forget(oldest);
    oldest.json = undefined;
    oldest.bytes = undefined;
  });

  constructor(private readonly jsonless: ReadonlySet<string> = JSONLESS_KINDS) {}

  private type(typeKey: string): TypeObjects {
    let m = this.types.get(typeKey);
    if (!m) this.types.set(typeKey, (m = new TypeObjects()));
    return m;
  }

  /** A replaced or deleted object's JSON and bytes are garbage: it leaves both orders now. */
  private forget(c: Cached | undefined): void {
    if (!c) return;
    this.bodies.forget(c);
    this.recent.delete(c);
  }

  /**
   * written: a change event's object, else a load's. A bulk kind's keeps its JSON among the recent
   * when written and GETs are served from here (on a shared store no reader would use it).
   */
  private set(typeKey: string, namespace: string, name: string, c: Cached, written: boolean): void {
    const bulk = this.jsonless.has(typeKey);
    const keep = !bulk || (written && this.servesGets);
    if (!keep) c.json = undefined;
    this.forget(this.type(typeKey).set(namespace, name, c));
    if (bulk && keep) this.recent.add(c);
  }

  /** The start-up load (or a CRD's objects): a bulk kind's objects keep no JSON. */
  load(objects: readonly CachedObject[]): void {
    for (const o of objects) {
      const c: Cached = { json: o.json, apiVersion: o.apiVersion };
      if (o.quota) c.quota = o.quota;
      this.set(o.typeKey, o.namespace, o.name, c, false);
    }
  }

  observe(events: readonly ChangeEvent[]): void {
    for (const ev of events) {
      if (ev.type === 'DELETED') this.forget(this.types.get(ev.typeKey)?.delete(ev.namespace, ev.name));
      else {
        const c: Cached = { json: ev.json, apiVersion: ev.apiVersion };
        if (ev.quota) c.quota = ev.quota;
        this.set(ev.typeKey, ev.namespace, ev.name, c, true);
      }
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

  /** How many objects of bulk kinds hold their JSON now (at most `recentMax`). */
  get recentHeld(): number {
    return this.recent.size;
  }

  /** Sets how many objects of bulk kinds keep their JSON (tests); applies from the next write. */
  set recentMax(max: number) {
    this.recent.max = max;
  }

  /** How many objects of the type exist (apiserver_storage_objects). */
  count(typeKey: string): number {
    return this.types.get(typeKey)?.size ?? 0;
  }

  /**
   * The JSON of every object of the type in a namespace (small kinds only). A bulk kind's JSON
   * is not held: asking for it is a programming error (ResourceQuota reads `podQuotas`).
   */
  *inNamespace(typeKey: string, namespace: string): Iterable<string> {
    if (this.jsonless.has(typeKey)) throw new Error(`the read cache holds no JSON of ${typeKey}`);
    for (const c of this.types.get(typeKey)?.inNamespace(namespace) ?? []) yield c.json!;
  }

  /** The quota summary of every Pod in a namespace (undefined: counts one, names no request or limit). */
  *podQuotas(namespace: string): Iterable<PodQuota | undefined> {
    for (const c of this.types.get(PODS_KEY)?.inNamespace(namespace) ?? []) yield c.quota;
  }

  /** The object's JSON when it is stored in apiVersion and held; undefined otherwise (ask the actor). */
  get(typeKey: string, namespace: string, name: string, apiVersion: string): string | undefined {
    const c = this.types.get(typeKey)?.get(namespace, name);
    return c && c.apiVersion === apiVersion ? c.json : undefined;
  }

  /**
   * The object's plain JSON GET body (its JSON and a newline) as UTF-8 bytes when it is stored
   * in apiVersion and its JSON held, kept until its next change or until BODIES_MAX objects read
   * since took its place: a repeated GET copies bytes into the socket instead of measuring and
   * converting a string each time. undefined: ask the actor.
   */
  body(typeKey: string, namespace: string, name: string, apiVersion: string): Uint8Array | undefined {
    const c = this.types.get(typeKey)?.get(namespace, name);
    if (!c || c.apiVersion !== apiVersion || c.json === undefined) return undefined;
    return this.bodies.of(c as Cached & { json: string });
  }
}
