/**
 * The node lifecycle controller (front thread), as upstream's health monitoring: a node agent
 * heartbeats by renewing its Lease (`coordination.<domain>/v1`, named after the Node, in
 * `<short>-node-lease`) and by posting `nodes/status` (Ready's lastHeartbeatTime). The
 * controller records, on its own clock, when it last saw either move (the probe time; at
 * start every Node gets a fresh one, as upstream). A Node not heard from within
 * `--node-monitor-grace-period` (`--node-startup-grace-period` while it never posted a Ready
 * condition) gets its conditions set to Unknown through nodes/status; the taints follow the
 * conditions (node-health.ts) and go again once the agent posts Ready=True.
 *
 * Writes carry the resourceVersion they were computed from; a conflict is retried on the
 * next change or sweep. The sweep runs every quarter grace period (at most 5 s).
 */
import type { CachedObject, ChangeEvent, TypeRef } from '../actors/protocol.js';
import type { Informer } from '../actors/informer.js';
import { groupFor, type Identity } from '../api/identity.js';
import type { Lease, Node } from '../api/kinds.js';
import type { ActorPool } from '../actors/pool.js';
import { needsUnknown, nextTaints, readyCondition, unknownStatus } from './node-health.js';

const JSON_ENC = { format: 'json' as const, pretty: false };
const NODES: TypeRef = { group: '', version: 'v1', resource: 'nodes' };
const NODES_KEY = '/nodes';

export interface NodeLifecycleOptions {
  gracePeriodMs: number;
  startupGracePeriodMs: number;
}

interface Health {
  /** when the controller last saw the node's heartbeat move (its own clock) */
  probeAt: number;
  heartbeat?: string;
  renewTime?: number;
}

export class NodeLifecycleController implements Informer {
  private readonly nodes = new Map<string, Node>();
  private readonly health = new Map<string, Health>();
  private readonly busy = new Set<string>();
  private readonly leasesKey: string;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly pool: ActorPool,
    private readonly identity: Identity,
    private readonly opts: NodeLifecycleOptions,
    private readonly now: () => number = Date.now,
  ) {
    this.leasesKey = `${groupFor(identity, 'coordination.plat.io')}/leases`;
  }

  /** The stored Nodes and node Leases at start. */
  load(objects: readonly CachedObject[]): void {
    for (const o of objects) {
      if (o.typeKey === NODES_KEY) this.observeNode(o.name, JSON.parse(o.json));
      else if (o.typeKey === this.leasesKey && o.namespace === this.identity.nodeLeaseNamespace)
        this.observeLease(o.name, JSON.parse(o.json));
    }
  }

  start(): void {
    const period = Math.min(5000, Math.max(50, Math.min(this.opts.gracePeriodMs, this.opts.startupGracePeriodMs) / 4));
    this.timer = setInterval(() => {
      for (const name of this.nodes.keys()) this.reconcile(name);
    }, period);
    this.timer.unref();
    for (const name of this.nodes.keys()) this.reconcile(name);
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  observe(evs: readonly ChangeEvent[]): void {
    for (const ev of evs) {
      if (ev.typeKey === NODES_KEY) {
        if (ev.type === 'DELETED') {
          this.nodes.delete(ev.name);
          this.health.delete(ev.name);
          continue;
        }
        this.observeNode(ev.name, JSON.parse(ev.json));
        this.reconcile(ev.name);
      } else if (
        ev.typeKey === this.leasesKey &&
        ev.namespace === this.identity.nodeLeaseNamespace &&
        ev.type !== 'DELETED'
      ) {
        this.observeLease(ev.name, JSON.parse(ev.json));
      }
    }
  }

  private healthOf(name: string): Health {
    let h = this.health.get(name);
    if (!h) this.health.set(name, (h = { probeAt: this.now() }));
    return h;
  }

  private observeNode(name: string, node: Node): void {
    this.nodes.set(name, node);
    const h = this.healthOf(name);
    const heartbeat = readyCondition(node)?.lastHeartbeatTime;
    if (typeof heartbeat === 'string' && heartbeat !== h.heartbeat) {
      h.probeAt = this.now();
      h.heartbeat = heartbeat;
    }
  }

  /** A renewTime later than the last one seen is a heartbeat. */
  private observeLease(name: string, lease: Lease | undefined): void {
    const renew = Date.parse(lease?.spec?.renewTime ?? '');
    if (Number.isNaN(renew)) return;
    const h = this.healthOf(name);
    if (h.renewTime === undefined || renew > h.renewTime) {
      h.probeAt = this.now();
      h.renewTime = renew;
    }
  }

  /** One node: conditions to Unknown when its heartbeat is overdue, else taints in line with its state. */
  private reconcile(name: string): void {
    const node = this.nodes.get(name);
    if (!node || this.busy.has(name) || this.stopped) return;
    const now = this.now();
    const grace = readyCondition(node) ? this.opts.gracePeriodMs : this.opts.startupGracePeriodMs;
    if (now > this.healthOf(name).probeAt + grace && needsUnknown(node)) {
      return this.write(name, { ...node, status: unknownStatus(node, now) }, 'status');
    }
    const taints = nextTaints(node, this.identity.product, now);
    if (taints) this.write(name, { ...node, spec: { ...node.spec, taints: taints.length ? taints : undefined } });
  }

  private write(name: string, node: Node, subresource?: 'status'): void {
    this.busy.add(name);
    const type = subresource ? { ...NODES, subresource } : NODES;
    let written = false;
    this.pool
      .submit({
        op: 'update',
        type,
        namespace: '',
        name,
        dryRun: false,
        enc: JSON_ENC,
        body: { text: JSON.stringify(node), contentType: 'json' },
      })
      // the write's own change event was observed before its result resolved
      .then((r) => {
        written = 'code' in r;
      })
      .catch(() => undefined)
      .finally(() => {
        this.busy.delete(name);
        // the next step (taints after the conditions) at once; a failed write waits for the next change or sweep
        if (written) this.reconcile(name);
      });
  }
}
