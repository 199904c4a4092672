/**
 * Leader election over a coordination.<domain>/v1 Lease, as upstream's client-go
 * leaderelection (LeaseLock): a candidate acquires the Lease when it is absent or its holder
 * has not renewed it within leaseDurationSeconds (measured on the candidate's own clock from
 * when it last saw the record change), renews it every retry period while leading, and gives
 * up leading when it could not renew within the renew deadline. Every write carries the
 * resourceVersion it read, so two candidates never both win one term.
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { ActorPool } from '../actors/pool.js';
import type { Identity } from '../api/identity.js';
import type { Lease } from '../api/kinds.js';
import type { Stored } from '../api/object.js';
import { bodyText } from '../actors/pack.js';

const JSON_ENC = { format: 'json' as const, pretty: false };

export interface LeaderElectionOptions {
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  /** Lease name and namespace */
  name: string;
  namespace: string;
}

/** metav1.MicroTime: RFC 3339 with microseconds */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export class LeaderElector {
  /** this candidate's identity (upstream: hostname + "_" + a UUID) */
  readonly id = `${hostname()}_${randomUUID()}`;
  private leading = false;
  private lastRenew = 0;
  /** the record as last seen and when (local clock) it last changed */
  private observed = '';
  private observedAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly pool: Pick<ActorPool, 'submit'>,
    private readonly identity: Identity,
    private readonly opts: LeaderElectionOptions,
    private readonly callbacks: { started: () => void; stopped: () => void },
  ) {}

  get isLeader(): boolean {
    return this.leading;
  }

  start(): void {
    const tick = async () => {
      if (this.stopped) return;
      let ok = false;
      try {
        ok = await this.tryAcquireOrRenew();
      } catch {
        ok = false;
      }
      if (this.stopped) return;
      const now = Date.now();
      if (ok) {
        this.lastRenew = now;
        if (!this.leading) {
          this.leading = true;
          this.log('became leader');
          this.callbacks.started();
        }
      } else if (this.leading && now - this.lastRenew > this.opts.renewDeadlineMs) {
        this.leading = false;
        this.log('leader election lost');
        this.callbacks.stopped();
      }
      this.timer = setTimeout(() => void tick(), this.opts.retryPeriodMs);
      this.timer.unref();
    };
    void tick();
  }

  /** Stops campaigning; a leader releases the Lease (holder cleared) so another takes over at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    if (!this.leading) return;
    this.leading = false;
    this.callbacks.stopped();
    const cur = await this.get();
    if (cur?.spec?.holderIdentity === this.id) {
      await this.write('update', { ...cur, spec: { ...cur.spec, holderIdentity: '', leaseDurationSeconds: 1 } });
    }
  }

  private type() {
    return { group: `coordination.${this.identity.domain}`, version: 'v1', resource: 'leases' };
  }

  private async get(): Promise<Stored<Lease> | undefined> {
    const r = await this.pool.submit({
      op: 'get',
      type: this.type(),
      enc: JSON_ENC,
      namespace: this.opts.namespace,
      name: this.opts.name,
    });
    if ('code' in r) return JSON.parse(bodyText(r.body));
    if ('error' in r && r.error.code === 404) return undefined;
    throw new Error('error' in r ? r.error.message : 'unexpected reply');
  }

  private async write(op: 'create' | 'update', obj: Lease): Promise<boolean> {
    const body = {
      text: JSON.stringify({ apiVersion: `${this.type().group}/v1`, kind: 'Lease', ...obj }),
      contentType: 'json' as const,
    };
    const common = { type: this.type(), enc: JSON_ENC, dryRun: false, namespace: this.opts.namespace, body };
    const r =
      op === 'create'
        ? await this.pool.submit({ op: 'create', ...common })
        : await this.pool.submit({ op: 'update', ...common, name: this.opts.name });
    return 'code' in r;
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const now = Date.now();
    const durationSeconds = Math.max(1, Math.round(this.opts.leaseDurationMs / 1000));
    const cur = await this.get();
    if (!cur) {
      return this.write('create', {
        metadata: { name: this.opts.name, namespace: this.opts.namespace },
        spec: {
          holderIdentity: this.id,
          leaseDurationSeconds: durationSeconds,
          acquireTime: microTime(now),
          renewTime: microTime(now),
          leaseTransitions: 0,
        },
      });
    }
    const spec = cur.spec ?? {};
    const record = JSON.stringify([spec.holderIdentity, spec.renewTime, spec.leaseDurationSeconds]);
    if (record !== this.observed) {
      this.observed = record;
      this.observedAt = now;
    }
    const held = spec.holderIdentity && spec.holderIdentity !== this.id;
    if (held && this.observedAt + (spec.leaseDurationSeconds ?? durationSeconds) * 1000 > now) return false;
    const mine = spec.holderIdentity === this.id;
    const next = {
      holderIdentity: this.id,
      leaseDurationSeconds: durationSeconds,
      renewTime: microTime(now),
      acquireTime: mine ? (spec.acquireTime ?? microTime(now)) : microTime(now),
      leaseTransitions: (spec.leaseTransitions ?? 0) + (mine ? 0 : 1),
    };
    // the read resourceVersion rides along: a candidate that lost the race gets 409
    return this.write('update', { metadata: cur.metadata, spec: { ...spec, ...next } });
  }

  private log(what: string): void {
    process.stderr.write(`leader election: ${this.id} ${what} (Lease ${this.opts.namespace}/${this.opts.name})\n`);
  }
}
