import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  fieldSetFor, labelSelectorFromObject, parseFieldSelector, parseLabelSelector, SELECTABLE_FIELDS, selectableFieldsFor,
  SelectorError, singleNameValue, validateFieldSelector,
} from '../../src/api/selectors.js';

type Labels = Record<string, string> | undefined;
const L = (o: Record<string, string>): Labels => o;

// [selector, labels, expected match]
const matchCases: [string, Labels, boolean][] = [
  ['', undefined, true],
  ['', L({ a: 'b' }), true],
  ['  \t ', L({}), true],
  ['a=b', L({ a: 'b' }), true],
  ['a=b', L({ a: 'c' }), false],
  ['a=b', undefined, false],
  ['a==b', L({ a: 'b' }), true],
  ['a!=b', L({ a: 'b' }), false],
  ['a!=b', L({ a: 'c' }), true],
  ['a!=b', L({}), true],
  ['a=', L({ a: '' }), true],
  ['a=', L({}), false],
  ['a==', L({ a: '' }), true],
  ['a in (b,c)', L({ a: 'c' }), true],
  ['a in (b,c)', L({ a: 'd' }), false],
  ['a in (b,c)', L({}), false],
  ['a notin (b,c)', L({ a: 'c' }), false],
  ['a notin (b,c)', L({ a: 'd' }), true],
  ['a notin (b,c)', L({}), true],
  ['a in ()', L({ a: '' }), true],
  ['a in (,b)', L({ a: '' }), true],
  ['a in (x,,y)', L({ a: '' }), true],
  ['a', L({ a: '' }), true],
  ['a', L({ b: 'a' }), false],
  ['!a', L({ b: 'x' }), true],
  ['!a', L({ a: 'x' }), false],
  ['!a', undefined, true],
  ['a>5', L({ a: '6' }), true],
  ['a>5', L({ a: '5' }), false],
  ['a>5', L({ a: 'x' }), false],
  ['a>5', L({}), false],
  ['a<5', L({ a: '4' }), true],
  ['a<5', L({ a: '05' }), false],
  ['a<10', L({ a: '9223372036854775807' }), false],
  ['a>10', L({ a: '9223372036854775808' }), false],
  ['a>9223372036854775806', L({ a: '9223372036854775807' }), true],
  ['  a = b ,  c in ( d , e ) , !f  ', L({ a: 'b', c: 'e' }), true],
  ['a=b,c', L({ a: 'b' }), false],
  ['a=b,c', L({ a: 'b', c: '' }), true],
  ['in in (in,notin)', L({ in: 'notin' }), true],
  ['notin=in', L({ notin: 'in' }), true],
  ['example.com/app=web', L({ 'example.com/app': 'web' }), true],
  ['constructor', L({}), false],
  ['!toString', L({}), true],
  ['a=b \u0000garbage(', L({ a: 'b' }), true], // upstream lexer: a NUL at a token start ends the input
];

test('label selector matching scenarios', () => {
  for (const [s, labels, want] of matchCases) {
    assert.equal(parseLabelSelector(s).matches(labels), want, `${JSON.stringify(s)} on ${JSON.stringify(labels)}`);
  }
});

test('label selector empty and toString normalisation', () => {
  assert.equal(parseLabelSelector('').empty, true);
  assert.equal(parseLabelSelector(' ').empty, true);
  assert.equal(parseLabelSelector('a').empty, false);
  const cases: [string, string][] = [
    ['z=1, a in (c,b,c), !m, k, x!=y, n notin (q), g>1, h<2, d==e', 'a in (b,c),d==e,g>1,h<2,k,!m,n notin (q),x!=y,z=1'],
    ['a in ()', 'a in ()'],
    ['a in (,b)', 'a in (,b)'],
    ['a=', 'a='],
  ];
  for (const [s, want] of cases) assert.equal(parseLabelSelector(s).toString(), want, s);
  const sel = parseLabelSelector('b=2,a in (x)');
  assert.deepEqual(sel.requirements.map((r) => [r.key, r.operator, r.values]), [['a', 'in', ['x']], ['b', '=', ['2']]]);
  assert.equal(sel.requiresExactMatch('a'), 'x');
  assert.equal(sel.requiresExactMatch('c'), undefined);
});

