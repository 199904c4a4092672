/**
 * The LimitRanger plugin in process: what the mutation sample (seed 27) found untested in its
 * defaulting (`admit`). The end-to-end cases are in limit-ranger.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LimitRangerPlugin } from '../../src/admission/limit-ranger.js';
import type { AdmissionAttributes } from '../../src/admission/attributes.js';
import { makeIdentity } from '../../src/api/identity.js';
import { attributes } from './helpers.js';

const plugin = (limits: unknown[]) => {
  const json = JSON.stringify({ metadata: { name: 'l', namespace: 'lr' }, spec: { limits } });
  return new LimitRangerPlugin({ limitRanges: () => [json], count: () => 1, identity: makeIdentity() });
};

/** the admitted pod, read as the assertions read it */
const pod = (a: AdmissionAttributes): any => a.object;

const podCreate = (spec: Record<string, unknown>): AdmissionAttributes =>
  attributes({
    resource: 'pods',
    kind: { group: '', version: 'v1', kind: 'Pod' },
    namespace: 'lr',
    name: 'p',
    namespaced: true,
    object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'lr' }, spec },
  });

test('the annotation lists the defaulted resources sorted by name, comma-separated, as upstream', () => {
  // the LimitRange's maps are not in name order: upstream sorts the names it set
  const p = plugin([
    {
      type: 'Container',
      default: { memory: '256Mi', cpu: '500m' },
      defaultRequest: { memory: '128Mi', cpu: '100m' },
    },
  ]);
  const a = podCreate({ containers: [{ name: 'a', image: 'x' }] });
  assert.equal(p.admit(a), true);
  assert.equal(
    pod(a).metadata.annotations['platform.io/limit-ranger'],
    'LimitRanger plugin set: cpu, memory request for container a; cpu, memory limit for container a',
  );
  assert.deepEqual(pod(a).spec.containers[0].resources, {
    requests: { memory: '128Mi', cpu: '100m' },
    limits: { memory: '256Mi', cpu: '500m' },
  });
});

test('admit skips containers that are not objects (null, a string, a number) and defaults the others', () => {
  // the decoder refuses such pods over HTTP (400); the plugin's own contract is to skip them
  const p = plugin([{ type: 'Container', default: { cpu: '500m' } }]);
  const a = podCreate({ containers: [null, 'c', 7, { name: 'a', image: 'x' }], initContainers: ['i'] });
  assert.equal(p.admit(a), true);
  assert.deepEqual(pod(a).spec.containers.slice(0, 3), [null, 'c', 7]);
  assert.deepEqual(pod(a).spec.initContainers, ['i']);
  assert.deepEqual(pod(a).spec.containers[3].resources, { requests: { cpu: '500m' }, limits: { cpu: '500m' } });
  assert.equal(
    pod(a).metadata.annotations['platform.io/limit-ranger'],
    'LimitRanger plugin set: cpu request for container a; cpu limit for container a',
  );
});
