import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { startServer, type TestServer } from '../helpers/server.js';
import { api, until } from '../helpers/watch.js';

const KUBECTL = '/usr/bin/kubectl';
const NS = 'kubectl-watch';

describe('kubectl get --watch', () => {
  let s: TestServer;
  let proc: ChildProcess | undefined;
  before(async () => { s = await startServer(); });
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
      env: { ...process.env, KUBECONFIG: '/dev/null' }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    proc.stdout!.setEncoding('utf8').on('data', (d: string) => { out += d; });
    proc.stderr!.setEncoding('utf8').on('data', (d: string) => { err += d; });
    const alive = () => { if (proc!.exitCode !== null) throw new Error(`kubectl exited ${proc!.exitCode}: ${err}`); };
    await until(async () => { alive(); return out.includes('"name": "before-watch"'); }, 'the listed object', 15_000);
    await until(async () => { alive(); return /watch=true 200 OK/.test(err); }, 'the watch response headers', 15_000);
    await a.create(NS, 'after-watch', {}, { when: 'after' });
    await a.update(NS, 'after-watch', { when: 'updated' });
    await until(async () => { alive(); return out.includes('"when": "updated"'); }, 'the watch events', 15_000);
    const objects = splitJson(out);
    assert.deepEqual(objects.map((o) => `${o.metadata.name}:${o.data.when}`), ['before-watch:before', 'after-watch:after', 'after-watch:updated']);
    assert.ok(objects.every((o) => o.kind === 'ConfigMap' && o.metadata.namespace === NS));
  });
});

/** kubectl prints one indented JSON document per object, back to back. */
function splitJson(text: string): any[] {
  const docs: any[] = [];
  let depth = 0, start = -1, inString = false, escaped = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === '\\') escaped = true;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    else if (ch === '{') { if (depth++ === 0) start = i; }
    else if (ch === '}' && --depth === 0) docs.push(JSON.parse(text.slice(start, i + 1)));
  }
  return docs;
}
