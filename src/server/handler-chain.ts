/**
 * The request pipeline of the front thread, built once at start by buildHandlerChain and listed
 * there step by step in request order. Each step either enriches the request (user, RequestInfo,
 * encoding, a seat) and calls the next one, or answers it; only the last one (the verb handler)
 * talks to storage. The listeners (src/server/listener.ts, src/auth/secure-listener.ts) turn a
 * uWS request into a FilterRequest and call the chain's entry for their port.
 */
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import { StatusError, errors, toStatus } from '../api/status.js';
import type { Encoding } from '../actors/protocol.js';
import type { CrdController } from '../controllers/crd-controller.js';
import { withAudit } from '../filters/audit.js';
import { withAuthentication } from '../filters/authentication.js';
import { withAuthorization } from '../filters/authorization.js';
import { withImpersonation } from '../filters/impersonation.js';
import type { InflightLimiter } from '../filters/inflight.js';
import { gate } from '../flowcontrol/gate.js';
import type { PriorityAndFairness } from '../flowcontrol/priority-fairness.js';
import { handleNonResource, type NonResourceHost } from '../handlers/non-resource.js';
import { handleResource } from '../handlers/resource.js';
import { isConnect, serveConnect, type ConnectDeps } from '../handlers/connect.js';
import type { Request, Services } from '../http/context.js';
import { sendStatus, type Exchange } from '../http/exchange.js';
import type { FilterHandler, FilterRequest } from '../http/filter-request.js';
import { negotiateResource, prettyRequested } from '../http/negotiation.js';
import { withPin } from '../http/pin.js';
import { parseRequestInfo, type RequestInfo } from '../http/request-info.js';
import type { ResourceDef } from '../registry/types.js';
import type { Authorization } from '../auth/authz/authorization.js';
import type { SignerAdmission } from '../auth/authz/signer-admission.js';
import type { Registry } from '../registry/registry.js';
import type { Extensions } from './extensions.js';
import type { FrontAudit } from './front-audit.js';
import { UNSECURED_USER, type FrontAuthentication } from './front-authentication.js';
import type { FrontMetrics } from './front-metrics.js';
import { acceptRequest, leaveHandler } from './listener.js';
import type { ServerOptions } from './options.js';

/** What the pipeline reads of the server (src/server/server.ts's ApiServer is one). */
export interface HandlerChainHost extends NonResourceHost {
  readonly options: ServerOptions;
  readonly registry: Registry;
  readonly services: Services;
  readonly metrics: FrontMetrics;
  readonly audit: FrontAudit | undefined;
  readonly auth: FrontAuthentication;
  readonly authz: Authorization;
  readonly signerAdmission: SignerAdmission;
  readonly extensions: Extensions;
  readonly inflight: InflightLimiter;
  readonly apf: PriorityAndFairness | undefined;
  readonly crdController: CrdController;
  readonly compression: boolean;
  readonly cbor: boolean;
  /** read the client's address of every request (auditing, the request log) */
  readonly readsRemoteAddress: boolean;
  /** the node agents' client deps (connect subresources); set once the kubelet client starts */
  readonly connectDeps: ConnectDeps | undefined;
}

/** The entries of the two listeners. */
export interface HandlerChain {
  /** the plain `--port`: no authentication, every request is system:unsecured */
  plain(res: HttpResponse, req: HttpRequest): void;
  /** the secure port reads a request (accept + audit before authentication)... */
  acceptSecure(res: HttpResponse, req: HttpRequest): FilterRequest;
  /** ...and, with its credentials and Impersonate-* headers read, runs it through the filters */
  secure: FilterHandler;
}

/** A step after request info: the request, its RequestInfo and whether the reply is pretty-printed. */
type Step = (r: FilterRequest, info: RequestInfo, pretty: boolean) => void;

/**
 * The pipeline, in request order (upstream's DefaultBuildHandlerChain, as this server runs it):
 *
 *  1. accept       read the uWS request, start its metrics (observed when the response ends)
 *  2. audit        plain port: begin the record; secure port: RequestReceived before authentication
 *  3. authentication (secure port)  user / not mine / error: 401 or anonymous
 *  4. audit        (secure port) the policy level for the authenticated user
 *  5. impersonation (secure port)   Impersonate-* replace the user, each one authorized
 *  6. authorization (secure port)   403 unless allowed; parses RequestInfo once
 *  7. panic recovery + request info  any throw below (up to the seat) becomes a Status
 *  8. priority and fairness        classify, queue, seat or 429 (without APF: in-flight at 10)
 *  9. routing      aggregated APIs (proxy), non-resource paths, else the resource's definition
 * 10. resource     metrics labels, deprecation, scope and verb, negotiation, in-flight
 * 11. connect / virtual kinds      exec/attach/portforward/proxy, reviews and TokenRequest
 * 12. admission    mutating and validating plugins and webhooks, on a preview pinned to the write
 * 13. write checks signer admission, RBAC escalation, NodeRestriction
 * 14. handler      one actor operation per verb (src/handlers/resource.ts)
 */
