import { test } from 'node:test';
import assert from 'node:assert/strict';
import { labelSelectorFromObject, parseLabelSelector, SelectorError } from '../../src/api/selectors.js';

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
    [
      'z=1, a in (c,b,c), !m, k, x!=y, n notin (q), g>1, h<2, d==e',
      'a in (b,c),d==e,g>1,h<2,k,!m,n notin (q),x!=y,z=1',
    ],
    ['a in ()', 'a in ()'],
    ['a in (,b)', 'a in (,b)'],
    ['a=', 'a='],
  ];
  for (const [s, want] of cases) assert.equal(parseLabelSelector(s).toString(), want, s);
  const sel = parseLabelSelector('b=2,a in (x)');
  assert.deepEqual(
    sel.requirements.map((r) => [r.key, r.operator, r.values]),
    [
      ['a', 'in', ['x']],
      ['b', '=', ['2']],
    ],
  );
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
    assert.throws(
      () => parseLabelSelector(s),
      (e: unknown) => {
        assert.ok(e instanceof SelectorError, `${s}: ${String(e)}`);
        assert.match(e.message, re, s);
        return true;
      },
    );
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
    [
      { matchExpressions: [{ key: 'a', operator: 'Gt', values: ['1'] }] },
      /"Gt" is not a valid label selector operator/,
    ],
    [{ matchExpressions: [{ key: 'a', operator: 'In', values: [] }] }, /values set can't be empty/],
    [{ matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] }, /values set must be empty/],
    [{ matchLabels: { 'bad key': 'x' } }, /invalid label key "bad key"/],
    [{ matchLabels: { a: 'bad value' } }, /invalid label value "bad value"/],
  ];
  for (const [obj, re] of bad)
    assert.throws(
      () => labelSelectorFromObject(obj),
      (e: any) => e instanceof SelectorError && re.test(e.message),
    );
});
