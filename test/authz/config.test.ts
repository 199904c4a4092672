/**
 * --authorization-config: decoding, defaults and upstream's validation messages; the server
 * built from a file (named authorizers in order, a webhook with matchConditions, timeout and
 * failurePolicy), the reload on change (an invalid file keeps the running one), and the
 * startup errors.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import {
  ConfigReloader,
  loadAuthorizationConfig,
  parseAuthorizationConfig,
  type ConfigDeps,
} from '../../src/auth/authz/config.js';
import { alwaysAllow, alwaysDeny, type Authorizer } from '../../src/auth/authz/authorizer.js';
import { request, startAuthServer, startupError } from '../auth/helpers.js';
import { webhookPerFile } from './webhook-helpers.js';

const GROUPS = ['apiserver.config.plat.io'];
const w = webhookPerFile();

const webhook = (over: Record<string, unknown> = {}) => ({
  timeout: '3s',
  subjectAccessReviewVersion: 'v1',
  matchConditionSubjectAccessReviewVersion: 'v1',
  failurePolicy: 'NoOpinion',
  connectionInfo: { type: 'KubeConfigFile', kubeConfigFile: w.kubeconfig },
  ...over,
});
const doc = (authorizers: unknown[]) =>
  JSON.stringify({ apiVersion: 'apiserver.config.plat.io/v1', kind: 'AuthorizationConfiguration', authorizers });
const parse = (authorizers: unknown[]) => parseAuthorizationConfig(doc(authorizers), GROUPS);
const refusal = (authorizers: unknown[]) => {
  try {
    parse(authorizers);
  } catch (e) {
    return (e as Error).message;
  }
  return 'accepted';
};

test('decoding: YAML or JSON, defaults authorizedTTL 5m0s and unauthorizedTTL 30s, order and names kept', () => {
  const yaml = [
    'apiVersion: apiserver.config.plat.io/v1',
    'kind: AuthorizationConfiguration',
    'authorizers:',
    '- type: Webhook',
    '  name: first.hook',
    '  webhook:',
    '    timeout: 3s',
    '    subjectAccessReviewVersion: v1beta1',
    '    matchConditionSubjectAccessReviewVersion: v1',
    '    failurePolicy: Deny',
    '    connectionInfo:',
    '      type: KubeConfigFile',
    `      kubeConfigFile: ${w.kubeconfig}`,
    '    matchConditions:',
    '    - expression: has(request.resourceAttributes)',
    '- type: RBAC',
    '  name: rbac',
    '- type: Webhook',
    '  name: second',
    '  webhook:',
    '    timeout: 1s',
    '    authorizedTTL: 1m',
    '    unauthorizedTTL: 2s',
    '    subjectAccessReviewVersion: v1',
    '    matchConditionSubjectAccessReviewVersion: v1',
    '    failurePolicy: NoOpinion',
    '    connectionInfo: {type: KubeConfigFile, kubeConfigFile: "' + w.kubeconfig + '"}',
    '',
  ].join('\n');
  const cfg = parseAuthorizationConfig(yaml, GROUPS);
  assert.deepEqual(
    cfg.map((a) => [a.type, a.name]),
    [
      ['Webhook', 'first.hook'],
      ['RBAC', 'rbac'],
      ['Webhook', 'second'],
    ],
  );
  assert.deepEqual(cfg[0]!.webhook, {
    timeoutMs: 3000,
    authorizedTtlMs: 300_000,
    unauthorizedTtlMs: 30_000,
    subjectAccessReviewVersion: 'v1beta1',
    failurePolicy: 'Deny',
    kubeConfigFile: w.kubeconfig,
    matchConditions: ['has(request.resourceAttributes)'],
  });
  assert.equal(cfg[2]!.webhook!.authorizedTtlMs, 60_000);
  assert.equal(cfg[2]!.webhook!.unauthorizedTtlMs, 2_000);
  assert.deepEqual(
    parseAuthorizationConfig(doc([{ type: 'RBAC', name: 'r' }]), GROUPS),
    [{ type: 'RBAC', name: 'r' }],
    'JSON',
  );
});

test('validation: upstream field paths and messages', () => {
  const rows: [unknown[], string][] = [
    [[], 'authorizers: Required value: at least one authorization mode must be defined'],
    [[{ name: 'x' }], 'authorizers[0].type: Required value'],
    [
      [{ type: 'Magic', name: 'x' }],
      'authorizers[0].type: Unsupported value: "Magic": supported values: "AlwaysAllow", "AlwaysDeny", "Node", "RBAC", "Webhook"',
    ],
    [
      [
        { type: 'RBAC', name: 'a' },
        { type: 'RBAC', name: 'b' },
      ],
      'authorizers[1].type: Duplicate value: "RBAC"',
    ],
    [[{ type: 'RBAC' }], 'authorizers[0].name: Required value'],
    [
      [{ type: 'RBAC', name: 'Bad_Name' }],
      'authorizers[0].name: Invalid value: "Bad_Name": authorizer name is invalid: a lowercase RFC 1123 subdomain',
    ],
    [
      [
        { type: 'Webhook', name: 'a', webhook: webhook() },
        { type: 'Webhook', name: 'a', webhook: webhook() },
      ],
      'authorizers[1].name: Duplicate value: "a"',
    ],
    [
      [{ type: 'RBAC', name: 'r', webhook: webhook() }],
      'authorizers[0].webhook: Invalid value: "non-null": may only be specified when type=Webhook',
    ],
    [[{ type: 'Webhook', name: 'w' }], 'authorizers[0].webhook: Required value: required when type=Webhook'],
    [
      [{ type: 'Webhook', name: 'w', webhook: webhook({ timeout: undefined }) }],
      'authorizers[0].webhook.timeout: Required value',
    ],
    [
      [{ type: 'Webhook', name: 'w', webhook: webhook({ timeout: '45s' }) }],
      'authorizers[0].webhook.timeout: Invalid value: "45s": must be > 0s and <= 30s',
    ],
    [
      [{ type: 'Webhook', name: 'w', webhook: webhook({ authorizedTTL: '-1s' }) }],
      'authorizers[0].webhook.authorizedTTL: Invalid value: "-1s": must be > 0s',
    ],
    [
      [{ type: 'Webhook', name: 'w', webhook: webhook({ subjectAccessReviewVersion: undefined }) }],
      'authorizers[0].webhook.subjectAccessReviewVersion: Required value',
    ],
    [
      [{ type: 'Webhook', name: 'w', webhook: webhook({ subjectAccessReviewVersion: 'v2' }) }],
      'authorizers[0].webhook.subjectAccessReviewVersion: Unsupported value: "v2": supported values: "v1", "v1beta1"',
    ],
    [
      [{ type: 'Webhook', name: 'w', webhook: webhook({ matchConditionSubjectAccessReviewVersion: 'v1beta1' }) }],
      'authorizers[0].webhook.matchConditionSubjectAccessReviewVersion: Unsupported value: "v1beta1": supported values: "v1"',
    ],
    [
      [{ type: 'Webhook', name: 'w', webhook: webhook({ failurePolicy: undefined }) }],
      'authorizers[0].webhook.failurePolicy: Required value',
    ],
    [
      [{ type: 'Webhook', name: 'w', webhook: webhook({ failurePolicy: 'Allow' }) }],
      'authorizers[0].webhook.failurePolicy: Unsupported value: "Allow": supported values: "NoOpinion", "Deny"',
    ],
    [
      [{ type: 'Webhook', name: 'w', webhook: webhook({ connectionInfo: {} }) }],
      'authorizers[0].webhook.connectionInfo.type: Required value',
    ],
    [
      [{ type: 'Webhook', name: 'w', webhook: webhook({ connectionInfo: { type: 'KubeConfigFile' } }) }],
      'authorizers[0].webhook.connectionInfo.kubeConfigFile: Required value',
    ],
    [
      [
        {
          type: 'Webhook',
          name: 'w',
          webhook: webhook({ connectionInfo: { type: 'KubeConfigFile', kubeConfigFile: 'rel.yaml' } }),
        },
      ],
      'authorizers[0].webhook.connectionInfo.kubeConfigFile: Invalid value: "rel.yaml": must be an absolute path',
    ],
    [
      [
        {
          type: 'Webhook',
          name: 'w',
          webhook: webhook({ connectionInfo: { type: 'KubeConfigFile', kubeConfigFile: '/nonexistent/k' } }),
        },
      ],
      'authorizers[0].webhook.connectionInfo.kubeConfigFile: Invalid value: "/nonexistent/k": error loading file: ENOENT',
    ],
    [
      [
        {
          type: 'Webhook',
          name: 'w',
          webhook: webhook({ connectionInfo: { type: 'InClusterConfig', kubeConfigFile: '/x' } }),
        },
      ],
      'authorizers[0].webhook.connectionInfo.kubeConfigFile: Invalid value: "/x": can only be set when type=KubeConfigFile',
    ],
    [
      [{ type: 'Webhook', name: 'w', webhook: webhook({ matchConditions: [{ expression: ' ' }] }) }],
      'authorizers[0].webhook.matchConditions[0].expression: Required value',
    ],
    [
      [
        {
          type: 'Webhook',
          name: 'w',
          webhook: webhook({ matchConditions: [{ expression: 'true' }, { expression: 'true' }] }),
        },
      ],
      'authorizers[0].webhook.matchConditions[1].expression: Duplicate value: "true"',
    ],
    [
      [{ type: 'Webhook', name: 'w', webhook: webhook({ matchConditions: [{ expression: 'request.user ==' }] }) }],
      'authorizers[0].webhook.matchConditions[0].expression: Invalid value: "request.user ==": compilation failed: ',
    ],
    [
      [
        {
          type: 'Webhook',
          name: 'w',
          webhook: webhook({
            matchConditions: Array.from({ length: 65 }, (_, i) => ({ expression: `request.user == "u${i}"` })),
          }),
        },
      ],
      'authorizers[0].webhook.matchConditions: Too many: 65: must have at most 64 items',
    ],
    [[{ type: 'RBAC', name: 'r', extra: 1 }], 'strict decoding error: unknown field "authorizers[0].extra"'],
  ];
  for (const [authorizers, want] of rows) {
    const got = refusal(authorizers);
    assert.ok(got.startsWith(want), `${JSON.stringify(authorizers).slice(0, 120)}\n got: ${got}\nwant: ${want}`);
  }
  assert.equal(
    refusal([
      {
        type: 'Webhook',
        name: 'w',
        webhook: webhook({
          matchConditions: Array.from({ length: 64 }, (_, i) => ({ expression: `request.user == "u${i}"` })),
        }),
      },
    ]),
    'accepted',
    '64 conditions are fine',
  );
  assert.equal(
    refusal([
      { type: 'Webhook', name: 'a', webhook: webhook() },
      { type: 'Webhook', name: 'b', webhook: webhook() },
    ]),
    'accepted',
    'Webhook may repeat',
  );
  assert.match(
    refusal([{ name: 'x' }, { type: 'RBAC' }]),
    /^\[authorizers\[0\]\.type: Required value, authorizers\[1\]\.name: Required value\]$/,
    'several errors at once',
  );
  assert.throws(
    () =>
      parseAuthorizationConfig(
        '{"apiVersion":"apiserver.config.plat.io/v2","kind":"AuthorizationConfiguration"}',
        GROUPS,
      ),
    /no kind "AuthorizationConfiguration" is registered for version "apiserver.config.plat.io\/v2"/,
  );
});

test('reloader: only a changed, valid content is applied; an invalid one is reported once and kept out; started, it picks up changes by itself', async () => {
  const path = w.pki.path('reload.json');
  const deps: ConfigDeps = {
    configGroups: GROUPS,
    reviewGroup: 'authorization.plat.io',
    builtIn: { AlwaysAllow: alwaysAllow, AlwaysDeny: alwaysDeny },
  };
  writeFileSync(path, doc([{ type: 'AlwaysDeny', name: 'deny' }]));
  const first = loadAuthorizationConfig(path, deps);
  assert.deepEqual(
    first.authorizers.map((z) => z.name),
    ['AlwaysDeny'],
  );
  const applied: string[][] = [],
    reports: string[] = [];
  const r = new ConfigReloader(
    path,
    first.hash,
    deps,
    (list: Authorizer[]) => applied.push(list.map((z) => z.name)),
    (m) => reports.push(m),
    200,
  );
  r.check();
  assert.deepEqual(applied, [], 'same content: nothing to do');
  writeFileSync(
    path,
    doc([
      { type: 'AlwaysAllow', name: 'allow' },
      { type: 'AlwaysDeny', name: 'deny' },
    ]),
  );
  r.check();
  assert.deepEqual(applied, [['AlwaysAllow', 'AlwaysDeny']]);
  writeFileSync(path, doc([{ type: 'AlwaysAllow' }]));
  r.check();
  r.check();
  assert.equal(applied.length, 1);
  assert.equal(reports.length, 1, 'reported once');
  assert.match(reports[0]!, /keeping the previous configuration: authorizers\[0\]\.name: Required value/);
  // started: the periodic re-read (200 ms here, 60 s in the server) or the file poll picks up a change
  r.start();
  try {
    writeFileSync(path, doc([{ type: 'AlwaysDeny', name: 'deny-again' }]));
    const deadline = Date.now() + 5_000;
    while (applied.length < 2 && Date.now() < deadline) await new Promise((done) => setTimeout(done, 50));
    assert.deepEqual(applied[1], ['AlwaysDeny']);
  } finally {
    r.stop();
  }
});

const TOKENS = 'bob-token,bob,uid-b,dev\ncarol-token,carol,uid-c\n';

test('server: the chain of the file (webhook with matchConditions, then RBAC), timeout under failurePolicy Deny, reload on change', async () => {
  writeFileSync(w.pki.path('tokens.csv'), TOKENS);
  const configPath = w.pki.path('authz.yaml');
  const write = (hookOver: Record<string, unknown>, rest: unknown[] = [{ type: 'RBAC', name: 'rbac' }]) =>
    writeFileSync(configPath, doc([{ type: 'Webhook', name: 'hook', webhook: webhook(hookOver) }, ...rest]));
  // the webhook only sees resource requests of group "dev" members in namespace "hooked"
  write({
    failurePolicy: 'Deny',
    timeout: '1s',
    matchConditions: [
      { expression: 'has(request.resourceAttributes)' },
      { expression: "request.resourceAttributes.namespace == 'hooked'" },
      { expression: "'dev' in request.groups" },
    ],
  });
  w.hook.answer = (r) =>
    r.spec.resourceAttributes.resource === 'secrets'
      ? { delayMs: 5_000 }
      : { status: { allowed: r.spec.resourceAttributes.verb === 'list' } };
  const s = await startAuthServer([
    '--token-auth-file',
    w.pki.path('tokens.csv'),
    '--authorization-config',
    configPath,
  ]);
  let stderr = '';
  s.proc.stderr!.on('data', (d) => {
    stderr += d;
  });
  try {
    const tls = { ca: readFileSync(`${s.dataDir}/pki/ca.crt`) };
    const as = (t: string, method: string, p: string) =>
      request(s.secureUrl, tls, method, p, undefined, { authorization: `Bearer ${t}` });
    w.hook.reviews.length = 0;
    assert.equal(
      (await as('bob-token', 'GET', '/api/v1/namespaces/hooked/configmaps')).status,
      200,
      'conditions true: the webhook allows',
    );
    assert.equal(
      (await as('carol-token', 'GET', '/api/v1/namespaces/hooked/configmaps')).status,
      403,
      'carol is not in dev: skipped, RBAC has no opinion',
    );
    assert.equal(
      (await as('bob-token', 'GET', '/api/v1/namespaces/other/configmaps')).status,
      403,
      'another namespace: skipped',
    );
    assert.equal((await as('bob-token', 'GET', '/apis')).status, 200, 'a path: skipped, RBAC allows discovery');
    assert.equal(w.hook.reviews.length, 1, 'only the matching request reached the webhook');
    const started = Date.now();
    const slow = await as('bob-token', 'GET', '/api/v1/namespaces/hooked/secrets');
    assert.ok(Date.now() - started < 4_000, 'cut by the 1 s timeout');
    assert.equal(slow.status, 500, 'failurePolicy Deny with the error: upstream answers 500');
    assert.match(slow.json.message, /context deadline exceeded$/);

    // reload: the webhook now sees everything and fails open; RBAC is gone from the chain
    write({ failurePolicy: 'NoOpinion' }, [{ type: 'AlwaysDeny', name: 'deny' }]);
    w.hook.answer = () => ({ status: { allowed: false, denied: true, reason: 'reloaded hook says no' } });
    const deadline = Date.now() + 15_000;
    let r = await as('bob-token', 'GET', '/apis');
    for (let i = 0; i < 100 && r.status === 200 && Date.now() < deadline; i++) {
      await new Promise((done) => setTimeout(done, 150));
      r = await as('bob-token', 'GET', '/apis');
    }
    assert.equal(r.status, 403, 'the new chain is in force');
    assert.equal(r.json.message, 'forbidden: User "bob" cannot get path "/apis": reloaded hook says no');

    // an invalid file is reported and the running chain kept
    writeFileSync(configPath, doc([{ type: 'Magic', name: 'x' }]));
    const until = Date.now() + 3_000;
    while (!stderr.includes('authorization config reload failed') && Date.now() < until)
      await new Promise((done) => setTimeout(done, 100));
    assert.match(
      stderr,
      /authorization config reload failed, keeping the previous configuration: .*authorizers\[0\]\.type: Unsupported value: "Magic"/,
    );
    assert.equal(
      (await as('bob-token', 'GET', '/apis')).json.message,
      'forbidden: User "bob" cannot get path "/apis": reloaded hook says no',
    );
  } finally {
    await s.stop();
    s.cleanup();
  }
});

test('startup: --authorization-config with a legacy flag exits; an invalid file exits naming the problem', async () => {
  const configPath = w.pki.path('ok.yaml');
  writeFileSync(configPath, doc([{ type: 'RBAC', name: 'rbac' }]));
  const both = await startupError(['--authorization-config', configPath, '--authorization-mode', 'RBAC']);
  assert.equal(both.code, 2);
  assert.match(both.stderr, /--authorization-config cannot be used in conjunction with --authorization-mode/);
  const hookFlags = await startupError([
    '--authorization-config',
    configPath,
    '--authorization-webhook-cache-unauthorized-ttl',
    '10s',
  ]);
  assert.equal(hookFlags.code, 2);
  writeFileSync(w.pki.path('bad.yaml'), doc([{ type: 'Webhook', name: 'w', webhook: webhook({ timeout: '31s' }) }]));
  const bad = await startupError(['--authorization-config', w.pki.path('bad.yaml')]);
  assert.notEqual(bad.code, 0);
  assert.match(
    bad.stderr,
    /invalid authorization config file ".*bad\.yaml": authorizers\[0\]\.webhook\.timeout: Invalid value: "31s": must be > 0s and <= 30s/,
  );
  const missing = await startupError(['--authorization-config', w.pki.path('none.yaml')]);
  assert.match(missing.stderr, /failed to read authorization config file/);
});
