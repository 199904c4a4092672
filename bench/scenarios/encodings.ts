/**
 * Encodings: LIST of 5,000 Pods in JSON, Protobuf, CBOR and as a Table (req/s and bytes per
 * response, each next to a hello-world ceiling serving a body of the same size, alternating),
 * and in-process encode throughput of that list per encoding with tinybench (what the actor
 * does per LIST, as a ratio to its JSON path, which joins already-encoded items).
 */
import { Bench } from 'tinybench';
import { startHello, startServer, type Child } from '../lib/procs.js';
import { ensureNamespace, expect, parallel } from '../lib/http.js';
import type { Row, ScenarioResult } from '../lib/report.js';
import { bestOf, warmAndMeasure, type Ctx, type Measured } from './common.js';
import { encodeEntries, type Encodable } from '../../src/codec/codec.js';
import { tableJson } from '../../src/codec/table.js';
import { benchContainer, createRunningPods } from './running-pods.js';
import type { Encoding } from '../../src/actors/protocol.js';

const PODS = 5000;
const NS = 'bench-enc';
const CONNECTIONS = 4;
const PATH = `/api/v1/namespaces/${NS}/pods`;
const RUNNING_NS = 'bench-enc-running';
const PB = 'application/vnd.platform.protobuf';
const TABLE = 'application/json;as=Table;g=meta.plat.io;v=v1';

interface Variant {
  name: string;
  accept: string;
  enc: Encoding;
}
const VARIANTS: Variant[] = [
  { name: 'JSON', accept: 'application/json', enc: { format: 'json', pretty: false } },
  { name: 'Protobuf', accept: PB, enc: { format: 'protobuf', pretty: false, mediaType: PB } },
  { name: 'CBOR', accept: 'application/cbor', enc: { format: 'cbor', pretty: false } },
  {
    name: 'Table',
    accept: TABLE,
    enc: {
      format: 'json',
      pretty: false,
      view: { as: 'Table', groupVersion: 'meta.plat.io/v1', includeObject: 'Metadata' },
    },
  },
];

/** A Pod like a small deployment's: labels, two containers with ports, env, resources. */
function podJson(i: number): string {
  const name = `web-${String(i).padStart(5, '0')}`;
  const container = (n: string, port: number) => benchContainer(i, n, port);
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      labels: { app: 'web', tier: 'frontend', shard: String(i % 16) },
      annotations: { 'example.com/owner': 'team-a' },
    },
    spec: {
      containers: [container('app', 8080), container('sidecar', 9090)],
      nodeName: `node-${i % 50}`,
      restartPolicy: 'Always',
    },
  });
}

async function bodyBytes(base: string, accept: string, path = PATH): Promise<number> {
  const res = await fetch(base + path, { headers: { accept } });
  if (res.status !== 200) throw new Error(`LIST as ${accept}: ${res.status}`);
  return (await res.arrayBuffer()).byteLength;
}

/**
 * tinybench over the actor's list encoding of the served objects (codec.encodeEntries), lists/s
 * per encoding: warm (item bytes already cached on the entries, the steady state) and, for the
 * binary encodings, cold (fresh entries: every object encoded).
 */
async function encodeThroughput(listJson: string, ctx: Ctx): Promise<Map<string, number>> {
  const list = JSON.parse(listJson);
  const objs: any[] = list.items.map((o: object) => ({ ...o, kind: 'Pod', apiVersion: 'v1' }));
  const fresh = (): Encodable[] => objs.map((obj) => ({ obj, json: JSON.stringify(obj) }));
  const warm = fresh();
  const head = { kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: list.metadata.resourceVersion } };
  const bench = new Bench({ time: Math.max(1000, ctx.durationSec * 300), iterations: 3 });
  for (const v of VARIANTS) {
    if (v.enc.view) {
      bench.add(v.name, () => {
        tableJson('Pod', warm, head.metadata, v.enc.view!.groupVersion, v.enc.view!.includeObject, Date.now());
      });
      continue;
    }
    bench.add(v.name, () => {
      encodeEntries(head, warm, v.enc);
    });
    if (v.enc.format !== 'json') {
      let cold = fresh();
      bench.add(
        `${v.name} (cold)`,
        () => {
          encodeEntries(head, cold, v.enc);
        },
        {
          beforeEach: () => {
            cold = fresh();
          },
        },
      );
    }
  }
  await bench.run();
  const out = new Map<string, number>();
  for (const t of bench.tasks) {
    const r = t.result as { throughput?: { mean: number }; hz?: number } | undefined;
    out.set(t.name, r?.throughput?.mean ?? r?.hz ?? 0);
  }
  return out;
}

