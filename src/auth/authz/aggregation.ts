/**
 * The ClusterRole aggregation controller (upstream clusterroleaggregation): writes into each
 * ClusterRole with an aggregationRule the rules of the ClusterRoles its selectors match, so
 * reads show what the authorizer already evaluates (src/auth/authz/rbac-index.ts resolves
 * aggregation itself, so authorization never waits for this). It runs on the front thread
 * after the index changes; a write that loses a race is redone on the change that beat it.
 */
import { bodyText } from '../../actors/pack.js';
import type { ActorPool } from '../../actors/pool.js';
import type { RbacIndex } from './rbac-index.js';
import type { PolicyRule } from './rbac-rules.js';

const JSON_ENC = { format: 'json' as const, pretty: false };

export class AggregationController {
  private enabled = false;
  private scheduled = false;
  private running: Promise<void> | undefined;
  private again = false;
  /**
   * Whether passes after start run here: with leader election only on the Lease holder
   * (upstream runs this controller in the leader-elected controller manager).
   */
  private active = true;

  constructor(
    private readonly index: RbacIndex,
    private readonly pool: Pick<ActorPool, 'submit'>,
  ) {}

  /** One pass now (at start, before the listeners open), then a pass after every RBAC change. */
  async start(): Promise<void> {
    await this.sync();
    this.enabled = true;
  }

  /** Leadership gained (a pass now, catching up on changes missed) or lost. */
  setActive(active: boolean): void {
    this.active = active;
    if (active) this.changed();
  }

  /** Called when the index changed; coalesces bursts of changes into one pass. */
  changed(): void {
    if (!this.enabled || !this.active || this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (this.running) {
        this.again = true;
        return;
      }
      this.running = this.sync().finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.changed();
        }
      });
    });
  }

  /** Writes every aggregated ClusterRole whose stored rules differ from what it gathers. */
  async sync(): Promise<void> {
    for (const { name, stored, effective } of this.index.aggregatedRoles()) {
      if (JSON.stringify(stored) !== JSON.stringify(effective)) await this.write(name, effective);
    }
  }

  private async write(name: string, rules: PolicyRule[]): Promise<void> {
    const type = { group: this.index.group, version: 'v1', resource: 'clusterroles' };
    const got = await this.pool.submit({ op: 'get', type, enc: JSON_ENC, namespace: '', name });
    if (!('code' in got)) return;
    const obj = JSON.parse(bodyText(got.body));
    obj.rules = rules;
    // a conflict or a deletion meanwhile produced a change event, which brings another pass
    await this.pool.submit({
      op: 'update',
      type,
      enc: JSON_ENC,
      dryRun: false,
      namespace: '',
      name,
      body: { text: JSON.stringify(obj), contentType: 'json' },
    });
  }
}
