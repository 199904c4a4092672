import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { packBodies, unpackBodies, bodyText } from '../../src/actors/pack.js';
import { encodeEntries, joinItems, jsonBytes } from '../../src/codec/codec.js';
import type { BatchReply } from '../../src/actors/protocol.js';

const JSON_ENC = { format: 'json', pretty: false } as const;
const entry = (name: string, apiVersion = 'v1') => {
  const obj = { kind: 'ConfigMap', apiVersion, metadata: { name }, data: { k: 'é' } };
  return { obj, json: JSON.stringify(obj) };
};

describe("LIST bodies from the entries' JSON", () => {
  it('is the same JSON as joining the item strings, with no item bytes kept on the entries', () => {
    const items = [entry('a'), entry('b'), entry('c', 'v2')];
    const head = { kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: '7' } };
    const body = encodeEntries(head, items, JSON_ENC);
    assert.ok(body instanceof Uint8Array);
    const expected = `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[${items[0]!.json},${items[1]!.json},${JSON.stringify({ ...items[2]!.obj, apiVersion: 'v1' })}]}\n`;
    assert.equal(bodyText(body), expected);
    assert.equal(jsonBytes(items[0]!), Buffer.byteLength(items[0]!.json), 'UTF-8 length measured (é is two bytes)');
    assert.ok(
      items.every((e) => !('encoded' in e)),
      'the JSON is not kept a second time as bytes',
    );
    assert.equal(bodyText(joinItems('', [], '')), '');
  });

  it('moves an owned body to the front thread in its own buffer and packs the others once', () => {
    const list = joinItems('[', [Buffer.from('1'), Buffer.from('2')], ']');
    const cached = Buffer.from('cached bytes');
    const reply = {
      results: [
        { code: 200, body: list, contentType: 'application/json' },
        { code: 200, body: 'héllo', contentType: 'application/json' },
        { code: 200, body: cached, contentType: 'application/vnd.kubernetes.protobuf' },
      ],
      events: [],
    } as unknown as BatchReply;
    const moved = packBodies(reply);
    assert.equal(moved.length, 2);
    assert.equal(moved[0], list.buffer, 'the LIST body travels in its own buffer, uncopied');
    assert.equal((reply.results[0] as { body: Uint8Array }).body, list);
    const copy = structuredClone(reply, { transfer: moved });
    assert.equal(list.buffer.byteLength, 0, 'transferred, not cloned');
    assert.equal(cached.byteLength, 12, 'a cached buffer is never transferred');
    unpackBodies(copy);
    assert.deepEqual(
      copy.results.map((r) => bodyText((r as { body: Uint8Array }).body)),
      ['[1,2]', 'héllo', 'cached bytes'],
    );
  });
});
