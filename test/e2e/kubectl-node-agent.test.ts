/**
 * kubectl v1.32 reaching a (fake) node agent through the secure port: logs (with follow),
 * exec over WebSocket v5.channel.k8s.io (exit codes, stdin; translated to SPDY for an agent
 * that only speaks SPDY; kubectl v1.28's SPDY piped), attach, port-forward (WebSocket-tunneled
 * SPDY unwrapped for an agent that only speaks SPDY, as a kubelet), nodes/proxy, and the
 * failures of a slow or vanished agent, which never hold up other requests.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { createServer as createHttpServer, type Server } from 'node:http';
import { SpdyPortForward } from '../helpers/spdy-portforward.js';
import { startServer, request, type TestServer } from '../helpers/server.js';
import { runKubectl, KUBECTL, type Run } from '../helpers/kubectl.js';
import { startFakeKubelet, type FakeKubelet } from '../helpers/fake-kubelet.js';
import { until } from '../helpers/poll.js';

let s: TestServer;
let agent: FakeKubelet;
let home = '';
let kubeconfig = '';
let web: Server;

const kubectl = (...args: string[]): Promise<Run> =>
  runKubectl(['--request-timeout', '20s', ...args], { KUBECONFIG: kubeconfig, HOME: home });

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

function node(name: string, port: number): object {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name },
    status: {
      addresses: [
        { type: 'InternalIP', address: '127.0.0.1' },
        { type: 'Hostname', address: name },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: port } },
    },
  };
}

function pod(name: string, nodeName: string, containers: string[]): object {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default' },
    spec: { nodeName, containers: containers.map((c) => ({ name: c, image: 'busybox' })) },
  };
}

before(async () => {
  s = await startServer([
    '--secure-port',
    '0',
    '--kubelet-timeout',
    '1s',
    '--kubelet-preferred-address-types',
    'InternalIP,Hostname',
  ]);
  home = mkdtempSync(join(tmpdir(), 'plat-kubectl-agent-'));
  kubeconfig = join(s.dataDir, 'admin.kubeconfig');
  const pki = (f: string) => readFileSync(join(s.dataDir, 'pki', f));
  agent = await startFakeKubelet({ cert: pki('apiserver.crt'), key: pki('apiserver.key'), ca: pki('ca.crt') });
  agent.logs.set('default/p1/c', ['one', 'two', 'three']);
  // the pod's "port": an HTTP server the agent forwards to
  web = createHttpServer((req, res) => res.end(`hello from the pod: ${req.method} ${req.url}\n`));
  await new Promise<void>((r) => web.listen(0, '127.0.0.1', () => r()));
  const webPort = (web.address() as { port: number }).port;
  agent.portForward = (ws) => {
    const pf = new SpdyPortForward((b) => ws.send(b), webPort);
    ws.onMessage = (m) => pf.feed(m);
    ws.onClose = () => pf.close();
  };
  for (const [path, body] of [
    ['/api/v1/nodes', node('n1', agent.port)],
    ['/api/v1/nodes', node('gone', await freePort())],
    ['/api/v1/namespaces/default/pods', pod('p1', 'n1', ['c'])],
    ['/api/v1/namespaces/default/pods', pod('p2', 'n1', ['a', 'b', 'waiting', 'spdy'])],
    ['/api/v1/namespaces/default/pods', pod('lost', 'gone', ['c'])],
  ] as const) {
    const r = await request(s.url, 'POST', path, body);
    assert.equal(r.status, 201, r.text);
  }
  const p1 = (await request(s.url, 'GET', '/api/v1/namespaces/default/pods/p1')).json;
  const st = await request(s.url, 'PUT', '/api/v1/namespaces/default/pods/p1/status', {
    ...p1,
    status: { phase: 'Running' },
  });
  assert.equal(st.status, 200, st.text);
});

after(async () => {
  await agent?.close();
  await new Promise<void>((r) => (web ? web.close(() => r()) : r()));
  if (s) {
    await s.stop();
    s.cleanup();
  }
  if (home) rmSync(home, { recursive: true, force: true });
});

test('kubectl logs reads the container log from the node agent, with the kubelet client certificate', async () => {
  const r = await kubectl('logs', 'p1');
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'one\ntwo\nthree\n');
  const tail = await kubectl('logs', 'p1', '--tail=1');
  assert.equal(tail.stdout, 'three\n');
  const call = agent.calls.find((c) => c.path === '/containerLogs/default/p1/c?tailLines=1');
  assert.ok(call, JSON.stringify(agent.calls));
  assert.equal(call.user, 'plat-apiserver-kubelet-client');
});

test('container defaulting and upstream errors: several containers, an unknown one, one waiting to start, bad options', async () => {
  const several = await request(s.url, 'GET', '/api/v1/namespaces/default/pods/p2/log');
  assert.equal(several.status, 400);
  assert.equal(
    several.json.message,
    'a container name must be specified for pod p2, choose one of: [a b waiting spdy]',
  );
  const defaulted = await kubectl('logs', 'p2');
  assert.match(
    defaulted.stderr,
    /Defaulted container "a" out of: a, b, waiting, spdy/,
    'kubectl picks the first container itself',
  );
  const unknown = await request(s.url, 'GET', '/api/v1/namespaces/default/pods/p2/log?container=zz');
  assert.equal(unknown.status, 400);
  assert.equal(unknown.json.message, 'container zz is not valid for pod p2');
  const waiting = await kubectl('logs', 'p2', '-c', 'waiting');
  assert.equal(waiting.code, 1);
  assert.match(
    waiting.stderr,
    /Error from server \(BadRequest\): container "waiting" in pod "p2" is waiting to start: ContainerCreating/,
  );
  const invalid = await request(s.url, 'GET', '/api/v1/namespaces/default/pods/p1/log?tailLines=-2&sinceSeconds=0');
  assert.equal(invalid.status, 422);
  assert.equal(
    invalid.json.message,
    'PodLogOptions "p1" is invalid: tailLines: Invalid value: -2: must be greater than or equal to 0, sinceSeconds: Invalid value: 0: must be greater than 0',
  );
});

test('kubectl logs -f streams lines as the agent writes them', async () => {
  const proc = spawn(KUBECTL, ['logs', '-f', 'p1'], { env: { ...process.env, KUBECONFIG: kubeconfig, HOME: home } });
  let out = '';
  proc.stdout.on('data', (d: Buffer) => {
    out += d;
  });
  try {
    await until(
      async () => (agent.followers('default/p1/c') === 1 && out.includes('three\n') ? true : undefined),
      'the follow to reach the agent',
    );
    for (let i = 0; i < 3; i++) {
      agent.emit('default/p1/c', `later-${i}\n`);
      await until(async () => (out.includes(`later-${i}\n`) ? true : undefined), `line ${i} to arrive`);
    }
    assert.equal(out, 'one\ntwo\nthree\nlater-0\nlater-1\nlater-2\n');
  } finally {
    proc.kill();
  }
  await until(
    async () => (agent.followers('default/p1/c') === 0 ? true : undefined),
    'the agent stream to close when kubectl leaves',
  );
});

test('kubectl exec over WebSocket: exit code 3 is carried back; stdin reaches the command', async () => {
  const r = await kubectl('exec', 'p1', '--', 'sh', '-c', 'exit 3');
  assert.equal(r.code, 3, r.stderr);
  const echo = await kubectl('exec', 'p1', '--', 'echo', 'hello', 'world');
  assert.deepEqual([echo.code, echo.stdout], [0, 'hello world\n']);
  const call = agent.calls.find((c) => c.path.startsWith('/exec/default/p1/c?command=echo'));
  assert.deepEqual(call && [call.path, call.protocol, call.user], [
    '/exec/default/p1/c?command=echo&command=hello&command=world&error=1&output=1',
    'v5.channel.k8s.io',
    'plat-apiserver-kubelet-client',
  ]);
  // the TLS front's own headers (identity, client address, taken over) carry its secret: never forwarded
  assert.deepEqual(
    Object.keys(call!.headers).filter((h) => h.startsWith('x-plat') || h === 'authorization'),
    [],
  );
  const cat = await withStdin(['exec', '-i', 'p1', '--', 'cat'], 'piped through\n');
  assert.equal(cat.code, 0, cat.stderr);
  assert.equal(cat.stdout, 'piped through\n');
});

test('kubectl exec over WebSocket to an agent that only speaks SPDY/3.1: the server translates (upstream StreamTranslator)', async () => {
  const r = await kubectl('exec', 'p2', '-c', 'spdy', '--', 'sh', '-c', 'exit 4');
  assert.equal(r.code, 4, r.stderr);
  const calls = agent.calls.filter((c) => c.path.startsWith('/exec/default/p2/spdy?'));
  assert.deepEqual(
    calls.map((c) => [c.method, c.protocol]),
    [
      ['GET', 'v5.channel.k8s.io'],
      ['POST', 'SPDY/3.1'],
    ],
  );
  // the WebSocket attempt is kubectl's head; the SPDY upgrade is the server's own (kubectl did not fall back)
  assert.match(String(calls[0]!.headers['user-agent']), /^kubectl/);
  assert.equal(calls[1]!.headers['user-agent'], undefined);
  assert.equal(calls[1]!.headers['x-stream-protocol-version'], 'v4.channel.k8s.io');
  // stdin over the translation: channel 0 → the stdin stream, v5's close of stdin → its FIN
  const cat = await withStdin(['exec', '-i', 'p2', '-c', 'spdy', '--', 'cat'], 'through the translator\n');
  assert.deepEqual([cat.code, cat.stdout], [0, 'through the translator\n'], cat.stderr);
});

test('kubectl v1.28 (exec over SPDY/3.1 only) has its SPDY upgrade piped to the agent unchanged', async () => {
  const old = '/usr/lib/google-cloud-sdk/bin/kubectl.1.28';
  const r = await new Promise<Run>((done) => {
    execFile(
      old,
      ['--request-timeout', '20s', 'exec', 'p2', '-c', 'spdy', '--', 'sh', '-c', 'exit 5'],
      { env: { ...process.env, KUBECONFIG: kubeconfig, HOME: home }, timeout: 30_000 },
      (err, stdout, stderr) =>
        done({
          code: err ? Number((err as { code?: unknown }).code) : 0,
          stdout: String(stdout),
          stderr: String(stderr),
        }),
    );
  });
  assert.equal(r.code, 5, r.stderr);
  const calls = agent.calls.filter(
    (c) => c.path.startsWith('/exec/default/p2/spdy?') && /\/v1\.28\./.test(String(c.headers['user-agent'])),
  );
  assert.deepEqual(
    calls.map((c) => [c.method, c.protocol]),
    [['POST', 'SPDY/3.1']],
  );
});

test('kubectl attach -i: the container greets and echoes stdin', async () => {
  const r = await withStdin(['attach', '-i', 'p1'], 'to the container\n');
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'attached\nto the container\n');
});

/** Runs `port-forward pod/p1 :8080` with the given kubectl, fetches two paths through it, and stops it. */
async function portForwardFetches(binary: string): Promise<void> {
  const proc = spawn(binary, ['port-forward', 'pod/p1', ':8080'], {
    env: { ...process.env, KUBECONFIG: kubeconfig, HOME: home },
  });
  let out = '',
    err = '';
  proc.stdout.on('data', (d: Buffer) => {
    out += d;
  });
  proc.stderr.on('data', (d: Buffer) => {
    err += d;
  });
  try {
    const local = await until(
      async () => /Forwarding from 127\.0\.0\.1:(\d+) -> 8080/.exec(out)?.[1],
      `kubectl to listen (${err})`,
    );
    for (const path of ['/first', '/second']) {
      const res = await fetch(`http://127.0.0.1:${local}${path}`);
      assert.equal(await res.text(), `hello from the pod: GET ${path}\n`);
    }
  } finally {
    proc.kill();
  }
}

