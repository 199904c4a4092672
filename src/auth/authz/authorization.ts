/**
 * Front-thread wiring of authorization: the RBAC index (loaded at start, fed by the change
 * events), the authorizer chain of `--authorization-mode`, the access review kinds, and the
 * escalation check of RBAC writes, which reads the body (or previews a patch with a dry run)
 * before the write goes to its actor.
 */
import { StatusError, errors } from '../../api/status.js';
import { groupFor, type Identity } from '../../api/identity.js';
import { bodyText } from '../../actors/pack.js';
import type { CachedObject, ChangeEvent } from '../../actors/protocol.js';
import type { Informer } from '../../actors/informer.js';
import type { Request } from '../../http/context.js';
import type { VirtualKind } from '../../registry/strategies/reviews.js';
import type { ActorPool } from '../../actors/pool.js';
import { checkBodyThen } from '../../http/exchange.js';
import { pinTo, retried } from '../../http/pin.js';
import { bodyFormat, cborEnabled, isTruthy, toBody } from '../../http/negotiation.js';
import { decodeRequestBody } from '../../codec/body-decoder.js';
import { patchBody, patchOf } from '../../http/patch-request.js';
import type { Authorizer as ImpersonationAuthorizer, UserInfo } from '../../api/user.js';
import { accessReviewKinds } from './access-reviews.js';
import { AggregationController } from './aggregation.js';
import { resourceAttributes } from './attributes.js';
import { AbacAuthorizer } from './abac.js';
import {
  AuthorizerChain,
  alwaysAllow,
  alwaysDeny,
  buildChain,
  chainOf,
  type Authorizer,
  type Mode,
} from './authorizer.js';
import { ConfigReloader, loadAuthorizationConfig, type ConfigDeps } from './config.js';
import { EscalationCheck } from './escalation.js';
import type { AuthorizationOptions } from './options.js';
import { RbacAuthorizer } from './rbac.js';
import { RbacIndex } from './rbac-index.js';
import { NodeGraph } from './node-graph.js';
import { NodeAuthorizer } from './node.js';
import { NodeRestriction } from './node-restriction.js';
import { loadKubeconfig } from './kubeconfig.js';
import { WebhookAuthorizer } from './webhook.js';

/** upstream: the flag-configured webhook waits 30 s and has no opinion when it fails */
const LEGACY_WEBHOOK_TIMEOUT_MS = 30_000;
/** longer than any webhook timeout (30 s at most): in-flight calls of a replaced webhook finish first */
const WEBHOOK_DRAIN_MS = 60_000;
const JSON_ENC = { format: 'json' as const, pretty: false };

export class Authorization implements Informer {
  readonly index: RbacIndex;
  readonly rbac: RbacAuthorizer;
  /** pods bound to each node and what they reference (fed whether or not Node is in the chain: a reload may add it) */
  readonly graph = new NodeGraph();
  readonly node: NodeAuthorizer;
  /** the NodeRestriction admission plugin, when enabled */
  readonly nodeRestriction: NodeRestriction | undefined;
  /** system:masters, then the configured modes in order */
  readonly authorizer: AuthorizerChain;
  readonly escalation: EscalationCheck;
  readonly aggregation: AggregationController;
  /** the impersonation filter's authorizer: the same chain, for resource attributes */
  readonly impersonation: ImpersonationAuthorizer;
  private readonly reloader: ConfigReloader | undefined;
  private readonly maxBody: number;
  private readonly protobufType: string;
  private readonly cbor: boolean;

