/**
 * density: --nodes Node objects and --namespaces namespaces × --per-namespace Pods, ConfigMaps
 * and Secrets each, created (phase `create`), then cluster-scope LISTs of all Pods at that size (phase `list`), then
 * every object and namespace deleted (phase `delete`), each phase timed; the server's resident
 * memory is sampled before, at full size and after. The upstream planning limits (10,000
 * namespaces, 150,000 Pods, 5,000 Nodes) are reached with --namespaces 10000 --per-namespace 15
 * --nodes 5000.
 */
import { parallel } from '../engine.js';
import { measured, type ScenarioCtx } from './ctx.js';
import { PROTOBUF } from './basic.js';

const MAX_OBJECTS = 3_000_000;
const MAX_LISTS = 1000;
export const KINDS = ['pods', 'configmaps', 'secrets'] as const;
export type Kind = (typeof KINDS)[number];

function body(kind: Kind, name: string): string {
  const metadata = { name, labels: { bench: 'density' } };
  if (kind === 'pods')
    return JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata,
      spec: { containers: [{ name: 'c', image: 'registry.example/pause:3.10' }] },
    });
  if (kind === 'configmaps')
    return JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata, data: { k: 'v'.repeat(256) } });
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata,
    type: 'Opaque',
    data: { k: Buffer.from('s'.repeat(128)).toString('base64') },
  });
}

