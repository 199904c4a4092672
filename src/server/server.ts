/**
 * The front thread: a uWebSockets.js app that parses every request, answers discovery and
 * health itself, and hands resource work to the shard actors, writing their bytes back.
 */
import uWS from 'uWebSockets.js';
import type { TemplatedApp, us_listen_socket } from 'uWebSockets.js';
import { listenPlain } from './listener.js';
import { errors } from '../api/status.js';
import { Registry } from '../registry/registry.js';
import { shardOf } from '../actors/routing.js';
import type { ChangeEvent } from '../actors/protocol.js';
import type { ActorPool } from '../actors/pool.js';
import type { WatchHub } from '../http/watch-hub.js';
import { cborEnabled } from '../http/negotiation.js';
import { send, sendStatus } from '../http/exchange.js';
import type { ServerOptions } from './options.js';
import type { Services } from '../http/context.js';
import { bootstrap } from './bootstrap.js';
import { CrdController } from '../controllers/crd-controller.js';
import { ReadCache } from '../actors/read-cache.js';
import { buildChangeFeed } from './informers.js';
import type { ChangeFeed } from '../actors/informer.js';
import { Controllers } from './controllers.js';
import { LeaderElector } from '../controllers/leader-election.js';
import { InflightLimiter } from '../filters/inflight.js';
import { FrontAuthentication, UNSECURED_USER } from './front-authentication.js';
import { Authorization } from '../auth/authz/authorization.js';
import { settle } from '../auth/authz/authorizer.js';
import type { PriorityAndFairness } from '../flowcontrol/priority-fairness.js';
import { leaderElection, priorityAndFairness, watchHub } from './server-parts.js';
import { startShards, type StartedShards } from './shards.js';
import { ApfConfigController } from '../flowcontrol/config-controller.js';
import { SignerAdmission } from '../auth/authz/signer-admission.js';
import { groupFor } from '../api/identity.js';
import { attributesFor } from '../auth/authz/attributes.js';
import { FrontMetrics, featureGateSource, storageObjectSources } from './front-metrics.js';
import { FrontAudit } from './front-audit.js';
import { Extensions } from './extensions.js';
import { KubeletClient, loadKubeletTls } from '../kubelet/client.js';
import { UPGRADE_DIRECTIVE_HEADER } from '../kubelet/upgrade-directive.js';
import { getCoreObject, type ConnectDeps } from '../handlers/connect.js';
import { buildHandlerChain } from './handler-chain.js';
import { Logger } from './log.js';
import { REQUEST_LOG_LEVEL, requestLogger } from './request-log.js';

export class ApiServer {
  readonly registry: Registry;
  readonly pool: ActorPool;
  readonly hub: WatchHub;
  readonly services: Services;
  readonly crdController: CrdController;
  /** who hears the shards' change events, in order (src/server/informers.ts) */
  private readonly feed: ChangeFeed;
  /** the running controllers: always without leader election, else while this server leads */
  controllers: Controllers | undefined;
  /** --leader-elect (on by default with etcd): the controller Lease's elector */
  readonly elector: LeaderElector | undefined;
  readonly inflight: InflightLimiter;
  /** API Priority and Fairness (--enable-priority-and-fairness, on by default); replaces the in-flight limiter */
  readonly apf: PriorityAndFairness | undefined;
  private apfConfig: ApfConfigController | undefined;
  readonly auth: FrontAuthentication;
  readonly authz: Authorization;
  readonly signerAdmission: SignerAdmission;
  /** admission, the aggregation layer and their controllers (src/server/extensions.ts) */
  readonly extensions: Extensions;
  readonly metrics: FrontMetrics;
  readonly audit: FrontAudit | undefined;
  /** feature gate APIResponseCompression (beta, on by default) */
  readonly compression: boolean;
  /** feature gate CBORServingAndStorage (alpha, off by default) */
  readonly cbor: boolean;
  private app: TemplatedApp | undefined;
  private listenSocket: us_listen_socket | undefined;
  private kubelet: KubeletClient | undefined;
  /** the node agents' client deps (connect subresources), set before the listeners open */
  connectDeps: ConnectDeps | undefined;
  shuttingDown = false;
  started = false;
  /** the `etcd` health check (with --storage-backend etcd3) */
  etcdHealth: { run: () => Promise<string | undefined>; close: () => void } | undefined;
  /** the plain port actually bound (differs from options.port when that is 0); 0 when off */
  port = 0;
  /** the HTTPS port actually bound (undefined when --secure-port is off) */
  securePort: number | undefined;
  /** `-v` and `--logging-format` (src/server/log.ts) */
  readonly log: Logger;
  /** the admin kubeconfig written at start, if any */
  kubeconfig: string | undefined;
  /** read the client's address of every request (auditing, the request log) */
  readonly readsRemoteAddress: boolean;