test('kubectl port-forward carries real HTTP requests to the pod: its WebSocket-tunneled SPDY is unwrapped, the agent only asked for SPDY', async () => {
  await portForwardFetches(KUBECTL);
  // the agent refuses a WebSocket port-forward (as a kubelet does): the server asked it for SPDY, once
  const calls = agent.calls.filter((c) => c.path.startsWith('/portForward/default/p1'));
  assert.deepEqual(
    calls.map((c) => [c.path, c.method, c.protocol, c.user, c.headers['x-stream-protocol-version']]),
    [['/portForward/default/p1', 'POST', 'SPDY/3.1', 'plat-apiserver-kubelet-client', 'portforward.k8s.io']],
  );
  assert.match(String(calls[0]!.headers['user-agent']), /^kubectl\/v1\.32/, "the client's own headers are kept");
  assert.deepEqual(
    Object.keys(calls[0]!.headers).filter(
      (h) => h.startsWith('sec-websocket') || h.startsWith('x-plat') || h === 'authorization',
    ),
    [],
  );
});

test('kubectl v1.28 (port-forward over SPDY/3.1 only) has its SPDY upgrade piped to the agent', async () => {
  await portForwardFetches('/usr/lib/google-cloud-sdk/bin/kubectl.1.28');
  const calls = agent.calls.filter(
    (c) => c.path.startsWith('/portForward/default/p1') && /\/v1\.28\./.test(String(c.headers['user-agent'])),
  );
  assert.deepEqual(
    calls.map((c) => [c.method, c.protocol]),
    [['POST', 'SPDY/3.1']],
  );
});

