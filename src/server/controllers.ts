/**
 * The controllers that act on the cluster's objects (namespace, garbage collector, disruption,
 * CSR approver/signer/cleaner, expiry, node lifecycle, bootstrap token cleaner and signer,
 * service accounts and the root CA config map, resource quota status), as
 * one set: built fresh, loaded with a snapshot of every object, fed the change events, and
 * stopped together. Without leader election one set runs for the life of the server; with it
 * (several servers on one etcd) a set runs only while this server holds the Lease. Each runs
 * unless `--controllers` turns it off by its upstream name (`*,-garbagecollector`).
 */
import type { ChangeEvent, InitReply } from '../actors/protocol.js';
import { typeKeyOf } from '../actors/routing.js';
import type { Informer } from '../actors/informer.js';
import type { Identity } from '../api/identity.js';
import type { Registry } from '../registry/registry.js';
import type { ActorPool } from '../actors/pool.js';
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
import { ServiceAccountsController } from '../controllers/serviceaccounts-controller.js';
import { ResourceQuotaController } from '../controllers/resourcequota-controller.js';
import { controllerEnabled } from '../controllers/selection.js';
import type { ReadCache } from '../actors/read-cache.js';
import { existsSync, readFileSync } from 'node:fs';

/** What the controllers read besides the actors: the front's read cache and the cluster CA. */
export interface ControllerDeps {
  readCache: ReadCache;
  /** the generated cluster CA file, once authentication is set up (undefined: none) */
  clusterCAFile(): string | undefined;
}

/** What every controller here offers the set: all optional but observe/stop are no-ops when absent. */
interface Member {
  load?(init: Pick<InitReply, 'objects' | 'namespaces' | 'leases'>): void;
  start?(): unknown;
  observe?(evs: readonly ChangeEvent[]): void;
  stop?(): void;
}

/** A controller that is an Informer (loads from the objects alone). */
function fromObjects(c: Informer & Pick<Member, 'start' | 'stop'>): Member {
  return {
    start: c.start?.bind(c),
    observe: c.observe?.bind(c),
    stop: c.stop?.bind(c),
    load: (init) => c.load(init.objects),
  };
}

export class Controllers {
  /** the running controllers, by upstream name (`--controllers` turns each on or off) */
  private readonly members = new Map<string, Member>();
  private stopped = false;

  constructor(
    pool: ActorPool,
    registry: Registry,
    options: ServerOptions,
    authorize: ConstructorParameters<typeof CsrApprover>[2],
    deps: ControllerDeps,
  ) {
    const identity = registry.identity;
    const add = (name: string, make: () => Member): void => {
      if (controllerEnabled(options.controllers, name)) this.members.set(name, make());
    };
    add('namespace', () => namespaceMember(new NamespaceController(pool, registry)));
    add('garbagecollector', () => new GarbageCollector(pool, registry));
    add('disruption', () => new DisruptionController(pool));
    add('certificatesigningrequest-signing', () => new CsrSigner(pool, identity, options));
    add('certificatesigningrequest-approving', () => new CsrApprover(pool, identity, authorize));
    add('certificatesigningrequest-cleaner', () => new CsrCleaner(pool, identity));
    add('nodelifecycle', () =>
      fromObjects(
        new NodeLifecycleController(pool, identity, {
          gracePeriodMs: options.nodeMonitorGracePeriodMs,
          startupGracePeriodMs: options.nodeStartupGracePeriodMs,
        }),
      ),
    );
    add('tokencleaner', () => fromObjects(new TokenCleaner(pool, identity)));
    add('bootstrapsigner', () => fromObjects(new BootstrapSigner(pool, identity)));
    // upstream runs both in kube-controller-manager: only its leader acts
    add('serviceaccount', () => serviceAccountMember(pool, identity, options, deps));
    add('resourcequota', () => new ResourceQuotaController(pool, deps.readCache));
    // not an upstream controller (event TTL and lease expiry are etcd's leases there): always on
    this.members.set('expiry', expiryMember(pool, registry));
  }

  /** The state every object and lease is in (the shards' load, or a later snapshot). */
  load(init: Pick<InitReply, 'objects' | 'namespaces' | 'leases'>): void {
    for (const m of this.members.values()) m.load?.(init);
  }

  start(): void {
    for (const m of this.members.values()) void m.start?.();
  }

  observe(evs: readonly ChangeEvent[]): void {
    if (this.stopped) return;
    for (const m of this.members.values()) m.observe?.(evs);
  }

  /** Stops acting: timers end, and no further events reach the controllers (work under way finishes). */
  stop(): void {
    this.stopped = true;
    for (const m of this.members.values()) m.stop?.();
  }
}

/** The namespace controller finishes Terminating namespaces (those loaded, then each update). */
function namespaceMember(c: NamespaceController): Member {
  return {
    load: (init) => {
      for (const n of init.namespaces) if (n.terminating) c.observe(n.obj);
    },
    observe: (evs) => {
      for (const ev of evs) {
        if (ev.typeKey !== typeKeyOf('', 'namespaces') || ev.type === 'DELETED') continue;
        c.observe(JSON.parse(ev.json));
      }
    },
    stop: () => c.stop(),
  };
}

/** Default service accounts, and the root CA ConfigMap when root-ca-cert-publisher is on. */
function serviceAccountMember(
  pool: ActorPool,
  identity: Identity,
  options: ServerOptions,
  deps: ControllerDeps,
): Member {
  const publish = controllerEnabled(options.controllers, 'root-ca-cert-publisher');
  const rootCAName = `${identity.systemNamespace.replace(/-system$/, '')}-root-ca.crt`;
  return fromObjects(
    new ServiceAccountsController(pool, deps.readCache, rootCAName, () => {
      const file = publish ? deps.clusterCAFile() : undefined;
      return file && existsSync(file) ? readFileSync(file, 'utf8') : undefined;
    }),
  );
}

/** Event TTLs and lease expiry (the type key's served version, from the registry). */
function expiryMember(pool: ActorPool, registry: Registry): Member {
  const expiry = new ExpiryController(pool, (typeKey) => {
    const [group, resource] = typeKey.split('/') as [string, string];
    const d = registry.allEnabled().find((x) => x.group === group && x.resource === resource);
    return d ? { group, version: d.version, resource } : undefined;
  });
  return {
    load: (init) => expiry.load(init.leases),
    observe: (evs) => expiry.observe(evs),
    stop: () => expiry.stop(),
  };
}
