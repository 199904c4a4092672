/**
 * After the traffic: the server is ready, and every stored object is decodable and valid —
 * listed in JSON and Protobuf, read back identical by name, well-formed metadata, and
 * accepted unchanged by a dry-run update (so no write stored what validation refuses).
 */
import { ProtobufCodec, PROTOBUF_MEDIA_TYPE } from '../../src/codec/protobuf.js';
import { apiVersionOf, collectionPath, objectPath, type ResourceType } from './catalog.js';
import { objectProblems, replyProblems } from './check.js';
import type { Transport } from './transport.js';
import { enc } from './requests.js';

export interface FinalResult {
  objects: number;
  findings: { kind: string; detail: string; request: string }[];
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** the dry-run update check covers this many objects per type (all are read and decoded) */
const DRY_RUN_PER_TYPE = 25;

export async function finalChecks(url: string, transport: Transport, types: ResourceType[]): Promise<FinalResult> {
  const out: FinalResult = { objects: 0, findings: [] };
  const add = (kind: string, detail: string, request: string) => out.findings.push({ kind, detail, request });
  const get = (target: string, accept = 'application/json') =>
    transport.send({ method: 'GET', target, headers: { accept }, watch: false });

  const ready = await get('/readyz');
  if (!ready.ok || ready.reply.status !== 200)
    add(
      'not-ready',
      ready.ok ? `HTTP ${ready.reply.status} ${ready.reply.body}` : ready.error,
      `GET /readyz on ${url}`,
    );

  const codec = new ProtobufCodec();
  for (const t of types) {
    if (!t.verbs.has('list')) continue;
    const path = collectionPath(t);
    const list = await get(path);
    if (!list.ok || list.reply.status !== 200) {
      add(
        'final-list',
        list.ok ? `HTTP ${list.reply.status} ${list.reply.body.subarray(0, 300)}` : list.error,
        `GET ${path}`,
      );
      continue;
    }
    let items: any[];
    try {
      items = JSON.parse(list.reply.body.toString('utf8')).items;
      if (!Array.isArray(items)) throw new Error('items is not an array');
    } catch (e) {
      add('final-list', `undecodable list: ${(e as Error).message}`, `GET ${path}`);
      continue;
    }
    const pb = await get(path, PROTOBUF_MEDIA_TYPE);
    if (pb.ok && pb.reply.status === 200) {
      try {
        codec.decodeObject(new Uint8Array(pb.reply.body));
      } catch (e) {
        add('final-protobuf', `undecodable protobuf list: ${(e as Error).message}`, `GET ${path} (protobuf)`);
      }
    } else if (!pb.ok || (pb.reply.status !== 406 && pb.reply.status !== 200)) {
      add(
        'final-protobuf',
        pb.ok ? `HTTP ${pb.reply.status} ${pb.reply.body.subarray(0, 300)}` : pb.error,
        `GET ${path} (protobuf)`,
      );
    } else for (const p of replyProblems('GET', path, pb.reply)) add(p.kind, p.detail, `GET ${path} (protobuf)`);

    let dryRuns = 0;
    for (const item of items) {
      out.objects++;
      const name = item?.metadata?.name;
      const ns = t.namespaced ? item?.metadata?.namespace : undefined;
      const where = `${t.group || 'core'}/${t.resource} ${ns ? ns + '/' : ''}${name}`;
      const problems = objectProblems({ kind: t.kind, apiVersion: apiVersionOf(t), ...item }, t.kind, apiVersionOf(t));
      if (problems.length) add('stored-invalid', `${where}: ${problems.join('; ')}`, `GET ${path}`);
      if (typeof name !== 'string' || !name) continue;
      // a lone surrogate cannot be sent as UTF-8 in a URL: such an object can never be read or deleted by name
      if (LONE_SURROGATE.test(name))
        add(
          'stored-invalid',
          `${where}: name ${JSON.stringify(name).slice(0, 80)} contains a lone surrogate (not valid UTF-8; unaddressable)`,
          `GET ${path}`,
        );
      const self = objectPath(t, ns, enc(name));
      const one = await get(self);
      if (!one.ok || one.reply.status !== 200) {
        add('final-get', `${where}: ${one.ok ? `HTTP ${one.reply.status}` : one.error}`, `GET ${self}`);
        continue;
      }
      let read: unknown;
      try {
        read = JSON.parse(one.reply.body.toString('utf8'));
      } catch (e) {
        add('final-get', `${where}: ${(e as Error).message}`, `GET ${self}`);
        continue;
      }
      if (JSON.stringify(read) !== JSON.stringify(item) && !changedSince(read, item))
        add('final-get', `${where}: GET differs from the listed item`, `GET ${self}`);
      if (!t.verbs.has('update') || dryRuns >= DRY_RUN_PER_TYPE) continue;
      dryRuns++;
      const body = Buffer.from(JSON.stringify(read));
      const put = await transport.send({
        method: 'PUT',
        target: `${self}?dryRun=All`,
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body,
        watch: false,
      });
      if (!put.ok) add('final-dry-run', `${where}: ${put.error}`, `PUT ${self}?dryRun=All`);
      else if (put.reply.status >= 300 && put.reply.status !== 409) {
        add(
          'stored-invalid',
          `${where}: stored object refused by a dry-run update: HTTP ${put.reply.status} ${put.reply.body.subarray(0, 400)}`,
          `PUT ${self}?dryRun=All ${body.subarray(0, 600)}`,
        );
      }
    }
  }
  return out;
}

/** The namespace controller may still be finishing deletions: a newer version is not a mismatch. */
function changedSince(read: any, listed: any): boolean {
  return Number(read?.metadata?.resourceVersion) > Number(listed?.metadata?.resourceVersion);
}
