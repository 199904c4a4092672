/**
 * `--enable-admission-plugins` / `--disable-admission-plugins` (src/admission/options.ts), in
 * process: every plugin name of upstream's kube-apiserver v1.32 help text is accepted (written
 * out here, not read from the implementation's list), the default set, and the refusals. The
 * flags through the parser are test/admission/service-account "flags".
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ADMISSION_FLAGS,
  DEFAULT_ADMISSION_OPTIONS,
  checkAdmissionOptions,
  enabledAdmissionPlugins,
  type AdmissionOptions,
} from '../../src/admission/options.js';

const UPSTREAM_NAMES = [
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

/** upstream DefaultOffAdmissionPlugins' complement (v1.32) among the plugins served here */
const DEFAULT_ON = [
  'CertificateApproval',
  'CertificateSigning',
  'CertificateSubjectRestriction',
  'ClusterTrustBundleAttest',
  'DefaultIngressClass',
  'DefaultStorageClass',
  'DefaultTolerationSeconds',
  'LimitRanger',
  'MutatingAdmissionWebhook',
  'NamespaceLifecycle',
  'PersistentVolumeClaimResize',
  'PodSecurity',
  'Priority',
  'ResourceQuota',
  'RuntimeClass',
  'ServiceAccount',
  'StorageObjectInUseProtection',
  'TaintNodesByCondition',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionWebhook',
];

const fresh = (): AdmissionOptions => ({ enableAdmissionPlugins: [], disableAdmissionPlugins: [] });

test('every upstream plugin name is accepted by both flags, one at a time and all together', () => {
  for (const name of UPSTREAM_NAMES) {
    const o = fresh();
    ADMISSION_FLAGS['enable-admission-plugins']!(o, name);
    assert.deepEqual(o.enableAdmissionPlugins, [name]);
    ADMISSION_FLAGS['disable-admission-plugins']!(o, name);
    assert.deepEqual(o.disableAdmissionPlugins, [name]);
  }
  const all = fresh();
  ADMISSION_FLAGS['enable-admission-plugins']!(all, ` ${UPSTREAM_NAMES.join(' , ')} ,`);
  assert.deepEqual(all.enableAdmissionPlugins, UPSTREAM_NAMES, 'spaces trimmed, empty items dropped');
  assert.deepEqual([...enabledAdmissionPlugins(all)].sort(), [...UPSTREAM_NAMES].sort());
});

test('unknown names (case matters) and the empty name are refused with the flag named', () => {
  for (const bad of ['alwaysadmit', 'SecurityContextDeny', 'Stryker was here']) {
    assert.throws(() => ADMISSION_FLAGS['enable-admission-plugins']!(fresh(), `LimitRanger,${bad}`), {
      message: `enable-admission-plugins plugin "${bad}" is unknown`,
    });
    assert.throws(() => ADMISSION_FLAGS['disable-admission-plugins']!(fresh(), bad), {
      message: `disable-admission-plugins plugin "${bad}" is unknown`,
    });
  }
  const o = fresh();
  ADMISSION_FLAGS['enable-admission-plugins']!(o, '');
  assert.deepEqual(o.enableAdmissionPlugins, []);
});

test('the default options turn on exactly the default set; enabled ones add, disabled ones win', () => {
  assert.deepEqual(DEFAULT_ADMISSION_OPTIONS, { enableAdmissionPlugins: [], disableAdmissionPlugins: [] });
  assert.deepEqual([...enabledAdmissionPlugins(DEFAULT_ADMISSION_OPTIONS)].sort(), DEFAULT_ON);
  const o = {
    enableAdmissionPlugins: ['NodeRestriction', 'AlwaysPullImages'],
    disableAdmissionPlugins: ['ServiceAccount', 'NodeRestriction'],
  };
  const on = enabledAdmissionPlugins(o);
  assert.ok(on.has('AlwaysPullImages') && on.has('LimitRanger'));
  assert.ok(!on.has('ServiceAccount') && !on.has('NodeRestriction'));
  assert.throws(() => checkAdmissionOptions(o), {
    message: '[NodeRestriction] in enable-admission-plugins and disable-admission-plugins overlapped',
  });
  checkAdmissionOptions({ enableAdmissionPlugins: ['NodeRestriction'], disableAdmissionPlugins: ['ServiceAccount'] });
});
