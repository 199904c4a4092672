/**
 * `npm run bench:micro [-- <suite...>] [--time 500]`: tinybench suites over the in-process hot
 * paths — codec encode/decode per encoding, label/field selector matching, RBAC evaluation over
 * the default policy plus 200 namespaced bindings, strategic merge, server-side apply, and
 * fieldsV1 set operations. Prints a markdown table (ops/s, mean and p99 per op). Bounded: each
 * task runs for --time ms (default 500, at most 10,000) and at least 10 iterations.
 */
import { Bench } from 'tinybench';
import { makeIdentity } from '../src/api/identity.js';
import { parseLabelSelector } from '../src/api/selectors.js';
import { parseFieldSelector } from '../src/api/field-selectors.js';
import { apply } from '../src/apply/managed-fields.js';
import { fieldsOf } from '../src/apply/fieldset.js';
import { defaultPolicy } from '../src/auth/authz/bootstrap-policy.js';
import { RbacIndex } from '../src/auth/authz/rbac-index.js';
import { RbacAuthorizer } from '../src/auth/authz/rbac.js';
import type { Attributes } from '../src/auth/authz/attributes.js';
import type { ChangeEvent } from '../src/actors/protocol.js';
import { decodeBody, encode } from '../src/codec/codec.js';
import { ProtobufCodec } from '../src/codec/protobuf.js';
import { decodeCbor, encodeCbor } from '../src/codec/cbor.js';
import { applyStrategicPatch } from '../src/patch/strategic.js';
import { schemaIndex } from '../src/schema/schema.js';
import { deployerBody, scalerBody } from './scenarios/apply.js';

const SUITES = ['codec', 'selectors', 'rbac', 'strategic', 'apply', 'fieldset'] as const;
type Suite = (typeof SUITES)[number];

function pod(i = 0): any {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `web-${i}`,
      namespace: 'default',
      uid: '6f1c7a52-3f0b-4a8e-9d1e-2b1f7c0d9e11',
      resourceVersion: '12345',
      creationTimestamp: '2026-11-23T00:00:00Z',
      labels: { app: 'web', tier: 'frontend', 'pod-template-hash': '7d9f8b6c5' },
      annotations: { 'example.io/owner': 'team-a' },
    },
    spec: {
      containers: [
        {
          name: 'web',
          image: 'registry.example/web:1.2.3',
          ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
          env: [
            { name: 'MODE', value: 'prod' },
            { name: 'LEVEL', value: 'info' },
          ],
          resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { memory: '128Mi' } },
        },
      ],
      nodeName: 'node-1',
      restartPolicy: 'Always',
      serviceAccountName: 'default',
    },
    status: {
      phase: 'Running',
      podIP: '10.0.0.7',
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-11-23T00:00:01Z' }],
    },
  };
}

function codec(b: Bench): void {
  const p = pod();
  const pb = new ProtobufCodec();
  const json = JSON.stringify(p);
  const bytes = pb.encodeObject(p);
  const cbor = encodeCbor(p);
  const yaml = encode(p, { format: 'yaml', pretty: false }) as string;
  b.add('codec: JSON encode (Pod)', () => {
    JSON.stringify(p);
  });
  b.add('codec: JSON decode (Pod)', () => {
    JSON.parse(json);
  });
  b.add('codec: Protobuf encode (Pod)', () => {
    pb.encodeObject(p);
  });
  b.add('codec: Protobuf decode (Pod)', () => {
    pb.decodeObject(bytes);
  });
  b.add('codec: CBOR encode (Pod)', () => {
    encodeCbor(p);
  });
  b.add('codec: CBOR decode (Pod)', () => {
    decodeCbor(cbor);
  });
  b.add('codec: YAML encode (Pod)', () => {
    encode(p, { format: 'yaml', pretty: false });
  });
  b.add('codec: YAML decode (Pod)', () => {
    decodeBody({ text: yaml, contentType: 'yaml' } as any);
  });
}