/**
 * The same list's JSON and Protobuf sizes with metadata.managedFields removed, in-process: a
 * FieldsV1 is opaque JSON in both encodings (upstream's wire format), so it shrinks only the rest.
 */
function bytesWithoutManagedFields(listJson: string): { json: number; pb: number } {
  const list = JSON.parse(listJson);
  for (const o of list.items) delete o.metadata.managedFields;
  const head = { kind: 'PodList', apiVersion: 'v1', metadata: list.metadata };
  const entries: Encodable[] = list.items.map((o: object) => {
    const obj = { ...o, kind: 'Pod', apiVersion: 'v1' };
    return { obj, json: JSON.stringify(obj) };
  });
  return {
    json: Buffer.byteLength(encodeEntries(head, entries, VARIANTS[0]!.enc) as string),
    pb: (encodeEntries(head, entries, VARIANTS[1]!.enc) as Uint8Array).byteLength,
  };
}

export async function encodingsScenario(ctx: Ctx): Promise<ScenarioResult> {
  const server = await startServer(ctx.serverNodeArgs, ['--feature-gates', 'CBORServingAndStorage=true']);
  const rows: Row[] = [];
  const commands: string[] = [];
  const sizes = new Map<string, number>();
  let encode = new Map<string, number>();
  let withoutMF = { json: 0, pb: 0 };
  const running = new Map<string, number>();
  try {
    await ensureNamespace(server.url, NS);
    await parallel(PODS, 32, async (i) => {
      await expect(server.url, 'POST', PATH, podJson(i), [201]);
    });
    for (const v of VARIANTS) sizes.set(v.name, await bodyBytes(server.url, v.accept));
    const listJson = (await expect(server.url, 'GET', PATH, undefined, [200])).text;
    ctx.log(`  bytes per LIST: ${VARIANTS.map((v) => `${v.name} ${sizes.get(v.name)}`).join(', ')}`);
    for (const v of VARIANTS) {
      let hello: Child | undefined;
      try {
        hello = await startHello(sizes.get(v.name)!);
        const url = hello.url;
        const run = (pid: number, target: string, headers: string[]) => () =>
          warmAndMeasure(ctx, pid, {
            url: target,
            threads: 1,
            connections: CONNECTIONS,
            durationSec: ctx.durationSec,
            timeoutSec: 30,
            headers,
          });
        const best = await bestOf(
          ctx.rounds,
          {
            server: run(server.pid, server.url + PATH, [`Accept: ${v.accept}`]),
            ceiling: run(hello.pid, url + '/', []),
          },
          (r: Measured) => r.reqPerSec,
        );
        const ratio = best.server.reqPerSec / best.ceiling.reqPerSec;
        rows.push(
          {
            scenario: `list ${PODS} pods`,
            subject: `apiserver ${v.name} (${sizes.get(v.name)} B)`,
            throughput: best.server.reqPerSec,
            unit: 'req/s',
            p50Ms: best.server.p50Ms,
            p99Ms: best.server.p99Ms,
            ratio,
            cpuUs: best.server.cpuUsPerRequest,
            mainCpuUs: best.server.mainCpuUsPerRequest,
            errors: best.server.errors,
          },
          {
            scenario: `list ${PODS} pods`,
            subject: `hello-world ceiling (${sizes.get(v.name)} B body)`,
            throughput: best.ceiling.reqPerSec,
            unit: 'req/s',
            p50Ms: best.ceiling.p50Ms,
            p99Ms: best.ceiling.p99Ms,
            cpuUs: best.ceiling.cpuUsPerRequest,
            mainCpuUs: best.ceiling.mainCpuUsPerRequest,
            errors: best.ceiling.errors,
          },
        );
        commands.push(
          `# list as ${v.name}: apiserver and hello-world (${sizes.get(v.name)} B), alternating, best of ${ctx.rounds}`,
          best.server.command,
          best.ceiling.command,
        );
      } finally {
        await hello?.stop();
      }
    }
    encode = await encodeThroughput(listJson, ctx);
    withoutMF = bytesWithoutManagedFields(listJson);
    // bytes only: the same count of Pods shaped as a running Deployment's (src: running-pods.ts)
    await ensureNamespace(server.url, RUNNING_NS);
    const runningPath = await createRunningPods(server.url, RUNNING_NS, PODS);
    for (const v of VARIANTS) running.set(v.name, await bodyBytes(server.url, v.accept, runningPath));
    ctx.log(`  bytes per LIST of running Pods: ${VARIANTS.map((v) => `${v.name} ${running.get(v.name)}`).join(', ')}`);
  } finally {
    await server.stop();
    server.cleanup();
  }
  const json = sizes.get('JSON')!;
  const pbShare = sizes.get('Protobuf')! / json;
  const share = (m: Map<string, number>, name: string) => `${((100 * m.get(name)!) / m.get('JSON')!).toFixed(1)}%`;
  for (const v of VARIANTS) {
    rows.push({
      scenario: `list ${PODS} running pods (bytes only)`,
      subject: `${v.name} (${running.get(v.name)} B)`,
      throughput: running.get(v.name)!,
      unit: 'B',
      ratio: running.get(v.name)! / running.get('JSON')!,
    });
  }
  const jsonOps = encode.get('JSON') || 1;
  for (const [name, ops] of encode) {
    rows.push({
      scenario: `encode ${PODS}-pod list in-process`,
      subject: name,
      throughput: ops,
      unit: 'lists/s',
      ratio: ops / jsonOps,
    });
  }
  return {
    name: 'encodings',
    rows,
    verdicts: [
      {
        target: 'Protobuf LIST bytes ≤ 60% of JSON',
        measured: `${(pbShare * 100).toFixed(1)}% (${sizes.get('Protobuf')} vs ${json} B; CBOR ${((100 * sizes.get('CBOR')!) / json).toFixed(1)}%, Table ${((100 * sizes.get('Table')!) / json).toFixed(1)}%); without managedFields ${((100 * withoutMF.pb) / withoutMF.json).toFixed(1)}% (${withoutMF.pb} vs ${withoutMF.json} B)`,
        met: pbShare <= 0.6,
      },
      {
        target: 'Protobuf LIST bytes ≤ 60% of JSON (running Pods: controller-created, bound, kubelet status)',
        measured: `${share(running, 'Protobuf')} (${running.get('Protobuf')} vs ${running.get('JSON')} B; CBOR ${share(running, 'CBOR')}, Table ${share(running, 'Table')})`,
        met: running.get('Protobuf')! / running.get('JSON')! <= 0.6,
      },
    ],
    commands: [
      ...commands,
      `# encode: tinybench in the bench process over the served list (codec.encodeEntries per encoding, warm = item bytes cached on the entries, cold = fresh entries; Table = tableJson, as the actor's list path); ratio = lists/s ÷ the JSON path's`,
    ],
    notes: [
      `${CONNECTIONS} connections (each response is several MB)`,
      'encode ratio is against the JSON path, which joins the already-encoded item strings (the ceiling of what a list encoding can cost in the actor)',
    ],
  };
}
