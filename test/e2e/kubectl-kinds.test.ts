/**
 * kubectl v1.32 against the server for the built-in kinds' behaviour: the generator commands
 * (create deployment, expose, create service), allocated addresses and node ports, server-side
 * validation errors, and logs/exec answering at once for pods without a node agent.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { kubectlWithServer } from '../helpers/kubectl.js';
import { request } from '../helpers/server.js';

const k = kubectlWithServer('kinds');
const { kubectl, ok } = k;

test('create deployment, then expose it: the Service gets a ClusterIP from the range', async () => {
  assert.equal(
    (await ok('create', 'deployment', 'web', '--image=nginx:1.27', '--replicas=2')).trim(),
    'deployment.apps/web created',
  );
  const dep = JSON.parse(await ok('get', 'deployment', 'web', '-o', 'json'));
  assert.deepEqual([dep.spec.replicas, dep.spec.selector], [2, { matchLabels: { app: 'web' } }]);
  assert.equal(
    (await ok('expose', 'deployment', 'web', '--port', '80', '--target-port', '8080')).trim(),
    'service/web exposed',
  );
  const svc = JSON.parse(await ok('get', 'svc', 'web', '-o', 'json'));
  assert.match(svc.spec.clusterIP, /^10\.0\.0\.([2-9]|[1-9]\d|1\d\d|2[0-4]\d|25[0-4])$/);
  assert.deepEqual(svc.spec.clusterIPs, [svc.spec.clusterIP]);
  assert.deepEqual(
    [
      svc.spec.type,
      svc.spec.selector,
      svc.spec.ports[0].port,
      svc.spec.ports[0].targetPort,
      svc.spec.ports[0].protocol,
    ],
    ['ClusterIP', { app: 'web' }, 80, 8080, 'TCP'],
  );
  const columns = await ok(
    'get',
    'svc',
    'web',
    '-o',
    'custom-columns=NAME:.metadata.name,CLUSTER-IP:.spec.clusterIP,TYPE:.spec.type',
  );
  assert.match(columns, new RegExp(`^web\\s+${svc.spec.clusterIP.replaceAll('.', '\\.')}\\s+ClusterIP$`, 'm'));
});

test('create service nodeport: a node port from the range; a taken one is refused', async () => {
  assert.equal((await ok('create', 'service', 'nodeport', 'np', '--tcp=80:8080')).trim(), 'service/np created');
  const port = Number(await ok('get', 'svc', 'np', '-o', 'jsonpath={.spec.ports[0].nodePort}'));
  assert.ok(port >= 30000 && port <= 32767, String(port));
  const clash = await kubectl('create', 'service', 'nodeport', 'np2', '--tcp=81:8080', `--node-port=${port}`);
  assert.equal(clash.code, 1);
  assert.match(
    clash.stderr,
    new RegExp(`spec.ports\\[0\\].nodePort: Invalid value: ${port}: provided port is already allocated`),
  );
  assert.equal(
    (await ok('create', 'service', 'clusterip', 'headless', '--clusterip=None', '--tcp=80')).trim(),
    'service/headless created',
  );
  assert.equal(await ok('get', 'svc', 'headless', '-o', 'jsonpath={.spec.clusterIP}'), 'None');
});

test("create -f of an invalid Deployment prints the server's field errors", async () => {
  const file = join(k.dir, 'bad.yaml');
  writeFileSync(
    file,
    `apiVersion: apps/v1
kind: Deployment
metadata: {name: bad}
spec:
  selector: {matchLabels: {app: one}}
  template:
    metadata: {labels: {app: two}}
    spec:
      containers:
      - {name: c, image: nginx, ports: [{containerPort: 80}, {containerPort: 80}]}
`,
  );
  const r = await kubectl('create', '-f', file);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /The Deployment "bad" is invalid/);
  assert.match(
    r.stderr,
    /spec\.template\.metadata\.labels: Invalid value: map\[string\]string\{"app":"two"\}: `selector` does not match template `labels`/,
  );
  assert.match(r.stderr, /spec\.template\.spec\.containers\[0\]\.ports\[1\]: Duplicate value: "80\/TCP"/);
});

test('logs and exec of a pod without a node answer at once; once bound to a node that does not exist, logs say so', async () => {
  assert.equal((await ok('run', 'solo', '--image=nginx:1.27')).trim(), 'pod/solo created');
  assert.equal(await ok('logs', 'solo'), '', 'an unscheduled pod has no log yet (upstream: empty)');
  const exec = await kubectl('exec', 'solo', '--', 'ls');
  assert.equal(exec.code, 1);
  assert.match(exec.stderr, /Error from server \(BadRequest\)/);
  const bind = await request(k.url, 'POST', '/api/v1/namespaces/default/pods/solo/binding', {
    target: { kind: 'Node', name: 'n1' },
  });
  assert.equal(bind.status, 201, bind.text);
  assert.equal(await ok('get', 'pod', 'solo', '-o', 'jsonpath={.spec.nodeName}'), 'n1');
  const logs = await kubectl('logs', 'solo');
  assert.equal(logs.code, 1);
  assert.match(logs.stderr, /Error from server \(NotFound\): nodes "n1" not found/);
});
