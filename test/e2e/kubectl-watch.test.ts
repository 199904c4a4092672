import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { startServer, type TestServer } from '../helpers/server.js';
import { api, until } from '../helpers/watch.js';
import { kubectlEnv } from '../helpers/kubectl.js';

const KUBECTL = '/usr/bin/kubectl';
const NS = 'kubectl-watch';

describe('kubectl get --watch', () => {
  let s: TestServer;
  let proc: ChildProcess | undefined;
  before(async () => {
    s = await startServer();
  });
  after(async () => {
    if (proc && proc.exitCode === null && proc.signalCode === null) {
      const exited = once(proc, 'exit');
      proc.kill('SIGKILL');
      await exited;
    }
    await s.stop();
    s.cleanup();
  });

  it('prints the listed objects, then the events of a ConfigMap created after it starts', async () => {
    const a = api(s.url);
    await a.namespace(NS);
    await a.create(NS, 'before-watch', {}, { when: 'before' });
    let out = '';
    let err = '';
    // -v=6 logs each response as its headers arrive: the watch must answer before any event
    proc = spawn(KUBECTL, ['--server', s.url, '-n', NS, 'get', 'cm', '--watch', '-o', 'json', '-v=6'], {
      env: kubectlEnv(s),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    proc.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
    });
    proc.stderr!.setEncoding('utf8').on('data', (d: string) => {
      err += d;
    });
    const alive = () => {
      if (proc!.exitCode !== null) throw new Error(`kubectl exited ${proc!.exitCode}: ${err}`);
    };
    await until(
      async () => {
        alive();
        return out.includes('"name": "before-watch"');
      },
      'the listed object',
      15_000,
    );
    await until(
      async () => {
        alive();
        return /watch=true 200 OK/.test(err);
      },
      'the watch response headers',
      15_000,
    );
    await a.create(NS, 'after-watch', {}, { when: 'after' });
    await a.update(NS, 'after-watch', { when: 'updated' });
    await until(
      async () => {
        alive();
        return out.includes('"when": "updated"');
      },
      'the watch events',
      15_000,
    );
    const objects = splitJson(out);
    assert.deepEqual(
      objects.map((o) => `${o.metadata.name}:${o.data.when}`),
      ['before-watch:before', 'after-watch:after', 'after-watch:updated'],
    );
    assert.ok(objects.every((o) => o.kind === 'ConfigMap' && o.metadata.namespace === NS));
  });
});

describe('kubectl get --watch renders server-side tables (upstream domain)', () => {
  let s: TestServer;
  const procs: ChildProcess[] = [];
  before(async () => {
    s = await startServer(['--api-domain', 'k8s.io']);
  });
  after(async () => {
    for (const p of procs) {
      if (p.exitCode !== null || p.signalCode !== null) continue;
      const exited = once(p, 'exit');
      p.kill('SIGKILL');
      await exited;
    }
    await s.stop();
    s.cleanup();
  });

  /** Starts kubectl get --watch; `lines()` is what it printed so far. Killed in after(). */
  function watch(...args: string[]) {
    let out = '',
      err = '';
    const p = spawn(KUBECTL, ['--server', s.url, 'get', ...args, '--watch', '-v=8'], {
      env: kubectlEnv(s),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    procs.push(p);
    p.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
    });
    p.stderr!.setEncoding('utf8').on('data', (d: string) => {
      err += d;
    });
    const alive = () => {
      if (p.exitCode !== null) throw new Error(`kubectl exited ${p.exitCode}: ${err}`);
    };
    // -v=8 logs the watch request's headers, then its response status once the headers arrive
    const watchAnswered = () => {
      const i = err.indexOf('watch=true');
      return i >= 0 && err.includes('Response Status: 200 OK', i);
    };
    return {
      out: () => {
        alive();
        return out;
      },
      err: () => err,
      watchAnswered,
    };
  }

  it('get ns --watch: the table header and rows, then a row per watch event', async () => {
    const w = watch('ns');
    await until(
      async () => /NAME\s+STATUS\s+AGE/.test(w.out()) && /default\s+Active/.test(w.out()),
      'the listed table',
      15_000,
    );
    // the watch asked for a Table and got 200: its events are rendered rows
    await until(async () => w.watchAnswered(), 'the watch response headers', 15_000);
    assert.match(w.err().slice(w.err().indexOf('watch=true')), /Accept: application\/json;as=Table;v=v1;g=meta.k8s.io/);
    await api(s.url).namespace('watched-ns');
    await until(async () => /watched-ns\s+Active\s+\d+s/.test(w.out()), 'the new namespace row', 15_000);
    assert.equal(w.out().match(/NAME\s+STATUS\s+AGE/g)!.length, 1);
  });

  it('get pods --watch: pod rows with the columns kubectl shows', async () => {
    const res = await fetch(`${s.url}/api/v1/namespaces/default/pods`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ metadata: { name: 'listed' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } }),
    });
    assert.equal(res.status, 201);
    const w = watch('pods');
    await until(
      async () => /NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE/.test(w.out()) && /listed\s+0\/1\s+Pending\s+0/.test(w.out()),
      'the listed pod',
      15_000,
    );
    await until(async () => w.watchAnswered(), 'the watch response headers', 15_000);
    const created = await fetch(`${s.url}/api/v1/namespaces/default/pods`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        metadata: { name: 'watched' },
        spec: {
          containers: [
            { name: 'a', image: 'nginx' },
            { name: 'b', image: 'nginx' },
          ],
        },
      }),
    });
    assert.equal(created.status, 201);
    await until(async () => /watched\s+0\/2\s+Pending\s+0\s+\d+s/.test(w.out()), 'the new pod row', 15_000);
  });
});

/** kubectl prints one indented JSON document per object, back to back. */
function splitJson(text: string): any[] {
  const docs: any[] = [];
  let depth = 0,
    start = -1,
    inString = false,
    escaped = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === '\\') escaped = true;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    else if (ch === '{') {
      if (depth++ === 0) start = i;
    } else if (ch === '}' && --depth === 0) docs.push(JSON.parse(text.slice(start, i + 1)));
  }
  return docs;
}
