/**
 * The pieces of the TLS front's WebSocket → SPDY translation (src/auth/stream-translator.ts)
 * that a real kubelet depends on; the whole path runs in test/e2e/kubectl-node-agent.test.ts
 * (kubectl v1.32 against an agent that only speaks SPDY).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createInflate, constants } from 'node:zlib';
import { headerBlock, translatableProtocol, webSocketAccept } from '../../src/auth/stream-translator.js';

/** Inflates blocks through one zlib context, as a SPDY/3 reader does for a session. */
async function inflateSession(blocks: Buffer[]): Promise<Buffer[]> {
  const z = createInflate({ finishFlush: constants.Z_SYNC_FLUSH });
  const out: Buffer[] = [];
  for (const b of blocks) {
    out.push(
      await new Promise<Buffer>((resolve) => {
        const got: Buffer[] = [];
        const onData = (c: Buffer) => got.push(c);
        z.on('data', onData);
        z.write(b, () =>
          z.flush(constants.Z_SYNC_FLUSH, () => {
            z.off('data', onData);
            resolve(Buffer.concat(got));
          }),
        );
      }),
    );
  }
  z.close();
  return out;
}

function nameValues(block: Buffer): [string, string][] {
  const pairs: [string, string][] = [];
  let at = 4;
  for (let i = 0; i < block.readUInt32BE(0); i++) {
    const n = block.readUInt32BE(at);
    const name = block.subarray(at + 4, at + 4 + n).toString();
    at += 4 + n;
    const v = block.readUInt32BE(at);
    pairs.push([name, block.subarray(at + 4, at + 4 + v).toString()]);
    at += 4 + v;
  }
  return pairs;
}

test('header blocks are one zlib stream across the session (the first carries the zlib header, no dictionary)', async () => {
  const blocks = [
    headerBlock([['streamtype', 'error']], true),
    headerBlock([['streamtype', 'stdout']], false),
    headerBlock(
      [
        ['a', 'b'],
        ['streamtype', 'stderr'],
      ],
      false,
    ),
  ];
  assert.equal(blocks[0]![1]! & 0x20, 0, 'FDICT unset: a reader holding the SPDY dictionary does not need it');
  const plain = await inflateSession(blocks);
  assert.deepEqual(plain.map(nameValues), [
    [['streamtype', 'error']],
    [['streamtype', 'stdout']],
    [
      ['a', 'b'],
      ['streamtype', 'stderr'],
    ],
  ]);
});

test('only a WebSocket exec or attach offering a remote-command protocol is translated (v5 preferred)', () => {
  const head = (proto: string, upgrade = 'websocket') =>
    `GET /x HTTP/1.1\r\nUpgrade: ${upgrade}\r\nSec-WebSocket-Protocol: ${proto}\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==`;
  assert.equal(
    translatableProtocol(head('v4.channel.k8s.io, v5.channel.k8s.io'), '/exec/ns/p/c?command=ls'),
    'v5.channel.k8s.io',
  );
  assert.equal(translatableProtocol(head('v4.channel.k8s.io'), '/attach/ns/p/c?output=1'), 'v4.channel.k8s.io');
  assert.equal(translatableProtocol(head('SPDY/3.1+portforward.k8s.io'), '/portForward/ns/p'), undefined);
  assert.equal(translatableProtocol(head('v5.channel.k8s.io', 'SPDY/3.1'), '/exec/ns/p/c'), undefined);
  assert.equal(translatableProtocol(head('base64.channel.k8s.io'), '/exec/ns/p/c'), undefined);
  assert.match(
    webSocketAccept(head('v5.channel.k8s.io'), 'v5.channel.k8s.io'),
    /\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK\+xOo=\r\nSec-WebSocket-Protocol: v5\.channel\.k8s\.io\r\n\r\n$/,
  );
});
