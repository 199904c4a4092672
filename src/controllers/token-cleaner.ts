/**
 * The TokenCleaner (upstream pkg/controller/bootstrap/tokencleaner.go), enabled with
 * `--controllers=*,tokencleaner`: deletes bootstrap token secrets of the system namespace once
 * their `expiration` has passed (an unparsable one counts as expired), with the secret's uid as
 * precondition. It follows the secret change events and wakes up at the next expiration.
 */
import type { CachedObject, ChangeEvent, TypeRef } from '../actors/protocol.js';
import type { Informer } from '../actors/informer.js';
import type { Identity } from '../api/identity.js';
import type { ActorPool } from '../actors/pool.js';
import { bootstrapToken, isExpired, type BootstrapToken } from './bootstrap-token.js';

const JSON_ENC = { format: 'json' as const, pretty: false };
const SECRETS: TypeRef = { group: '', version: 'v1', resource: 'secrets' };
const SECRETS_KEY = '/secrets';
/** setTimeout's ceiling; a later expiration is re-armed when this fires */
const MAX_DELAY_MS = 2 ** 31 - 1;

export class TokenCleaner implements Informer {
  private readonly tokens = new Map<string, BootstrapToken>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private stopped = false;

  constructor(
    private readonly pool: Pick<ActorPool, 'submit'>,
    private readonly identity: Identity,
    private readonly now: () => number = Date.now,
  ) {}

  /** The secrets the actors loaded at start. */
  load(objects: readonly CachedObject[]): void {
    for (const o of objects)
      if (o.typeKey === SECRETS_KEY && o.namespace === this.identity.systemNamespace) this.consider(o.name, o.json);
  }

  observe(events: readonly ChangeEvent[]): void {
    for (const ev of events) {
      if (ev.typeKey !== SECRETS_KEY || ev.namespace !== this.identity.systemNamespace) continue;
      if (ev.type === 'DELETED') this.forget(ev.name);
      else this.consider(ev.name, ev.json);
    }
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }

  private forget(name: string): void {
    this.tokens.delete(name);
    clearTimeout(this.timers.get(name));
    this.timers.delete(name);
  }

  private consider(name: string, json: string): void {
    this.forget(name);
    const t = bootstrapToken(JSON.parse(json), this.identity);
    if (!t || t.expires === undefined) return;
    this.tokens.set(name, t);
    this.arm(name);
  }

  private arm(name: string): void {
    const t = this.tokens.get(name);
    if (!t || this.stopped) return;
    if (isExpired(t, this.now())) return void this.remove(name, t);
    const timer = setTimeout(
      () => {
        this.timers.delete(name);
        this.arm(name);
      },
      Math.min(MAX_DELAY_MS, t.expires! - this.now() + 1),
    );
    timer.unref();
    this.timers.set(name, timer);
  }

  private async remove(name: string, t: BootstrapToken): Promise<void> {
    const r = await this.pool.submit({
      op: 'delete',
      type: SECRETS,
      enc: JSON_ENC,
      dryRun: false,
      namespace: this.identity.systemNamespace,
      name,
      options: { preconditions: { uid: t.uid } },
    });
    // 404 (already gone) and 409 (replaced by another object) need nothing; others are reported
    if ('error' in r && r.error.code !== 404 && r.error.code !== 409)
      process.stderr.write(`warning: tokencleaner: deleting ${name}: ${r.error.message}\n`);
  }
}