function selectors(b: Bench): void {
  const labels = pod().metadata.labels;
  const sel = parseLabelSelector('app=web,tier in (frontend,backend),!legacy,pod-template-hash');
  const miss = parseLabelSelector('app=api,tier notin (frontend)');
  const fields = {
    'metadata.name': 'web-0',
    'metadata.namespace': 'default',
    'spec.nodeName': 'node-1',
    'status.phase': 'Running',
  };
  const fsel = parseFieldSelector('spec.nodeName=node-1,status.phase!=Failed');
  b.add('selectors: label parse (4 requirements)', () => {
    parseLabelSelector('app=web,tier in (frontend,backend),!legacy,pod-template-hash');
  });
  b.add('selectors: label match (4 requirements, hit)', () => {
    sel.matches(labels);
  });
  b.add('selectors: label match (2 requirements, miss)', () => {
    miss.matches(labels);
  });
  b.add('selectors: field match (2 requirements)', () => {
    fsel.matches(fields);
  });
}

function rbac(b: Bench): void {
  const identity = makeIdentity();
  const G = 'rbac.authorization.plat.io';
  let rv = 1;
  const ev = (resource: string, obj: any): ChangeEvent =>
    ({
      typeKey: `${G}/${resource}`,
      type: 'ADDED',
      rv: rv++,
      namespace: obj.metadata.namespace ?? '',
      name: obj.metadata.name,
      json: JSON.stringify(obj),
      labels: obj.metadata.labels,
      fields: {},
      apiVersion: `${G}/v1`,
      uid: `u-${rv}`,
    }) as ChangeEvent;
  const index = new RbacIndex(identity);
  index.load([]);
  const pol = defaultPolicy(identity);
  const events: ChangeEvent[] = [
    ...pol.clusterRoles.map((r) => ev('clusterroles', r)),
    ...pol.clusterRoleBindings.map((r) => ev('clusterrolebindings', r)),
    ...pol.roles.map((r) => ev('roles', r)),
    ...pol.roleBindings.map((r) => ev('rolebindings', r)),
  ];
  for (let i = 0; i < 200; i++) {
    const namespace = `team-${i}`;
    events.push(
      ev('roles', {
        metadata: { name: 'dev', namespace },
        rules: [
          {
            verbs: ['get', 'list', 'watch', 'create', 'update'],
            apiGroups: ['', 'apps'],
            resources: ['pods', 'configmaps', 'deployments'],
          },
        ],
      }),
    );
    events.push(
      ev('rolebindings', {
        metadata: { name: 'dev', namespace },
        roleRef: { apiGroup: G, kind: 'Role', name: 'dev' },
        subjects: [{ kind: 'Group', apiGroup: G, name: `team-${i}` }],
      }),
    );
  }
  index.apply(events);
  const authz = new RbacAuthorizer(index);
  const user = { username: 'alice', groups: ['team-150', 'system:authenticated'] };
  const res = (verb: string, resource: string, namespace: string, apiGroup = ''): Attributes =>
    ({ user, verb, apiGroup, resource, namespace, resourceRequest: true, path: '' }) as Attributes;
  const allowNs = res('list', 'pods', 'team-150');
  const denyNs = res('delete', 'secrets', 'team-3');
  const nonRes: Attributes = { user, verb: 'get', resourceRequest: false, path: '/healthz' } as Attributes;
  if (authz.authorize(allowNs).decision !== 'allow') throw new Error('rbac micro: the team binding does not allow');
  b.add('rbac: allow via namespaced binding (200 teams + defaults)', () => {
    authz.authorize(allowNs);
  });
  b.add('rbac: no opinion (nothing matches)', () => {
    authz.authorize(denyNs);
  });
  b.add('rbac: non-resource URL via system:public-info-viewer', () => {
    authz.authorize(nonRes);
  });
}

const deploymentSchema = () => schemaIndex().forKind('apps', 'v1', 'Deployment')!;

