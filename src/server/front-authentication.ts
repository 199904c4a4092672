/**
 * Front-thread wiring of authentication for the server: builds the authenticators at start,
 * opens the secure listener, and answers what authentication itself serves: the virtual
 * create-only kinds (reviews, TokenRequest) and the service account issuer discovery.
 */
import { join } from 'node:path';
import { type StatusError, toStatus } from '../api/status.js';
import { groupFor, type Identity } from '../api/identity.js';
import { configureProtobuf, contentTypeOf, encode } from '../codec/codec.js';
import { configureBodyDecoder, decodeRequestBody } from '../codec/body-decoder.js';
import type { ActorPool } from '../actors/pool.js';
import type { CachedObject, ChangeEvent } from '../actors/protocol.js';
import type { Informer } from '../actors/informer.js';
import { readBody, send, sendStatus, type Exchange } from '../http/exchange.js';
import { bodyFormat, cborEnabled, toBody } from '../http/negotiation.js';
import type { ServerOptions } from './options.js';
import type { BodyReader, Request } from '../http/context.js';
import { virtualKinds, type ReviewDeps, type VirtualKind } from '../registry/strategies/reviews.js';
import { validateFields } from '../schema/fields.js';
import { referenceGroup } from '../api/identity.js';
import { schemaIndex } from '../schema/schema.js';
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import type { FilterHandler, FilterRequest } from '../http/filter-request.js';
import type { AuthenticationDeps } from '../filters/authentication.js';
import type { AuthorizationDeps } from '../filters/authorization.js';
import type { ImpersonationDeps } from '../filters/impersonation.js';
import { readImpersonation } from '../filters/impersonation.js';
import type { Authorization } from '../auth/authz/authorization.js';
import { buildAuthentication, type AuthenticationSetup } from '../auth/setup.js';
import { defaultIssuer, ensureServiceAccountKey } from '../auth/sa-keys.js';
import {
  ensureAdminCertificate,
  ensureKubeletClientCertificate,
  ensureServingCertificate,
  type ServingFiles,
} from '../auth/pki.js';
import type { KubeletDialMaterial } from '../kubelet/client.js';
import type { UpgradeTarget } from '../kubelet/upgrade-directive.js';
import { getCore } from '../actors/get-core.js';
import { clientHost, writeAdminKubeconfig } from '../auth/admin-kubeconfig.js';
import { startSecureListener, type SecureListener } from '../auth/secure-listener.js';
import { AUTHENTICATED_GROUP, MASTERS_GROUP, type Credentials, type UserInfo } from '../api/user.js';

/** A stored core/v1 object as the reviews and the token lookups read it. */
type StoredCore = Awaited<ReturnType<ReviewDeps['getCore']>>;

/** The plain `--port` serves without authentication, as upstream's old insecure port did. */
export const UNSECURED_USER: UserInfo = Object.freeze({
  username: 'system:unsecured',
  groups: [MASTERS_GROUP, AUTHENTICATED_GROUP],
});
export const NO_CREDENTIALS: Credentials = Object.freeze({ authorization: '' });

export const OPENID_CONFIGURATION_PATH = '/.well-known/openid-configuration';
export const JWKS_PATH = '/openid/v1/jwks';

/** What the secure port's filters need (src/server/handler-chain.ts puts them in order). */
export interface FilterDeps {
  authentication: AuthenticationDeps;
  impersonation: ImpersonationDeps;
  authorization: AuthorizationDeps;
}

export class FrontAuthentication implements Informer {
  setup!: AuthenticationSetup;
  private virtual = new Map<string, VirtualKind>();
  private listener: SecureListener | undefined;
  private serving: ServingFiles | undefined;

  /** The generated cluster CA's file (undefined when the serving pair was given or the secure port is off). */
  get clusterCAFile(): string | undefined {
    return this.serving?.caFile;
  }
  private certDir = '';
  /** the default kubelet client certificate (issued from the cluster CA at first start) */
  kubeletClientFiles: { certFile: string; keyFile: string } | undefined;
  /** how the TLS front dials node agents (set by the server before listen) */
  kubeletDial: KubeletDialMaterial | undefined;

  /** The directive handing an upgrade to the TLS front; undefined without one. */
  get upgradeDirective(): ((t: UpgradeTarget) => string) | undefined {
    return this.listener?.upgradeDirective;
  }
  /** the issuer written into service account tokens (for the start summary) */
  serviceAccountIssuer: string | undefined;

