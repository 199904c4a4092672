/**
 * The admission plugins this server runs, in upstream's order (LimitRanger, ServiceAccount, then
 * MutatingAdmissionWebhook; validating LimitRanger, ValidatingAdmissionPolicy, ValidatingAdmissionWebhook, ResourceQuota), each only when
 * `--enable-admission-plugins` / `--disable-admission-plugins` leave it on. NamespaceLifecycle
 * lives in the create path (src/handlers/resource.ts and the store), NodeRestriction and the
 * certificate plugins in src/auth/authz (they run after this chain, on the final object).
 */
import type { Informer } from '../actors/informer.js';
import type { Services } from '../http/context.js';
import type { Registry } from '../registry/registry.js';
import type { AdmissionPlugin } from './attributes.js';
import { ServiceAccountPlugin } from './service-account.js';
import { LimitRangerPlugin } from './limit-ranger.js';
import { ResourceQuotaPlugin } from './resource-quota.js';
import { ValidatingPolicyPlugin } from './validating-policy.js';
import { WebhookSource } from './webhook/source.js';
import { MutatingWebhookPlugin, ValidatingWebhookPlugin } from './webhook/dispatcher.js';

/** The plugins, and (as an informer) what keeps what they read (webhook configurations, policies) current. */
export interface AdmissionPlugins extends Informer {
  plugins: AdmissionPlugin[];
}

/** What the plugins are chosen by: `--enable/disable-admission-plugins` and `--feature-gates`. */
export interface PluginSelection {
  readonly admissionPlugins: ReadonlySet<string>;
  readonly featureGates: Readonly<Record<string, boolean>>;
}

export function buildAdmissionPlugins(
  options: PluginSelection,
  registry: Registry,
  services: Services,
): AdmissionPlugins {
  const on = options.admissionPlugins;
  const { identity } = registry;
  const plugins: AdmissionPlugin[] = [];
  if (on.has('LimitRanger')) {
    plugins.push(
      new LimitRangerPlugin({
        identity,
        limitRanges: (ns) => services.readCache.inNamespace('/limitranges', ns),
        count: () => services.readCache.count('/limitranges'),
      }),
    );
  }
  if (on.has('ServiceAccount')) {
    plugins.push(
      new ServiceAccountPlugin({
        identity,
        serviceAccount: (ns, name) => services.readCache.get('/serviceaccounts', ns, name, 'v1'),
      }),
    );
  }
  const source = new WebhookSource(identity, registry, services.readCache);
  if (on.has('MutatingAdmissionWebhook')) plugins.push(new MutatingWebhookPlugin(source));
  const policies = new ValidatingPolicyPlugin(identity, services.readCache);
  if (on.has('ValidatingAdmissionPolicy') && options.featureGates['ValidatingAdmissionPolicy'] !== false)
    plugins.push(policies);
  if (on.has('ValidatingAdmissionWebhook')) plugins.push(new ValidatingWebhookPlugin(source));
  if (on.has('ResourceQuota')) plugins.push(new ResourceQuotaPlugin(services.readCache));
  return {
    plugins,
    observe: (evs) => {
      source.observe(evs);
      policies.observe(evs);
    },
    load: (objects) => {
      source.load(objects);
      policies.load(objects);
    },
  };
}
