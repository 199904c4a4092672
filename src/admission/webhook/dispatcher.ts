/**
 * MutatingAdmissionWebhook and ValidatingAdmissionWebhook (upstream plugin/pkg/admission/
 * webhook): the webhooks whose rules, selectors and matchConditions match are called with an
 * AdmissionReview (v1, or v1beta1 when that is the first version a webhook lists). Mutating
 * webhooks run in order, each seeing the previous ones' JSONPatch; an `IfNeeded` webhook is
 * called once more when a later one changed the object. Validating webhooks run in parallel.
 * A denial is the webhook's Status (`admission webhook "x" denied the request: ...`, code at
 * least 400); a failed call is `failed calling webhook "x": ...` (500) under failurePolicy
 * Fail and skipped (with a `failed-open` audit annotation) under Ignore. A dry run reaching a
 * webhook whose sideEffects are not None/NoneOnDryRun is a 400.
 */
import { randomUUID } from 'node:crypto';
import { StatusError, errors, type Status, type StatusDetails } from '../../api/status.js';
import { groupFor } from '../../api/identity.js';
import { fieldAt } from '../../api/object.js';
import { applyJsonPatch } from '../../patch/json-patch.js';
import { nameOf, type AdmissionAttributes, type AdmissionPlugin, type RequestAttributes } from '../attributes.js';
import { evaluateConditions, matchVersion, selectorsMatch, type Hook } from './matching.js';
import { Converter } from '../../registry/conversion/conversion.js';
import { typeKeyOf } from '../../actors/routing.js';
import type { HookKind, WebhookSource } from './source.js';
import { callWebhook, resolveTarget } from '../../http/webhook-client.js';

/** upstream IsExemptAdmissionConfigurationResource: never sent to webhooks (no deadlock) */
const EXEMPT = new Set([
  'mutatingwebhookconfigurations',
  'validatingwebhookconfigurations',
  'validatingadmissionpolicies',
  'validatingadmissionpolicybindings',
  'mutatingadmissionpolicies',
  'mutatingadmissionpolicybindings',
]);

/** An AdmissionReview's `response`, as the webhook wrote it: every field is checked where read. */
type AdmissionResponse = Record<string, unknown>;

abstract class WebhookPlugin implements AdmissionPlugin {
  abstract readonly name: string;
  private readonly admissionGroup: string;
  private readonly adminGroup: string;
  private readonly equivalents: Map<string, string[]> = new Map();
  private readonly converter: Converter;

  constructor(
    protected readonly source: WebhookSource,
    private readonly kind: HookKind,
  ) {
    this.admissionGroup = groupFor(source.identity, 'admission.plat.io');
    this.adminGroup = groupFor(source.identity, 'admissionregistration.plat.io');
    this.converter = new Converter(source.identity.domain);
    for (const d of source.registry.allEnabled()) {
      const k = `${d.group}/${d.resource}`;
      this.equivalents.set(k, [...(this.equivalents.get(k) ?? []), d.version]);
    }
  }

  handles(a: RequestAttributes): boolean {
    const hooks = this.source.hooks(this.kind);
    return hooks.length > 0 && !this.exempt(a) && hooks.some((h) => this.rules(h, a));
  }

  private exempt(a: RequestAttributes): boolean {
    return a.group === this.adminGroup && EXEMPT.has(a.resource);
  }

  private rules(h: Hook, a: RequestAttributes): boolean {
    return this.version(h, a) !== undefined;
  }

  private version(h: Hook, a: RequestAttributes): string | undefined {
    return matchVersion(h, a, (g, r) => this.equivalents.get(`${g}/${r}`) ?? []);
  }

  /**
   * The attributes as a webhook matched in another version (matchPolicy Equivalent) sees them:
   * the objects converted, kind and resource of that version; `back` converts a patched object
   * to the requested version again.
   */
  protected asMatched(h: Hook, a: AdmissionAttributes): { view: AdmissionAttributes; back: (o: unknown) => unknown } {
    const version = this.version(h, a) ?? a.version;
    if (version === a.version) return { view: a, back: (o) => o };
    const typeKey = typeKeyOf(a.group, a.resource);
    const gv = (v: string) => (a.group ? `${a.group}/${v}` : v);
    // an object or an array, as the JSON value arrived (the converter reads its fields)
    const convert = (o: unknown, v: string) =>
      o && typeof o === 'object' ? this.converter.convert(typeKey, o as Record<string, unknown>, gv(v)) : o;
    const to = (o: unknown) => convert(o, version);
    const def = this.source.registry.lookup(a.group, version, a.resource);
    const view = {
      ...a,
      version,
      kind: { group: a.group, version, kind: def?.kind ?? a.kind.kind },
      object: to(a.object),
      oldObject: to(a.oldObject),
    };
    return { view, back: (o) => convert(o, a.version) };
  }