// [selector, error message pattern]
const invalidCases: [string, RegExp][] = [
  ['a in (b', /unable to parse requirement: found '', expected: ',' or '\)'/],
  ['a in b', /found 'b' expected: '\('/],
  ['a in (=)', /found '=', expected: ',', '\)' or identifier/],
  ['a in (b c)', /found 'c', expected: ',' or '\)'/],
  ['a in (b,,)', /found '\)', expected: ',', or identifier/],
  ['=b', /found '=', expected: !, identifier, or 'end of string'/],
  [',a', /found ',', expected: !, identifier, or 'end of string'/],
  ['a,', /found '', expected: identifier after ','/],
  ['a,,b', /found ',', expected: identifier after ','/],
  ['a===b', /unable to parse requirement: found '=', expected: identifier/],
  ['a=b c', /found 'c', expected: ',' or 'end of string'/],
  ['a b', /found 'b', expected: in, notin, =, ==, !=, gt, lt/],
  ['a!b', /found '!', expected: in, notin, =, ==, !=, gt, lt/],
  ['!a=b', /found '=', expected: ',' or 'end of string'/],
  ['!', /unable to parse requirement: found '', expected: identifier/],
  ['!!a', /found '!', expected: identifier/],
  ['a=(b)', /found '\(', expected: identifier/],
  ['-a=b', /invalid label key "-a"/],
  ['a/b/c=d', /invalid label key "a\/b\/c": a qualified name must consist/],
  ['Example.com/a=b', /prefix part a lowercase RFC 1123 subdomain/],
  ['/a', /prefix part must be non-empty/],
  ['a/', /name part must be non-empty/],
  [`${'k'.repeat(64)}=v`, /name part must be no more than 63 characters/],
  [`a=${'v'.repeat(64)}`, /invalid label value "v+" for key "a": must be no more than 63 characters/],
  ['a=-b', /invalid label value "-b"/],
  ['a=b_', /invalid label value "b_"/],
  ['a in (x,-y)', /invalid label value "-y"/],
  ['a>b', /for 'Gt', 'Lt' operators, the value must be an integer/],
  ['a<', /for 'Gt', 'Lt' operators, the value must be an integer/],
  ['a>99999999999999999999', /the value must be an integer/],
  ['a>-1', /invalid label value "-1"/],
  ['a=b\u0000c', /found 'c', expected: ',' or 'end of string'/], // a NUL inside a token only ends the token
];

test('invalid label selectors throw SelectorError', () => {
  for (const [s, re] of invalidCases) {
    assert.throws(() => parseLabelSelector(s), (e: unknown) => {
      assert.ok(e instanceof SelectorError, `${s}: ${String(e)}`);
      assert.match(e.message, re, s);
      return true;
    });
  }
});

test('labelSelectorFromObject (metav1.LabelSelectorAsSelector)', () => {
  const nothing = labelSelectorFromObject(null);
  assert.equal(nothing.matches({}), false);
  assert.equal(nothing.empty, false);
  assert.equal(nothing.matchesNothing, true);
  assert.equal(labelSelectorFromObject(undefined).matches({ a: 'b' }), false);
  const all = labelSelectorFromObject({});
  assert.equal(all.empty, true);
  assert.equal(all.matches(undefined), true);
  assert.equal(labelSelectorFromObject({ matchLabels: {}, matchExpressions: [] }).matches({ x: 'y' }), true);

  const sel = labelSelectorFromObject({
    matchLabels: { app: 'web', tier: 'fe' },
    matchExpressions: [
      { key: 'env', operator: 'In', values: ['prod', 'stage'] },
      { key: 'legacy', operator: 'DoesNotExist' },
      { key: 'team', operator: 'Exists' },
      { key: 'zone', operator: 'NotIn', values: ['b'] },
    ],
  });
  assert.equal(sel.toString(), 'app=web,env in (prod,stage),!legacy,team,tier=fe,zone notin (b)');
  assert.equal(sel.matches({ app: 'web', tier: 'fe', env: 'prod', team: 'x' }), true);
  assert.equal(sel.matches({ app: 'web', tier: 'fe', env: 'prod', team: 'x', zone: 'b' }), false);
  assert.equal(sel.matches({ app: 'web', tier: 'fe', env: 'dev', team: 'x' }), false);
  assert.equal(sel.matches({ app: 'web', tier: 'fe', env: 'prod', team: 'x', legacy: '' }), false);

  const bad: [any, RegExp][] = [
    [{ matchExpressions: [{ key: 'a', operator: 'Gt', values: ['1'] }] }, /"Gt" is not a valid label selector operator/],
    [{ matchExpressions: [{ key: 'a', operator: 'In', values: [] }] }, /values set can't be empty/],
    [{ matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] }, /values set must be empty/],
    [{ matchLabels: { 'bad key': 'x' } }, /invalid label key "bad key"/],
    [{ matchLabels: { a: 'bad value' } }, /invalid label value "bad value"/],
  ];
  for (const [obj, re] of bad) assert.throws(() => labelSelectorFromObject(obj), (e: any) => e instanceof SelectorError && re.test(e.message));
});

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
  for (const [s, re] of invalid) assert.throws(() => parseFieldSelector(s), (e: any) => e instanceof SelectorError && re.test(e.message), s);
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
  assert.throws(() => validateFieldSelector(parseFieldSelector('spec.foo=x'), SELECTABLE_FIELDS.Pod!, 'Pod'),
    (e: any) => e instanceof SelectorError && e.message === 'field label not supported: spec.foo');
  assert.throws(() => validateFieldSelector(parseFieldSelector('metadata.namespace=x'), SELECTABLE_FIELDS.Node!, 'Node'),
    { message: 'field label not supported: metadata.namespace' });
  assert.throws(() => validateFieldSelector(parseFieldSelector('data.x=y'), selectableFieldsFor('ConfigMap'), 'ConfigMap'),
    { message: '"data.x" is not a known field selector: only "metadata.name", "metadata.namespace"' });
  assert.throws(() => validateFieldSelector(parseFieldSelector('spec.x=y'), ['metadata.name'], 'Widget', { customResource: true }),
    { message: 'field label not supported: spec.x' });
  const aliased = validateFieldSelector(parseFieldSelector('spec.host=n1'), SELECTABLE_FIELDS.Pod!, 'Pod');
  assert.equal(aliased.toString(), 'spec.nodeName=n1');
  assert.equal(aliased.matches(fieldSetFor('Pod', { metadata: { name: 'p' }, spec: { nodeName: 'n1' } })), true);
});

