/**
 * The CertificateApproval and CertificateSigning admission plugins (validating, after the
 * strategy prepared the write): approving a CertificateSigningRequest (`/approval`) needs the
 * `approve` verb, and changing its certificate or conditions through `/status` the `sign` verb,
 * on the virtual resource `signers` of the certificates group named after the signer
 * (`<domain>/<path>`, or `<domain>/*` for all of a domain's signers). The signerName is the
 * stored one (spec is immutable); a status write is previewed with a dry run to see what it
 * would change. Members of system:masters skip the checks, as the authorizer chain allows them.
 */
import type { CertificateSigningRequest } from '../../api/kinds.js';
import { StatusError, errors } from '../../api/status.js';
import { bodyText } from '../../actors/pack.js';
import type { ActorPool, OpInput } from '../../actors/pool.js';
import type { Request } from '../../http/context.js';
import { patchBody, patchOf } from '../../http/patch-request.js';
import { checkBodyThen } from '../../http/exchange.js';
import { pinTo, retried } from '../../http/pin.js';
import { bodyFormat, isTruthy, toBody } from '../../http/negotiation.js';
import { MASTERS_GROUP, type UserInfo } from '../../api/user.js';
import { forbiddenError, resourceAttributes } from './attributes.js';
import type { Authorizer } from './authorizer.js';

export interface SignerAdmissionDeps {
  authorizer: Authorizer;
  /** the served certificates group (certificates.<domain>) */
  group: string;
  /** the stored object's JSON, or undefined when there is none (the handler answers 404) */
  stored(name: string): string | undefined;
  /** runs an operation on the owning actor (the dry-run preview of a status write) */
  submit: ActorPool['submit'];
  maxRequestBodyBytes: number;
  protobufMediaType: string;
  /** CBORServingAndStorage: CBOR bodies and apply patches are taken */
  cbor: boolean;
}

const JSON_ENC = { format: 'json' as const, pretty: false };

/** upstream IsAuthorizedForSignerName: the exact signer name, else `<domain>/*`. */
export async function authorizedForSigner(
  authorizer: Authorizer,
  user: UserInfo,
  verb: string,
  group: string,
  signerName: string,
): Promise<boolean> {
  const ask = async (name: string) =>
    (
      await authorizer.authorize({
        ...resourceAttributes({ user, verb, apiGroup: group, resource: 'signers', name }),
        apiVersion: '*',
      })
    ).decision === 'allow';
  return (await ask(signerName)) || ask(`${signerName.split('/')[0]}/*`);
}

export class SignerAdmission {
  constructor(private readonly deps: SignerAdmissionDeps) {}

  /** A write to certificatesigningrequests/approval or /status by someone outside system:masters. */
  applies(r: Pick<Request, 'info' | 'user'>): boolean {
    const { info, user } = r;
    return (
      info.apiGroup === this.deps.group &&
      info.resource === 'certificatesigningrequests' &&
      (info.subresource === 'approval' || info.subresource === 'status') &&
      (info.verb === 'update' || info.verb === 'patch') &&
      !!user &&
      !user.groups.includes(MASTERS_GROUP)
    );
  }

  /** Reads the body, checks, then hands the request on with the same bytes; a refusal is a 403. */
  admit(r: Request, next: (r: Request) => void): void {
    checkBodyThen(
      r,
      this.deps.maxRequestBodyBytes,
      (buf) => this.check(r, buf),
      next,
      (e) => retried(r, e),
    );
  }

  private async check(r: Request, buf: Buffer): Promise<void> {
    const json = this.deps.stored(r.info.name);
    if (json === undefined) return;
    const stored = JSON.parse(json);
    // the signer and status checked must be those of the object written (delete and re-create keep the name)
    pinTo(r, stored);
    const signer = String(stored.spec?.signerName ?? '');
    const user = r.user as UserInfo;
    if (r.info.subresource === 'approval') {
      if (!(await authorizedForSigner(this.deps.authorizer, user, 'approve', this.deps.group, signer)))
        throw this.refuse(r, `user not permitted to approve requests with signerName ${JSON.stringify(signer)}`);
      return;
    }
    const next = await this.preview(r, buf);
    if (next === undefined) return;
    pinTo(r, next);
    const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
    if (
      same(next.status?.certificate, stored.status?.certificate) &&
      same(next.status?.conditions, stored.status?.conditions)
    )
      return;
    if (!(await authorizedForSigner(this.deps.authorizer, user, 'sign', this.deps.group, signer)))
      throw this.refuse(r, `user not permitted to sign requests with signerName ${JSON.stringify(signer)}`);
  }

  private refuse(r: Request, why: string): StatusError {
    return forbiddenError('certificatesigningrequests', this.deps.group, r.info.name, why);
  }

  /**
   * The object the status write would store (a dry run), whatever the body's encoding or patch
   * type; undefined only for an empty body (the handler answers 400). Fails closed: the dry
   * run's refusal is the request's, and a dry run without an object is a 500.
   */
  /** the CSR the write would store (a dry run through the store), undefined for an empty body */
  private async preview(r: Request, buf: Buffer): Promise<CertificateSigningRequest | undefined> {
    if (buf.length === 0) return undefined;
    const type = { group: r.def.group, version: r.def.version, resource: r.def.resource, subresource: 'status' };
    const base = { type, enc: JSON_ENC, namespace: '', name: r.info.name, dryRun: true };
    let op: OpInput;
    if (r.info.verb === 'patch') {
      const { patchType, text } = patchOf(r, patchBody(r, buf), this.deps.cbor);
      op = {
        ...base,
        op: 'patch',
        patchType,
        text,
        force: isTruthy(r.query.get('force')),
        fieldManager: r.query.get('fieldManager') ?? (patchType === 'apply' ? undefined : 'signer-admission'),
      };
    } else {
      op = {
        ...base,
        op: 'update',
        body: toBody(bodyFormat(r.headers.contentType, this.deps.protobufMediaType, this.deps.cbor), buf),
      };
    }
    const res = await this.deps.submit(op);
    if ('error' in res) throw new StatusError(res.error);
    if (!('code' in res)) throw errors.internal('the status write could not be previewed for the signer check');
    return JSON.parse(bodyText(res.body));
  }
}
