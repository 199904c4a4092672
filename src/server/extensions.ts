/**
 * The server's extension points, built and fed in one place: the admission chain and its
 * plugins (src/admission) and the aggregation layer (src/aggregator). The controllers that
 * serve them (default ServiceAccounts and the root CA config map, ResourceQuota status) are
 * leader-gated members of src/server/controllers.ts.
 * The ApiServer hands every change event and the start-up objects to `observe`/`load`.
 */
import type { CachedObject, ChangeEvent } from '../actors/protocol.js';
import type { Informer } from '../actors/informer.js';
import type { Registry } from '../registry/registry.js';
import type { Services } from '../http/context.js';
import type { UserInfo } from '../api/user.js';
import type { ActorPool } from '../actors/pool.js';
import type { ServerOptions } from './options.js';
import { AdmissionChain } from '../admission/chain.js';
import { buildAdmissionPlugins, type AdmissionPlugins } from '../admission/plugins.js';
import { ApiServices } from '../aggregator/apiservices.js';
import { AggregatorProxy } from '../aggregator/proxy.js';
import { loadProxyClient } from '../aggregator/transport.js';

export interface ExtensionDeps {
  options: ServerOptions;
  registry: Registry;
  services: Services;
  pool: ActorPool;
  /** who a request without a user is (the plain port) */
  anonymous: UserInfo;
}

export class Extensions implements Informer {
  /** mutating then validating admission */
  readonly admission: AdmissionChain;
  readonly plugins: AdmissionPlugins;
  /** APIServices (local and remote) and their availability */
  readonly apiServices: ApiServices;
  /** the proxy to extension API servers */
  readonly aggregator: AggregatorProxy;

  constructor(d: ExtensionDeps) {
    const { options, registry, services, pool } = d;
    const readCache = services.readCache;
    this.plugins = buildAdmissionPlugins(options, registry, services);
    this.admission = new AdmissionChain(this.plugins.plugins, services, d.anonymous);
    const proxyClient = loadProxyClient(options.proxyClientCertFile, options.proxyClientKeyFile);
    this.apiServices = new ApiServices(
      registry.identity,
      registry,
      pool,
      readCache,
      proxyClient,
      options.apiServiceCheckIntervalMs,
    );
    this.aggregator = new AggregatorProxy(
      this.apiServices,
      proxyClient,
      options.maxRequestBodyBytes,
      options.requestTimeoutMs,
    );
  }

  load(objects: readonly CachedObject[]): void {
    this.plugins.load(objects);
    this.apiServices.load(objects);
  }

  observe(evs: readonly ChangeEvent[]): void {
    this.plugins.observe(evs);
    this.apiServices.observe(evs);
  }

  /** After bootstrap, before the listeners open: the local APIServices exist once this resolves. */
  async start(): Promise<void> {
    await this.apiServices.start();
  }

  stop(): void {
    this.apiServices.stop();
  }
}
