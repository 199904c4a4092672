/**
 * defaultPodSpec walks the container lists and each container's ports and env in place (no
 * filtered copies): every container of the three lists is defaulted in order, items that are not
 * objects are skipped, a list that is not an array is left alone, and volumes are defaulted.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultPodSpec } from '../../../src/registry/strategies/pod-defaults.js';

test('containers, init and ephemeral containers, their ports and env, and volumes are defaulted', () => {
  const spec: Record<string, unknown> = {
    containers: [
      {
        name: 'a',
        image: 'x:1',
        ports: [{ containerPort: 1 }, null, 'p'],
        env: [{ name: 'E', valueFrom: { fieldRef: { fieldPath: 'f' } } }, 7],
      },
      null,
      'not a container',
    ],
    initContainers: [{ name: 'i', image: 'x', ports: { containerPort: 2 }, env: 'no' }],
    ephemeralContainers: [{ name: 'e', image: 'x@sha256:ab' }],
    volumes: [{ name: 'v' }, 3],
  };
  defaultPodSpec(spec);
  const [a, n, s] = spec.containers as Record<string, any>[];
  assert.equal(a!.terminationMessagePath, '/dev/termination-log');
  assert.equal(a!.imagePullPolicy, 'IfNotPresent');
  assert.deepEqual(a!.ports, [{ containerPort: 1, protocol: 'TCP' }, null, 'p']);
  assert.equal(a!.env[0].valueFrom.fieldRef.apiVersion, 'v1');
  assert.equal(a!.env[1], 7);
  assert.equal(n, null);
  assert.equal(s, 'not a container');
  const i = (spec.initContainers as Record<string, any>[])[0]!;
  assert.equal(i.imagePullPolicy, 'Always');
  assert.deepEqual(i.ports, { containerPort: 2 }, 'a ports value that is no list is left as it is');
  assert.equal(i.env, 'no');
  const e = (spec.ephemeralContainers as Record<string, any>[])[0]!;
  assert.equal(e.imagePullPolicy, 'IfNotPresent');
  assert.equal(e.terminationMessagePolicy, 'File');
  const [v, three] = spec.volumes as any[];
  assert.deepEqual(v.emptyDir, {}, 'a volume without a source is an emptyDir');
  assert.equal(three, 3);
});

test('lists that are not arrays are left alone', () => {
  const spec: Record<string, unknown> = { containers: { a: 1 }, volumes: 'x' };
  defaultPodSpec(spec);
  assert.deepEqual(spec.containers, { a: 1 });
  assert.equal(spec.volumes, 'x');
});
