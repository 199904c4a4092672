/** The DER reader and writer (src/x509/der.ts). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DerError, TAG, children, decodeOid, oid, readOne, readTlv, seq, time, tlv, uint } from '../../src/x509/der.js';

test('OIDs, integers, times and long lengths round-trip', () => {
  for (const o of ['2.5.4.3', '1.2.840.113549.1.9.14', '1.3.6.1.4.1.311.10.3.3', '2.16.840.1.113730.4.1', '2.999.3']) {
    assert.equal(decodeOid(readOne(oid(o), TAG.OID).content), o);
  }
  assert.deepEqual(
    [...uint(Buffer.from([0, 0, 0x80]))],
    [TAG.INTEGER, 2, 0, 0x80],
    'a leading zero keeps it positive, extra zeros go',
  );
  assert.deepEqual([...uint(Buffer.from([0]))], [TAG.INTEGER, 1, 0]);
  assert.equal(
    time(new Date(Date.UTC(2030, 0, 2, 3, 4, 5)))
      .subarray(2)
      .toString(),
    '300102030405Z',
  );
  assert.equal(
    time(new Date(Date.UTC(2051, 0, 2, 3, 4, 5)))
      .subarray(2)
      .toString(),
    '20510102030405Z',
  );
  const big = tlv(TAG.OCTET_STRING, Buffer.alloc(70_000, 1));
  assert.deepEqual([...big.subarray(0, 5)], [TAG.OCTET_STRING, 0x83, 0x01, 0x11, 0x70]);
  assert.equal(readOne(big).content.length, 70_000);
  assert.equal(children(readOne(seq(oid('2.5.4.3'), uint(Buffer.from([5]))))).length, 2);
});

test('malformed encodings are DerErrors', () => {
  assert.throws(() => readTlv(Buffer.from([0x30])), DerError);
  assert.throws(() => readTlv(Buffer.from([0x30, 0x05, 1])), DerError, 'truncated');
  assert.throws(() => readTlv(Buffer.from([0x30, 0x80, 0, 0])), DerError, 'indefinite length');
  assert.throws(() => readTlv(Buffer.from([0x1f, 0x01, 0])), DerError, 'high tag number');
  assert.throws(() => readOne(Buffer.from([0x05, 0x00, 0x05, 0x00])), DerError, 'trailing data');
  assert.throws(() => readOne(Buffer.from([0x05, 0x00]), TAG.SEQUENCE), DerError, 'wrong tag');
});
