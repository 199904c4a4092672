import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SelectorError } from '../../src/api/selectors.js';
import {
  fieldSetFor,
  parseFieldSelector,
  SELECTABLE_FIELDS,
  selectableFieldsFor,
  singleNameValue,
  validateFieldSelector,
} from '../../src/api/field-selectors.js';

test('field selector parsing and matching', () => {
  const cases: [string, Record<string, string>, boolean][] = [
    ['', {}, true],
    [',', { a: 'b' }, true],
    ['a=b', { a: 'b' }, true],
    ['a==b', { a: 'b' }, true],
    ['a=b', { a: 'c' }, false],
    ['a!=b', { a: 'c' }, true],
    ['a!=b', { a: 'b' }, false],
    ['a!=b', {}, true],
    ['a=', {}, true],
    ['a=x', {}, false],
    ['a=b,c!=d', { a: 'b', c: 'e' }, true],
    ['a=b,c!=d', { a: 'b', c: 'd' }, false],
    ['a=x\\,y', { a: 'x,y' }, true],
    ['a=x\\=y\\\\z', { a: 'x=y\\z' }, true],
    ['constructor=', {}, true],
  ];
  for (const [s, fields, want] of cases) assert.equal(parseFieldSelector(s).matches(fields), want, s);

  const sel = parseFieldSelector('status.phase!=Running,spec.nodeName==n1,x=a\\,b');
  assert.equal(sel.empty, false);
  assert.deepEqual(sel.requirements, [
    { field: 'spec.nodeName', op: '=', value: 'n1' },
    { field: 'status.phase', op: '!=', value: 'Running' },
    { field: 'x', op: '=', value: 'a,b' },
  ]);
  assert.deepEqual(sel.fieldNames(), ['spec.nodeName', 'status.phase', 'x']);
  assert.equal(sel.toString(), 'spec.nodeName=n1,status.phase!=Running,x=a\\,b');
  assert.equal(sel.requiresExactMatch('spec.nodeName'), 'n1');
  assert.equal(parseFieldSelector('').empty, true);
  assert.equal(parseFieldSelector('a = b').requirements[0]!.field, 'a '); // no trimming, as upstream

  const invalid: [string, RegExp][] = [
    ['a', /invalid selector: 'a'; can't understand 'a'/],
    ['a=b,c', /can't understand 'c'/],
    ['a=b=c', /unescaped character in value: '='/],
    ['a=b\\', /invalid escape sequence: \\$/],
    ['a=b\\x', /invalid escape sequence: \\x/],
  ];
  for (const [s, re] of invalid)
    assert.throws(
      () => parseFieldSelector(s),
      (e: any) => e instanceof SelectorError && re.test(e.message),
      s,
    );
});

test('singleNameValue', () => {
  assert.equal(singleNameValue(parseFieldSelector('metadata.name=foo')), 'foo');
  assert.equal(singleNameValue(parseFieldSelector('metadata.name==foo')), 'foo');
  assert.equal(singleNameValue(parseFieldSelector('metadata.name!=foo')), undefined);
  assert.equal(singleNameValue(parseFieldSelector('metadata.name=foo,metadata.namespace=x')), undefined);
  assert.equal(singleNameValue(parseFieldSelector('')), undefined);
});

test('validateFieldSelector', () => {
  const pod = parseFieldSelector('spec.nodeName=n1,status.phase=Running');
  assert.equal(validateFieldSelector(pod, SELECTABLE_FIELDS.Pod!, 'Pod'), pod);
  assert.throws(
    () => validateFieldSelector(parseFieldSelector('spec.foo=x'), SELECTABLE_FIELDS.Pod!, 'Pod'),
    (e: any) => e instanceof SelectorError && e.message === 'field label not supported: spec.foo',
  );
  assert.throws(
    () => validateFieldSelector(parseFieldSelector('metadata.namespace=x'), SELECTABLE_FIELDS.Node!, 'Node'),
    { message: 'field label not supported: metadata.namespace' },
  );
  assert.throws(
    () => validateFieldSelector(parseFieldSelector('data.x=y'), selectableFieldsFor('ConfigMap'), 'ConfigMap'),
    { message: '"data.x" is not a known field selector: only "metadata.name", "metadata.namespace"' },
  );
  assert.throws(
    () => validateFieldSelector(parseFieldSelector('spec.x=y'), ['metadata.name'], 'Widget', { customResource: true }),
    { message: 'field label not supported: spec.x' },
  );
  const aliased = validateFieldSelector(parseFieldSelector('spec.host=n1'), SELECTABLE_FIELDS.Pod!, 'Pod');
  assert.equal(aliased.toString(), 'spec.nodeName=n1');
  assert.equal(aliased.matches(fieldSetFor('Pod', { metadata: { name: 'p' }, spec: { nodeName: 'n1' } })), true);
});

test('fieldSetFor', () => {
  assert.deepEqual(
    fieldSetFor('Pod', {
      metadata: { name: 'p', namespace: 'ns' },
      spec: {
        nodeName: 'n1',
        restartPolicy: 'Always',
        schedulerName: 'default-scheduler',
        serviceAccountName: 'sa',
        hostNetwork: true,
      },
      status: { phase: 'Running', podIP: '10.0.0.2', podIPs: [{ ip: '10.0.0.1' }], nominatedNodeName: 'n2' },
    }),
    {
      'metadata.name': 'p',
      'metadata.namespace': 'ns',
      'spec.nodeName': 'n1',
      'spec.restartPolicy': 'Always',
      'spec.schedulerName': 'default-scheduler',
      'spec.serviceAccountName': 'sa',
      'spec.hostNetwork': 'true',
      'status.phase': 'Running',
      'status.podIP': '10.0.0.1',
      'status.nominatedNodeName': 'n2',
    },
  );
  const bare = fieldSetFor('Pod', { metadata: { name: 'p', namespace: 'ns' } });
  assert.equal(bare['spec.hostNetwork'], 'false');
  assert.equal(bare['spec.nodeName'], '');
  assert.deepEqual(fieldSetFor('Node', { metadata: { name: 'n' }, spec: { unschedulable: true } }), {
    'metadata.name': 'n',
    'spec.unschedulable': 'true',
  });
  assert.deepEqual(fieldSetFor('Namespace', { metadata: { name: 'x' }, status: { phase: 'Active' } }), {
    'metadata.name': 'x',
    'status.phase': 'Active',
  });
  assert.equal(fieldSetFor('Secret', { metadata: { name: 's', namespace: 'n' }, type: 'Opaque' })['type'], 'Opaque');
  assert.equal(fieldSetFor('ReplicaSet', { metadata: {}, status: { replicas: 3 } })['status.replicas'], '3');
  assert.equal(fieldSetFor('ReplicationController', { metadata: {} })['status.replicas'], '0');
  assert.equal(fieldSetFor('Job', { metadata: {}, status: { succeeded: 2 } })['status.successful'], '2');
  assert.equal(
    fieldSetFor('CertificateSigningRequest', { metadata: { name: 'c' }, spec: { signerName: 'a/b' } })[
      'spec.signerName'
    ],
    'a/b',
  );
  assert.deepEqual(
    fieldSetFor('Service', {
      metadata: { name: 's', namespace: 'n' },
      spec: { clusterIP: '10.0.0.1', type: 'ClusterIP' },
    }),
    { 'metadata.name': 's', 'metadata.namespace': 'n', 'spec.clusterIP': '10.0.0.1', 'spec.type': 'ClusterIP' },
  );
  const ev = fieldSetFor('Event', {
    metadata: { name: 'e', namespace: 'n' },
    involvedObject: { kind: 'Pod', name: 'p', uid: 'u1' },
    reason: 'Started',
    type: 'Normal',
    reportingComponent: 'kubelet',
  });
  assert.equal(ev['involvedObject.kind'], 'Pod');
  assert.equal(ev['involvedObject.fieldPath'], '');
  assert.equal(ev['source'], 'kubelet');
  assert.deepEqual(fieldSetFor('ConfigMap', { metadata: { name: 'c', namespace: 'n' } }), {
    'metadata.name': 'c',
    'metadata.namespace': 'n',
  });
  for (const [kind, fields] of Object.entries(SELECTABLE_FIELDS)) {
    assert.ok(fields.includes('metadata.name'), kind);
  }
});