function strategic(b: Bench): void {
  const schema = deploymentSchema();
  const live = JSON.parse(deployerBody('web', 1));
  const patch = {
    spec: {
      replicas: 3,
      template: {
        spec: {
          containers: [
            { name: 'sidecar', image: 'registry.example/sidecar:2.0', env: [{ name: 'ROUND', value: 'x' }] },
          ],
        },
      },
    },
  };
  b.add('strategic merge: Deployment, one container by key', () => {
    applyStrategicPatch(live, patch, schema);
  });
}

function applySuite(b: Bench): void {
  const schema = deploymentSchema();
  const target = { kind: 'Deployment', group: 'apps', name: 'web' };
  const now = '2026-11-23T00:00:00Z';
  let live = apply(undefined, JSON.parse(deployerBody('web', 0)), schema, 'deployer', 'apps/v1', now, false, target);
  live = apply(live, JSON.parse(scalerBody('web', 0)), schema, 'autoscaler', 'apps/v1', now, true, target);
  const next = JSON.parse(deployerBody('web', 1));
  const scale = JSON.parse(scalerBody('web', 3));
  b.add('apply: deployer re-applies a changed Deployment (2 managers)', () => {
    apply(live, structuredClone(next), schema, 'deployer', 'apps/v1', now, false, target);
  });
  b.add('apply: autoscaler applies replicas (force)', () => {
    apply(live, structuredClone(scale), schema, 'autoscaler', 'apps/v1', now, true, target);
  });
}

function fieldset(b: Bench): void {
  const schema = deploymentSchema();
  const a = JSON.parse(deployerBody('web', 1));
  const s1 = fieldsOf(a, schema);
  const s2 = fieldsOf(JSON.parse(scalerBody('web', 1)), schema).union(
    fieldsOf(JSON.parse(deployerBody('web', 2)), schema),
  );
  b.add(`fieldset: fieldsOf a Deployment (${s1.size} fields)`, () => {
    fieldsOf(a, schema);
  });
  b.add('fieldset: union', () => {
    s1.union(s2);
  });
  b.add('fieldset: difference', () => {
    s1.difference(s2);
  });
  b.add('fieldset: intersection', () => {
    s1.intersection(s2);
  });
}

const BUILD: Record<Suite, (b: Bench) => void> = { codec, selectors, rbac, strategic, apply: applySuite, fieldset };

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  let time = 500;
  const picked: Suite[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--time') {
      time = Number(argv[++i]);
      if (!Number.isInteger(time) || time < 10 || time > 10_000)
        throw new Error('--time must be an integer in 10..10000 (ms per task)');
    } else if ((SUITES as readonly string[]).includes(argv[i]!)) picked.push(argv[i] as Suite);
    else throw new Error(`unknown suite or flag ${argv[i]} (suites: ${SUITES.join(', ')})`);
  }
  const bench = new Bench({ time, iterations: 10, warmupTime: Math.min(200, time) });
  for (const s of picked.length ? picked : SUITES) BUILD[s](bench);
  await bench.run();
  // tinybench reports latencies in ms. On a shared machine preemptions inflate the mean (and
  // tinybench's mean of per-sample rates overweights fast samples): the median is the steady figure
  const lines = [
    '| Task | p50 (µs) | ops/s (1 / p50) | mean (µs) | p99 (µs) | samples |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const t of bench.tasks) {
    const r = t.result as any;
    if (!r || r.error) {
      lines.push(`| ${t.name} | error: ${r?.error?.message ?? 'no result'} | | | | |`);
      continue;
    }
    const lat = r.latency ?? r;
    const p50 = lat.p50 ?? lat.median;
    const us = (ms: number): string => (ms * 1000).toFixed(2);
    lines.push(
      `| ${t.name} | ${us(p50)} | ${Math.round(1000 / p50).toLocaleString('en-US')} | ${us(lat.mean)} | ${us(lat.p99)} | ${(lat.samples?.length ?? lat.samplesCount ?? 0).toLocaleString('en-US')} |`,
    );
  }
  process.stdout.write(lines.join('\n') + '\n');
}

main().catch((e) => {
  process.stderr.write(`bench:micro: ${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