  constructor(
    private readonly options: ServerOptions,
    private readonly identity: Identity,
    private readonly pool: ActorPool,
    private readonly authz: Authorization,
  ) {}

  /**
   * The service account settings in force: the flags, or with none of `--service-account-*`
   * given, a generated signing key under the cert dir and the default issuer (as single-binary
   * distributions do), so TokenRequest and bound tokens work on a fresh data directory.
   */
  serviceAccountDefaults(): { issuer: string; keyFile: string } | undefined {
    const o = this.options;
    if (o.serviceAccountIssuers.length || o.serviceAccountSigningKeyFile || o.serviceAccountKeyFiles.length)
      return undefined;
    const keyFile = ensureServiceAccountKey(join(o.certDir || join(o.dataDir, 'pki'), 'service-account.key'));
    return { issuer: defaultIssuer(this.identity.product), keyFile };
  }

  /** Reads every credential file and key; throws startup errors naming the flag/file/line. */
  async init(): Promise<void> {
    let o = this.options;
    if (o.securePort >= 0) {
      this.certDir = o.certDir || join(o.dataDir, 'pki');
      this.serving = ensureServingCertificate({ ...o, certDir: this.certDir });
      if (!o.kubeletClientCertificate) {
        const short = this.identity.systemNamespace.replace(/-system$/, '');
        this.kubeletClientFiles = ensureKubeletClientCertificate(
          this.serving,
          this.certDir,
          `${short}-apiserver-kubelet-client`,
        );
      }
    }
    const sa = this.serviceAccountDefaults();
    if (sa) o = { ...o, serviceAccountIssuers: [sa.issuer], serviceAccountSigningKeyFile: sa.keyFile };
    this.serviceAccountIssuer = o.serviceAccountIssuers[0];
    this.setup = await buildAuthentication(o, {
      clusterCAFile: this.serving?.caFile,
      domain: this.identity.domain,
      authenticationGroup: groupFor(this.identity, 'authentication.plat.io'),
      systemNamespace: this.identity.systemNamespace,
      product: this.identity.product,
      configGroup: groupFor(this.identity, 'apiserver.config.plat.io'),
      log: (m) => process.stderr.write(`${m}\n`),
      lookupObject: async (resource, ns, name) => {
        try {
          const { metadata } = await this.getCore(resource, ns, name);
          return { uid: metadata.uid, deletionTimestamp: metadata.deletionTimestamp };
        } catch (e) {
          if ((e as StatusError).status?.code === 404) return undefined;
          throw e;
        }
      },
    });
    this.virtual = virtualKinds(this.identity, {
      tokens: this.setup.tokens,
      apiAudiences: this.setup.apiAudiences,
      serviceAccounts: this.setup.serviceAccounts,
      getCore: (resource, ns, name) => this.getCore(resource, ns, name),
      now: Date.now,
    });
    for (const [k, v] of this.authz.reviewKinds(this.identity)) this.virtual.set(k, v);
    configureProtobuf(this.options.apiDomain);
    configureBodyDecoder(this.options.apiDomain);
  }

  /** Objects present at start (bootstrap token secrets). */
  load(objects: readonly CachedObject[]): void {
    this.setup.bootstrapTokens?.load(objects);
  }

  /** Every committed change (bootstrap token secrets). */
  observe(events: readonly ChangeEvent[]): void {
    this.setup.bootstrapTokens?.observe(events);
  }

  /** The secure port's filters (src/server/handler-chain.ts puts them in order); after init. */
  filterDeps(): FilterDeps {
    const o = this.options;
    return {
      authentication: {
        authenticator: this.setup.authenticator,
        anonymous: this.setup.anonymous,
        anonymousPaths: this.setup.anonymousPaths,
        maxRequestBodyBytes: o.maxRequestBodyBytes,
      },
      impersonation: {
        authorize: this.authz.impersonation,
        authenticationGroup: groupFor(this.identity, 'authentication.plat.io'),
        maxRequestBodyBytes: o.maxRequestBodyBytes,
      },
      authorization: { authorizer: this.authz.authorizer, maxRequestBodyBytes: o.maxRequestBodyBytes },
    };
  }

