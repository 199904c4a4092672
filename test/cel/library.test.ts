/**
 * The Kubernetes CEL libraries on @bufbuild/cel, one table per library, with the results
 * upstream documents for each function (kubernetes.io "CEL in Kubernetes" and the
 * apiserver/pkg/cel/library doc comments).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isCelList, isCelMap } from '@bufbuild/cel';
import { compileExpression, evaluate } from '../../src/cel/compile.js';

function js(v: unknown): unknown {
  if (isCelList(v)) return [...v].map(js);
  if (isCelMap(v)) return Object.fromEntries([...v].map(([k, x]) => [String(k), js(x)]));
  return v;
}

/** Evaluates a closed expression (no self); a string result starting with `error:` is an evaluation error. */
function run(src: string): unknown {
  const c = compileExpression(src, { schema: { type: 'object' } }, 'any');
  if (!c.program) return `compile: ${c.error}`;
  const out = evaluate(c.program, {});
  return 'error' in out ? `error: ${out.error}` : js(out.value);
}

function table(name: string, rows: [string, unknown][]): void {
  test(name, () => {
    for (const [src, want] of rows) {
      const got = run(src);
      if (typeof want === 'string' && want.startsWith('error'))
        assert.match(String(got), new RegExp(`^${want.replace(/[()[\].*+?]/g, '\\$&')}`), src);
      else assert.deepEqual(got, want, src);
    }
  });
}

table('lists: isSorted, sum, min, max, indexOf, lastIndexOf', [
  ['[1, 2, 3].isSorted()', true],
  ["['a', 'c', 'b'].isSorted()", false],
  ['[].isSorted()', true],
  ['[1, 2, 3].sum()', 6n],
  ['[1.0, 2.5].sum()', 3.5],
  ['[].sum()', 0n],
  ['[1, 2, 3].min()', 1n],
  ['[1, 2, 3].max()', 3n],
  ["['b', 'a'].min()", 'a'],
  ['[].min()', 'error: min called on empty list'],
  ['[1, 2, 3, 2].indexOf(2)', 1n],
  ['[1, 2, 3, 2].lastIndexOf(2)', 3n],
  ['[1, 2].indexOf(4)', -1n],
]);

table('sets: contains, equivalent, intersects', [
  ['sets.contains([1, 2, 3], [1, 2])', true],
  ['sets.contains([1, 2], [3])', false],
  ['sets.contains([1], [])', true],
  ['sets.equivalent([1, 2, 3], [3, 2, 1])', true],
  ['sets.equivalent([1], [1, 2])', false],
  ['sets.intersects([1, 2], [2, 3])', true],
  ['sets.intersects([1], [2])', false],
]);

table('regex: find, findAll, matches', [
  ["'abc 123'.find('[0-9]+')", '123'],
  ["'abc'.find('[0-9]+')", ''],
  ["'abc 123'.findAll('[a-z]')", ['a', 'b', 'c']],
  ["'abc 123'.findAll('[a-z]', 2)", ['a', 'b']],
  ["'abc'.findAll('[a-z]', 0)", []],
  ["'abc'.matches('^a')", true],
  ["matches('abc', 'c$')", true],
  ["'abc'.matches('^b')", false],
]);

table('strings extension', [
  ["'hello'.charAt(1)", 'e'],
  ["'hello'.indexOf('l')", 2n],
  ["'hello'.lastIndexOf('l')", 3n],
  ["'TacoCat'.lowerAscii()", 'tacocat'],
  ["'TacoCat'.upperAscii()", 'TACOCAT'],
  ["'a,b,c'.split(',')", ['a', 'b', 'c']],
  ["' x '.trim()", 'x'],
  ["'hello'.substring(1, 3)", 'el'],
  ["['a', 'b'].join('-')", 'a-b'],
  ["'abb'.replace('b', 'x')", 'axx'],
  ["'abc'.startsWith('ab')", true],
  ["'abc'.endsWith('bc')", true],
  ["'abc'.contains('d')", false],
  ["size('héllo')", 5n],
]);

table('urls', [
  ["url('https://example.com:80/path?k=a&k=b').getScheme()", 'https'],
  ["url('https://example.com:80/path').getHost()", 'example.com:80'],
  ["url('https://example.com:80/path').getHostname()", 'example.com'],
  ["url('https://example.com:80/path').getPort()", '80'],
  ["url('https://example.com/path').getPort()", ''],
  ["url('https://[::1]:80/').getHostname()", '::1'],
  ["url('https://[::1]:80/').getHost()", '[::1]:80'],
  ["url('https://example.com/with space/').getEscapedPath()", 'error'],
  ["url('https://example.com/a%20b').getEscapedPath()", '/a%20b'],
  ["url('https://example.com/?k=a&k=b&j=c').getQuery()", { k: ['a', 'b'], j: ['c'] }],
  ["url('/absolute-path').getScheme()", ''],
  ["isURL('https://example.com')", true],
  ["isURL('not a url')", false],
  ["url('example.com')", 'error: URL parse error during conversion from string'],
]);

