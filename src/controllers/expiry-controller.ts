/**
 * The expiry controller (front thread): deletes objects whose storage lease ran out, as etcd
 * does with the lease upstream attaches to every Event write (`--event-ttl`). Leases come from
 * the shards at start (stored beside the objects, so they survive restarts) and with every
 * change event of a kind with a TTL; a write renews the lease, a delete drops it.
 *
 * One timer is armed for the earliest expiry (a min-heap with lazy removal: an entry whose
 * lease changed since it was pushed is skipped). The delete carries the resourceVersion the
 * lease belongs to as a precondition, so a write racing the expiry wins (409, and its own
 * change event brings the new lease).
 */
import type { ChangeEvent, Lease, TypeRef } from '../actors/protocol.js';
import type { ActorPool } from '../actors/pool.js';

const JSON_ENC = { format: 'json' as const, pretty: false };
/** retry delay after a failed delete (e.g. a storage error) */
const RETRY_MS = 1000;
/** setTimeout's largest delay */
const MAX_DELAY = 2 ** 31 - 1;

interface Due {
  at: number;
  id: string;
}

export class ExpiryController {
  private readonly leases = new Map<string, Lease>();
  private readonly heap: Due[] = [];
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;
  private stopped = false;
  /** objects deleted because their lease ran out (observability, tests) */
  expired = 0;

  /** typeRef: the served type to delete through for a storage type key (undefined: not served) */
  constructor(
    private readonly pool: ActorPool,
    private readonly typeRef: (typeKey: string) => TypeRef | undefined,
  ) {}

  load(leases: Lease[]): void {
    for (const l of leases) this.set(l);
    this.arm();
  }

  observe(evs: readonly ChangeEvent[]): void {
    let changed = false;
    for (const ev of evs) {
      // most events are of kinds without a TTL: no key is built for them
      if (ev.type === 'DELETED') {
        if (this.leases.size) changed = this.leases.delete(`${ev.typeKey}/${ev.namespace}/${ev.name}`) || changed;
        continue;
      }
      if (ev.expiresAt === undefined) continue;
      this.set({ typeKey: ev.typeKey, namespace: ev.namespace, name: ev.name, rv: ev.rv, expiresAt: ev.expiresAt });
      changed = true;
    }
    if (changed) this.arm();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private set(l: Lease): void {
    const id = `${l.typeKey}/${l.namespace}/${l.name}`;
    this.leases.set(id, l);
    push(this.heap, { at: l.expiresAt, id });
  }

  /** (Re)arms the timer for the earliest live lease. */
  private arm(): void {
    while (this.heap.length && this.leases.get(this.heap[0]!.id)?.expiresAt !== this.heap[0]!.at) pop(this.heap);
    const next = this.heap[0]?.at ?? Infinity;
    if (this.stopped || next === this.timerAt) return;
    clearTimeout(this.timer);
    this.timerAt = next;
    if (next === Infinity) return;
    this.timer = setTimeout(
      () => {
        this.timerAt = Infinity;
        this.expire();
      },
      Math.min(MAX_DELAY, Math.max(0, next - Date.now())),
    );
    this.timer.unref();
  }

  private expire(): void {
    const now = Date.now();
    while (this.heap.length && this.heap[0]!.at <= now) {
      const { at, id } = pop(this.heap)!;
      const l = this.leases.get(id);
      if (l && l.expiresAt === at) void this.remove(l);
    }
    this.arm();
  }

  private async remove(l: Lease): Promise<void> {
    const type = this.typeRef(l.typeKey);
    if (!type) return;
    const r = await this.pool.submit({
      op: 'delete',
      type,
      namespace: l.namespace,
      name: l.name,
      dryRun: false,
      enc: JSON_ENC,
      options: { preconditions: { resourceVersion: String(l.rv) } },
    });
    if (!('error' in r)) {
      this.expired++;
      return;
    }
    // gone or rewritten meanwhile: nothing to do (a rewrite's event carries its new lease)
    if (r.error.code === 404 || r.error.code === 409 || this.stopped) return;
    if (this.leases.get(`${l.typeKey}/${l.namespace}/${l.name}`) === l) {
      this.set({ ...l, expiresAt: Date.now() + RETRY_MS });
      this.arm();
    }
  }
}

function push(h: Due[], d: Due): void {
  h.push(d);
  for (let i = h.length - 1; i > 0; ) {
    const p = (i - 1) >> 1;
    if (h[p]!.at <= h[i]!.at) break;
    [h[p], h[i]] = [h[i]!, h[p]!];
    i = p;
  }
}

function pop(h: Due[]): Due | undefined {
  const top = h[0];
  const last = h.pop();
  if (!h.length || !last) return top;
  h[0] = last;
  for (let i = 0; ; ) {
    const l = 2 * i + 1,
      r = l + 1;
    let m = i;
    if (l < h.length && h[l]!.at < h[m]!.at) m = l;
    if (r < h.length && h[r]!.at < h[m]!.at) m = r;
    if (m === i) break;
    [h[m], h[i]] = [h[i]!, h[m]!];
    i = m;
  }
  return top;
}