  /**
   * Opens `--secure-port` when enabled (returns the bound port). accept turns a uWS request into
   * a FilterRequest (synchronously: uWS headers are only valid during the handler call); chain
   * runs it through the filters and on (src/server/handler-chain.ts).
   */
  async listen(
    accept: (res: HttpResponse, req: HttpRequest) => FilterRequest,
    chain: FilterHandler,
  ): Promise<number | undefined> {
    const o = this.options;
    const serving = this.serving;
    if (o.securePort < 0 || !serving) return undefined;
    const requestHeader = o.requestheaderClientCAFile
      ? {
          clientCAFile: o.requestheaderClientCAFile,
          allowedNames: o.requestheaderAllowedNames,
          usernameHeaders: o.requestheaderUsernameHeaders,
          groupHeaders: o.requestheaderGroupHeaders,
          extraHeaderPrefixes: o.requestheaderExtraHeadersPrefix,
        }
      : undefined;
    const clientCAFiles = [
      ...(o.clientCAFile ? [{ flag: 'client-ca-file', path: o.clientCAFile }] : []),
      ...(serving.caFile ? [{ flag: 'cert-dir', path: serving.caFile }] : []),
    ];
    this.listener = await startSecureListener(
      {
        host: o.bindAddress,
        port: o.securePort,
        serving,
        clientCAFiles,
        requestHeader,
        readHeaderTimeoutMs: o.readHeaderTimeoutMs,
        inlineFront: o.tlsFrontInline === true,
        ...(this.kubeletDial ? { kubelet: this.kubeletDial } : {}),
      },
      (res, req, credentials, takenOver) => {
        const r = accept(res, req);
        r.credentials = credentials(req);
        if (r.credentials.remoteAddress) r.remoteAddress = r.credentials.remoteAddress;
        if (takenOver(req)) r.x.upgradable = true;
        r.impersonation = readImpersonation(req);
        chain(r);
      },
    );
    return this.listener.port;
  }

  /**
   * Writes `<data-dir>/admin.kubeconfig` for the bound secure port when the cluster CA is ours
   * (returns its path), with a client certificate in system:masters.
   */
  writeAdminKubeconfig(port: number): string | undefined {
    const serving = this.serving;
    if (!serving?.caFile) return undefined;
    const cert = ensureAdminCertificate(serving, this.certDir, this.identity.product);
    if (!cert) return undefined;
    const path = join(this.options.dataDir, 'admin.kubeconfig');
    writeAdminKubeconfig(path, {
      server: `https://${clientHost(this.options.bindAddress)}:${port}`,
      caFile: serving.caFile,
      ...cert,
      name: this.identity.product,
    });
    return path;
  }

  /** Starts watching `--authentication-config` (once the server serves). */
  watchConfig(): void {
    this.setup.configFile?.watch();
  }

  close(): void {
    this.setup?.webhook?.close();
    this.setup?.configFile?.stop();
    this.setup?.jwt.stop();
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
    const format = bodyFormat(r.headers.contentType, this.identity.protobufMediaType, cborEnabled(this.options));
    const sub = info.subresource ? def.subresources.find((s) => s.name === info.subresource) : undefined;
    const apiVersion = sub ? `${sub.group}/${sub.version}` : `${def.group}/${def.version}`;
    const read: BodyReader =
      r.body ?? ((done, fail) => readBody(x, this.options.maxRequestBodyBytes, r.headers.contentLength, done, fail));
    read(
      (buf) => {
        // a large body decodes off the front thread (src/server/body-decoder.ts)
        decodeRequestBody(toBody(format, buf))
          .then(async (obj) => {
            // field types are checked as for stored kinds (the reply echoes spec and must encode)
            const [group, version] = apiVersion.split('/') as [string, string];
            validateFields(
              obj,
              schemaIndex().forKind(referenceGroup(this.identity, group), version, sub ? sub.kind : def.kind),
              'Ignore',
            );
            // admission of the one virtual kind NodeRestriction checks (upstream admitServiceAccount)
            if (def.group === '' && def.resource === 'serviceaccounts' && info.subresource === 'token') {
              await this.authz.nodeRestriction?.checkTokenRequest(user, info.namespace, info.name, obj, (ns, name) =>
                this.getCore('pods', ns, name),
              );
            }
            return kind.create(obj, { user, namespace: info.namespace, name: info.name, apiVersion });
          })
          .then((obj) => send(x, 201, contentTypeOf(enc), encode(obj, enc)))
          .catch((e) => sendStatus(x, toStatus(e), enc.pretty));
      },
      (st) => sendStatus(x, st),
    );
  }

  /** A stored core/v1 object (service account, pod, secret) as JSON, or its StatusError (404 when absent). */
  private async getCore(resource: string, namespace: string, name: string): Promise<StoredCore> {
    // the store's reply for a core kind: a stored object (metadata with its name and uid always set)
    return getCore(this.pool, resource, namespace, name) as Promise<StoredCore>;
  }
}
