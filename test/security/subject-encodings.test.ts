/**
 * Adversarial subjects, in process: every ASN.1 string type, invalid contents, repeated CNs and
 * Os and multi-valued RDNs, read by the server's one name parser in both of Go's modes (a CSR's
 * subject, a client certificate's subject) and cross-checked against an independent ASN.1
 * library (@peculiar/asn1-x509). Where the library reads text that Go leaves out (UniversalString
 * and the other types Go does not decode), the server must not see it either.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { AsnConvert } from '@peculiar/asn1-schema';
import { Name as PecName } from '@peculiar/asn1-x509';
import { readOne } from '../../src/x509/der.js';
import { NameError, certificateSubject, emptyName, encodeName, parseName, type Name } from '../../src/x509/name.js';
import { parseCSR } from '../../src/x509/request.js';
import { issueCertificate } from '../../src/x509/issue.js';
import { userFromSubject } from '../../src/auth/x509.js';
import {
  OID_CN,
  OID_O,
  STRING_TAGS,
  certPem,
  cn,
  csrPem,
  derOf,
  ecKey,
  name,
  org,
  type StringType,
} from './x509-builders.js';

/** The independent library's text of every attribute value, in order: [oid, text][]. */
function libraryReading(der: Buffer): [string, string][] {
  const out: [string, string][] = [];
  for (const rdn of AsnConvert.parse(der, PecName)) for (const atv of rdn) out.push([atv.type, atv.value.toString()]);
  return out;
}

const parse = (der: Buffer, mode: 'request' | 'certificate'): Name => parseName(readOne(der), mode);

// Go's readings of `O=system:masters` encoded as each type: text, or left out (request) / refused (certificate)
const GO_STRINGS: StringType[] = ['UTF8String', 'PrintableString', 'T61String', 'IA5String', 'BMPString'];
const GO_UNKNOWN: StringType[] = ['UniversalString', 'VisibleString', 'GeneralString'];

test('each string type Go decodes gives the text the independent library reads', () => {
  for (const type of GO_STRINGS) {
    const der = name(cn('eve'), org('system:masters', type));
    assert.deepEqual(
      libraryReading(der).map(([, t]) => t),
      ['eve', 'system:masters'],
      type,
    );
    for (const mode of ['request', 'certificate'] as const) {
      const n = parse(der, mode);
      assert.deepEqual([n.commonName, n.organization], ['eve', ['system:masters']], `${type} (${mode})`);
    }
  }
  // BMPString beyond Latin-1, as UTF-16BE
  const bmp = name(cn('ünïcødé ✓', 'BMPString'));
  assert.equal(parse(bmp, 'certificate').commonName, 'ünïcødé ✓');
  assert.equal(libraryReading(bmp)[0]![1], 'ünïcødé ✓');
});

test('UniversalString and other types Go does not decode: left out of a request, refused in a certificate', () => {
  for (const type of GO_UNKNOWN) {
    const der = name(cn('eve'), org('system:masters', type));
    if (type === 'UniversalString')
      assert.equal(libraryReading(der)[1]![1], 'system:masters', 'the value really says system:masters (UTF-32BE)');
    assert.deepEqual(parse(der, 'request').organization, [], `${type}: Go's encoding/asn1 leaves the value nil`);
    assert.throws(
      () => parse(der, 'certificate'),
      (e: unknown) =>
        e instanceof NameError &&
        e.message ===
          `x509: invalid RDNSequence: invalid attribute value: unsupported string type: ${STRING_TAGS[type]}`,
      type,
    );
  }
});

