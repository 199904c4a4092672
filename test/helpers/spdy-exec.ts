/**
 * The node agent's side of exec over SPDY/3.1 (`v4.channel.k8s.io`, the protocol kubectl falls
 * back to when the WebSocket upgrade is refused). client-go creates its streams in a fixed
 * order: error, then stdin, stdout, stderr as requested (input/output/error in the kubelet
 * query); header blocks are not decoded (see spdy-portforward.ts). Once every stream exists,
 * `sh -c 'exit N'` writes its v4 Status on the error stream and closes every stream; `cat`
 * echoes stdin on stdout until stdin ends, then succeeds.
 */
import type { Duplex } from 'node:stream';

const SYN_STREAM = 1,
  SYN_REPLY = 2,
  PING = 6;

export function serveSpdyExec(sock: Duplex, url: URL): void {
  const command = url.searchParams.getAll('command');
  const expected = 1 + ['input', 'output', 'error'].filter((k) => url.searchParams.get(k) === '1').length;
  const streams: number[] = [];
  let buf: Buffer = Buffer.alloc(0);
  let replied = false;
  const frame = (id: number, fin: boolean, data: Buffer) => {
    const h = Buffer.alloc(8);
    h.writeUInt32BE(id & 0x7fffffff, 0);
    h.writeUInt32BE(((fin ? 1 : 0) << 24) | data.length, 4);
    sock.write(Buffer.concat([h, data]));
  };
  const reply = (id: number) => {
    const block = Buffer.from([...(replied ? [] : [0x78, 0x01]), 0, 4, 0, 0xfb, 0xff, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff]);
    replied = true;
    const p = Buffer.alloc(4 + block.length);
    p.writeUInt32BE(id, 0);
    block.copy(p, 4);
    const h = Buffer.from([0x80, 0x03, 0x00, SYN_REPLY, 0, 0, 0, 0]);
    h.writeUInt32BE(p.length, 4);
    sock.write(Buffer.concat([h, p]));
  };
  const run = () => {
    const exit = /^exit (\d+)$/.exec(command[0] === 'sh' && command[1] === '-c' ? (command[2] ?? '') : '');
    const code = exit ? Number(exit[1]) : cat ? 0 : 127;
    const status =
      code === 0
        ? { metadata: {}, status: 'Success' }
        : {
            metadata: {},
            status: 'Failure',
            message: `command terminated with non-zero exit code: error executing command [${command.join(' ')}], exit code ${code}`,
            reason: 'NonZeroExitCode',
            details: { causes: [{ reason: 'ExitCode', message: String(code) }] },
          };
    for (const id of streams.slice(1)) frame(id, true, Buffer.alloc(0));
    frame(streams[0]!, true, Buffer.from(JSON.stringify(status)));
  };
  // `cat`: stdin (the second stream when input=1) is echoed on stdout (the next) until stdin's FIN
  const cat = command[0] === 'cat' && url.searchParams.get('input') === '1';
  sock.on('data', (chunk: Buffer) => {
    buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
    while (buf.length >= 8) {
      const len = buf.readUInt32BE(4) & 0xffffff;
      if (buf.length < 8 + len) return;
      if (cat && !(buf[0]! & 0x80) && (buf.readUInt32BE(0) & 0x7fffffff) === streams[1]) {
        if (len > 0) frame(streams[2]!, false, Buffer.from(buf.subarray(8, 8 + len)));
        if (buf[4]! & 1) run();
      }
      if (buf[0]! & 0x80) {
        const type = buf.readUInt16BE(2);
        if (type === PING) sock.write(Buffer.from(buf.subarray(0, 8 + len)));
        if (type === SYN_STREAM) {
          const id = buf.readUInt32BE(8) & 0x7fffffff;
          streams.push(id);
          reply(id);
          if (streams.length === expected && !cat) setImmediate(run);
        }
      }
      buf = buf.subarray(8 + len);
    }
  });
  sock.on('error', () => {});
}
