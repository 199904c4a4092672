import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  CollectedFamily,
  MetricsRegistry,
  labelPairs,
  validateShowHidden,
  visibility,
  type MetricOpts,
} from '../../src/metrics/registry.js';
import { DURATION_BUCKETS, RequestMetrics } from '../../src/metrics/request-metrics.js';

const gauge = (opts: MetricOpts, value = 1) => new CollectedFamily(opts, 'gauge', [], () => [[[], value]]);
const opts = (name: string, deprecatedVersion?: string): MetricOpts => ({
  name,
  help: 'Some help.',
  stability: 'ALPHA',
  ...(deprecatedVersion ? { deprecatedVersion } : {}),
});

test('deprecated metrics: shown with (Deprecated from x.y) for three releases, hidden the third, deleted after', () => {
  const cases: [string | undefined, string | undefined, string][] = [
    [undefined, undefined, 'shown'],
    ['1.32', undefined, 'shown'],
    ['1.30', undefined, 'shown'],
    ['1.29', undefined, 'hidden'],
    ['1.29', '1.31', 'shown'],
    ['1.28', undefined, 'deleted'],
    ['1.28', '1.31', 'deleted'],
  ];
  for (const [dep, show, want] of cases) {
    assert.equal(
      visibility(opts('m', dep), { current: '1.32', ...(show ? { showHiddenFor: show } : {}) }),
      want,
      `deprecated ${dep} show ${show}`,
    );
  }
  const reg = new MetricsRegistry({ current: '1.32' });
  reg.register(gauge(opts('fresh_metric')));
  reg.register(gauge(opts('old_metric', '1.30')));
  reg.register(gauge(opts('hidden_metric', '1.29')));
  reg.register(gauge(opts('gone_metric', '1.28')));
  const text = reg.render();
  assert.match(text, /^# HELP fresh_metric \[ALPHA\] Some help\.\n# TYPE fresh_metric gauge\nfresh_metric 1\n/);
  assert.match(text, /# HELP old_metric \[ALPHA\] \(Deprecated from 1\.30\) Some help\.\n/);
  assert.doesNotMatch(text, /hidden_metric|gone_metric/);
  assert.deepEqual(reg.warnings, [
    'metric old_metric is deprecated from 1.30',
    'metric hidden_metric is deprecated from 1.29',
  ]);
  const shown = new MetricsRegistry({ current: '1.32', showHiddenFor: '1.31' });
  shown.register(gauge(opts('hidden_metric', '1.29')));
  shown.register(gauge(opts('gone_metric', '1.28')));
  assert.ok(shown.isRegistered('hidden_metric'));
  assert.ok(!shown.isRegistered('gone_metric'));
});

test('--show-hidden-metrics-for-version accepts only the previous minor release', () => {
  assert.doesNotThrow(() => validateShowHidden('1.31', '1.32'));
  for (const bad of ['1.30', '1.32', 'x', '1.31.0']) {
    assert.throws(() => validateShowHidden(bad, '1.32'), {
      message:
        "--show-hidden-metrics-for-version must be omitted or have the value '1.31'. Only the previous minor version is allowed",
    });
  }
});

test('families without samples are not written; labels are sorted and escaped', () => {
  const reg = new MetricsRegistry({ current: '1.32' });
  reg.register(new CollectedFamily(opts('empty'), 'gauge', ['a'], () => []));
  assert.equal(reg.render(), '');
  assert.equal(
    labelPairs(['verb', 'code', 'group'], ['GET', '200', 'a"b\\c\nd']),
    'code="200",group="a\\"b\\\\c\\nd",verb="GET"',
  );
});

test('request series: one per label set, per-code counters, upstream histogram buckets', () => {
  const m = new RequestMetrics();
  const pods = { group: '', version: 'v1', resource: 'pods' };
  const a = m.resource(pods, 'LIST', '', 'namespace', '');
  assert.equal(m.resource(pods, 'LIST', '', 'namespace', ''), a, 'resolved once, then reused');
  assert.notEqual(m.resource(pods, 'LIST', '', 'cluster', ''), a);
  assert.notEqual(m.resource(pods, 'LIST', '', 'namespace', 'All'), a);
  a.observe(200, 0.003);
  a.observe(200, 0.07);
  a.observe(500, 100);
  const reg = new MetricsRegistry({ current: '1.32' });
  for (const f of m.families()) reg.register(f);
  const text = reg.render();
  const labels =
    'component="apiserver",dry_run="",group="",resource="pods",scope="namespace",subresource="",verb="LIST",version="v1"';
  assert.match(text, new RegExp(`apiserver_request_total\\{code="200",${esc(labels)}\\} 2\n`));
  assert.match(text, new RegExp(`apiserver_request_total\\{code="500",${esc(labels)}\\} 1\n`));
  const buckets = [...text.matchAll(/apiserver_request_duration_seconds_bucket\{[^}]*le="([^"]+)"\} (\d+)/g)].map(
    (x) => [x[1], Number(x[2])],
  );
  assert.deepEqual(
    buckets.map((b) => b[0]),
    [...DURATION_BUCKETS.map(String), '+Inf'],
  );
  assert.deepEqual(
    buckets.slice(0, 4).map((b) => b[1]),
    [1, 1, 1, 2],
  );
  assert.equal(buckets.at(-2)![1], 2, 'nothing at or below 60s beyond the first two');
  assert.equal(buckets.at(-1)![1], 3);
  assert.match(text, new RegExp(`apiserver_request_duration_seconds_count\\{${esc(labels)}\\} 3\n`));
});

test('non-resource series are bounded in number', () => {
  const m = new RequestMetrics();
  const seen = new Set<unknown>();
  for (let i = 0; i < 2000; i++) seen.add(m.nonResource('GET', `/x/${i}`, 'apiserver'));
  assert.ok(seen.size <= 101, `${seen.size} series`);
  // a path too long to be a label shares the unlabelled series (fuzz finding 17: 100 KiB paths
  // repeated in every bucket line made /metrics tens of megabytes and blocked the front thread)
  const fresh = new RequestMetrics();
  assert.equal(
    fresh.nonResource('GET', `/${'y'.repeat(100_000)}`, 'apiserver'),
    fresh.nonResource('GET', '', 'apiserver'),
  );
});

test('a rebuilt definition of the same resource (custom resources) keeps its series: no duplicate series', () => {
  const m = new RequestMetrics();
  const first = { group: 'plat.example', version: 'v1', resource: 'widgets' };
  const rebuilt = { ...first };
  const a = m.resource(first, 'LIST', '', 'namespace', '');
  assert.equal(m.resource(rebuilt, 'LIST', '', 'namespace', ''), a);
  a.observe(200, 0.01);
  const reg = new MetricsRegistry({ current: '1.32' });
  for (const f of m.families()) reg.register(f);
  assert.equal(reg.render().match(/^apiserver_request_total\{/gm)?.length, 1);
});

function esc(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

test('a family with more samples than a call takes arguments renders (fuzz finding: /metrics answered 500)', () => {
  const reg = new MetricsRegistry({ current: '1.32' });
  const series: [string[], number][] = Array.from({ length: 300_000 }, (_, i) => [[`r${i}`], i]);
  reg.register(
    new CollectedFamily({ name: 'many_series', help: 'h', stability: 'ALPHA' }, 'gauge', ['resource'], () => series),
  );
  const text = reg.render();
  assert.ok(text.includes('many_series{resource="r299999"} 299999'));
});