table('quantity', [
  ["quantity('500000G').isInteger()", true],
  ["quantity('50k').asInteger()", 50000n],
  ["quantity('9999999999999999999999999999999999999G').isInteger()", false],
  ["quantity('50m').asApproximateFloat()", 0.05],
  ["quantity('50k').sign()", 1n],
  ["quantity('-50k').sign()", -1n],
  ["quantity('0').sign()", 0n],
  ["quantity('1Gi').isGreaterThan(quantity('500Mi'))", true],
  ["quantity('50M').isLessThan(quantity('100M'))", true],
  ["quantity('50k').add(20).asInteger()", 50020n],
  ["quantity('50k').sub(quantity('10k')).asInteger()", 40000n],
  ["quantity('200M').compareTo(quantity('0.2G'))", 0n],
  ["quantity('1Gi') == quantity('1024Mi')", true],
  ["isQuantity('1.3G')", true],
  ["isQuantity('1.3Gi')", true],
  ["isQuantity('1,3G')", false],
  ["isQuantity('10000k')", true],
  ["quantity('50.5').asInteger()", 'error: cannot convert value to integer'],
  ["quantity('x')", 'error: quantities must match the regular expression'],
]);

table('ip and cidr', [
  ["isIP('127.0.0.1')", true],
  ["isIP('::1')", true],
  ["isIP('127.0.0.256')", false],
  ["isIP('127.0.0.1/24')", false],
  ["ip('127.0.0.1').family()", 4n],
  ["ip('::1').family()", 6n],
  ["ip('127.0.0.1').isLoopback()", true],
  ["ip('::1').isLoopback()", true],
  ["ip.isCanonical('2001:db8::abcd')", true],
  ["ip.isCanonical('2001:DB8::ABCD')", false],
  ["ip.isCanonical('127.0.0.1')", true],
  ["ip('224.0.0.1').isLinkLocalMulticast()", true],
  ["ip('169.254.169.254').isLinkLocalUnicast()", true],
  ["ip('fe80::1').isLinkLocalUnicast()", true],
  ["ip('192.168.0.1').isGlobalUnicast()", true],
  ["ip('255.255.255.255').isGlobalUnicast()", false],
  ["ip('0.0.0.0').isUnspecified()", true],
  ["string(ip('2001:DB8::1'))", '2001:db8::1'],
  ["cidr('192.168.0.0/24').containsIP(ip('192.168.0.1'))", true],
  ["cidr('192.168.0.0/24').containsIP('192.168.1.1')", false],
  ["cidr('192.168.0.0/24').containsCIDR('192.168.0.0/25')", true],
  ["cidr('192.168.0.0/24').containsCIDR(cidr('192.168.0.0/23'))", false],
  ["cidr('192.168.0.1/24').masked() == cidr('192.168.0.0/24')", true],
  ["cidr('::1/128').ip() == ip('::1')", true],
  ["cidr('192.168.0.0/16').prefixLength()", 16n],
  ["isCIDR('192.168.0.0/33')", false],
  ["isCIDR('::/0')", true],
]);

table('optional values', [
  ['optional.of(1).hasValue()', true],
  ['optional.none().hasValue()', false],
  ['optional.none().orValue(2)', 2n],
  ['optional.of(1).value()', 1n],
  ['optional.ofNonZeroValue(0).hasValue()', false],
  ["optional.ofNonZeroValue('x').value()", 'x'],
  ['optional.none().or(optional.of(3)).value()', 3n],
  ["{'a': {'b': 1}}.?a.?b.orValue(0)", 1n],
  ["{'a': {'b': 1}}.?a.?c.orValue(0)", 0n],
  ["{'a': {'b': 1}}.?x.b.hasValue()", false],
  ["{'a': {'b': 1}}.a.?b == optional.of(1)", true],
  ['[1, 2][?1].value()', 2n],
  ['[1, 2][?5].hasValue()', false],
  ["{'k': 'v'}[?'k'].orValue('')", 'v'],
  ["{'k': 'v'}[?'z'].orValue('none')", 'none'],
  ["'a.?b[?c]' == 'a.?b[?c]'", true],
  ['optional.none().value()', 'error: optional.none() dereference'],
]);

table('format', [
  ["format.dns1123Label().validate('my-label-name')", { '@type': 'Optional' }],
  ["format.dns1123Label().validate('my-label-name').hasValue()", false],
  ["format.dns1123Label().validate('Not_A_Label').value().size()", 1n],
  ["format.dns1123Subdomain().validate('a.example.com').hasValue()", false],
  ["format.dns1035Label().validate('1abc').hasValue()", true],
  ["format.dns1123LabelPrefix().validate('my-prefix-').hasValue()", false],
  ["format.labelValue().validate('').hasValue()", false],
  ["format.qualifiedName().validate('example.com/MyName').hasValue()", false],
  ["format.uuid().validate('not-a-uuid').hasValue()", true],
  ["format.named('dns1123Label').hasValue()", true],
  ["format.named('nope').hasValue()", false],
  ["format.named('uuid').value().validate('123e4567-e89b-12d3-a456-426614174000').hasValue()", false],
]);