  /** The webhooks to call for the object as it is now (rules, selectors, matchConditions). */
  protected matching(a: AdmissionAttributes): Hook[] {
    return this.source
      .hooks(this.kind)
      .filter((h) => this.rules(h, a) && selectorsMatch(h, a, this.namespaceLabels(a)));
  }

  private namespaceLabels(a: AdmissionAttributes): Record<string, string> | undefined {
    if (!a.namespaced || !a.namespace) return undefined;
    const json = this.source.readCache.get('/namespaces', '', a.namespace, 'v1');
    return json ? (JSON.parse(json).metadata?.labels ?? {}) : {};
  }

  /**
   * Calls one webhook; resolves with its response (undefined when skipped: a matchCondition
   * was false, or the call failed under failurePolicy Ignore). Throws the request's refusal.
   */
  protected async call(h: Hook, a: AdmissionAttributes, round: number): Promise<AdmissionResponse | undefined> {
    const spec = h.spec;
    const version =
      ((spec.admissionReviewVersions ?? []) as string[]).find((v) => v === 'v1' || v === 'v1beta1') ?? 'v1';
    const apiVersion = `${this.admissionGroup}/${version}`;
    const uid = randomUUID();
    const request = this.reviewRequest(uid, this.asMatched(h, a).view, a);
    const ignore = spec.failurePolicy === 'Ignore';
    const failedOpen = () => {
      a.annotations[
        `failed-open.${this.kind === 'mutating' ? 'mutation' : 'validating'}.webhook.admission.${this.source.identity.domain}/round_${round}_index_${h.index}`
      ] = h.name;
    };
    if (h.conditions.length) {
      const m = evaluateConditions(h, { object: request.object, oldObject: request.oldObject, request });
      if ('error' in m) {
        if (ignore) {
          failedOpen();
          return undefined;
        }
        throw errors.internal(`failed calling webhook ${JSON.stringify(h.name)}: ${m.error}`);
      }
      if (!m.matches) return undefined;
    }
    if (a.dryRun && spec.sideEffects !== 'None' && spec.sideEffects !== 'NoneOnDryRun') {
      throw errors.badRequest(`admission webhook ${JSON.stringify(h.name)} does not support dry run`);
    }
    let response: AdmissionResponse;
    try {
      const target = resolveTarget(spec.clientConfig, this.source.readCache);
      const body = await callWebhook(
        target,
        { apiVersion, kind: 'AdmissionReview', request },
        Math.min(30, Math.max(1, Number(spec.timeoutSeconds ?? 10))),
      );
      response = checkReview(body, apiVersion, version, uid);
    } catch (e) {
      if (ignore) {
        failedOpen();
        return undefined;
      }
      throw errors.internal(`failed calling webhook ${JSON.stringify(h.name)}: ${(e as Error).message}`);
    }
    for (const w of Array.isArray(response.warnings) ? response.warnings : [])
      if (typeof w === 'string' && w) a.warnings.push(w);
    const notes =
      response.auditAnnotations && typeof response.auditAnnotations === 'object' ? response.auditAnnotations : {};
    for (const [k, v] of Object.entries(notes)) if (typeof v === 'string') a.annotations[`${h.name}/${k}`] = v;
    if (response.allowed !== true) throw denied(h.name, response.status);
    return response;
  }

  /** a: as the webhook matched; requested: as requested (requestKind, requestResource). */
  private reviewRequest(uid: string, a: AdmissionAttributes, requested: AdmissionAttributes) {
    const resource = { group: a.group, version: a.version, resource: a.resource };
    const requestResource = { group: requested.group, version: requested.version, resource: requested.resource };
    const u = a.user;
    const name = a.name || nameOf(a.object);
    const userInfo = {
      username: u.username,
      ...(u.uid ? { uid: u.uid } : {}),
      groups: u.groups,
      ...(u.extra && Object.keys(u.extra).length ? { extra: u.extra } : {}),
    };
    return {
      uid,
      kind: a.kind,
      resource,
      ...(a.subresource ? { subResource: a.subresource } : {}),
      requestKind: requested.kind,
      requestResource,
      ...(a.subresource ? { requestSubResource: a.subresource } : {}),
      ...(name ? { name } : {}),
      ...(a.namespace ? { namespace: a.namespace } : {}),
      operation: a.operation,
      userInfo,
      object: a.object ?? null,
      oldObject: a.oldObject ?? null,
      dryRun: a.dryRun,
      options: { ...a.options, apiVersion: `${groupFor(this.source.identity, 'meta.plat.io')}/v1` },
    };
  }
}

