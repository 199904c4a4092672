/**
 * `--enable-admission-plugins` / `--disable-admission-plugins` (upstream AdmissionOptions):
 * the plugins on are upstream's default set plus those enabled, minus those disabled; unknown
 * names and a name in both lists are startup errors with upstream's messages.
 */

/** upstream kube-apiserver's admission plugin names (v1.32) */
export const ADMISSION_PLUGINS = [
  'AlwaysAdmit',
  'AlwaysDeny',
  'AlwaysPullImages',
  'CertificateApproval',
  'CertificateSigning',
  'CertificateSubjectRestriction',
  'ClusterTrustBundleAttest',
  'DefaultIngressClass',
  'DefaultStorageClass',
  'DefaultTolerationSeconds',
  'DenyServiceExternalIPs',
  'EventRateLimit',
  'ExtendedResourceToleration',
  'ImagePolicyWebhook',
  'LimitPodHardAntiAffinityTopology',
  'LimitRanger',
  'MutatingAdmissionWebhook',
  'NamespaceAutoProvision',
  'NamespaceExists',
  'NamespaceLifecycle',
  'NodeRestriction',
  'OwnerReferencesPermissionEnforcement',
  'PersistentVolumeClaimResize',
  'PodNodeSelector',
  'PodSecurity',
  'PodTolerationRestriction',
  'Priority',
  'ResourceQuota',
  'RuntimeClass',
  'ServiceAccount',
  'StorageObjectInUseProtection',
  'TaintNodesByCondition',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionWebhook',
];

/** upstream DefaultOffAdmissionPlugins' complement: the plugins on unless disabled (v1.32) */
export const DEFAULT_ON_ADMISSION_PLUGINS = [
  'NamespaceLifecycle',
  'LimitRanger',
  'ServiceAccount',
  'TaintNodesByCondition',
  'PodSecurity',
  'Priority',
  'DefaultTolerationSeconds',
  'DefaultStorageClass',
  'StorageObjectInUseProtection',
  'PersistentVolumeClaimResize',
  'RuntimeClass',
  'CertificateApproval',
  'CertificateSigning',
  'ClusterTrustBundleAttest',
  'CertificateSubjectRestriction',
  'DefaultIngressClass',
  'MutatingAdmissionWebhook',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionWebhook',
  'ResourceQuota',
];

export interface AdmissionOptions {
  /** `--enable-admission-plugins` as given */
  enableAdmissionPlugins: string[];
  /** `--disable-admission-plugins` as given */
  disableAdmissionPlugins: string[];
}

export const DEFAULT_ADMISSION_OPTIONS: AdmissionOptions = { enableAdmissionPlugins: [], disableAdmissionPlugins: [] };

function names(flag: string, v: string): string[] {
  const out = v
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
  for (const n of out) if (!ADMISSION_PLUGINS.includes(n)) throw new Error(`${flag} plugin "${n}" is unknown`);
  return out;
}

export const ADMISSION_FLAGS: Record<string, (o: AdmissionOptions, v: string) => void> = {
  'enable-admission-plugins': (o, v) => {
    o.enableAdmissionPlugins = names('enable-admission-plugins', v);
  },
  'disable-admission-plugins': (o, v) => {
    o.disableAdmissionPlugins = names('disable-admission-plugins', v);
  },
};

/** upstream Validate: a plugin both enabled and disabled is refused. */
export function checkAdmissionOptions(o: AdmissionOptions): void {
  const both = o.enableAdmissionPlugins.filter((n) => o.disableAdmissionPlugins.includes(n)).sort();
  if (both.length)
    throw new Error(`[${both.join(' ')}] in enable-admission-plugins and disable-admission-plugins overlapped`);
}

/** The plugins on: the default set plus the enabled ones, minus the disabled ones. */
export function enabledAdmissionPlugins(o: AdmissionOptions): Set<string> {
  const on = new Set([...DEFAULT_ON_ADMISSION_PLUGINS, ...o.enableAdmissionPlugins]);
  for (const n of o.disableAdmissionPlugins) on.delete(n);
  return on;
}
