/**
 * admissionregistration v1 Validating/MutatingWebhookConfigurations: the v1 defaults
 * (failurePolicy Fail, matchPolicy Equivalent, timeoutSeconds 10) and rules (sideEffects
 * None|NoneOnDryRun, admissionReviewVersions required, webhook names unique and qualified, URLs
 * https://host[/path]).
 */
import type { KubeObject } from '../../api/object.js';
import { DEFAULT_STRATEGY, type ResourceStrategy } from '../strategy.js';
import { duplicate, invalid, notSupported, required, type Cause } from './field-errors.js';
import { validateWebhookUrl } from './webhook-url.js';

const SIDE_EFFECTS = ['None', 'NoneOnDryRun'];
const REVIEW_VERSIONS = ['v1', 'v1beta1'];
const FAILURE_POLICIES = ['Fail', 'Ignore'];
const MATCH_POLICIES = ['Equivalent', 'Exact'];

/** One webhook as written: what may be there; validation decides what must. */
interface Webhook {
  name?: unknown;
  sideEffects?: unknown;
  failurePolicy?: unknown;
  matchPolicy?: unknown;
  timeoutSeconds?: unknown;
  namespaceSelector?: unknown;
  objectSelector?: unknown;
  reinvocationPolicy?: unknown;
  rules?: unknown;
  clientConfig?: { url?: unknown; service?: { port?: unknown } };
  admissionReviewVersions?: unknown;
}
/** A Validating or MutatingWebhookConfiguration as written. */
interface WebhookConfiguration extends KubeObject {
  webhooks?: unknown;
}

const webhooksOf = (obj: WebhookConfiguration): (Webhook | null | undefined)[] =>
  Array.isArray(obj.webhooks) ? obj.webhooks : [];
/** list.includes(v) for a value of any type (only a string can match) */
const oneOf = (list: readonly string[], v: unknown): boolean => typeof v === 'string' && list.includes(v);

function defaultWebhooks(obj: WebhookConfiguration, mutating: boolean): void {
  for (const h of webhooksOf(obj)) {
    if (!h || typeof h !== 'object') continue;
    h.failurePolicy ??= 'Fail';
    h.matchPolicy ??= 'Equivalent';
    h.timeoutSeconds ??= 10;
    h.namespaceSelector ??= {};
    h.objectSelector ??= {};
    if (mutating) h.reinvocationPolicy ??= 'Never';
    for (const r of Array.isArray(h.rules) ? h.rules : []) if (r && typeof r === 'object') r.scope ??= '*';
    if (h.clientConfig?.service) h.clientConfig.service.port ??= 443;
  }
}

function validateReviewVersions(versions: unknown, path: string): Cause[] {
  if (!Array.isArray(versions) || versions.length === 0)
    return [required(path, `must specify one of ${REVIEW_VERSIONS.join(', ')}`)];
  const out: Cause[] = [];
  const seen = new Set<string>();
  versions.forEach((v, i) => {
    if (seen.has(v)) out.push(invalid(`${path}[${i}]`, v, 'duplicate version'));
    seen.add(v);
  });
  if (!versions.some((v) => REVIEW_VERSIONS.includes(v)))
    out.push(invalid(path, versions, `must include at least one of ${REVIEW_VERSIONS.join(', ')}`));
  return out;
}

function validateWebhook(h: Webhook | null | undefined, path: string): Cause[] {
  const out: Cause[] = [];
  if (!h?.name) out.push(required(`${path}.name`));
  else if (String(h.name).split('.').length < 3)
    out.push(invalid(`${path}.name`, h.name, 'should be a domain with at least three segments separated by dots'));
  if (h?.sideEffects == null)
    out.push(required(`${path}.sideEffects`, `must specify one of ${SIDE_EFFECTS.join(', ')}`));
  else if (!oneOf(SIDE_EFFECTS, h.sideEffects))
    out.push(notSupported(`${path}.sideEffects`, h.sideEffects, SIDE_EFFECTS));
  if (!oneOf(FAILURE_POLICIES, h?.failurePolicy))
    out.push(notSupported(`${path}.failurePolicy`, h?.failurePolicy ?? '', FAILURE_POLICIES));
  if (!oneOf(MATCH_POLICIES, h?.matchPolicy))
    out.push(notSupported(`${path}.matchPolicy`, h?.matchPolicy ?? '', MATCH_POLICIES));
  // a relational comparison converts with ToNumber, as Number() does
  const timeout = Number(h?.timeoutSeconds);
  if (!(timeout >= 1 && timeout <= 30))
    out.push(
      invalid(`${path}.timeoutSeconds`, h?.timeoutSeconds, 'the timeout value must be between 1 and 30 seconds'),
    );
  const cc = h?.clientConfig ?? {};
  if (!!cc.url === !!cc.service)
    out.push(required(`${path}.clientConfig`, 'exactly one of url or service is required'));
  if (typeof cc.url === 'string') out.push(...validateWebhookUrl(cc.url, `${path}.clientConfig.url`));
  out.push(...validateReviewVersions(h?.admissionReviewVersions, `${path}.admissionReviewVersions`));
  return out;
}

export function validateWebhookConfiguration(obj: WebhookConfiguration): Cause[] {
  const out: Cause[] = [];
  const names = new Set<unknown>();
  webhooksOf(obj).forEach((h, i) => {
    if (h?.name && names.has(h.name)) out.push(duplicate(`webhooks[${i}].name`, h.name));
    if (h?.name) names.add(h.name);
    out.push(...validateWebhook(h, `webhooks[${i}]`));
  });
  return out;
}

function webhookConfiguration(mutating: boolean): ResourceStrategy<WebhookConfiguration> {
  const defaults = (obj: WebhookConfiguration) => defaultWebhooks(obj, mutating);
  return {
    ...DEFAULT_STRATEGY,
    prepareForCreate: defaults,
    prepareForUpdate: defaults,
    validate: validateWebhookConfiguration,
  };
}

export const validatingWebhookStrategy = webhookConfiguration(false);
export const mutatingWebhookStrategy = webhookConfiguration(true);