test('fieldSetFor', () => {
  assert.deepEqual(fieldSetFor('Pod', {
    metadata: { name: 'p', namespace: 'ns' }, spec: { nodeName: 'n1', restartPolicy: 'Always', schedulerName: 'default-scheduler', serviceAccountName: 'sa', hostNetwork: true },
    status: { phase: 'Running', podIP: '10.0.0.2', podIPs: [{ ip: '10.0.0.1' }], nominatedNodeName: 'n2' },
  }), {
    'metadata.name': 'p', 'metadata.namespace': 'ns', 'spec.nodeName': 'n1', 'spec.restartPolicy': 'Always', 'spec.schedulerName': 'default-scheduler',
    'spec.serviceAccountName': 'sa', 'spec.hostNetwork': 'true', 'status.phase': 'Running', 'status.podIP': '10.0.0.1', 'status.nominatedNodeName': 'n2',
  });
  const bare = fieldSetFor('Pod', { metadata: { name: 'p', namespace: 'ns' } });
  assert.equal(bare['spec.hostNetwork'], 'false');
  assert.equal(bare['spec.nodeName'], '');
  assert.deepEqual(fieldSetFor('Node', { metadata: { name: 'n' }, spec: { unschedulable: true } }), { 'metadata.name': 'n', 'spec.unschedulable': 'true' });
  assert.deepEqual(fieldSetFor('Namespace', { metadata: { name: 'x' }, status: { phase: 'Active' } }), { 'metadata.name': 'x', 'status.phase': 'Active' });
  assert.equal(fieldSetFor('Secret', { metadata: { name: 's', namespace: 'n' }, type: 'Opaque' })['type'], 'Opaque');
  assert.equal(fieldSetFor('ReplicaSet', { metadata: {}, status: { replicas: 3 } })['status.replicas'], '3');
  assert.equal(fieldSetFor('ReplicationController', { metadata: {} })['status.replicas'], '0');
  assert.equal(fieldSetFor('Job', { metadata: {}, status: { succeeded: 2 } })['status.successful'], '2');
  assert.equal(fieldSetFor('CertificateSigningRequest', { metadata: { name: 'c' }, spec: { signerName: 'a/b' } })['spec.signerName'], 'a/b');
  assert.deepEqual(fieldSetFor('Service', { metadata: { name: 's', namespace: 'n' }, spec: { clusterIP: '10.0.0.1', type: 'ClusterIP' } }),
    { 'metadata.name': 's', 'metadata.namespace': 'n', 'spec.clusterIP': '10.0.0.1', 'spec.type': 'ClusterIP' });
  const ev = fieldSetFor('Event', {
    metadata: { name: 'e', namespace: 'n' }, involvedObject: { kind: 'Pod', name: 'p', uid: 'u1' }, reason: 'Started', type: 'Normal', reportingComponent: 'kubelet',
  });
  assert.equal(ev['involvedObject.kind'], 'Pod');
  assert.equal(ev['involvedObject.fieldPath'], '');
  assert.equal(ev['source'], 'kubelet');
  assert.deepEqual(fieldSetFor('ConfigMap', { metadata: { name: 'c', namespace: 'n' } }), { 'metadata.name': 'c', 'metadata.namespace': 'n' });
  for (const [kind, fields] of Object.entries(SELECTABLE_FIELDS)) {
    assert.ok(fields.includes('metadata.name'), kind);
  }
});
