/**
 * The controllers that act on the cluster's objects (namespace, garbage collector, disruption,
 * CSR approver/signer/cleaner, expiry, node lifecycle, bootstrap token cleaner and signer), as
 * one set: built fresh, loaded with a snapshot of every object, fed the change events, and
 * stopped together. Without leader election one set runs for the life of the server; with it
 * (several servers on one etcd) a set runs only while this server holds the Lease.
 */
import type { ChangeEvent, InitReply } from '../actors/protocol.js';
import { typeKeyOf } from '../actors/routing.js';
import type { Registry } from '../registry/registry.js';
import type { ActorPool } from './actor-pool.js';
import type { ServerOptions } from './options.js';
import { NamespaceController } from '../controllers/namespace-controller.js';
import { GarbageCollector } from '../controllers/garbage-collector.js';
import { DisruptionController } from '../controllers/disruption-controller.js';
import { CsrSigner } from '../controllers/csr-signer.js';
import { CsrApprover } from '../controllers/csr-approver.js';
import { CsrCleaner } from '../controllers/csr-cleaner.js';
import { ExpiryController } from '../controllers/expiry-controller.js';
import { NodeLifecycleController } from '../controllers/node-lifecycle-controller.js';
import { TokenCleaner } from '../controllers/token-cleaner.js';
import { BootstrapSigner } from '../controllers/bootstrap-signer.js';
import { controllerEnabled } from '../controllers/selection.js';

export class Controllers {
  readonly namespace: NamespaceController;
  readonly gc: GarbageCollector;
  readonly disruption: DisruptionController;
  readonly csrSigner: CsrSigner;
  readonly csrApprover: CsrApprover;
  readonly csrCleaner: CsrCleaner;
  readonly expiry: ExpiryController;
  readonly nodeLifecycle: NodeLifecycleController;
  /** the bootstrap token controllers, when --controllers names them */
  readonly tokenCleaner: TokenCleaner | undefined;
  readonly bootstrapSigner: BootstrapSigner | undefined;
  private stopped = false;

  constructor(pool: ActorPool, registry: Registry, options: ServerOptions, authorize: ConstructorParameters<typeof CsrApprover>[2]) {
    const identity = registry.identity;
    this.namespace = new NamespaceController(pool, registry);
    this.gc = new GarbageCollector(pool, registry);
    this.disruption = new DisruptionController(pool);
    this.csrSigner = new CsrSigner(pool, identity, options);
    this.csrApprover = new CsrApprover(pool, identity, authorize);
    this.csrCleaner = new CsrCleaner(pool, identity);
    this.expiry = new ExpiryController(pool, (typeKey) => {
      const [group, resource] = typeKey.split('/') as [string, string];
      const d = registry.allEnabled().find((x) => x.group === group && x.resource === resource);
      return d ? { group, version: d.version, resource } : undefined;
    });
    this.nodeLifecycle = new NodeLifecycleController(pool, identity, {
      gracePeriodMs: options.nodeMonitorGracePeriodMs, startupGracePeriodMs: options.nodeStartupGracePeriodMs,
    });
    if (controllerEnabled(options.controllers, 'tokencleaner')) this.tokenCleaner = new TokenCleaner(pool, identity);
    if (controllerEnabled(options.controllers, 'bootstrapsigner')) this.bootstrapSigner = new BootstrapSigner(pool, identity);
  }

  /** The state every object and lease is in (the shards' load, or a later snapshot). */
  load(init: Pick<InitReply, 'objects' | 'namespaces' | 'leases'>): void {
    this.tokenCleaner?.load(init.objects);
    this.bootstrapSigner?.load(init.objects);
    for (const n of init.namespaces) if (n.terminating) this.namespace.observe(n.obj);
    this.expiry.load(init.leases);
    this.nodeLifecycle.load(init.objects);
  }

  start(): void {
    void this.gc.start();
    void this.disruption.start();
    this.csrApprover.start();
    this.csrSigner.start();
    this.csrCleaner.start();
    this.nodeLifecycle.start();
  }

  observe(evs: ChangeEvent[]): void {
    if (this.stopped) return;
    for (const ev of evs) {
      if (ev.typeKey !== typeKeyOf('', 'namespaces') || ev.type === 'DELETED') continue;
      this.namespace.observe(JSON.parse(ev.json));
    }
    this.gc.observe(evs);
    this.disruption.observe(evs);
    this.csrApprover.observe(evs);
    this.csrSigner.observe(evs);
    this.expiry.observe(evs);
    this.nodeLifecycle.observe(evs);
    this.tokenCleaner?.observe(evs);
    this.bootstrapSigner?.observe(evs);
  }

  /** Stops acting: timers end, and no further events reach the controllers (work under way finishes). */
  stop(): void {
    this.stopped = true;
    this.namespace.stop();
    this.csrCleaner.stop();
    this.expiry.stop();
    this.nodeLifecycle.stop();
    this.tokenCleaner?.stop();
    this.bootstrapSigner?.stop();
  }
}
