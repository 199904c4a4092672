/**
 * Required-field causes (src/schema/required.ts): one per missing required field, named by its
 * full path (struct fields, list indexes), in document order, parents before children; the
 * root's status is not checked.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { requiredCauses } from '../../src/schema/required.js';
import { schemaIndex } from '../../src/schema/schema.js';

const fields = (obj: unknown, group: string, version: string, kind: string) =>
  requiredCauses(obj, schemaIndex().forKind(group, version, kind)).map((c) => {
    assert.equal(c.reason, 'FieldValueRequired');
    assert.equal(c.message, 'Required value');
    return c.field;
  });

test('paths through struct fields and list items, in document order; root status unchecked', () => {
  const pod = {
    spec: {
      containers: [
        { name: 'a', ports: [{}] },
        { image: 'x', env: [{ value: 'v' }] },
      ],
      volumes: [{ name: 'v', configMap: { items: [{ key: 'k' }] } }],
      initContainers: [{}],
    },
    status: { conditions: [{}] },
  };
  assert.deepEqual(fields(pod, '', 'v1', 'Pod'), [
    'spec.containers[0].ports[0].containerPort',
    'spec.containers[1].name',
    'spec.containers[1].env[0].name',
    'spec.volumes[0].configMap.items[0].path',
    'spec.initContainers[0].name',
  ]);
  assert.deepEqual(fields({ spec: { template: { spec: { containers: [{}] } } } }, 'apps', 'v1', 'Deployment'), [
    'spec.selector',
    'spec.template.spec.containers[0].name',
  ]);
  assert.deepEqual(fields({ data: { a: 'b' } }, '', 'v1', 'ConfigMap'), []);
});