test("invalid contents of a string type fail with Go's messages", () => {
  const cases: [Buffer, string, string][] = [
    [
      name([{ oid: OID_O, type: 'PrintableString', text: 'a@b' }]),
      'asn1: syntax error: PrintableString contains invalid character',
      'x509: invalid RDNSequence: invalid attribute value: invalid PrintableString',
    ],
    [
      name([{ oid: OID_O, type: 'IA5String', bytes: Buffer.from([0x61, 0xe9]) }]),
      'asn1: syntax error: IA5String contains invalid character',
      'x509: invalid RDNSequence: invalid attribute value: invalid IA5String',
    ],
    [
      name([{ oid: OID_O, type: 'NumericString', text: 'system:masters' }]),
      'asn1: syntax error: NumericString contains invalid character',
      'x509: invalid RDNSequence: invalid attribute value: invalid NumericString',
    ],
    [
      name([{ oid: OID_O, type: 'UTF8String', bytes: Buffer.from([0x61, 0xff]) }]),
      'asn1: syntax error: invalid UTF-8 string',
      'x509: invalid RDNSequence: invalid attribute value: invalid UTF-8 string',
    ],
    [
      name([{ oid: OID_O, type: 'BMPString', bytes: Buffer.from([0, 0x61, 0]) }]),
      'pkcs12: odd-length BMP string',
      'x509: invalid RDNSequence: invalid attribute value: invalid BMPString',
    ],
  ];
  for (const [der, inRequest, inCertificate] of cases) {
    assert.throws(() => parse(der, 'request'), { message: inRequest });
    assert.throws(() => parse(der, 'certificate'), { message: inCertificate });
  }
  // a lone surrogate: a certificate refuses it, a request reads U+FFFD
  const surrogate = name([{ oid: OID_O, type: 'BMPString', bytes: Buffer.from([0xd8, 0x00]) }]);
  assert.deepEqual(parse(surrogate, 'request').organization, ['\ufffd']);
  assert.throws(() => parse(surrogate, 'certificate'), {
    message: 'x509: invalid RDNSequence: invalid attribute value: invalid BMPString',
  });
  // a PrintableString may hold '*' and '&' (Go's parsers admit them)
  assert.deepEqual(parse(name(org('a*b&c', 'PrintableString')), 'certificate').organization, ['a*b&c']);
});

test("several CNs: the last one, as Go's FillFromRDNSequence; every O in order; multi-valued RDNs read element by element", () => {
  const twoRdns = name(org('system:nodes'), cn('system:plat-controller-manager'), cn('system:node:n1'));
  const oneRdn = name([
    ...org('system:nodes'),
    { oid: OID_CN, type: 'UTF8String', text: 'first' },
    { oid: OID_CN, type: 'PrintableString', text: 'last' },
  ]);
  for (const mode of ['request', 'certificate'] as const) {
    assert.equal(parse(twoRdns, mode).commonName, 'system:node:n1');
    assert.equal(parse(oneRdn, mode).commonName, 'last');
  }
  const lib = libraryReading(twoRdns)
    .filter(([o]) => o === OID_CN)
    .map(([, t]) => t);
  assert.equal(lib.at(-1), parse(twoRdns, 'certificate').commonName, 'the library sees the same last CN');
  const orgs = name(org('a'), cn('u'), org('b', 'PrintableString'), [...org('c'), ...org('d', 'BMPString')]);
  assert.deepEqual(parse(orgs, 'certificate').organization, ['a', 'b', 'c', 'd']);
  assert.deepEqual(
    libraryReading(orgs)
      .filter(([o]) => o === OID_O)
      .map(([, t]) => t),
    ['a', 'b', 'c', 'd'],
  );
  assert.deepEqual(userFromSubject(parse(orgs, 'certificate')), { username: 'u', groups: ['a', 'b', 'c', 'd'] });
});

test("encodeName writes Go's ToRDNSequence: one RDN per attribute type, CN after O, Printable when it can; it reads back the same", () => {
  const n: Name = {
    ...emptyName(),
    commonName: 'alice',
    organization: ['ops', 'dev'],
    country: ['DE'],
    organizationalUnit: ['ü*'],
    serialNumber: '7',
  };
  const der = encodeName(n);
  assert.deepEqual(
    parse(der, 'certificate'),
    { ...n, organization: ['dev', 'ops'] },
    'DER sorts the values of one SET (Go too)',
  );
  assert.deepEqual(
    libraryReading(der),
    [
      ['2.5.4.6', 'DE'],
      [OID_O, 'dev'],
      [OID_O, 'ops'],
      ['2.5.4.11', 'ü*'],
      [OID_CN, 'alice'],
      ['2.5.4.5', '7'],
    ],
    'the two Os share one SET, sorted as DER requires',
  );
  const lib = AsnConvert.parse(der, PecName);
  assert.equal(lib[1]![0]!.value.printableString, 'dev');
  assert.equal(lib[2]![0]!.value.utf8String, 'ü*', 'non-printable text is a UTF8String');
});

