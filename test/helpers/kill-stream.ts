/**
 * The crash-durability workload: concurrent clients create ConfigMaps `d-<client>-<i>` until the
 * server is killed with SIGKILL (after enough acknowledgements or enough time), recording every
 * acknowledged (201) create. The tests then restart and check the acknowledged objects.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { request, configMap, type TestServer } from './server.js';

/** An acknowledged create: what the restarted server must still hold. */
export interface Ack {
  name: string;
  uid: string;
  resourceVersion: string;
}

export interface KillPlan {
  clients: number;
  /** bounds of the whole run: creates attempted (all clients together) and milliseconds */
  maxCreates: number;
  maxMs: number;
  /** SIGKILL once this many creates are acknowledged, or this much time has passed */
  killAfterAcks: number;
  killAfterMs: number;
  /** labels of client c's ConfigMaps (none by default) */
  labels?: (c: number) => Record<string, string>;
}

export interface KillRun {
  acks: Ack[];
  /** answers other than 201, as `<status> <text>` (a client stops at its first) */
  unexpected: string[];
  attempted: number;
  inFlightAtKill: number;
  /** how the server process ended */
  code: number | null;
  signal: NodeJS.Signals | null;
  elapsedMs: number;
}

export async function createUntilKilled(server: TestServer, path: string, plan: KillPlan): Promise<KillRun> {
  const acks: Ack[] = [];
  const unexpected: string[] = [];
  let attempted = 0,
    inFlight = 0,
    inFlightAtKill = 0,
    killed = false;
  const exited = once(server.proc, 'exit');
  const started = Date.now();
  const kill = () => {
    if (killed) return;
    killed = true;
    inFlightAtKill = inFlight;
    server.proc.kill('SIGKILL');
  };
  async function client(c: number): Promise<void> {
    for (let i = 0; !killed && attempted < plan.maxCreates && Date.now() - started < plan.maxMs; i++) {
      attempted++;
      inFlight++;
      let r: Awaited<ReturnType<typeof request>>;
      try {
        r = await request(server.url, 'POST', path, configMap(`d-${c}-${i}`, plan.labels?.(c)));
      } catch {
        break; // the connection died with the server
      } finally {
        inFlight--;
      }
      if (r.status !== 201) {
        unexpected.push(`${r.status} ${r.text.slice(0, 200)}`);
        break;
      }
      assert.equal(r.json.metadata.name, `d-${c}-${i}`);
      acks.push({
        name: r.json.metadata.name,
        uid: r.json.metadata.uid,
        resourceVersion: r.json.metadata.resourceVersion,
      });
      if (acks.length >= plan.killAfterAcks || Date.now() - started >= plan.killAfterMs) kill();
    }
  }
  await Promise.all(Array.from({ length: plan.clients }, (_, c) => client(c)));
  kill(); // in case the budget ran out first
  const [code, signal] = (await exited) as [number | null, NodeJS.Signals | null];
  return { acks, unexpected, attempted, inFlightAtKill, code, signal, elapsedMs: Date.now() - started };
}
