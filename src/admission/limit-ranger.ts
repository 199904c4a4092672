/**
 * The LimitRanger admission plugin (upstream plugin/pkg/admission/limitranger), from the
 * LimitRanges of the request's namespace:
 * - mutating, pod creates: containers and init containers missing a request or limit get the
 *   `Container` limit's `defaultRequest` / `default`, recorded in the
 *   `<product>.io/limit-ranger` annotation;
 * - validating, pod creates and PersistentVolumeClaim creates and updates: `min`, `max` and
 *   `maxLimitRequestRatio` per Container, `min`/`max` per Pod (sums over the containers) and per
 *   PersistentVolumeClaim (storage request), refused with upstream's messages (403).
 * Quantities are compared as numbers and printed as written.
 */
import { errors } from '../api/status.js';
import { fieldAt, isObjectBody, isRecord } from '../api/object.js';
import type { Identity } from '../api/identity.js';
import { quantityValue } from '../registry/strategies/quantity.js';
import type { AdmissionAttributes, AdmissionPlugin, RequestAttributes } from './attributes.js';

type Resources = Record<string, string>;
/** One entry of a LimitRange's spec.limits (core/v1 LimitRangeItem), as stored. */
interface LimitRangeItem {
  type?: string;
  default?: Resources;
  defaultRequest?: Resources;
  min?: Resources;
  max?: Resources;
  maxLimitRequestRatio?: Resources;
}
/** A container's requests and limits as written. */
type ContainerResources = Partial<Record<'requests' | 'limits', Record<string, unknown>>>;

export interface LimitRangerDeps {
  /** the LimitRanges' JSON in a namespace */
  limitRanges(namespace: string): Iterable<string>;
  /** how many LimitRanges exist at all (none: the plugin never handles a request) */
  count(): number;
  identity: Identity;
}

export class LimitRangerPlugin implements AdmissionPlugin {
  readonly name = 'LimitRanger';
  private readonly annotation: string;

  constructor(private readonly deps: LimitRangerDeps) {
    this.annotation = `${deps.identity.product}.io/limit-ranger`;
  }

  handles(a: RequestAttributes): boolean {
    if (a.group !== '' || a.subresource || this.deps.count() === 0) return false;
    return (
      (a.resource === 'pods' && a.operation === 'CREATE') ||
      (a.resource === 'persistentvolumeclaims' && (a.operation === 'CREATE' || a.operation === 'UPDATE'))
    );
  }

  private limits(a: AdmissionAttributes, type: string): LimitRangeItem[] {
    const out: LimitRangeItem[] = [];
    for (const json of this.deps.limitRanges(a.namespace))
      for (const l of JSON.parse(json).spec?.limits ?? []) if (l?.type === type) out.push(l);
    return out;
  }

  admit(a: AdmissionAttributes): boolean {
    // the dry-run result of the create: a validated pod
    const pod = a.object;
    if (a.resource !== 'pods' || !isObjectBody(pod) || !pod.spec) return false;
    const notes: string[] = [];
    for (const l of this.limits(a, 'Container')) {
      for (const [field, list] of [
        ['init container', fieldAt(pod.spec, 'initContainers')],
        ['container', fieldAt(pod.spec, 'containers')],
      ] as const) {
        for (const c of Array.isArray(list) ? list : []) {
          if (!c || typeof c !== 'object') continue;
          c.resources ??= {};
          const setReq = fill(c.resources, 'requests', l.defaultRequest ?? l.default);
          const setLim = fill(c.resources, 'limits', l.default);
          if (setReq.length) notes.push(`${setReq.sort().join(', ')} request for ${field} ${c.name}`);
          if (setLim.length) notes.push(`${setLim.sort().join(', ')} limit for ${field} ${c.name}`);
        }
      }
    }
    if (!notes.length) return false;
    pod.metadata.annotations = {
      ...pod.metadata.annotations,
      [this.annotation]: `LimitRanger plugin set: ${notes.join('; ')}`,
    };
    return true;
  }