test('a CSR whose O is a UniversalString system:masters: parsed without it, and the issued certificate carries only what was parsed', async () => {
  const csr = parseCSR(csrPem(name(cn('eve'), org('system:masters', 'UniversalString'), org('devs'))));
  assert.deepEqual([csr.subject.commonName, csr.subject.organization], ['eve', ['devs']]);
  const caKey = ecKey();
  const caCert = new X509Certificate(
    certPem(name(cn('test-ca')), { cert: new X509Certificate(selfSigned(caKey)), key: caKey.privateKey }, caKey),
  );
  const issued = await issueCertificate(csr, ['client auth'], { cert: caCert, key: caKey.privateKey }, 3_600_000);
  const der = derOf(issued);
  assert.deepEqual(userFromSubject(certificateSubject(der)), { username: 'eve', groups: ['devs'] });
  const subject = new X509Certificate(issued).subject;
  assert.doesNotMatch(subject, /masters/, `OpenSSL's reading of the issued subject: ${subject}`);
  // and a multi-CN request is issued with the one CN the approver checked
  const node = parseCSR(csrPem(name(org('system:nodes'), cn('system:plat-controller-manager'), cn('system:node:n1'))));
  const nodeCert = await issueCertificate(node, ['client auth'], { cert: caCert, key: caKey.privateKey }, 3_600_000);
  assert.deepEqual(userFromSubject(certificateSubject(derOf(nodeCert))), {
    username: 'system:node:n1',
    groups: ['system:nodes'],
  });
  assert.doesNotMatch(new X509Certificate(nodeCert).subject, /controller-manager/);
});

/** A self-signed CA certificate for key (issuer = subject = CN=test-ca). */
function selfSigned(key: ReturnType<typeof ecKey>): string {
  const subject = name(cn('test-ca'));
  // certPem reads the issuer from the CA certificate: bootstrap with a stand-in carrying the same subject
  const standIn = { cert: { raw: derOf(fakeCaCert(subject)) } as unknown as X509Certificate, key: key.privateKey };
  return certPem(subject, standIn, key);
}

/** The smallest DER with a TBSCertificate whose subject field is subject (only read for its issuer name). */
function fakeCaCert(subject: Buffer): string {
  const tlv = (tag: number, b: Buffer) => Buffer.concat([Buffer.from([tag, b.length]), b]);
  const nul = Buffer.from([0x05, 0x00]);
  const tbs = tlv(0x30, Buffer.concat([tlv(0x02, Buffer.from([1])), nul, nul, nul, subject]));
  return `-----BEGIN X-----\n${tlv(0x30, tbs).toString('base64')}\n-----END X-----\n`;
}

test('random subjects: the server and the independent library agree on every CN and O (500 names)', () => {
  let seed = 18;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  const PRINTABLE = "abcXYZ019 '()+,-./:=?";
  const text = (type: StringType): string => {
    const len = 1 + rand(12);
    let out = '';
    for (let i = 0; i < len; i++) {
      if (type === 'PrintableString') out += PRINTABLE[rand(PRINTABLE.length)];
      else if (type === 'IA5String' || type === 'T61String') out += String.fromCharCode(0x20 + rand(0x5f));
      else
        out += String.fromCharCode([0x41 + rand(26), 0xe0 + rand(32), 0x4e00 + rand(500), 0x3b1 + rand(20)][rand(4)]!);
    }
    return out;
  };
  const types: StringType[] = ['UTF8String', 'PrintableString', 'T61String', 'IA5String', 'BMPString'];
  for (let i = 0; i < 500; i++) {
    const rdns = Array.from({ length: 1 + rand(4) }, () =>
      Array.from({ length: 1 + rand(3) }, () => {
        const type = types[rand(types.length)]!;
        return { oid: [OID_CN, OID_O, '2.5.4.11'][rand(3)]!, type, text: text(type) };
      }),
    );
    const der = name(...rdns);
    const lib = libraryReading(der);
    const expectedCn =
      lib
        .filter(([o]) => o === OID_CN)
        .map(([, t]) => t)
        .at(-1) ?? '';
    const expectedO = lib.filter(([o]) => o === OID_O).map(([, t]) => t);
    for (const mode of ['request', 'certificate'] as const) {
      const n = parse(der, mode);
      assert.deepEqual(
        [n.commonName, n.organization],
        [expectedCn, expectedO],
        `name ${i} (${mode}): ${JSON.stringify(rdns)}`,
      );
    }
  }
});