  /** `shards`: the shard actors src/server/cli.ts started before loading this module (./shards.ts) */
  constructor(
    readonly options: ServerOptions,
    shards: StartedShards = startShards(options),
  ) {
    this.log = new Logger(options.verbosity ?? 0, options.loggingFormat ?? 'text');
    this.registry = new Registry(shards.identity, options.runtimeConfig, undefined, options.featureGates);
    this.hub = watchHub(options, this.registry);
    const namespaces = new Map<string, 'Active' | 'Terminating'>();
    this.pool = shards.pool;
    shards.deliverTo((evs) => this.onEvents(evs));
    this.pool.streams = () => this.hub.streams();
    this.crdController = new CrdController(
      this.pool,
      this.registry,
      (objs) => this.services.readCache.load(objs),
      (typeKeys) => {
        for (const k of typeKeys) this.hub.closeType(k);
      },
    );
    this.elector = this.newElector();
    this.compression = options.featureGates['APIResponseCompression'] !== false;
    this.cbor = cborEnabled(options);
    this.inflight = new InflightLimiter(options.maxRequestsInflight, options.maxMutatingRequestsInflight);
    const readCache = new ReadCache();
    this.apf = priorityAndFairness(options, this.registry.identity, readCache, this.hub);
    readCache.servesGets = options.storageBackend !== 'etcd3';
    this.audit = FrontAudit.create(options, this.registry.identity.domain);
    this.metrics = this.frontMetrics(readCache);
    this.metrics.onResponse = requestLogger(this.log);
    this.readsRemoteAddress = this.audit !== undefined || this.log.enabled(REQUEST_LOG_LEVEL);
    this.authz = new Authorization(options, this.registry.identity, this.pool);
    this.auth = new FrontAuthentication(options, this.registry.identity, this.pool, this.authz);
    this.signerAdmission = this.newSignerAdmission(readCache);
    this.services = this.newServices(namespaces, readCache);
    this.extensions = new Extensions({
      options,
      registry: this.registry,
      services: this.services,
      pool: this.pool,
      anonymous: UNSECURED_USER,
    });
    this.feed = buildChangeFeed({
      authz: this.authz,
      auth: this.auth,
      apf: this.apf,
      readCache,
      extensions: this.extensions,
      namespaces,
      crdController: this.crdController,
      controllers: () => this.controllers,
      hub: this.hub,
    });
  }

  /** The controller-manager's leader election (on by default with etcd: several servers share it). */
  private newElector(): LeaderElector | undefined {
    const { options } = this;
    if (!(options.leaderElect ?? options.storageBackend === 'etcd3')) return undefined;
    return new LeaderElector(this.pool, this.registry.identity, leaderElection(options, this.registry.identity), {
      started: () => void this.startControllers(),
      stopped: () => this.stopControllers(),
    });
  }

  private frontMetrics(readCache: ReadCache): FrontMetrics {
    const { audit, options } = this;
    return new FrontMetrics(
      this.registry,
      {
        ...(audit ? { audit: () => audit.counts() } : {}),
        inflight: () => this.inflight.watermark(),
        storageObjects: storageObjectSources(this.registry, (typeKey) => readCache.count(typeKey)),
        featureGates: featureGateSource(options.featureGates),
      },
      options.showHiddenMetricsForVersion,
    );
  }

  /** Signer admission of CertificateSigningRequests (approve and sign need the signer's permission). */
  private newSignerAdmission(readCache: ReadCache): SignerAdmission {
    const certificates = groupFor(this.registry.identity, 'certificates.plat.io');
    return new SignerAdmission({
      authorizer: this.authz.authorizer,
      group: certificates,
      submit: (op) => this.pool.submit(op),
      stored: (name) => readCache.get(`${certificates}/certificatesigningrequests`, '', name, `${certificates}/v1`),
      maxRequestBodyBytes: this.options.maxRequestBodyBytes,
      protobufMediaType: this.registry.identity.protobufMediaType,
      cbor: this.cbor,
    });
  }

  /** What the handlers reach of the server (src/http/context.ts). */
  private newServices(namespaces: Map<string, 'Active' | 'Terminating'>, readCache: ReadCache): Services {
    const { options } = this;
    return {
      pool: this.pool,
      hub: this.hub,
      options,
      namespaces,
      protobufMediaType: this.registry.identity.protobufMediaType,
      safeRV: (typeKey) => this.pool.safeRV(shardOf(typeKey, options.shards)),
      readCache,
      customType: (group, resource) => this.registry.customType(group, resource),
      apiextensionsGroup: groupFor(this.registry.identity, 'apiextensions.plat.io'),
      authorize: (r, verb) =>
        this.authz.authorizer.authorize({ ...attributesFor(r.info, r.user ?? UNSECURED_USER, r.query), verb }),
    };
  }

  /** Every committed batch of the shards, in the feed's order (src/server/informers.ts: the hub last). */
  private onEvents(evs: ChangeEvent[]): void {
    this.feed.observe(evs);
  }

  private newControllers(): Controllers {
    return new Controllers(
      this.pool,
      this.registry,
      this.options,
      (a) => settle(this.authz.authorizer.authorize(a), (r) => r.decision === 'allow'),
      { readCache: this.services.readCache, clusterCAFile: () => this.auth.clusterCAFile },
    );
  }