export function buildHandlerChain(host: HandlerChainHost): HandlerChain {
  const handler = (req: Request) => handleResource(req, host.services); // 14
  const checked = withWriteChecks(handler, host); // 13
  const admitted = withAdmission(checked, host); // 12
  const resource = resourceStep(admitted, host); // 10, 11
  const routed = withRouting(resource, host); // 9
  const fair = withPriorityAndFairness(routed, host); // 8
  const dispatch = withRequestInfo(fair, host); // 7
  const accept = (res: HttpResponse, req: HttpRequest) =>
    acceptRequest(res, req, host.metrics, host.readsRemoteAddress); // 1
  const { audit } = host;
  const filters = host.auth.filterDeps();
  let secure: FilterHandler = withAuthorization(dispatch, filters.authorization); // 6
  secure = withImpersonation(secure, filters.impersonation); // 5
  if (audit) secure = withAudit(secure, audit); // 4
  secure = withAuthentication(secure, filters.authentication); // 3
  const inner = secure;
  return {
    plain: (res, req) => {
      const r = accept(res, req);
      try {
        audit?.begin(r); // 2
        dispatch(r);
      } finally {
        leaveHandler(r.x);
      }
    },
    acceptSecure: audit
      ? (res, req) => {
          const r = accept(res, req);
          audit.beforeAuthentication(r); // 2
          return r;
        }
      : accept,
    secure: (r) => {
      try {
        inner(r);
      } finally {
        leaveHandler(r.x);
      }
    },
  };
}

/** 7: the issuer discovery documents, then RequestInfo; a throw before a seat is taken is a Status. */
function withRequestInfo(next: Step, host: HandlerChainHost): FilterHandler {
  return (r) => {
    const { x, method, path, query } = r;
    const pretty = prettyRequested(query, r.headers.userAgent);
    try {
      if (host.auth.serveDiscovery(x, path)) return;
      next(r, r.info ?? parseRequestInfo(method, path, query), pretty);
    } catch (e) {
      sendStatus(x, toStatus(e), pretty);
    }
  };
}

/** 8: API Priority and Fairness decides when the request runs (or refuses it); unclassified requests run at once. */
function withPriorityAndFairness(next: Step, host: HandlerChainHost): Step {
  const { apf } = host;
  if (!apf) return next;
  const maxBody = host.options.maxRequestBodyBytes;
  return (r, info, pretty) => {
    if (!gate(apf, r, r.user ?? UNSECURED_USER, info, pretty, maxBody, next)) next(r, info, pretty);
  };
}

/** A resource request's step once its definition is known; returns the encoding it negotiated (for errors). */
type ResourceStep = (
  r: FilterRequest,
  info: RequestInfo,
  def: ResourceDef,
  pretty: boolean,
  negotiated: (enc: Encoding) => void,
) => void;

/**
 * 9: aggregated APIs go to their server, non-resource paths to their table; anything else must
 * name a served resource. A throw here or below (synchronously) is a Status in the request's
 * encoding once negotiated; an unexpected one is recorded as a panic in the audit log.
 */
function withRouting(next: ResourceStep, host: HandlerChainHost): Step {
  return (r, info, pretty) => {
    const { x, query, headers, method, path } = r;
    let enc: Encoding | undefined;
    try {
      const remote = host.extensions.aggregator.claims(path);
      if (remote) {
        host.metrics.nonResource(x, method, path, false);
        if (!host.apf) x.release = host.inflight.admit(info.verb);
        return host.extensions.aggregator.proxy(r, remote);
      }
      if (!info.isResourceRequest) {
        host.metrics.nonResource(x, method, path, false);
        return handleNonResource(host, x, method, path, query, headers, info);
      }
      const def = host.registry.lookup(info.apiGroup, info.apiVersion, info.resource);
      if (!def || (info.apiPrefix === 'api') !== (info.apiGroup === ''))
        throw errors.notFoundMessage('the server could not find the requested resource');
      next(r, info, def, pretty, (e) => {
        enc = e;
      });
    } catch (e) {
      if (!(e instanceof StatusError)) x.audit?.panicked(String((e as Error)?.message ?? e));
      sendStatus(x, toStatus(e), pretty, enc);
    }
  };
}

