/**
 * CertificateSigningRequest write paths, table-driven: what the main resource, `approval` and
 * `status` may change (one valid and one invalid case per rule, asserting field path and reason),
 * the defaults they fill in, and the requester recorded on create.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { csrStrategy } from '../../../src/registry/strategies/csr.js';
import { certificateError } from '../../../src/registry/strategies/csr-status.js';
import { check, ctx, prepared, subresourceUpdate, update, type Expect } from './harness.js';
import { ALICE_CSR, MASTERS_CSR, b64 } from '../../fixtures/csr.js';

const T0 = '2025-01-01T00:00:00Z';
const NOW = '2025-01-02T03:04:05Z';
const approved = {
  type: 'Approved',
  status: 'True',
  reason: 'R',
  message: 'm',
  lastUpdateTime: T0,
  lastTransitionTime: T0,
};
const denied = {
  type: 'Denied',
  status: 'True',
  reason: 'R',
  message: 'm',
  lastUpdateTime: T0,
  lastTransitionTime: T0,
};
const failed = {
  type: 'Failed',
  status: 'True',
  reason: 'F',
  message: 'm',
  lastUpdateTime: T0,
  lastTransitionTime: T0,
};

function selfSignedCert(): string {
  const dir = mkdtempSync(join(tmpdir(), 'csr-test-'));
  try {
    execFileSync(
      '/usr/bin/openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        join(dir, 'k'),
        '-out',
        join(dir, 'c'),
        '-days',
        '1',
        '-subj',
        '/CN=x',
      ],
      { stdio: 'ignore' },
    );
    return readFileSync(join(dir, 'c'), 'utf8');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
const CERT = b64(selfSignedCert());

const stored = (status: any = {}) => ({
  apiVersion: 'certificates.plat.io/v1',
  kind: 'CertificateSigningRequest',
  metadata: { name: 'c', resourceVersion: '5' },
  spec: {
    request: b64(ALICE_CSR),
    signerName: 'platform.io/kube-apiserver-client',
    usages: ['client auth'],
    username: 'alice',
  },
  status,
});
const withStatus = (status: any) => ({ ...stored(), status });

type Row = [label: string, path: 'approval' | 'status', old: any, written: any, expect?: Expect];

const ROWS: Row[] = [
  // approval: Approved/Denied conditions
  ['approval adds Approved', 'approval', stored(), withStatus({ conditions: [{ type: 'Approved', status: 'True' }] })],
  [
    'approval adds Denied',
    'approval',
    stored(),
    withStatus({ conditions: [{ type: 'Denied', status: 'True', reason: 'No' }] }),
  ],
  [
    'approval: Approved and Denied exclusive',
    'approval',
    stored(),
    withStatus({
      conditions: [
        { type: 'Approved', status: 'True' },
        { type: 'Denied', status: 'True' },
      ],
    }),
    {
      field: 'status.conditions[1].type',
      reason: 'FieldValueInvalid',
      message: 'Approved and Denied conditions are mutually exclusive',
    },
  ],
  [
    'approval: Approved must be True',
    'approval',
    stored(),
    withStatus({ conditions: [{ type: 'Approved', status: 'False' }] }),
    { field: 'status.conditions[0].status', reason: 'FieldValueNotSupported', message: 'supported values: "True"' },
  ],
  [
    'approval: other types any known status',
    'approval',
    stored(),
    withStatus({ conditions: [{ type: 'Reviewed', status: 'False' }] }),
  ],
  [
    'approval: status from the known set',
    'approval',
    stored(),
    withStatus({ conditions: [{ type: 'Reviewed', status: 'Maybe' }] }),
    {
      field: 'status.conditions[0].status',
      reason: 'FieldValueNotSupported',
      message: 'supported values: "False", "True", "Unknown"',
    },
  ],
  [
    'approval: type required',
    'approval',
    stored(),
    withStatus({ conditions: [{ status: 'True' }] }),
    { field: 'status.conditions[0].type', reason: 'FieldValueRequired' },
  ],
  [
    'approval: status required (v1 does not default it)',
    'approval',
    stored(),
    withStatus({ conditions: [{ type: 'Approved' }] }),
    { field: 'status.conditions[0].status', reason: 'FieldValueRequired' },
  ],
  [
    'approval: types unique',
    'approval',
    stored(),
    withStatus({
      conditions: [
        { type: 'Approved', status: 'True' },
        { type: 'Approved', status: 'True' },
      ],
    }),
    { field: 'status.conditions[1].type', reason: 'FieldValueDuplicate' },
  ],
  [
    'approval keeps an existing Approved',
    'approval',
    stored({ conditions: [approved] }),
    withStatus({ conditions: [approved] }),
  ],
  [
    'approval may not remove Approved',
    'approval',
    stored({ conditions: [approved] }),
    withStatus({ conditions: [] }),
    {
      field: 'status.conditions',
      reason: 'FieldValueForbidden',
      message: 'updates may not remove a condition of type "Approved"',
    },
  ],
  [
    'approval may not remove Denied',
    'approval',
    stored({ conditions: [denied] }),
    withStatus({}),
    {
      field: 'status.conditions',
      reason: 'FieldValueForbidden',
      message: 'updates may not remove a condition of type "Denied"',
    },
  ],
  [
    'approval may not deny an approved request',
    'approval',
    stored({ conditions: [approved] }),
    withStatus({ conditions: [approved, { type: 'Denied', status: 'True' }] }),
    { field: 'status.conditions[1].type', reason: 'FieldValueInvalid' },
  ],
  [
    'approval may not remove Failed',
    'approval',
    stored({ conditions: [failed] }),
    withStatus({ conditions: [{ type: 'Approved', status: 'True' }] }),
    {
      field: 'status.conditions',
      reason: 'FieldValueForbidden',
      message: 'updates may not remove a condition of type "Failed"',
    },
  ],
  [
    'approval ignores a certificate',
    'approval',
    stored(),
    withStatus({ certificate: CERT, conditions: [{ type: 'Approved', status: 'True' }] }),
  ],
  // status: certificate and other conditions
  [
    'status sets the certificate',
    'status',
    stored({ conditions: [approved] }),
    withStatus({ conditions: [approved], certificate: CERT }),
  ],
  [
    'status: certificate PEM CERTIFICATE blocks',
    'status',
    stored({ conditions: [approved] }),
    withStatus({ conditions: [approved], certificate: b64(ALICE_CSR) }),
    {
      field: 'status.certificate',
      reason: 'FieldValueInvalid',
      message: 'only CERTIFICATE PEM blocks are allowed, found "CERTIFICATE REQUEST"',
    },
  ],
  [
    'status: certificate has a PEM block',
    'status',
    stored({ conditions: [approved] }),
    withStatus({ conditions: [approved], certificate: b64('nothing here') }),
    {
      field: 'status.certificate',
      reason: 'FieldValueInvalid',
      message: 'must contain at least one CERTIFICATE PEM block',
    },
  ],
  [
    'status: certificate set once',
    'status',
    stored({ conditions: [approved], certificate: CERT }),
    withStatus({ conditions: [approved], certificate: b64(selfSignedCert()) }),
    {
      field: 'status.certificate',
      reason: 'FieldValueForbidden',
      message: 'updates may not modify existing certificate content',
    },
  ],
  [
    'status adds Failed',
    'status',
    stored({ conditions: [approved] }),
    withStatus({ conditions: [approved, { type: 'Failed', status: 'True', reason: 'SignerValidationFailure' }] }),
  ],
  [
    'status: Failed must be True',
    'status',
    stored({ conditions: [approved] }),
    withStatus({ conditions: [approved, { type: 'Failed', status: 'False' }] }),
    { field: 'status.conditions[1].status', reason: 'FieldValueNotSupported' },
  ],
  [
    'status may not add Approved',
    'status',
    stored(),
    withStatus({ conditions: [{ type: 'Approved', status: 'True' }] }),
    {
      field: 'status.conditions',
      reason: 'FieldValueForbidden',
      message: 'updates may not add a condition of type "Approved"',
    },
  ],
  [
    'status may not add Denied',
    'status',
    stored(),
    withStatus({ conditions: [{ type: 'Denied', status: 'True' }] }),
    {
      field: 'status.conditions',
      reason: 'FieldValueForbidden',
      message: 'updates may not add a condition of type "Denied"',
    },
  ],
  [
    'status may not remove Approved',
    'status',
    stored({ conditions: [approved] }),
    withStatus({ certificate: CERT }),
    {
      field: 'status.conditions',
      reason: 'FieldValueForbidden',
      message: 'updates may not remove a condition of type "Approved"',
    },
  ],
  [
    'status may not remove Failed',
    'status',
    stored({ conditions: [approved, failed] }),
    withStatus({ conditions: [approved] }),
    {
      field: 'status.conditions',
      reason: 'FieldValueForbidden',
      message: 'updates may not remove a condition of type "Failed"',
    },
  ],
];

test('approval and status write rules', () => {
  for (const [label, path, old, written, expect] of ROWS)
    check(subresourceUpdate(csrStrategy, path, old, written).causes, expect, label);
});

test('approval changes only status.conditions, with timestamps filled in', () => {
  const old = stored({});
  const written = {
    ...stored(),
    spec: { ...old.spec, signerName: 'example.com/other' },
    metadata: { name: 'c', labels: { a: 'b' } },
    status: { certificate: CERT, conditions: [{ type: 'Approved', status: 'True' }] },
  };
  const { next, causes } = subresourceUpdate(csrStrategy, 'approval', old, written);
  assert.deepEqual(causes, []);
  assert.deepEqual(next.spec, old.spec, 'spec is immutable');
  assert.deepEqual(next.metadata, old.metadata);
  assert.equal(next.status.certificate, undefined, 'approval never sets the certificate');
  assert.deepEqual(next.status.conditions, [
    { type: 'Approved', status: 'True', lastUpdateTime: NOW, lastTransitionTime: NOW },
  ]);
});

test('status writes keep Approved as stored; approval writes take the conditions as written', () => {
  const old = stored({ conditions: [approved, failed] });
  const { next, causes } = subresourceUpdate(
    csrStrategy,
    'approval',
    old,
    withStatus({
      conditions: [
        { ...approved, message: 'edited' },
        { ...failed, reason: 'X' },
      ],
    }),
  );
  assert.deepEqual(causes, []);
  assert.deepEqual(
    next.status.conditions,
    [
      { ...approved, message: 'edited' },
      { ...failed, reason: 'X' },
    ],
    'as upstream: approval only refuses removals',
  );
  const st = subresourceUpdate(
    csrStrategy,
    'status',
    old,
    withStatus({ conditions: [{ ...approved, reason: 'edited' }, failed] }),
  );
  assert.deepEqual(st.causes, []);
  assert.deepEqual(st.next.status.conditions[0], approved, 'status writes keep Approved as stored');
});

test('status keeps the spec; lastTransitionTime survives for an unchanged type and status', () => {
  const old = stored({ conditions: [approved, { type: 'Progress', status: 'True', lastTransitionTime: T0 }] });
  const { next, causes } = subresourceUpdate(csrStrategy, 'status', old, {
    ...stored(),
    spec: { request: '' },
    status: { conditions: [approved, { type: 'Progress', status: 'True' }] },
  });
  assert.deepEqual(causes, []);
  assert.deepEqual(next.spec, old.spec);
  assert.equal(next.status.conditions[1].lastTransitionTime, T0);
  assert.equal(next.status.conditions[1].lastUpdateTime, NOW);
});

test('main resource updates keep spec and status', () => {
  const old = stored({ conditions: [approved] });
  const obj = {
    ...stored(),
    metadata: { name: 'c', labels: { team: 'a' } },
    spec: { ...old.spec, usages: ['server auth'] },
    status: {},
  };
  assert.deepEqual(update(csrStrategy, old, obj), []);
  const next = structuredClone(obj);
  csrStrategy.prepareForUpdate(next, old, ctx());
  assert.deepEqual(next.spec, old.spec);
  assert.deepEqual(next.status, old.status);
});

test('create records the requester, resets status, refuses system:masters for the client signer', () => {
  const c = {
    ...ctx(),
    user: { username: 'bob', uid: 'u-1', groups: ['dev', 'system:authenticated'], extra: { scopes: ['a'] } },
  };
  const o = prepared(
    csrStrategy,
    {
      metadata: { name: 'c' },
      spec: { ...stored().spec, username: 'mallory', groups: ['system:masters'] },
      status: { conditions: [approved], certificate: CERT },
    },
    c,
  );
  assert.equal(o.spec.username, 'bob');
  assert.equal(o.spec.uid, 'u-1');
  assert.deepEqual(o.spec.groups, ['dev', 'system:authenticated']);
  assert.deepEqual(o.spec.extra, { scopes: ['a'] });
  assert.deepEqual(o.status, {});
  assert.equal(csrStrategy.admitCreate(o, c), undefined);
  const masters = prepared(
    csrStrategy,
    { metadata: { name: 'm' }, spec: { ...stored().spec, request: b64(MASTERS_CSR) } },
    c,
  );
  assert.equal(
    csrStrategy.admitCreate(masters, c),
    'use of platform.io/kube-apiserver-client signer with system:masters group is not allowed',
  );
  const other = { ...masters, spec: { ...masters.spec, signerName: 'example.com/anything' } };
  assert.equal(csrStrategy.admitCreate(other, c), undefined, 'only the API server client signer is restricted');
});

test('certificateError follows upstream validateCertificate', () => {
  assert.equal(certificateError(''), undefined);
  assert.equal(certificateError(CERT), undefined);
  assert.equal(
    certificateError(b64(Buffer.from(CERT, 'base64').toString() + Buffer.from(CERT, 'base64').toString())),
    undefined,
    'a chain',
  );
  assert.equal(
    certificateError(b64('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n')),
    'x509: malformed certificate',
  );
  assert.equal(
    certificateError(b64('-----BEGIN CERTIFICATE-----\nProc-Type: 4,ENCRYPTED\n\nAAAA\n-----END CERTIFICATE-----\n')),
    'no PEM block headers are permitted',
  );
});

test("the legacy signer is the identity product's", () => {
  const obj = (signerName: string) => ({ ...stored(), status: {}, spec: { ...stored().spec, signerName } });
  check(
    csrStrategy.validate(obj('kubernetes.io/legacy-unknown'), { ...ctx().config, apiServiceName: 'kubernetes' }),
    {
      field: 'spec.signerName',
      reason: 'FieldValueInvalid',
      message: 'the legacy signerName is not allowed via this API version',
    },
    'kubernetes',
  );
  check(
    csrStrategy.validate(obj('platform.io/legacy-unknown'), ctx().config),
    { field: 'spec.signerName', reason: 'FieldValueInvalid' },
    'platform',
  );
  check(
    csrStrategy.validate(obj('kubernetes.io/legacy-unknown'), ctx().config),
    undefined,
    "another product's name is an ordinary signer",
  );
});
