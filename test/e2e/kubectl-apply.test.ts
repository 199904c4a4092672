/**
 * kubectl v1.32 against the real server: client-side and server-side apply, conflicts and
 * --force-conflicts, label, annotate, patch of every type, diff, server dry run and
 * server-side field validation.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { startServer, request, type TestServer } from '../helpers/server.js';
import { kubectlEnv } from '../helpers/kubectl.js';

let s: TestServer;
before(async () => {
  s = await startServer();
});
after(async () => {
  await s.stop();
  s.cleanup();
});

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs kubectl against the test server; `stdin` is the manifest for `-f -`. */
function kubectl(args: string[], stdin?: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const p = spawn('/usr/bin/kubectl', ['--server', s.url, ...args], {
      env: kubectlEnv(s),
    });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d) => {
      stdout += d;
    });
    p.stderr.on('data', (d) => {
      stderr += d;
    });
    p.on('error', reject);
    p.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    p.stdin.end(stdin ?? '');
  });
}

async function ok(args: string[], stdin?: string): Promise<string> {
  const r = await kubectl(args, stdin);
  assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

async function getJson(path: string): Promise<any> {
  const r = await request(s.url, 'GET', path);
  assert.equal(r.status, 200, r.text);
  return r.json;
}

const deployment = (name: string, image: string, ports: number[]) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
spec:
  replicas: 1
  selector:
    matchLabels: {app: ${name}}
  template:
    metadata:
      labels: {app: ${name}}
    spec:
      containers:
      - name: web
        image: ${image}
        ports:
${ports.map((p) => `        - containerPort: ${p}`).join('\n')}
`;

const configMap = (name: string, value: string, extra = '') => `apiVersion: v1
kind: ConfigMap
metadata:
  name: ${name}${extra}
data:
  key: "${value}"
`;

const DEP = '/apis/apps/v1/namespaces/default/deployments';
const CM = '/api/v1/namespaces/default/configmaps';

test('kubectl apply -f twice: created, then configured with a new image and a removed port', async () => {
  assert.match(
    await ok(['apply', '-f', '-'], deployment('k-csa', 'nginx:1', [80, 443])),
    /deployment.apps\/k-csa created/,
  );
  assert.match(
    await ok(['apply', '-f', '-'], deployment('k-csa', 'nginx:2', [80])),
    /deployment.apps\/k-csa configured/,
  );
  const d = await getJson(`${DEP}/k-csa`);
  // the removed port is gone; the rest is the applied container plus upstream's defaults
  assert.deepEqual(d.spec.template.spec.containers, [
    {
      name: 'web',
      image: 'nginx:2',
      ports: [{ containerPort: 80, protocol: 'TCP' }],
      imagePullPolicy: 'IfNotPresent',
      resources: {},
      terminationMessagePath: '/dev/termination-log',
      terminationMessagePolicy: 'File',
    },
  ]);
  assert.match(d.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration'], /nginx:2/);
  assert.ok(
    d.metadata.managedFields.some((m: any) => m.manager === 'kubectl-client-side-apply' && m.operation === 'Update'),
  );
  assert.match(
    await ok(['apply', '-f', '-'], deployment('k-csa', 'nginx:2', [80])),
    /deployment.apps\/k-csa unchanged/,
  );
});

test('kubectl apply --server-side; a second field manager conflicts until --force-conflicts', async () => {
  assert.match(
    await ok(['apply', '--server-side', '-f', '-'], configMap('k-ssa', 'one')),
    /configmap\/k-ssa serverside-applied/,
  );
  let cm = await getJson(`${CM}/k-ssa`);
  assert.deepEqual(
    cm.metadata.managedFields.map((m: any) => [m.manager, m.operation]),
    [['kubectl', 'Apply']],
  );
  const clash = await kubectl(
    ['apply', '--server-side', '--field-manager=other', '-f', '-'],
    configMap('k-ssa', 'two'),
  );
  assert.equal(clash.code, 1);
  assert.match(clash.stderr, /Apply failed with 1 conflict: conflict with "kubectl": \.data\.key/);
  assert.match(clash.stderr, /--force-conflicts/);
  assert.equal((await getJson(`${CM}/k-ssa`)).data.key, 'one');
  await ok(
    ['apply', '--server-side', '--field-manager=other', '--force-conflicts', '-f', '-'],
    configMap('k-ssa', 'two'),
  );
  cm = await getJson(`${CM}/k-ssa`);
  assert.equal(cm.data.key, 'two');
  assert.deepEqual(
    cm.metadata.managedFields.map((m: any) => m.manager),
    ['other'],
  );
});

test('kubectl apply --server-side after a client-side apply takes over without conflicts', async () => {
  await ok(['apply', '-f', '-'], configMap('k-migrate', 'one'));
  assert.match(await ok(['apply', '--server-side', '-f', '-'], configMap('k-migrate', 'two')), /serverside-applied/);
  const cm = await getJson(`${CM}/k-migrate`);
  assert.equal(cm.data.key, 'two');
  assert.match(cm.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration'], /"key":"two"/);
  assert.ok(cm.metadata.managedFields.some((m: any) => m.manager === 'kubectl' && m.operation === 'Apply'));
  assert.match(await ok(['apply', '-f', '-'], configMap('k-migrate', 'three')), /configured/);
  assert.equal((await getJson(`${CM}/k-migrate`)).data.key, 'three');
});

test('kubectl label and annotate', async () => {
  await ok(['apply', '--server-side', '-f', '-'], configMap('k-meta', 'v'));
  assert.match(await ok(['label', 'configmap', 'k-meta', 'tier=web']), /labeled/);
  assert.match(await ok(['annotate', 'configmap', 'k-meta', 'note=hello']), /annotated/);
  const cm = await getJson(`${CM}/k-meta`);
  assert.deepEqual(cm.metadata.labels, { tier: 'web' });
  assert.equal(cm.metadata.annotations.note, 'hello');
  assert.match(await ok(['label', 'configmap', 'k-meta', 'tier-']), /unlabeled/);
  assert.equal((await getJson(`${CM}/k-meta`)).metadata.labels, undefined);
});

test('kubectl patch --type=json, merge and strategic', async () => {
  await ok(['apply', '-f', '-'], deployment('k-patch', 'nginx:1', [80]));
  await ok([
    'patch',
    'deployment',
    'k-patch',
    '--type=json',
    '-p',
    '[{"op":"replace","path":"/spec/replicas","value":3}]',
  ]);
  await ok(['patch', 'deployment', 'k-patch', '--type=merge', '-p', '{"metadata":{"labels":{"via":"merge"}}}']);
  await ok([
    'patch',
    'deployment',
    'k-patch',
    '--type=strategic',
    '-p',
    '{"spec":{"template":{"spec":{"containers":[{"name":"side","image":"busybox:1"}]}}}}',
  ]);
  const d = await getJson(`${DEP}/k-patch`);
  assert.equal(d.spec.replicas, 3);
  assert.equal(d.metadata.labels.via, 'merge');
  assert.deepEqual(
    d.spec.template.spec.containers.map((c: any) => c.name),
    ['web', 'side'],
  );
  const failed = await kubectl([
    'patch',
    'deployment',
    'k-patch',
    '--type=json',
    '-p',
    '[{"op":"test","path":"/spec/replicas","value":9}]',
  ]);
  assert.notEqual(failed.code, 0);
  assert.match(failed.stderr, /test failed/);
});

test('kubectl diff -f: exit 1 with the change, exit 0 without; nothing persisted', async () => {
  await ok(['apply', '-f', '-'], configMap('k-diff', 'old'));
  const before = await getJson(`${CM}/k-diff`);
  const changed = await kubectl(['diff', '-f', '-'], configMap('k-diff', 'new'));
  assert.equal(changed.code, 1, changed.stderr);
  assert.match(changed.stdout, /-\s+key: old/);
  assert.match(changed.stdout, /\+\s+key: new/);
  const same = await kubectl(['diff', '-f', '-'], configMap('k-diff', 'old'));
  assert.equal(same.code, 0, same.stdout + same.stderr);
  // diff's default manager (kubectl-client-side-apply, operation Apply) conflicts with the
  // client-side apply's Update entry, as upstream; --force-conflicts previews anyway
  const ssa = await kubectl(['diff', '--server-side', '--force-conflicts', '-f', '-'], configMap('k-diff', 'new'));
  assert.equal(ssa.code, 1, ssa.stderr);
  assert.match(ssa.stdout, /\+\s+key: new/);
  assert.equal((await getJson(`${CM}/k-diff`)).metadata.resourceVersion, before.metadata.resourceVersion);
});

test('kubectl apply --dry-run=server changes nothing', async () => {
  await ok(['apply', '-f', '-'], configMap('k-dry', 'kept'));
  const before = await getJson(`${CM}/k-dry`);
  assert.match(
    await ok(['apply', '--dry-run=server', '-f', '-'], configMap('k-dry', 'dropped')),
    /configured \(server dry run\)/,
  );
  assert.match(
    await ok(['apply', '--dry-run=server', '-f', '-'], configMap('k-dry-new', 'x')),
    /created \(server dry run\)/,
  );
  const after = await getJson(`${CM}/k-dry`);
  assert.equal(after.data.key, 'kept');
  assert.equal(after.metadata.resourceVersion, before.metadata.resourceVersion);
  assert.equal((await request(s.url, 'GET', `${CM}/k-dry-new`)).status, 404);
});

test('kubectl create --validate=strict rejects an unknown field; --validate=warn prints a warning', async () => {
  const manifest = configMap('k-valid', 'v', '\n  bogus: 1');
  const strict = await kubectl(['create', '--validate=strict', '-f', '-'], manifest);
  assert.equal(strict.code, 1);
  assert.match(strict.stderr, /BadRequest/);
  assert.match(strict.stderr, /unknown field "metadata.bogus"/);
  assert.equal((await request(s.url, 'GET', `${CM}/k-valid`)).status, 404);
  const warn = await kubectl(['create', '--validate=warn', '-f', '-'], manifest);
  assert.equal(warn.code, 0, warn.stderr);
  assert.match(warn.stderr, /Warning: unknown field "metadata.bogus"/);
  assert.equal((await getJson(`${CM}/k-valid`)).metadata.bogus, undefined);
});