/**
 * 10, 11: labels the request's metrics, warns of a deprecated version, checks scope and verb,
 * negotiates the encoding, takes an in-flight seat (without APF); then connect subresources and
 * virtual kinds are answered here, and every other request goes on to admission.
 */
function resourceStep(next: (req: Request) => void, host: HandlerChainHost): ResourceStep {
  return (r, info, def, pretty, negotiated) => {
    const { x, query, headers } = r;
    host.metrics.resource(x, info, def, query, headers.contentType);
    if (def.deprecation) deprecatedRequest(host, x, def, info.subresource);
    checkScope(def.namespaced, info, def.subresources);
    checkVerb(def, info);
    if (def.custom && info.verb === 'create' && host.crdController.terminating(def.group, def.resource)) {
      // upstream crdHandler: a terminating CRD's resources take no new objects
      throw errors.methodNotAllowed(`create is not supported on resources of kind "${def.resource}.${def.group}"`);
    }
    const enc = negotiateResource(
      host.registry.identity,
      host.cbor,
      headers.accept,
      pretty,
      query,
      info.verb,
      def.custom === true,
    );
    if (host.compression && /\bgzip\b/.test(headers.acceptEncoding ?? '')) enc.gzip = true;
    negotiated(enc);
    if (!host.apf) x.release = host.inflight.admit(info.verb);
    const req = { x, info, query, headers, def, enc, user: r.user, body: r.body };
    if (host.connectDeps && isConnect(req)) return serveConnect(req, host.connectDeps);
    const virtual =
      info.verb === 'create' ? host.auth.virtualKind(def.group, def.resource, info.subresource) : undefined;
    if (virtual) return host.auth.serveVirtual(req, virtual, r.user ?? UNSECURED_USER);
    next(req);
  };
}

/**
 * 12: admission (plugins and webhooks) and the write checks look at a preview of the write: the
 * write is pinned to it, and a moved object starts the attempt over (src/http/pin.ts).
 */
function withAdmission(next: (req: Request) => void, host: HandlerChainHost): (req: Request) => void {
  const { admission } = host.extensions;
  const checksWrite = (req: Request) => host.signerAdmission.applies(req) || host.authz.guards(req);
  const attempt = (req: Request) => (admission.applies(req) ? admission.admit(req, next) : next(req));
  return (req) => {
    if (!admission.applies(req) && !checksWrite(req)) return next(req);
    withPin(req, host.options.maxRequestBodyBytes, attempt);
  };
}

/** 13: the checks that preview the final object (signer, escalation, NodeRestriction), then the handler. */
function withWriteChecks(next: (req: Request) => void, host: HandlerChainHost): (req: Request) => void {
  const { signerAdmission, authz, options } = host;
  return (req) => {
    const plugin = req.info.subresource === 'approval' ? 'CertificateApproval' : 'CertificateSigning';
    if (signerAdmission.applies(req) && options.admissionPlugins.has(plugin)) return signerAdmission.admit(req, next);
    if (authz.guards(req)) return authz.guardWrite(req, next);
    next(req);
  };
}

/** A request to a deprecated version: the Warning header and apiserver_requested_deprecated_apis (upstream). */
function deprecatedRequest(host: HandlerChainHost, x: Exchange, def: ResourceDef, subresource: string): void {
  const d = def.deprecation!;
  x.headers.push(['Warning', `299 - "${d.warning}"`]);
  host.metrics.metrics.deprecated.requested(def, subresource, d.removedRelease);
  x.audit?.deprecated(d.removedRelease);
}

/** Hot path (every resource request): comparisons only, nothing allocated unless it throws. */
function checkScope(namespaced: boolean, info: RequestInfo, subresources: readonly { name: string }[]): void {
  const sub = info.subresource;
  if (
    (!namespaced && info.namespace) ||
    (namespaced && !info.namespace && (info.name || (info.verb !== 'list' && info.verb !== 'watch'))) ||
    (sub && !subresources.some((s) => s.name === sub)) ||
    // only a proxy subresource takes a path after it (pods/P/proxy/some/path)
    (info.parts.length > 3 && sub !== 'proxy')
  )
    throw errors.notFoundMessage('the server could not find the requested resource');
}

function checkVerb(
  def: { verbs: string[]; subresources: { name: string; verbs: string[] }[] },
  info: RequestInfo,
): void {
  const verbs = info.subresource ? def.subresources.find((s) => s.name === info.subresource)!.verbs : def.verbs;
  const v = info.verb === 'watch' && info.name ? 'watch' : info.verb;
  if (!verbs.includes(v as never)) {
    throw errors.methodNotAllowed(`the server does not allow this method on the requested resource`);
  }
}