test('get --raw nodes/N/proxy reaches the agent', async () => {
  const r = await kubectl('get', '--raw', '/api/v1/nodes/n1/proxy/healthz');
  assert.deepEqual([r.code, r.stdout], [0, 'ok'], r.stderr);
});

test('a vanished agent is a dial error; a slow one times out; neither holds up other requests', async () => {
  const lost = await kubectl('logs', 'lost');
  assert.equal(lost.code, 1);
  assert.match(
    lost.stderr,
    /Error from server: Get "https:\/\/127\.0\.0\.1:\d+\/containerLogs\/default\/lost\/c": dial tcp 127\.0\.0\.1:\d+: connect: connection refused/,
  );
  const execLost = await kubectl('exec', 'lost', '--', 'echo', 'x');
  assert.notEqual(execLost.code, 0);
  assert.match(execLost.stderr, /error dialing backend: dial tcp 127\.0\.0\.1:\d+: connect: connection refused/);
  agent.delayMs = 3_000;
  try {
    let slowDone = false;
    const slow = request(s.url, 'GET', '/api/v1/namespaces/default/pods/p1/log').then((r) => {
      slowDone = true;
      return r;
    });
    const other = await request(s.url, 'GET', '/api/v1/namespaces/default/pods');
    assert.equal(other.status, 200);
    assert.equal(slowDone, false, 'another request is answered while the log request waits for the slow agent');
    const r = await slow;
    assert.equal(r.status, 500);
    assert.match(
      r.json.message,
      /^Get "https:\/\/127\.0\.0\.1:\d+\/containerLogs\/default\/p1\/c": net\/http: timeout awaiting response headers$/,
    );
    const k = await kubectl('logs', 'p1');
    assert.equal(k.code, 1);
    assert.match(
      k.stderr,
      /Error from server: Get "https:\/\/127\.0\.0\.1:\d+\/containerLogs\/default\/p1\/c": net\/http: timeout awaiting response headers/,
    );
  } finally {
    agent.delayMs = 0;
  }
});

function withStdin(args: string[], input: string): Promise<Run> {
  return new Promise((done) => {
    const proc = spawn(KUBECTL, ['--request-timeout', '20s', ...args], {
      env: { ...process.env, KUBECONFIG: kubeconfig, HOME: home },
    });
    let stdout = '',
      stderr = '';
    proc.stdout.on('data', (d: Buffer) => {
      stdout += d;
    });
    proc.stderr.on('data', (d: Buffer) => {
      stderr += d;
    });
    const timer = setTimeout(() => proc.kill(), 20_000);
    proc.on('close', (code) => {
      clearTimeout(timer);
      done({ code: code ?? -1, stdout, stderr });
    });
    proc.stdin.end(input);
  });
}
