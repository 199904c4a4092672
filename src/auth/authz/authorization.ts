/**
 * Front-thread wiring of authorization: the RBAC index (loaded at start, fed by the change
 * events), the authorizer chain of `--authorization-mode`, the access review kinds, and the
 * escalation check of RBAC writes, which reads the body (or previews a patch with a dry run)
 * before the write goes to its actor.
 */
import { StatusError, toStatus } from '../../api/status.js';
import type { Identity } from '../../api/identity.js';
import { bodyText } from '../../actors/pack.js';
import type { CachedObject, ChangeEvent } from '../../actors/protocol.js';
import { decodeBody } from '../../codec/codec.js';
import type { BodyReader, Request } from '../../handlers/context.js';
import type { VirtualKind } from '../../registry/strategies/reviews.js';
import type { ActorPool } from '../../server/actor-pool.js';
import { readBody, sendStatus } from '../../server/http.js';
import { bodyFormat, cborEnabled, isTruthy, toBody } from '../../server/negotiation.js';
import type { Authorizer as ImpersonationAuthorizer, UserInfo } from '../types.js';
import { accessReviewKinds } from './access-reviews.js';
import { AggregationController } from './aggregation.js';
import { resourceAttributes } from './attributes.js';
import { buildChain, type AuthorizerChain } from './authorizer.js';
import { EscalationCheck } from './escalation.js';
import type { AuthorizationOptions } from './options.js';
import { RbacAuthorizer } from './rbac.js';
import { RbacIndex } from './rbac-index.js';

const JSON_ENC = { format: 'json' as const, pretty: false };

const PATCH_TYPES: Record<string, 'json' | 'merge' | 'strategic' | 'apply'> = {
  'application/json-patch+json': 'json',
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
  'application/apply-patch+yaml': 'apply',
  'application/apply-patch+json': 'apply',
};

export class Authorization {
  readonly index: RbacIndex;
  readonly rbac: RbacAuthorizer;
  /** system:masters, then the configured modes in order */
  readonly authorizer: AuthorizerChain;
  readonly escalation: EscalationCheck;
  readonly aggregation: AggregationController;
  /** the impersonation filter's authorizer: the same chain, for resource attributes */
  readonly impersonation: ImpersonationAuthorizer;
  private readonly maxBody: number;
  private readonly protobufType: string;
  private readonly cbor: boolean;

  constructor(options: AuthorizationOptions & { maxRequestBodyBytes: number; featureGates?: Record<string, boolean> }, identity: Identity, private readonly pool: Pick<ActorPool, 'submit'>) {
    this.index = new RbacIndex(identity);
    this.rbac = new RbacAuthorizer(this.index);
    this.authorizer = buildChain(options.authorizationModes, this.rbac);
    this.escalation = new EscalationCheck({ authorizer: this.authorizer, rbac: this.rbac, index: this.index });
    this.aggregation = new AggregationController(this.index, pool);
    this.impersonation = (a) => this.authorizer.authorize(resourceAttributes(a));
    this.maxBody = options.maxRequestBodyBytes;
    this.protobufType = identity.protobufMediaType;
    this.cbor = cborEnabled(options);
  }

  /** Every object the actors loaded at start; before the listeners open. */
  load(objects: readonly CachedObject[]): void {
    this.index.load(objects);
  }

  /** Every committed change (the server's onEvents). */
  observe(events: readonly ChangeEvent[]): void {
    const before = this.index.generation;
    this.index.apply(events);
    if (this.index.generation !== before) this.aggregation.changed();
  }

  reviewKinds(identity: Identity): Map<string, VirtualKind> {
    return accessReviewKinds(identity, this.authorizer);
  }

  /** Whether a resource request must pass the escalation check before its handler. */
  guards(r: Pick<Request, 'info' | 'user'>): boolean {
    return this.escalation.applies(r.info.apiGroup, r.info.resource, r.info.subresource, r.info.verb, r.user);
  }

  /**
   * Reads the body, checks the object that would be stored (a patch is previewed with a dry
   * run), then hands the request on with the same bytes; a refusal is upstream's 403.
   */
  guardWrite(r: Request, next: (r: Request) => void): void {
    const read: BodyReader = r.body ?? ((done, fail) => readBody(r.x, this.maxBody, r.headers.contentLength, done, fail));
    read((buf) => {
      Promise.resolve()
        .then(() => this.preview(r, buf))
        .then((obj) => {
          if (obj !== undefined) {
            this.escalation.check({ user: r.user as UserInfo, resource: r.info.resource, namespace: r.info.namespace, pathName: r.info.name }, obj);
          }
          next({ ...r, body: (done) => done(buf) });
        })
        .catch((e) => sendStatus(r.x, toStatus(e), r.enc.pretty));
    }, (st) => sendStatus(r.x, st));
  }

  /** The object a write would store; undefined when the handler itself refuses the body (empty, unknown patch type). */
  private async preview(r: Request, buf: Buffer): Promise<any> {
    if (buf.length === 0) return undefined;
    if (r.info.verb !== 'patch') {
      return decodeBody(toBody(bodyFormat(r.headers.contentType, this.protobufType, this.cbor), buf));
    }
    const patchType = PATCH_TYPES[(r.headers.contentType ?? '').split(';')[0]!.trim().toLowerCase()];
    if (!patchType) return undefined;
    const res = await this.pool.submit({
      op: 'patch', type: { group: r.def.group, version: r.def.version, resource: r.def.resource }, enc: JSON_ENC,
      namespace: r.info.namespace, name: r.info.name, dryRun: true, patchType, text: buf.toString('utf8'),
      force: isTruthy(r.query.get('force')), fieldManager: r.query.get('fieldManager') ?? (patchType === 'apply' ? undefined : 'escalation-check'),
    });
    if ('error' in res) throw new StatusError(res.error);
    return 'code' in res ? JSON.parse(bodyText(res.body)) : undefined;
  }
}