/** upstream's response checks (the caller reports them as a failed call). */
function checkReview(body: unknown, apiVersion: string, version: string, uid: string): AdmissionResponse {
  const got = { apiVersion: fieldAt(body, 'apiVersion'), kind: fieldAt(body, 'kind') };
  if (got.apiVersion !== apiVersion || got.kind !== 'AdmissionReview') {
    throw new Error(
      `received invalid webhook response: expected webhook response of ${apiVersion}, Kind=AdmissionReview, got ${got.apiVersion ?? ''}, Kind=${got.kind ?? ''}`,
    );
  }
  const response = fieldAt(body, 'response');
  if (!response || typeof response !== 'object')
    throw new Error('received invalid webhook response: webhook response was absent');
  // an object (or an array, read as one without fields): the webhook's answer, checked below
  const r = response as AdmissionResponse;
  // upstream decodes into a Go struct: an absent or null `allowed` is false (denied), any other
  // non-boolean fails the decode, i.e. the call (500 under failurePolicy Fail)
  const allowed: unknown = r.allowed;
  if (allowed !== undefined && allowed !== null && typeof allowed !== 'boolean') {
    throw new Error(
      `failed to call webhook: json: cannot unmarshal ${goJsonType(allowed)} into Go struct field AdmissionResponse.response.allowed of type bool`,
    );
  }
  if (version === 'v1' && r.uid !== uid)
    throw new Error(
      `received invalid webhook response: expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(r.uid ?? '')}`,
    );
  return r;
}

/** The JSON value kind encoding/json names in an UnmarshalTypeError. */
function goJsonType(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  return typeof v === 'object' ? 'object' : typeof v;
}

/** upstream ToStatusErr: the webhook's Status, prefixed, with a code of at least 400. */
function denied(name: string, result: unknown): StatusError {
  const by = `admission webhook ${JSON.stringify(name)} denied the request`;
  // the webhook's Status as written: each field is read and converted below
  const r: Record<string, unknown> = result && typeof result === 'object' ? (result as Record<string, unknown>) : {};
  const message = r.message ? `${by}: ${r.message}` : r.reason ? `${by}: ${r.reason}` : `${by} without explanation`;
  const status: Status = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    code: Number(r.code) >= 400 ? Number(r.code) : 400,
  };
  if (r.reason) status.reason = String(r.reason);
  // passed through as the webhook wrote it (upstream copies the decoded StatusDetails)
  if (r.details && typeof r.details === 'object') status.details = r.details as StatusDetails;
  return new StatusError(status);
}

export class MutatingWebhookPlugin extends WebhookPlugin {
  readonly name = 'MutatingAdmissionWebhook';
  constructor(source: WebhookSource) {
    super(source, 'mutating');
  }

  async admit(a: AdmissionAttributes): Promise<boolean> {
    let changed = false;
    const invoked: { hook: Hook; at: number }[] = [];
    let lastChange = -1;
    for (const h of this.matching(a)) {
      if (await this.mutate(h, a, 0)) {
        changed = true;
        lastChange = invoked.length;
      }
      invoked.push({ hook: h, at: invoked.length });
    }
    // reinvocation: an IfNeeded webhook called before a later change sees the object again, once
    for (const { hook, at } of invoked) {
      if (hook.spec.reinvocationPolicy === 'IfNeeded' && at < lastChange && selectorsMatch(hook, a, undefined))
        await this.mutate(hook, a, 1);
    }
    return changed;
  }

  private async mutate(h: Hook, a: AdmissionAttributes, round: number): Promise<boolean> {
    const response = await this.call(h, a, round);
    if (!response?.patch) return false;
    if (response.patchType !== 'JSONPatch') {
      throw errors.internal(
        `failed calling webhook ${JSON.stringify(h.name)}: received invalid webhook response: ${response.patchType ? `unsupported patch type ${JSON.stringify(response.patchType)}` : 'webhook returned response.patch but not response.patchType'}`,
      );
    }
    let patch: unknown;
    try {
      patch = JSON.parse(Buffer.from(String(response.patch), 'base64').toString('utf8'));
    } catch (e) {
      throw errors.internal(`failed calling webhook ${JSON.stringify(h.name)}: ${(e as Error).message}`);
    }
    if (Array.isArray(patch) && patch.length === 0) return false;
    let next: unknown;
    const { view, back } = this.asMatched(h, a);
    try {
      next = back(applyJsonPatch(view.object, patch));
    } catch (e) {
      throw errors.internal((e as Error).message);
    }
    const changed = JSON.stringify(next) !== JSON.stringify(a.object);
    a.annotations[`mutation.webhook.admission.${this.source.identity.domain}/round_${round}_index_${h.index}`] =
      JSON.stringify({ configuration: h.configuration, webhook: h.name, mutated: changed });
    a.object = next;
    return changed;
  }
}

export class ValidatingWebhookPlugin extends WebhookPlugin {
  readonly name = 'ValidatingAdmissionWebhook';
  constructor(source: WebhookSource) {
    super(source, 'validating');
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    const results = await Promise.allSettled(this.matching(a).map((h) => this.call(h, a, 0)));
    for (const r of results) if (r.status === 'rejected') throw r.reason;
  }
}