  constructor(
    options: AuthorizationOptions & {
      maxRequestBodyBytes: number;
      featureGates?: Record<string, boolean>;
      admissionPlugins?: Set<string>;
    },
    identity: Identity,
    private readonly pool: Pick<ActorPool, 'submit'>,
  ) {
    this.index = new RbacIndex(identity);
    this.rbac = new RbacAuthorizer(this.index);
    this.nodeRestriction = options.admissionPlugins?.has('NodeRestriction')
      ? new NodeRestriction(this.graph, identity)
      : undefined;
    this.node = new NodeAuthorizer(
      this.graph,
      identity,
      options.featureGates?.['AuthorizeNodeWithSelectors'] !== false,
    );
    if (options.authorizationConfigFile) {
      const deps: ConfigDeps = {
        configGroups: [...new Set(['apiserver.config.plat.io', groupFor(identity, 'apiserver.config.plat.io')])],
        reviewGroup: groupFor(identity, 'authorization.plat.io'),
        builtIn: { RBAC: this.rbac, Node: this.node, AlwaysAllow: alwaysAllow, AlwaysDeny: alwaysDeny },
      };
      const loaded = loadAuthorizationConfig(options.authorizationConfigFile, deps);
      this.authorizer = new AuthorizerChain(chainOf(loaded.authorizers));
      this.reloader = new ConfigReloader(
        options.authorizationConfigFile,
        loaded.hash,
        deps,
        (list) => this.replace(list),
        (m) => process.stderr.write(`warning: ${m}\n`),
      );
    } else {
      this.authorizer = buildChain(options.authorizationModes, this.modeAuthorizers(options, identity));
    }
    this.escalation = new EscalationCheck({ authorizer: this.authorizer, rbac: this.rbac, index: this.index });
    this.aggregation = new AggregationController(this.index, pool);
    this.impersonation = (a) => this.authorizer.authorize(resourceAttributes(a));
    this.maxBody = options.maxRequestBodyBytes;
    this.protobufType = identity.protobufMediaType;
    this.cbor = cborEnabled(options);
  }

  /** Starts watching --authorization-config (when given); the listeners may open after this. */
  start(): void {
    this.reloader?.start();
  }

  stop(): void {
    this.reloader?.stop();
  }

  /** A reloaded configuration: new authorizers for every later request; old webhook clients close once idle. */
  private replace(list: Authorizer[]): void {
    const old = this.authorizer.authorizers;
    this.authorizer.authorizers = chainOf(list);
    process.stdout.write(`authorization config reloaded: ${list.map((z) => z.name).join(', ')}\n`);
    const retired = old.filter((z): z is WebhookAuthorizer => z instanceof WebhookAuthorizer && !list.includes(z));
    if (retired.length) setTimeout(() => retired.forEach((z) => z.close()), WEBHOOK_DRAIN_MS).unref();
  }

  /** The configurable modes named in --authorization-mode, built from their flags (a bad file throws). */
  private modeAuthorizers(o: AuthorizationOptions, identity: Identity): Partial<Record<Mode, Authorizer>> {
    const out: Partial<Record<Mode, Authorizer>> = { RBAC: this.rbac, Node: this.node };
    if (o.authorizationModes.includes('ABAC')) {
      out.ABAC = AbacAuthorizer.fromFile(o.authorizationPolicyFile, [
        ...new Set(['abac.authorization.plat.io', groupFor(identity, 'abac.authorization.plat.io')]),
      ]);
    }
    if (o.authorizationModes.includes('Webhook')) {
      out.Webhook = new WebhookAuthorizer({
        name: 'webhook',
        client: loadKubeconfig(o.authorizationWebhookConfigFile),
        reviewGroup: groupFor(identity, 'authorization.plat.io'),
        subjectAccessReviewVersion: o.authorizationWebhookVersion,
        authorizedTtlMs: o.authorizationWebhookCacheAuthorizedTtlMs,
        unauthorizedTtlMs: o.authorizationWebhookCacheUnauthorizedTtlMs,
        timeoutMs: LEGACY_WEBHOOK_TIMEOUT_MS,
        failurePolicy: 'NoOpinion',
      });
    }
    return out;
  }

  /** Every object the actors loaded at start; before the listeners open. */
  load(objects: readonly CachedObject[]): void {
    this.index.load(objects);
    this.graph.load(objects);
  }

  /** Every committed change (the server's onEvents). */
  observe(events: readonly ChangeEvent[]): void {
    const before = this.index.generation;
    this.index.apply(events);
    this.graph.apply(events);
    if (this.index.generation !== before) this.aggregation.changed();
  }

  reviewKinds(identity: Identity): Map<string, VirtualKind> {
    return accessReviewKinds(identity, this.authorizer);
  }

  /** Whether a resource request must pass the escalation check before its handler. */
  guards(r: Pick<Request, 'info' | 'user'>): boolean {
    return (
      this.escalation.applies(r.info.apiGroup, r.info.resource, r.info.subresource, r.info.verb, r.user) ||
      this.restricts(r)
    );
  }

