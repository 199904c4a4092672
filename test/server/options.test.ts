import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseArgs, parseDuration, DEFAULT_OPTIONS } from '../../src/server/options.js';
import { defaultGates } from '../../src/api/feature-gates.js';

test('defaults: secure port 127.0.0.1:6443, plain port off (loopback when on), ./data, 3 MiB bodies', () => {
  const o = parseArgs([]);
  assert.equal(o.bindAddress, '127.0.0.1');
  assert.equal(o.securePort, 6443);
  assert.equal(o.port, -1);
  assert.equal(o.insecureBindAddress, '127.0.0.1');
  assert.equal(o.dataDir, './data');
  assert.equal(o.maxRequestBodyBytes, 3 * 1024 * 1024);
  assert.deepEqual(o, { ...DEFAULT_OPTIONS, featureGates: defaultGates(), warnings: [] });
});

test('flags accept --flag value and --flag=value', () => {
  const o = parseArgs([
    '--port=9000',
    '--data-dir',
    '/tmp/x',
    '--shards',
    '4',
    '--shutdown-delay-duration=1m30s',
    '--feature-gates',
    'WatchList=false,CBORServingAndStorage=true',
  ]);
  assert.equal(o.port, 9000);
  assert.equal(o.dataDir, '/tmp/x');
  assert.equal(o.shards, 4);
  assert.equal(o.shutdownDelayMs, 90_000);
  assert.deepEqual(o.featureGates, { ...defaultGates(), WatchList: false, CBORServingAndStorage: true });
});

test('bad flags fail with exact messages', () => {
  assert.throws(() => parseArgs(['--port', 'x']), /--port must be an integer between 0 and 65535 or off, got "x"/);
  assert.throws(
    () => parseArgs(['--secure-port', 'off']),
    /--port and --secure-port are both off: nothing would be served/,
  );
  assert.equal(parseArgs(['--port', '8080', '--secure-port', 'off']).securePort, -1);
  assert.throws(() => parseArgs(['--nope=1']), /unknown flag: --nope/);
  assert.throws(() => parseArgs(['--shards', '0']), /--shards must be an integer >= 1/);
  assert.throws(
    () => parseArgs(['--shutdown-delay-duration', '5 minutes']),
    /--shutdown-delay-duration must be a duration/,
  );
  assert.throws(() => parseArgs(['--feature-gates', 'WatchList=maybe']), {
    message:
      'invalid argument "WatchList=maybe" for "--feature-gates" flag: invalid value of WatchList=maybe, err: strconv.ParseBool: parsing "maybe": invalid syntax',
  });
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

test('boolean flags: alone they mean true; a following true/false or =value is their value', () => {
  assert.equal(parseArgs(['--enable-bootstrap-token-auth']).enableBootstrapTokenAuth, true);
  assert.equal(parseArgs(['--enable-bootstrap-token-auth', '--port', '1']).port, 1);
  assert.equal(parseArgs(['--anonymous-auth', 'false']).anonymousAuth, false);
  assert.equal(parseArgs(['--anonymous-auth=false']).anonymousAuth, false);
  assert.throws(
    () => parseArgs(['--enable-bootstrap-token-auth=yes']),
    /--enable-bootstrap-token-auth must be true or false, got "yes"/,
  );
});

test('--authentication-token-webhook-version: v1beta1 by default; v1; the group-qualified spelling', () => {
  assert.equal(parseArgs([]).authenticationTokenWebhookVersion, 'v1beta1');
  assert.equal(parseArgs(['--authentication-token-webhook-version', 'v1']).authenticationTokenWebhookVersion, 'v1');
  assert.equal(
    parseArgs(['--authentication-token-webhook-version', 'authentication.plat.io/v1beta1'])
      .authenticationTokenWebhookVersion,
    'v1beta1',
  );
  assert.equal(parseArgs([]).authenticationTokenWebhookCacheTtlMs, 120_000);
});

test('CSR signing flags: the pair together, a positive duration (default 8760h)', () => {
  assert.equal(parseArgs([]).clusterSigningDurationMs, 8760 * 3_600_000);
  const o = parseArgs([
    '--cluster-signing-cert-file',
    '/c',
    '--cluster-signing-key-file=/k',
    '--cluster-signing-duration',
    '720h0m0s',
  ]);
  assert.deepEqual(
    [o.clusterSigningCertFile, o.clusterSigningKeyFile, o.clusterSigningDurationMs],
    ['/c', '/k', 720 * 3_600_000],
  );
  assert.throws(
    () => parseArgs(['--cluster-signing-cert-file', '/c']),
    /--cluster-signing-cert-file and --cluster-signing-key-file must be given together/,
  );
  assert.throws(
    () => parseArgs(['--cluster-signing-duration', '0s']),
    /--cluster-signing-duration must be a positive duration such as 8760h, got "0s"/,
  );
});

test('hidden flags: benchmark knobs and test fixtures are options (not environment variables), undocumented', async () => {
  const o = parseArgs([
    '--actor-pipeline-depth',
    '3',
    '--actor-heavy-per-batch=100000',
    '--tls-front-inline',
    '--proxy-allow-loopback',
    '--test-actor-faults',
    '/tmp/f',
    '--test-fail-commit-match',
    'poison',
  ]);
  assert.equal(o.actorPipelineDepth, 3);
  assert.equal(o.actorHeavyPerBatch, 100000);
  assert.equal(o.tlsFrontInline, true);
  assert.equal(o.proxyAllowLoopback, true);
  assert.deepEqual(o.testFaults, { dir: '/tmp/f', failCommitMatch: 'poison' });
  assert.throws(
    () => parseArgs(['--actor-pipeline-depth', '0']),
    /--actor-pipeline-depth must be an integer >= 1, got "0"/,
  );
  const { FLAG_NAMES } = await import('../../src/server/options.js');
  for (const hidden of [
    'actor-pipeline-depth',
    'actor-heavy-per-batch',
    'tls-front-inline',
    'proxy-allow-loopback',
    'test-actor-faults',
    'test-fail-commit-match',
  ]) {
    assert.ok(!FLAG_NAMES.includes(hidden), `--${hidden} stays out of --help and docs/flags.md`);
  }
});
