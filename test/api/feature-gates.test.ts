/**
 * Feature-gate lifecycle (resource-api.md "Feature-gate lifecycle"): alpha off, beta on, GA
 * locked on, deprecated gates warn, removed and unknown gates fail at start with upstream's
 * messages; AllAlpha/AllBeta; the server refuses to start on a bad gate.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { FEATURE_GATES, applyFeatureGates, defaultGates, type ResolvedGates } from '../../src/api/feature-gates.js';
import { parseArgs } from '../../src/server/options.js';

const apply = (...values: string[]): ResolvedGates => {
  const r: ResolvedGates = { gates: defaultGates(), warnings: [] };
  for (const v of values) applyFeatureGates(v, r);
  return r;
};
const flagError = (value: string, msg: string) => ({
  message: `invalid argument "${value}" for "--feature-gates" flag: ${msg}`,
});

test('every gate the spec names is registered with its v1.32 stage and default', () => {
  const want: [string, string, boolean][] = [
    ['AllowUnsafeMalformedObjectDeletion', 'ALPHA', false],
    ['CBORServingAndStorage', 'ALPHA', false],
    ['APIResponseCompression', 'BETA', true],
    ['StructuredAuthenticationConfiguration', 'BETA', true],
    ['AnonymousAuthConfigurableEndpoints', 'BETA', true],
    ['AuthorizeWithSelectors', 'BETA', true],
    ['AuthorizeNodeWithSelectors', 'BETA', true],
    ['WatchList', 'BETA', true],
  ];
  for (const [name, stage, def] of want) {
    assert.equal(FEATURE_GATES[name]?.stage, stage, name);
    assert.equal(defaultGates()[name], def, name);
  }
  for (const g of Object.values(FEATURE_GATES)) {
    if (g.stage === 'ALPHA') assert.equal(g.default, false);
    if (g.stage === 'GA') assert.deepEqual([g.default, g.lockToDefault], [true, true]);
  }
});

test('alpha can be enabled and beta disabled, silently; later values win; boolean spellings as strconv.ParseBool', () => {
  const r = apply(
    'AllowUnsafeMalformedObjectDeletion=true,APIResponseCompression=false',
    'APIResponseCompression=T',
    'WatchList=0',
  );
  assert.equal(r.gates.AllowUnsafeMalformedObjectDeletion, true);
  assert.equal(r.gates.APIResponseCompression, true);
  assert.equal(r.gates.WatchList, false);
  assert.deepEqual(r.warnings, []);
});

test('GA gates are locked on: true warns, false fails at start', () => {
  assert.deepEqual(apply('RetryGenerateName=true').warnings, [
    'Setting GA feature gate RetryGenerateName=true. It will be removed in a future release.',
  ]);
  assert.throws(
    () => apply('RetryGenerateName=false'),
    flagError(
      'RetryGenerateName=false',
      'cannot set feature gate RetryGenerateName to false, feature is locked to true',
    ),
  );
});

test('deprecated gates warn when set', () => {
  assert.deepEqual(apply('DefaultHostNetworkHostPortsInPodTemplates=true').warnings, [
    'Setting deprecated feature gate DefaultHostNetworkHostPortsInPodTemplates=true. It will be removed in a future release.',
  ]);
});

test('unknown and removed gates, malformed entries: upstream messages', () => {
  assert.throws(() => apply('NoSuchGate=true'), flagError('NoSuchGate=true', 'unrecognized feature gate: NoSuchGate'));
  assert.throws(
    () => apply('APISelfSubjectReview=true'),
    flagError('APISelfSubjectReview=true', 'unrecognized feature gate: APISelfSubjectReview'),
  );
  assert.throws(() => apply('WatchList'), flagError('WatchList', 'missing bool value for WatchList'));
});

test('AllAlpha and AllBeta switch every unlocked gate of that stage; explicit gates override', () => {
  const r = apply('AllAlpha=true,AllBeta=false,WatchList=true');
  for (const [name, g] of Object.entries(FEATURE_GATES)) {
    if (g.stage === 'ALPHA') assert.equal(r.gates[name], true, name);
    if (g.stage === 'BETA' && name !== 'WatchList') assert.equal(r.gates[name], false, name);
    if (g.stage === 'GA') assert.equal(r.gates[name], true, name);
  }
  assert.equal(r.gates.WatchList, true);
});

test('options carry the effective gates and the warnings', () => {
  const o = parseArgs(['--feature-gates', 'CBORServingAndStorage=true', '--feature-gates=KMSv2=true']);
  assert.equal(o.featureGates.CBORServingAndStorage, true);
  assert.equal(o.featureGates.APIResponseCompression, true, 'defaults are filled in');
  assert.deepEqual(o.warnings, ['Setting GA feature gate KMSv2=true. It will be removed in a future release.']);
});

test('the server refuses to start on an unknown or a locked gate', () => {
  const main = resolve(process.cwd(), 'dist/src/main.js');
  const run = (gates: string) =>
    spawnSync(
      process.execPath,
      [main, '--port', '0', '--data-dir', '/nonexistent/never-used', '--feature-gates', gates],
      { encoding: 'utf8', timeout: 20_000 },
    );
  const unknown = run('Bogus=true');
  assert.equal(unknown.status, 2);
  assert.match(unknown.stderr, /unrecognized feature gate: Bogus/);
  const locked = run('KMSv2=false');
  assert.equal(locked.status, 2);
  assert.match(locked.stderr, /cannot set feature gate KMSv2 to false, feature is locked to true/);
});
