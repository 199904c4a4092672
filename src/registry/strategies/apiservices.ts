/**
 * apiregistration v1 APIService (upstream kube-aggregator ValidateAPIService): named
 * `<version>.<group>` (so the core group's is `v1.`, hence path-segment names), priorities in
 * range, and a remote service needs a CA bundle or insecureSkipTLSVerify (not both).
 */
import type { APIService } from '../../api/kinds.js';
import { DEFAULT_STRATEGY, type ResourceStrategy } from '../strategy.js';
import { invalid, required, type Cause } from './field-errors.js';

function validateAPIService(obj: APIService): Cause[] {
  const out: Cause[] = [];
  const spec = obj.spec ?? {};
  const want = `${spec.version ?? ''}.${spec.group ?? ''}`;
  if (obj.metadata?.name !== want)
    out.push(
      invalid('metadata.name', obj.metadata?.name, `must be \`spec.version+"."+spec.group\`: ${JSON.stringify(want)}`),
    );
  if (!spec.version) out.push(required('spec.version'));
  const gpm = spec.groupPriorityMinimum;
  if (!(Number.isInteger(gpm) && gpm! > 0 && gpm! <= 20000))
    out.push(invalid('spec.groupPriorityMinimum', gpm ?? 0, 'must be positive and less than 20000'));
  const vp = spec.versionPriority;
  if (!(Number.isInteger(vp) && vp! > 0 && vp! <= 1000))
    out.push(invalid('spec.versionPriority', vp ?? 0, 'must be positive and less than 1000'));
  if (spec.service) {
    if (!spec.service.namespace) out.push(required('spec.service.namespace'));
    if (!spec.service.name) out.push(required('spec.service.name'));
    if (spec.insecureSkipTLSVerify && spec.caBundle)
      out.push(invalid('spec.insecureSkipTLSVerify', true, 'may not be true if caBundle is present'));
  } else {
    if (spec.insecureSkipTLSVerify)
      out.push(invalid('spec.insecureSkipTLSVerify', true, 'local APIServices may not have insecureSkipTLSVerify'));
    if (spec.caBundle) out.push(invalid('spec.caBundle', '', 'local APIServices may not have a caBundle'));
  }
  return out;
}

function defaults(obj: APIService): void {
  if (obj.spec?.service && typeof obj.spec.service === 'object') obj.spec.service.port ??= 443;
}

export const apiServiceStrategy: ResourceStrategy<APIService> = {
  ...DEFAULT_STRATEGY,
  nameRule: 'path',
  prepareForCreate: defaults,
  prepareForUpdate: defaults,
  validate: validateAPIService,
};
