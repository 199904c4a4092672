/**
 * The ServiceAccount plugin in process: how often it looks an account up before refusing the
 * pod (upstream getServiceAccount: a named account once, `default` ten times, since its
 * controller creates it just after the namespace). Found untested by the mutation sample
 * (seed 27); the end-to-end cases are in service-account.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ServiceAccountPlugin } from '../../src/admission/service-account.js';
import type { AdmissionAttributes } from '../../src/admission/attributes.js';
import { StatusError } from '../../src/api/status.js';
import { makeIdentity } from '../../src/api/identity.js';
import { attributes } from './helpers.js';

/** A plugin whose account store answers `found` from the `at`-th lookup on (never when undefined). */
function counted(at?: number) {
  const calls: string[] = [];
  const plugin = new ServiceAccountPlugin({
    identity: makeIdentity(),
    serviceAccount: (namespace, name) => {
      calls.push(`${namespace}/${name}`);
      return at !== undefined && calls.length >= at ? JSON.stringify({ metadata: { name, namespace } }) : undefined;
    },
  });
  return { plugin, calls };
}

const podCreate = (serviceAccountName?: string): AdmissionAttributes =>
  attributes({
    resource: 'pods',
    kind: { group: '', version: 'v1', kind: 'Pod' },
    namespace: 'ns',
    name: 'p',
    namespaced: true,
    object: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'ns' },
      spec: { serviceAccountName, automountServiceAccountToken: false, containers: [{ name: 'a', image: 'x' }] },
    },
  });

async function refusal(p: Promise<unknown>): Promise<StatusError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof StatusError, `a StatusError, got ${String(e)}`);
    return e;
  }
  return assert.fail('the pod was admitted');
}

test('a named account that does not exist is looked up once, then the pod is refused', async () => {
  const { plugin, calls } = counted();
  const e = await refusal(plugin.admit(podCreate('builder')));
  assert.equal(e.status.code, 403);
  assert.equal(
    e.status.message,
    'pods "p" is forbidden: error looking up service account ns/builder: serviceaccount "builder" not found',
  );
  assert.deepEqual(calls, ['ns/builder']);
});

test('the default account is looked up ten times before the pod is refused, and found on a retry', async () => {
  const missing = counted();
  const e = await refusal(missing.plugin.admit(podCreate()));
  assert.equal(e.status.code, 403);
  assert.deepEqual(missing.calls, Array(10).fill('ns/default'));
  // created by its controller between two lookups: the third one finds it
  const late = counted(3);
  assert.equal(await late.plugin.admit(podCreate()), true);
  assert.equal(late.calls.length, 3);
  assert.equal(late.plugin.name, 'ServiceAccount');
});