export async function densityScenario(ctx: ScenarioCtx): Promise<void> {
  const N = ctx.opts.namespaces;
  const M = ctx.opts.perNamespace;
  const kinds = ctx.opts.kinds;
  if (N * M * kinds.length > MAX_OBJECTS)
    throw new Error(`density: ${N} × ${M} × ${kinds.length} objects is over the bound of ${MAX_OBJECTS}`);
  const c = ctx.opts.concurrency;
  const nsName = (i: number): string => `${ctx.tag}-d-${i}`;
  const nodes = ctx.opts.nodes;
  const nodeName = (i: number): string => `${ctx.tag}-node-${i}`;
  const total = N * M * kinds.length;
  Object.assign(ctx.params, { nodes, namespaces: N, perNamespace: M, kinds: [...kinds], objects: total });
  const rss0 = await ctx.serverRss();
  // create: nodes and namespaces, then the objects, interleaving kinds and namespaces
  const started = { nodes: 0, namespaces: 0, objects: 0 };
  // the bench's own CPU over the create phase: near one core, the phase is client-bound
  const cpu0 = process.cpuUsage();
  const createSec = await measured(
    ctx,
    async (signal) => {
      started.nodes = await parallel(nodes, c, signal, (i) =>
        ctx.client
          .call({
            verb: 'POST',
            resource: 'nodes',
            phase: 'create',
            method: 'POST',
            path: '/api/v1/nodes',
            body: JSON.stringify({
              apiVersion: 'v1',
              kind: 'Node',
              metadata: { name: nodeName(i), labels: { bench: 'density' } },
            }),
          })
          .then(() => undefined),
      );
      started.namespaces = await parallel(N, c, signal, (i) =>
        ctx.client
          .call({
            verb: 'POST',
            resource: 'namespaces',
            phase: 'create',
            method: 'POST',
            path: '/api/v1/namespaces',
            body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: nsName(i) } }),
          })
          .then(() => undefined),
      );
      started.objects = await parallel(total, c, signal, async (j) => {
        const kind = kinds[j % kinds.length]!;
        const rest = Math.floor(j / kinds.length);
        const ns = nsName(rest % N);
        await ctx.client.call({
          verb: 'POST',
          resource: kind,
          phase: 'create',
          method: 'POST',
          path: `/api/v1/namespaces/${ns}/${kind}`,
          body: body(kind, `o-${Math.floor(rest / N)}`),
        });
      });
    },
    86_400,
  );
  const createCpu = process.cpuUsage(cpu0);
  const rssFull = await ctx.serverRss();
  // list: cluster-scope LIST of every Pod, for --duration or MAX_LISTS lists, concurrency 1,
  // alternately as JSON (phase `list`) and as Protobuf (phase `list-protobuf`): same conditions
  let lists = 0;
  const listSec = await measured(ctx, async (signal) => {
    while (!signal.aborted && lists < MAX_LISTS) {
      const proto = lists++ % 2 === 1;
      await ctx.client.call({
        verb: 'LIST',
        resource: 'pods',
        phase: proto ? 'list-protobuf' : 'list',
        method: 'GET',
        path: '/api/v1/pods',
        accept: proto ? PROTOBUF : undefined,
        // its 322 MB are read and counted, not kept (client.ts discardBody)
        discardBody: true,
      });
    }
  });
  const rssListed = await ctx.serverRss();
  // delete: every object created (or attempted, when interrupted), then the nodes and namespaces
  const deleteSec = !ctx.opts.deleteAfter
    ? NaN
    : await measured(
        ctx,
        async () => {
          const never = new AbortController().signal;
          await parallel(started.objects, c, never, async (j) => {
            const kind = kinds[j % kinds.length]!;
            const rest = Math.floor(j / kinds.length);
            await ctx.client.call({
              verb: 'DELETE',
              resource: kind,
              phase: 'delete',
              method: 'DELETE',
              path: `/api/v1/namespaces/${nsName(rest % N)}/${kind}/o-${Math.floor(rest / N)}`,
            });
          });
          await parallel(started.nodes, c, never, (i) =>
            ctx.client
              .call({
                verb: 'DELETE',
                resource: 'nodes',
                phase: 'delete',
                method: 'DELETE',
                path: `/api/v1/nodes/${nodeName(i)}`,
              })
              .then(() => undefined),
          );
          await parallel(started.namespaces, c, never, (i) =>
            ctx.client
              .call({
                verb: 'DELETE',
                resource: 'namespaces',
                phase: 'delete',
                method: 'DELETE',
                path: `/api/v1/namespaces/${nsName(i)}`,
              })
              .then(() => undefined),
          );
        },
        86_400,
      );
  const rssAfter = await ctx.serverRss();
  const listOp = ctx.client.recorder.ops.get('list LIST pods');
  const protoOp = ctx.client.recorder.ops.get('list-protobuf LIST pods');
  Object.assign(ctx.figures, {
    createSec,
    createdPerSec: (nodes + N + total) / createSec,
    createClientCores: (createCpu.user + createCpu.system) / 1e6 / createSec,
    listSec,
    clusterLists: lists,
    clusterListPodsP50Ms: listOp?.hdr.percentileMs(50) ?? NaN,
    clusterListPodsP99Ms: listOp?.hdr.percentileMs(99) ?? NaN,
    clusterListPodsBytes: listOp?.requests ? listOp.bytes / listOp.requests : NaN,
    clusterListPodsProtobufP50Ms: protoOp?.hdr.percentileMs(50) ?? NaN,
    clusterListPodsProtobufP99Ms: protoOp?.hdr.percentileMs(99) ?? NaN,
    clusterListPodsProtobufBytes: protoOp?.requests ? protoOp.bytes / protoOp.requests : NaN,
    deleteSec,
    deletedPerSec: (nodes + N + total) / deleteSec,
  });
  if (rss0 !== undefined) ctx.figures.rssBeforeBytes = rss0;
  if (rssFull !== undefined) ctx.figures.rssAtFullSizeBytes = rssFull;
  if (rssListed !== undefined) ctx.figures.rssAfterListsBytes = rssListed;
  if (rssAfter !== undefined) ctx.figures.rssAfterDeleteBytes = rssAfter;
  if (rss0 !== undefined && rssFull !== undefined) ctx.figures.rssPerObjectBytes = (rssFull - rss0) / total;
  if (ctx.stop.aborted)
    ctx.notes.push(
      `interrupted: ${started.objects} of ${total} objects, ${started.namespaces} of ${N} namespaces and ${started.nodes} of ${nodes} nodes were created, and deleted again`,
    );
}
