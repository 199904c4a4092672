/**
 * Keeps the APF configuration objects as upstream's config producer and consumer do: the
 * mandatory and suggested objects are created at start (and updated while annotated
 * autoupdate "true"), a deleted mandatory object comes back, and every FlowSchema carries a
 * `Dangling` condition saying whether its priority level exists.
 */
import { bodyText } from '../actors/pack.js';
import type { Result } from '../actors/protocol.js';
import { groupFor, type Identity } from '../api/identity.js';
import type { FlowSchema } from '../api/kinds.js';
import type { KubeObject, Stored } from '../api/object.js';
import type { ActorPool, OpInput } from '../actors/pool.js';
import { apfDefaults, type ApfDefaults } from './defaults.js';
import type { PriorityAndFairness } from './priority-fairness.js';

const JSON_ENC = { format: 'json' as const, pretty: false };
type Submit = (op: OpInput) => Promise<Result>;

export class ApfConfigController {
  private readonly defaults: ApfDefaults;
  private readonly group: string;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;

  constructor(
    private readonly pool: Pick<ActorPool, 'submit'>,
    identity: Identity,
    private readonly apf: PriorityAndFairness,
  ) {
    this.defaults = apfDefaults(identity);
    this.group = groupFor(identity, 'flowcontrol.apiserver.plat.io');
  }

  private type(resource: string, subresource?: string) {
    return { group: this.group, version: 'v1', resource, ...(subresource ? { subresource } : {}) };
  }

  /** At start: every default object, created or brought up to date. */
  async ensureDefaults(): Promise<void> {
    const submit: Submit = (op) => this.pool.submit(op);
    const { mandatory, suggested } = this.defaults;
    await Promise.all([
      ...[...mandatory.priorityLevels, ...suggested.priorityLevels].map((o) =>
        this.ensure(submit, 'prioritylevelconfigurations', o),
      ),
      ...[...mandatory.flowSchemas, ...suggested.flowSchemas].map((o) => this.ensure(submit, 'flowschemas', o)),
    ]);
    this.apf.onConfigChange = () => this.changed();
    this.changed();
  }

  stop(): void {
    this.stopped = true;
  }

  private async ensure(submit: Submit, resource: string, expected: Stored<KubeObject>): Promise<void> {
    const type = this.type(resource);
    const name = expected.metadata.name;
    const got = await submit({ op: 'get', type, enc: JSON_ENC, namespace: '', name });
    if ('error' in got) {
      if (got.error.code !== 404) throw new Error(`bootstrap ${resource} ${name}: ${got.error.message}`);
      const r = await submit({
        op: 'create',
        type,
        enc: JSON_ENC,
        dryRun: false,
        namespace: '',
        body: { text: JSON.stringify(expected), contentType: 'json' },
      });
      if ('error' in r && r.error.code !== 409) throw new Error(`bootstrap ${resource} ${name}: ${r.error.message}`);
      return;
    }
    if (!('code' in got)) return;
    const existing = JSON.parse(bodyText(got.body));
    if (existing.metadata?.annotations?.[this.defaults.autoupdate] !== 'true') return;
    if (sameSpec(existing.spec, expected.spec)) return;
    existing.spec = expected.spec;
    await submit({
      op: 'update',
      type,
      enc: JSON_ENC,
      dryRun: false,
      namespace: '',
      name,
      body: { text: JSON.stringify(existing), contentType: 'json' },
    });
  }

  /** One pass at a time; a change during a pass schedules another. */
  private changed(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.reconcile()
      .catch(() => {})
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.changed();
        }
      });
  }

  private async reconcile(): Promise<void> {
    const submit: Submit = (op) => this.pool.submit(op);
    const { mandatory } = this.defaults;
    const levels = this.apf.priorityLevels();
    const schemas = new Set(this.apf.flowSchemas().map((o) => o.metadata.name));
    await Promise.all([
      ...mandatory.priorityLevels
        .filter((o) => !levels.has(o.metadata.name))
        .map((o) => this.ensure(submit, 'prioritylevelconfigurations', o)),
      ...mandatory.flowSchemas
        .filter((o) => !schemas.has(o.metadata.name))
        .map((o) => this.ensure(submit, 'flowschemas', o)),
    ]);
    await Promise.all(this.apf.flowSchemas().map((fs) => this.markDangling(submit, fs, levels)));
  }

  private async markDangling(
    submit: Submit,
    fs: Stored<FlowSchema>,
    levels: ReadonlyMap<string, unknown>,
  ): Promise<void> {
    const level = fs.spec?.priorityLevelConfiguration?.name ?? '';
    const exists = levels.has(level);
    const want = exists ? 'False' : 'True';
    const current = (fs.status?.conditions ?? []).find((c) => c.type === 'Dangling');
    if (current?.status === want) return;
    const condition = {
      type: 'Dangling',
      status: want,
      reason: exists ? 'Found' : 'NotFound',
      message: exists
        ? `This FlowSchema references the PriorityLevelConfiguration object named "${level}" and it exists`
        : `This FlowSchema references the PriorityLevelConfiguration object named "${level}" but there is no such object`,
      lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    };
    const next = {
      ...fs,
      status: {
        ...(fs.status ?? {}),
        conditions: [...(fs.status?.conditions ?? []).filter((c) => c.type !== 'Dangling'), condition],
      },
    };
    await submit({
      op: 'update',
      type: this.type('flowschemas', 'status'),
      enc: JSON_ENC,
      dryRun: false,
      namespace: '',
      name: fs.metadata.name,
      body: { text: JSON.stringify(next), contentType: 'json' },
    });
  }
}

function sameSpec(a: unknown, b: unknown): boolean {
  return JSON.stringify(sortKeys(a)) === JSON.stringify(sortKeys(b));
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v === null || typeof v !== 'object') return v;
  const o = v as Record<string, unknown>;
  return Object.fromEntries(
    Object.keys(o)
      .sort()
      .map((k) => [k, sortKeys(o[k])]),
  );
}
