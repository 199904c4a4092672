/**
 * The ops the front thread builds for one batch share their TypeRef and, for compact JSON,
 * their Encoding (src/handlers/resource.ts typeRef, opEncoding), so the batch's structured
 * clone writes each once; other encodings and subresources keep their own objects.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import v8 from 'node:v8';
import { writeOp } from '../../src/http/request-ops.js';
import type { Request, Services } from '../../src/http/context.js';
import type { Encoding } from '../../src/actors/protocol.js';
import { Registry } from '../../src/registry/registry.js';
import { makeIdentity } from '../../src/api/identity.js';
import { DEFAULT_OPTIONS } from '../../src/server/options.js';

const registry = new Registry(makeIdentity(DEFAULT_OPTIONS.apiDomain), DEFAULT_OPTIONS.runtimeConfig);
const def = registry.lookup('', 'v1', 'configmaps')!;
const services = { options: DEFAULT_OPTIONS, namespaces: new Map([['ns', 'Active' as const]]) } as unknown as Services;

function request(name: string, enc: Encoding, subresource = ''): Request {
  return {
    info: {
      verb: 'create',
      namespace: 'ns',
      name: subresource ? name : '',
      subresource,
      resource: 'configmaps',
      apiGroup: '',
      apiVersion: 'v1',
    },
    query: new URLSearchParams(),
    headers: { accept: undefined, contentType: 'application/json', contentLength: 0, userAgent: 'wrk/4' },
    def,
    enc,
  } as unknown as Request;
}

const body = (name: string) => ({ contentType: 'json' as const, text: `{"metadata":{"name":"${name}"}}` });

test('creates of one type in compact JSON share their type and encoding objects', () => {
  const ops = ['a', 'b', 'c'].map((n) => writeOp(request(n, { format: 'json', pretty: false }), services, body(n)));
  assert.equal(ops[0]!.type, ops[1]!.type);
  assert.equal(ops[1]!.enc, ops[2]!.enc);
  assert.deepEqual(ops[0]!.type, { group: '', version: 'v1', resource: 'configmaps' });
  assert.deepEqual(ops[0]!.enc, { format: 'json', pretty: false });
  const gz = writeOp(request('g', { format: 'json', pretty: false, gzip: true }), services, body('g'));
  assert.deepEqual(gz.enc, { format: 'json', pretty: false, gzip: true });
  // the batch's clone holds the shared objects once: smaller than with one copy per op
  const unshared = ops.map((o) => ({ ...o, type: { ...o.type }, enc: { ...o.enc } }));
  assert.ok(v8.serialize({ ops }).length < v8.serialize({ ops: unshared }).length);
});

test('other encodings and subresources keep their own objects', () => {
  const pb: Encoding = { format: 'protobuf', pretty: false, mediaType: 'application/vnd.plat.protobuf' };
  const op = writeOp(request('p', pb), services, body('p'));
  assert.equal(op.enc, pb);
  const pretty: Encoding = { format: 'json', pretty: true };
  assert.equal(writeOp(request('q', pretty), services, body('q')).enc, pretty);
  const withAs = { format: 'json', pretty: false, as: { type: 'application/json' } } as Encoding;
  assert.equal(writeOp(request('r', withAs), services, body('r')).enc, withAs);
  const sub = writeOp(request('s', { format: 'json', pretty: false }, 'status'), services, body('s'));
  assert.deepEqual(sub.type, { group: '', version: 'v1', resource: 'configmaps', subresource: 'status' });
});

test('the op carries the pin, the field manager and, for apply only, the user', () => {
  const r = request('a', { format: 'json', pretty: false });
  const user = { username: 'alice', groups: ['g'] };
  const pinned = { ...r, pin: { rv: '7', again: () => false }, user } as unknown as Request;
  type Fields = { op: string; pin?: string; fieldManager?: string; user?: unknown; force?: boolean };
  const create = writeOp(pinned, services, body('a')) as Fields;
  assert.equal(create.op, 'create');
  assert.equal(create.pin, '7');
  assert.equal(create.fieldManager, 'wrk');
  assert.equal(create.user, user);
  assert.equal((writeOp(r, services, body('a')) as Fields).pin, undefined);
  const patch = (type: string, q = '') =>
    writeOp(
      {
        ...pinned,
        info: { ...r.info, verb: 'patch', name: 'a' },
        query: new URLSearchParams(q),
        headers: { ...r.headers, contentType: type },
      } as unknown as Request,
      services,
      { contentType: 'json', text: '{"data":{"k":"v"}}' },
    ) as Fields;
  const merge = patch('application/merge-patch+json');
  assert.equal(merge.op, 'patch');
  assert.equal(merge.user, undefined);
  assert.equal(merge.fieldManager, 'wrk');
  const apply = patch('application/apply-patch+yaml', 'fieldManager=me&force=true');
  assert.equal(apply.user, user);
  assert.equal(apply.fieldManager, 'me');
  assert.equal(apply.force, true);
});
