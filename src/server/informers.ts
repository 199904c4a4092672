/**
 * The one place that declares who follows the shards' objects on the front thread: the members
 * of the server's change feed, in delivery order, and which of them run on every replica
 * (always-on) or only while this server holds the controller Lease (leader-gated).
 */
import { ChangeFeed, observer, type Informer } from '../actors/informer.js';
import { typeKeyOf } from '../actors/routing.js';
import type { WatchHub } from '../http/watch-hub.js';
import type { Controllers } from './controllers.js';

export interface FeedMembers {
  authz: Informer;
  auth: Informer;
  apf: Informer | undefined;
  readCache: Informer;
  extensions: Informer;
  /** name → phase of every namespace (Services.namespaces) */
  namespaces: Map<string, 'Active' | 'Terminating'>;
  crdController: Informer;
  /** the running controller set: undefined while another server leads */
  controllers(): Controllers | undefined;
  hub: WatchHub;
}

/**
 * Delivery order (kept exactly as the hand-written fan-out had it): authorization indexes,
 * authentication (bootstrap tokens), APF configuration, the read cache, the extensions
 * (admission sources, APIServices), the
 * namespace phases, the CRD controller, the leader-gated controllers, and the watch hub LAST:
 * every cache and index has a change before any watcher is told of it, so a client that saw its
 * write in a watch never reads older state from a cache (nor is authorized against it).
 *
 * Always-on (every replica, leader or not): every member but `controllers`.
 * Leader-gated: `controllers` (src/server/controllers.ts: namespace, garbage collector,
 * disruption, CSR, node lifecycle, bootstrap tokens, expiry, and — as upstream's
 * kube-controller-manager, where only the leader acts — serviceaccount and resourcequota); it is loaded apart from the feed
 * (with the leases and a fresh snapshot when elected), so its `load` here does nothing.
 */
export function buildChangeFeed(m: FeedMembers): ChangeFeed {
  const feed = new ChangeFeed();
  feed.subscribe('authorization', m.authz);
  feed.subscribe('authentication', m.auth);
  if (m.apf) feed.subscribe('priority-and-fairness', m.apf);
  feed.subscribe('read-cache', m.readCache);
  feed.subscribe('extensions', m.extensions);
  feed.subscribe('namespaces', namespacePhases(m.namespaces));
  feed.subscribe('crd-controller', m.crdController);
  feed.subscribe(
    'controllers',
    observer((events) => m.controllers()?.observe(events)),
  );
  feed.subscribe(
    'watch-hub',
    observer((events) => m.hub.dispatch(events)),
  );
  return feed;
}

/** Keeps each namespace's phase (Active, or Terminating once it has a deletionTimestamp). */
function namespacePhases(namespaces: Map<string, 'Active' | 'Terminating'>): Informer {
  const typeKey = typeKeyOf('', 'namespaces');
  const phase = (json: string): 'Active' | 'Terminating' => {
    const ns = JSON.parse(json) as { metadata?: { deletionTimestamp?: string } };
    return ns.metadata?.deletionTimestamp ? 'Terminating' : 'Active';
  };
  return {
    load: (objects) => {
      for (const o of objects) if (o.typeKey === typeKey) namespaces.set(o.name, phase(o.json));
    },
    observe: (events) => {
      for (const ev of events) {
        if (ev.typeKey !== typeKey) continue;
        if (ev.type === 'DELETED') namespaces.delete(ev.name);
        else namespaces.set(ev.name, phase(ev.json));
      }
    },
  };
}
