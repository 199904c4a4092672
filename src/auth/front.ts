/**
 * Front-thread wiring of authentication for the server: builds the authenticators at start,
 * opens the secure listener, and answers what authentication itself serves: the virtual
 * create-only kinds (reviews, TokenRequest) and the service account issuer discovery.
 */
import { join } from 'node:path';
import { StatusError, errors, toStatus } from '../api/status.js';
import { groupFor, type Identity } from '../api/identity.js';
import { configureProtobuf, contentTypeOf, decodeBody, encode } from '../codec/codec.js';
import type { ActorPool } from '../server/actor-pool.js';
import { readBody, send, sendStatus, type Exchange } from '../server/http.js';
import { bodyFormat } from '../server/negotiation.js';
import type { ServerOptions } from '../server/options.js';
import type { BodyReader, Request } from '../handlers/context.js';
import { virtualKinds, type VirtualKind } from '../registry/strategies/reviews.js';
import { validateFields } from '../schema/fields.js';
import { referenceGroup } from '../api/identity.js';
import { schemaIndex } from '../schema/schema.js';
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import { buildChain, type FilterHandler, type FilterRequest } from '../filters/chain.js';
import { readImpersonation } from '../filters/impersonation.js';
import type { AuditDeps } from '../filters/audit.js';
import type { Authorization } from './authz/authorization.js';
import { buildAuthentication, type AuthenticationSetup } from './setup.js';
import { ensureServingCertificate } from './pki.js';
import { startSecureListener, type SecureListener } from './secure-listener.js';
import { AUTHENTICATED_GROUP, MASTERS_GROUP, type Credentials, type UserInfo } from './types.js';

/** The plain `--port` serves without authentication, as upstream's old insecure port did. */
export const UNSECURED_USER: UserInfo = Object.freeze({ username: 'system:unsecured', groups: [MASTERS_GROUP, AUTHENTICATED_GROUP] });
export const NO_CREDENTIALS: Credentials = Object.freeze({ authorization: '' });

export const OPENID_CONFIGURATION_PATH = '/.well-known/openid-configuration';
export const JWKS_PATH = '/openid/v1/jwks';

export class FrontAuthentication {
  setup!: AuthenticationSetup;
  private virtual = new Map<string, VirtualKind>();
  private listener: SecureListener | undefined;

  constructor(
    private readonly options: ServerOptions, private readonly identity: Identity, private readonly pool: ActorPool,
    private readonly authz: Authorization,
  ) {}

  /** Reads every credential file and key; throws startup errors naming the flag/file/line. */
  async init(): Promise<void> {
    this.setup = await buildAuthentication(this.options, {
      domain: this.identity.domain,
      lookupServiceAccount: async (ns, name) => {
        try { return { uid: (await this.getServiceAccount(ns, name)).metadata.uid }; } catch (e) {
          if ((e as StatusError).status?.code === 404) return undefined;
          throw e;
        }
      },
    });
    this.virtual = virtualKinds(this.identity, {
      tokens: this.setup.tokens, apiAudiences: this.setup.apiAudiences, serviceAccounts: this.setup.serviceAccounts,
      getServiceAccount: (ns, name) => this.getServiceAccount(ns, name), now: Date.now,
    });
    for (const [k, v] of this.authz.reviewKinds(this.identity)) this.virtual.set(k, v);
    configureProtobuf(this.options.apiDomain);
  }

  /**
   * Opens `--secure-port` when enabled (returns the bound port). accept turns a uWS request into
   * a FilterRequest (synchronously: uWS headers are only valid during the handler call);
   * dispatch is the handler behind the filter chain.
   */
  async listen(accept: (res: HttpResponse, req: HttpRequest) => FilterRequest, dispatch: FilterHandler, audit?: AuditDeps): Promise<number | undefined> {
    const o = this.options;
    if (o.securePort < 0) return undefined;
    const serving = ensureServingCertificate({ ...o, certDir: o.certDir || join(o.dataDir, 'pki') });
    const chain = buildChain(dispatch, {
      authentication: { authenticator: this.setup.authenticator, anonymous: this.setup.anonymous, maxRequestBodyBytes: o.maxRequestBodyBytes },
      ...(audit ? { audit } : {}),
      impersonation: { authorize: this.authz.impersonation, authenticationGroup: groupFor(this.identity, 'authentication.plat.io') },
      authorization: { authorizer: this.authz.authorizer, maxRequestBodyBytes: o.maxRequestBodyBytes },
    });
    this.listener = await startSecureListener({ host: o.bindAddress, port: o.securePort, serving, clientCAFile: o.clientCAFile },
      (res, req, credentials) => {
        const r = accept(res, req);
        r.credentials = credentials(req);
        r.impersonation = readImpersonation(req);
        chain(r);
      });
    return this.listener.port;
  }

  close(): void {
    this.listener?.close();
    this.listener = undefined;
  }

  /** The issuer discovery documents (served to anyone, as the public keys are public). */
  serveDiscovery(x: Exchange, path: string): boolean {
    const d = this.setup.discovery;
    if (!d || (path !== OPENID_CONFIGURATION_PATH && path !== JWKS_PATH)) return false;
    if (path === JWKS_PATH) send(x, 200, 'application/jwk-set+json', d.jwks);
    else send(x, 200, 'application/json', d.configuration);
    return true;
  }

  /** The virtual kind a create request targets, if any. */
  virtualKind(group: string, resource: string, subresource: string): VirtualKind | undefined {
    return this.virtual.get(subresource ? `${group}/${resource}/${subresource}` : `${group}/${resource}`);
  }

  /** decode → create (never stored) → encode, 201. */
  serveVirtual(r: Request, kind: VirtualKind, user: UserInfo): void {
    const { x, info, def, enc } = r;
    const format = bodyFormat(r.headers.contentType, this.identity.protobufMediaType);
    const sub = info.subresource ? def.subresources.find((s) => s.name === info.subresource) : undefined;
    const apiVersion = sub ? `${sub.group}/${sub.version}` : `${def.group}/${def.version}`;
    const read: BodyReader = r.body ?? ((done, fail) => readBody(x, this.options.maxRequestBodyBytes, r.headers.contentLength, done, fail));
    read((buf) => {
      Promise.resolve()
        .then(() => {
          const obj = decodeBody(format === 'protobuf' ? { text: '', bytes: new Uint8Array(buf), contentType: format } : { text: buf.toString('utf8'), contentType: format });
          // field types are checked as for stored kinds (the reply echoes spec and must encode)
          const [group, version] = apiVersion.split('/') as [string, string];
          validateFields(obj, schemaIndex().forKind(referenceGroup(this.identity, group), version, sub ? sub.kind : def.kind), 'Ignore');
          return kind.create(obj, { user, namespace: info.namespace, name: info.name, apiVersion });
        })
        .then((obj) => send(x, 201, contentTypeOf(enc), encode(obj, enc)))
        .catch((e) => sendStatus(x, toStatus(e), enc.pretty));
    }, (st) => sendStatus(x, st));
  }

  private async getServiceAccount(namespace: string, name: string): Promise<{ metadata: { uid: string } }> {
    const res = await this.pool.submit({ op: 'get', type: { group: '', version: 'v1', resource: 'serviceaccounts' }, enc: { format: 'json', pretty: false }, namespace, name });
    if ('error' in res) throw new StatusError(res.error);
    if (!('code' in res)) throw errors.internal('unexpected reply to a get');
    return JSON.parse(typeof res.body === 'string' ? res.body : Buffer.from(res.body).toString('utf8'));
  }
}