  /** Whether NodeRestriction checks the request. */
  private restricts(r: Pick<Request, 'info' | 'user'>): boolean {
    return (
      !!this.nodeRestriction &&
      !!r.user &&
      this.nodeRestriction.applies({
        user: r.user as UserInfo,
        verb: r.info.verb,
        apiGroup: r.info.apiGroup,
        resource: r.info.resource,
        subresource: r.info.subresource,
      })
    );
  }

  /**
   * Reads the body, checks the object that would be stored (a patch is previewed with a dry
   * run) against NodeRestriction and the escalation rules, then hands the request on with the
   * same bytes; a refusal is upstream's 403.
   */
  guardWrite(r: Request, next: (r: Request) => void): void {
    checkBodyThen(
      r,
      this.maxBody,
      (buf) => this.check(r, buf),
      next,
      (e) => retried(r, e),
    );
  }

  private async check(r: Request, buf: Buffer): Promise<void> {
    const user = r.user as UserInfo,
      i = r.info;
    if (this.restricts(r)) {
      const w = {
        user,
        verb: i.verb,
        apiGroup: i.apiGroup,
        resource: i.resource,
        subresource: i.subresource,
        namespace: i.namespace,
        name: i.name,
      };
      const full = this.nodeRestriction!.needsObjects(w);
      const obj = (i.verb === 'create' && !i.subresource) || full ? await this.preview(r, buf) : undefined;
      const old = full && obj !== undefined ? await this.stored(r) : undefined;
      if (full) pinOld(r, obj, old);
      if (obj !== undefined || i.verb !== 'create' || i.subresource) this.nodeRestriction!.check(w, obj, old);
    }
    if (!this.escalation.applies(i.apiGroup, i.resource, i.subresource, i.verb, user)) return;
    const obj = await this.preview(r, buf);
    if (obj === undefined) return;
    const old = i.verb === 'create' ? undefined : await this.stored(r);
    pinOld(r, obj, old);
    await this.escalation.check({ user, resource: i.resource, namespace: i.namespace, pathName: i.name }, obj, old);
  }

  /** The stored object a request names, or undefined when there is none (the handler answers). */
  private async stored(r: Request): Promise<unknown> {
    const res = await this.pool.submit({
      op: 'get',
      type: { group: r.def.group, version: r.def.version, resource: r.def.resource },
      enc: JSON_ENC,
      namespace: r.info.namespace,
      name: r.info.name,
    });
    return 'error' in res || !('code' in res) ? undefined : JSON.parse(bodyText(res.body));
  }

  /**
   * The object a write would store, whatever the body's encoding or patch type; undefined only
   * for an empty body (the handler answers 400). Fails closed: a body or patch the handler
   * would not take is its refusal (400, 415), and a preview without an object is a 500.
   */
  private async preview(r: Request, buf: Buffer): Promise<unknown> {
    if (buf.length === 0) return undefined;
    if (r.info.verb !== 'patch') {
      return decodeRequestBody(
        toBody(bodyFormat(r.headers.contentType, r.def.custom ? undefined : this.protobufType, this.cbor), buf),
      );
    }
    const { patchType, text } = patchOf(r, patchBody(r, buf), this.cbor);
    const res = await this.pool.submit({
      op: 'patch',
      type: { group: r.def.group, version: r.def.version, resource: r.def.resource },
      enc: JSON_ENC,
      namespace: r.info.namespace,
      name: r.info.name,
      dryRun: true,
      patchType,
      text,
      force: isTruthy(r.query.get('force')),
      fieldManager: r.query.get('fieldManager') ?? (patchType === 'apply' ? undefined : 'escalation-check'),
    });
    if ('error' in res) throw new StatusError(res.error);
    if (!('code' in res)) throw errors.internal('the write could not be previewed for its authorization checks');
    return JSON.parse(bodyText(res.body));
  }
}

/**
 * Pins the write to what the check saw: the stored object, and for a patch also its preview
 * (a dry run at some version, which must be the same one); an update stores its own body.
 */
function pinOld(r: Request, obj: unknown, old: unknown): void {
  if (r.info.verb === 'patch' && obj !== undefined) pinTo(r, obj);
  pinTo(r, old);
}
