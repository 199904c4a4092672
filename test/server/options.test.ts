import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseArgs, parseDuration, DEFAULT_OPTIONS } from '../../src/server/options.js';
import { defaultGates } from '../../src/api/feature-gates.js';

test('defaults match the issue: 127.0.0.1:8080, ./data, 3 MiB bodies', () => {
  const o = parseArgs([]);
  assert.equal(o.bindAddress, '127.0.0.1');
  assert.equal(o.port, 8080);
  assert.equal(o.dataDir, './data');
  assert.equal(o.maxRequestBodyBytes, 3 * 1024 * 1024);
  assert.deepEqual(o, { ...DEFAULT_OPTIONS, featureGates: defaultGates(), warnings: [] });
});

test('flags accept --flag value and --flag=value', () => {
  const o = parseArgs(['--port=9000', '--data-dir', '/tmp/x', '--shards', '4', '--shutdown-delay-duration=1m30s', '--feature-gates', 'WatchList=false,CBORServingAndStorage=true']);
  assert.equal(o.port, 9000);
  assert.equal(o.dataDir, '/tmp/x');
  assert.equal(o.shards, 4);
  assert.equal(o.shutdownDelayMs, 90_000);
  assert.deepEqual(o.featureGates, { ...defaultGates(), WatchList: false, CBORServingAndStorage: true });
});

test('bad flags fail with exact messages', () => {
  assert.throws(() => parseArgs(['--port', 'x']), /--port must be an integer >= 0, got "x"/);
  assert.throws(() => parseArgs(['--nope=1']), /unknown flag: --nope/);
  assert.throws(() => parseArgs(['--shards', '0']), /--shards must be an integer >= 1/);
  assert.throws(() => parseArgs(['--shutdown-delay-duration', '5 minutes']), /--shutdown-delay-duration must be a duration/);
  assert.throws(() => parseArgs(['--feature-gates', 'WatchList=maybe']), { message: 'invalid argument "WatchList=maybe" for "--feature-gates" flag: invalid value of WatchList=maybe, err: strconv.ParseBool: parsing "maybe": invalid syntax' });
  assert.throws(() => parseArgs(['--data-dir']), /--data-dir needs a value/);
});

test('durations', () => {
  assert.equal(parseDuration('500ms'), 500);
  assert.equal(parseDuration('2s'), 2000);
  assert.equal(parseDuration('1h2m'), 3_720_000);
  assert.equal(parseDuration('10'), 10_000);
  assert.equal(parseDuration('1x'), undefined);
  assert.equal(parseDuration(''), undefined);
});