  validate(a: AdmissionAttributes): void {
    const errs: string[] = [];
    // the dry-run result of the write: a validated pod or claim
    const obj = a.object;
    if (!isObjectBody(obj)) return;
    if (a.resource === 'pods') {
      const listed = fieldAt(obj, 'spec', 'containers');
      const containers: ({ resources?: ContainerResources } | null)[] = Array.isArray(listed) ? [...listed] : [];
      for (const l of this.limits(a, 'Container')) {
        for (const c of containers)
          check(errs, 'Container', l, c?.resources?.requests ?? {}, c?.resources?.limits ?? {});
      }
      for (const l of this.limits(a, 'Pod'))
        check(errs, 'Pod', l, sum(containers, 'requests'), sum(containers, 'limits'));
    } else {
      // upstream: min against the requests; max "in reverse", the requests standing for limits
      const requested = fieldAt(obj, 'spec', 'resources', 'requests');
      const requests = isRecord(requested) ? requested : {};
      for (const l of this.limits(a, 'PersistentVolumeClaim')) {
        check(errs, 'PersistentVolumeClaim', { min: l.min }, requests, {});
        check(errs, 'PersistentVolumeClaim', { max: l.max }, {}, requests);
      }
    }
    if (!errs.length) return;
    const name = obj.metadata?.name || obj.metadata?.generateName || 'Unknown';
    throw errors.forbidden(
      `${a.resource} ${JSON.stringify(name)} is forbidden: ${errs.length === 1 ? errs[0] : `[${errs.join(', ')}]`}`,
      { kind: a.resource, name },
    );
  }
}

/** Sets the defaults a resource list lacks; returns the resource names set. */
function fill(resources: ContainerResources, key: 'requests' | 'limits', defaults: Resources | undefined): string[] {
  const set: string[] = [];
  for (const [k, v] of Object.entries(defaults ?? {})) {
    if (resources[key]?.[k] !== undefined) continue;
    // a limit only: upstream's API defaulting already copied it to the request
    if (key === 'requests' && resources.limits?.[k] !== undefined) continue;
    resources[key] = { ...resources[key], [k]: v };
    set.push(k);
  }
  return set;
}

function sum(
  containers: ({ resources?: ContainerResources } | null)[],
  key: 'requests' | 'limits',
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const c of containers)
    for (const [k, v] of Object.entries(c?.resources?.[key] ?? {})) out[k] = (out[k] ?? 0) + (quantityValue(v) ?? 0);
  return out;
}

const val = (v: unknown) => (typeof v === 'number' ? v : (quantityValue(v) ?? 0));
const show = (v: unknown) => (typeof v === 'number' ? String(v) : String(v));

/** upstream minConstraint, maxConstraint and limitRequestRatioConstraint. */
function check(
  errs: string[],
  type: string,
  l: LimitRangeItem,
  req: Record<string, unknown>,
  lim: Record<string, unknown>,
): void {
  for (const [k, min] of Object.entries(l.min ?? {})) {
    if (req[k] === undefined) errs.push(`minimum ${k} usage per ${type} is ${min}.  No request is specified`);
    else if (val(req[k]) < val(min))
      errs.push(`minimum ${k} usage per ${type} is ${min}, but request is ${show(req[k])}`);
    else if (lim[k] !== undefined && val(lim[k]) < val(min))
      errs.push(`minimum ${k} usage per ${type} is ${min}, but limit is ${show(lim[k])}`);
  }
  for (const [k, max] of Object.entries(l.max ?? {})) {
    if (lim[k] === undefined) errs.push(`maximum ${k} usage per ${type} is ${max}.  No limit is specified`);
    else if (val(lim[k]) > val(max))
      errs.push(`maximum ${k} usage per ${type} is ${max}, but limit is ${show(lim[k])}`);
    else if (req[k] !== undefined && val(req[k]) > val(max))
      errs.push(`maximum ${k} usage per ${type} is ${max}, but request is ${show(req[k])}`);
  }
  for (const [k, ratio] of Object.entries(l.maxLimitRequestRatio ?? {})) {
    if (req[k] === undefined || val(req[k]) === 0) {
      errs.push(`${k} max limit to request ratio per ${type} is ${ratio}, but no request is specified or request is 0`);
      continue;
    }
    if (lim[k] === undefined || val(lim[k]) === 0) {
      errs.push(`${k} max limit to request ratio per ${type} is ${ratio}, but no limit is specified or limit is 0`);
      continue;
    }
    const observed = val(lim[k]) / val(req[k]);
    if (observed > val(ratio) + 1e-9)
      errs.push(
        `${k} max limit to request ratio per ${type} is ${ratio}, but provided ratio is ${observed.toFixed(6)}`,
      );
  }
}