  /** Elected: a fresh set of controllers loads the state of every object now and starts. */
  private async startControllers(): Promise<void> {
    this.authz.aggregation.setActive(true);
    const c = this.newControllers();
    this.controllers = c;
    const snapshot = await this.pool.snapshot();
    if (this.controllers !== c) return;
    c.load(snapshot);
    c.start();
  }

  private stopControllers(): void {
    if (this.elector) this.authz.aggregation.setActive(false);
    this.controllers?.stop();
    this.controllers = undefined;
  }

  /** Starts everything; returns the plain port bound (0 when `--port` is off). */
  async start(): Promise<number> {
    await this.auth.init();
    this.startKubeletClient();
    if (this.options.storageBackend === 'etcd3') {
      const { etcdProbe } = await import('../storage/etcd/probe.js');
      this.etcdHealth = etcdProbe(this.pool.etcdConfig);
    }
    const init = await this.pool.init();
    // every always-on member of the feed loads the shards' objects (the controllers below)
    this.feed.load(init.objects);
    // custom resources are served (and their stored objects loaded) before any request
    await this.crdController.sync();
    if (!this.elector) {
      this.controllers = this.newControllers();
      this.controllers.load(init);
    }
    await bootstrap(this);
    if (this.apf) {
      this.apfConfig = new ApfConfigController(this.pool, this.registry.identity, this.apf);
      await this.apfConfig.ensureDefaults();
    }
    this.authz.start();
    this.started = true;
    this.controllers?.start();
    if (this.elector) {
      // the aggregation pass at start ran on every replica (bootstrap); later passes on the leader
      this.authz.aggregation.setActive(false);
      this.elector.start();
    }
    await this.extensions.start();
    // the request pipeline, every step in order: src/server/handler-chain.ts
    const chain = buildHandlerChain(this);
    const plain = await listenPlain(this.options.insecureBindAddress, this.options.port, chain.plain);
    this.listenSocket = plain.socket;
    this.app = plain.app;
    this.port = plain.port;
    this.securePort = await this.auth.listen(chain.acceptSecure, chain.secure);
    this.auth.watchConfig();
    if (this.securePort !== undefined) {
      // written before the listening line: whoever waits for that line may use the file at once
      const kubeconfig = (this.kubeconfig = this.auth.writeAdminKubeconfig(this.securePort));
      process.stdout.write(`secure listening on https://${this.options.bindAddress}:${this.securePort}\n`);
      if (kubeconfig)
        process.stdout.write(`admin kubeconfig written to ${kubeconfig} (kubectl --kubeconfig ${kubeconfig} get ns)\n`);
    }
    setInterval(() => this.hub.bookmark(this.services.safeRV), this.options.bookmarkIntervalMs).unref();
    return this.port;
  }

  /** The node agents' client (connect subresources); the TLS front gets its dial material. */
  private startKubeletClient(): void {
    const o = this.options;
    const tls = loadKubeletTls(o, this.auth.kubeletClientFiles);
    const kubelet = (this.kubelet = new KubeletClient(tls, o.kubeletTimeoutMs));
    this.auth.kubeletDial = kubelet.dialMaterial;
    this.connectDeps = {
      kubelet,
      preferredAddressTypes: o.kubeletPreferredAddressTypes,
      kubeletPort: o.kubeletPort,
      maxRequestBodyBytes: o.maxRequestBodyBytes,
      getObject: (resource, ns, name) => getCoreObject(this.services, resource, ns, name),
      upgrade: (x, t) => {
        const directive = this.auth.upgradeDirective;
        if (!directive || !x.upgradable)
          return sendStatus(
            x,
            errors.badRequest(
              "streaming upgrades are served by the secure port's TLS front only (client certificates enabled)",
            ).status,
          );
        x.headers.push([UPGRADE_DIRECTIVE_HEADER, directive(t)]);
        send(x, 200, 'text/plain', '');
      },
      handsOff: (x) => this.auth.upgradeDirective !== undefined && x.upgradable === true,
      allowLoopbackProxy: o.proxyAllowLoopback === true,
      verifiesAgents: tls.ca !== undefined,
    };
  }

  /** SIGTERM: readyz fails at once, keep serving for the delay, then drain and exit. */
  async shutdown(): Promise<void> {
    this.shuttingDown = true;
    // a leader hands the Lease back, so another server's controllers take over at once
    await this.elector?.stop().catch(() => undefined);
    this.stopControllers();
    this.crdController.stop();
    this.authz.stop();
    this.extensions.stop();
    await new Promise((r) => setTimeout(r, this.options.shutdownDelayMs));
    this.log.info('Draining: listeners closed, waiting for the storage shards to finish their writes');
    if (this.listenSocket) uWS.us_listen_socket_close(this.listenSocket);
    this.listenSocket = undefined;
    this.auth.close();
    this.kubelet?.close();
    await this.pool.close();
    this.etcdHealth?.close();
    await this.audit?.close();
  }
}

export { send };
