/**
 * The shard actors, started as early as the options allow: src/server/cli.ts starts them before
 * it loads the server's modules, so each actor's thread loads its own module graph (~160
 * modules) while the front thread loads the server's (~300) instead of after it. ApiServer takes
 * them (or starts them itself: benchmarks, tests in process).
 */
import { makeIdentity, protectedNamespaces, type Identity } from '../api/identity.js';
import { ActorPool } from '../actors/pool.js';
import type { ActorConfig, ChangeEvent } from '../actors/protocol.js';
import { loadEncryptionConfig } from '../storage/encryption/config.js';
import type { ServerOptions } from './options.js';

/** The shard actors' configuration, from the server's options. */
export function actorPoolConfig(options: ServerOptions, identity: Identity): Omit<ActorConfig, 'shard' | 'rvBuffer'> {
  return {
    shards: options.shards,
    dataDir: options.dataDir,
    runtimeConfig: options.runtimeConfig,
    storageBackend: options.storageBackend,
    etcd: {
      servers: options.etcdServers,
      prefix: options.etcdPrefix,
      caFile: options.etcdCaFile,
      certFile: options.etcdCertFile,
      keyFile: options.etcdKeyFile,
      compactionIntervalMs: options.etcdCompactionIntervalMs,
    },
    ...(options.encryptionProviderConfig
      ? { encryption: loadEncryptionConfig(options.encryptionProviderConfig, options.apiDomain) }
      : {}),
    apiDomain: options.apiDomain,
    historyWindowMs: options.watchHistoryWindowMs,
    continueTtlMs: options.continueTtlMs,
    strategyConfig: {
      serviceClusterIPRange: options.serviceClusterIPRange,
      serviceNodePortRange: options.serviceNodePortRange,
      apiServiceName: identity.product,
      eventTtlMs: options.eventTtlMs,
      labelDomain: `${identity.product}.io`,
      protectedNamespaces: protectedNamespaces(identity),
      apiDomain: identity.domain,
    },
    ...(options.testFaults ? { testFaults: options.testFaults } : {}),
  };
}

/** Started shard actors, waiting for their server. */
export interface StartedShards {
  identity: Identity;
  pool: ActorPool;
  /** who hears every committed batch's events (ApiServer's feed); set before the pool's init */
  deliverTo(onEvents: (evs: ChangeEvent[]) => void): void;
}

/** Starts the shard actors' threads (each loads its modules at once); nothing is sent to them yet. */
export function startShards(options: ServerOptions): StartedShards {
  const identity = makeIdentity(options.apiDomain);
  let sink: ((evs: ChangeEvent[]) => void) | undefined;
  const pool = new ActorPool(
    actorPoolConfig(options, identity),
    (evs) => {
      // no batch runs before the pool's init, which ApiServer.start sends after taking the pool
      if (!sink) throw new Error('shard events before the server took the shards');
      sink(evs);
    },
    { pipelineDepth: options.actorPipelineDepth, heavyPerBatch: options.actorHeavyPerBatch },
  );
  return {
    identity,
    pool,
    deliverTo: (onEvents) => {
      sink = onEvents;
    },
  };
}
