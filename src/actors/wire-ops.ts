/**
 * A batch's ops on the wire (see wire.ts): the writes with a body (create, update, patch), the
 * bulk of a write load, packed; every other op structured-cloned as before, in `rest`. A packed
 * op arrives with every key of its kind set (undefined where the sender had none or undefined).
 */
import type { Body, Encoding, Op, TypeRef } from './protocol.js';
import type { Requester } from '../registry/strategy.js';
import { Packer, Unpacker, type PackedOps } from './wire.js';

type Create = Extract<Op, { op: 'create' }>;
type Update = Extract<Op, { op: 'update' }>;
type Patch = Extract<Op, { op: 'patch' }>;
type Write = Create | Update | Patch;

// every key of the packed kinds (and of their nested objects) is sent below: a new one fails to compile here
type Sent = keyof Create | keyof Update | keyof Patch | keyof TypeRef | keyof Encoding | keyof Body | keyof Requester;
type Listed =
  | 'id'
  | 'op'
  | 'type'
  | 'enc'
  | 'dryRun'
  | 'fieldManager'
  | 'fieldValidation'
  | 'pin'
  | 'namespace'
  | 'name'
  | 'body'
  | 'namespaceTerminating'
  | 'user'
  | 'patchType'
  | 'text'
  | 'force'
  | 'group'
  | 'version'
  | 'resource'
  | 'subresource'
  | 'format'
  | 'pretty'
  | 'mediaType'
  | 'view'
  | 'gzip'
  | 'contentType'
  | 'bytes'
  | 'username'
  | 'uid'
  | 'groups'
  | 'extra';
export const EVERY_OP_KEY_SENT: [Exclude<Sent, Listed>] extends [never] ? true : never = true;

const KINDS = ['create', 'update', 'patch'] as const;

function putCommon(p: Packer, o: Write): void {
  p.num(o.id);
  p.ref(o.type.group);
  p.ref(o.type.version);
  p.ref(o.type.resource);
  p.ref(o.type.subresource);
  p.ref(o.enc.format);
  p.ref(o.enc.pretty);
  p.ref(o.enc.mediaType);
  p.ref(o.enc.view);
  p.ref(o.enc.gzip);
  p.ref(o.dryRun);
  p.ref(o.fieldManager);
  p.ref(o.fieldValidation);
  p.ref(o.pin);
  p.ref(o.namespace);
  p.ref(o.name);
}

function putUser(p: Packer, u: Requester | undefined): void {
  if (!u) {
    p.num(-1);
    return;
  }
  p.num(0);
  p.ref(u.username);
  p.ref(u.uid);
  p.list(u.groups);
  p.ref(u.extra);
}

function takeUser(u: Unpacker): Requester | undefined {
  if (u.num() < 0) return undefined;
  return { username: u.ref(), uid: u.ref<string | undefined>(), groups: u.list()!, extra: u.ref() };
}

function putBody(p: Packer, b: Body): void {
  p.put(b.text);
  p.ref(b.contentType);
  p.ref(b.bytes);
}

function takeBody(u: Unpacker): Body {
  return { text: u.take(), contentType: u.ref<Body['contentType']>(), bytes: u.ref<Uint8Array | undefined>() };
}

function putWrite(p: Packer, o: Write): void {
  p.num(KINDS.indexOf(o.op));
  putCommon(p, o);
  if (o.op === 'patch') {
    p.ref(o.patchType);
    p.put(o.text);
    p.ref(o.force);
    putUser(p, o.user);
    return;
  }
  putBody(p, o.body);
  if (o.op === 'create') {
    p.ref(o.namespaceTerminating);
    putUser(p, o.user);
  }
}

type Common = Pick<Write, 'id' | 'type' | 'enc' | 'dryRun' | 'fieldManager' | 'fieldValidation' | 'pin' | 'namespace'>;

function takeCommon(u: Unpacker): Common {
  return {
    id: u.num(),
    type: { group: u.ref(), version: u.ref(), resource: u.ref(), subresource: u.ref<string | undefined>() },
    enc: {
      format: u.ref<Encoding['format']>(),
      pretty: u.ref<boolean>(),
      mediaType: u.ref<string | undefined>(),
      view: u.ref<Encoding['view']>(),
      gzip: u.ref<boolean | undefined>(),
    },
    dryRun: u.ref<boolean>(),
    fieldManager: u.ref<string | undefined>(),
    fieldValidation: u.ref<Write['fieldValidation']>(),
    pin: u.ref<string | undefined>(),
    namespace: u.ref(),
  };
}

// literals, not `{ ...c, op }`: a spread followed by properties takes V8's slow clone path
function takeWrite(u: Unpacker, kind: (typeof KINDS)[number]): Op {
  const c = takeCommon(u);
  const { id, type, enc, dryRun, fieldManager, fieldValidation, pin, namespace } = c;
  const name = u.ref<string | undefined>();
  if (kind === 'patch') {
    const patchType = u.ref<Patch['patchType']>();
    const text = u.take();
    const force = u.ref<boolean>();
    const user = takeUser(u);
    const op = 'patch';
    return {
      id,
      op,
      type,
      enc,
      dryRun,
      fieldManager,
      fieldValidation,
      pin,
      namespace,
      name: name!,
      patchType,
      text,
      force,
      user,
    };
  }
  const body = takeBody(u);
  if (kind === 'update')
    return { id, op: 'update', type, enc, dryRun, fieldManager, fieldValidation, pin, namespace, name: name!, body };
  const namespaceTerminating = u.ref<boolean | undefined>();
  const user = takeUser(u);
  const op = 'create';
  return {
    id,
    op,
    type,
    enc,
    dryRun,
    fieldManager,
    fieldValidation,
    pin,
    namespace,
    name,
    body,
    namespaceTerminating,
    user,
  };
}

function packable(o: Op): o is Write {
  return o.op === 'create' || o.op === 'update' || o.op === 'patch';
}

/** The wire form of a batch's ops. */
export function packOps(ops: readonly Op[]): PackedOps {
  const p = new Packer();
  const rest: Op[] = [];
  for (const o of ops) {
    p.record();
    if (packable(o)) putWrite(p, o);
    else {
      p.num(-1);
      rest.push(o);
    }
  }
  return { ...p.done(), count: ops.length, rest };
}

/** The ops of packOps, in order. */
export function unpackOps(w: PackedOps): Op[] {
  const u = new Unpacker(w);
  const ops: Op[] = new Array(w.count);
  let rest = 0;
  for (let i = 0; i < w.count; i++) {
    u.record();
    const kind = u.num();
    ops[i] = kind < 0 ? w.rest[rest++]! : takeWrite(u, KINDS[kind]!);
  }
  return ops;
}
