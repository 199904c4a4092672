/** The built-in Table printers: columns and cells as upstream's printers.go (v1.32) prints them. */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { age, tableJson, toTable } from '../../src/codec/table.js';

const NOW = Date.parse('2025-01-01T12:00:00Z');
const AGO = (s: number) => new Date(NOW - s * 1000).toISOString();
const meta = (name: string, extra: Record<string, unknown> = {}) => ({ name, creationTimestamp: AGO(3600), ...extra });

function table(kind: string, ...objs: any[]) {
  const t = toTable(kind, objs, {}, 'meta.plat.io/v1', 'None', NOW);
  return {
    columns: t.columnDefinitions.map((c: any) => c.name),
    wide: t.columnDefinitions.filter((c: any) => c.priority === 1).map((c: any) => c.name),
    types: t.columnDefinitions.map((c: any) => c.type),
    defs: t.columnDefinitions,
    rows: t.rows.map((r: any) => r.cells),
    row: (i = 0) => Object.fromEntries(t.columnDefinitions.map((c: any, j: number) => [c.name, t.rows[i]!.cells[j]])),
  };
}

test('age is HumanDuration since the timestamp; <unknown> without one', () => {
  assert.equal(age(AGO(3 * 3600 + 120), NOW), '3h2m');
  assert.equal(age(AGO(50 * 3600), NOW), '2d2h');
  assert.equal(age(undefined, NOW), '<unknown>');
  assert.equal(age(new Date(NOW + 5000).toISOString(), NOW), '<invalid>');
});

describe('core', () => {
  test('Pod: columns; status from phase, init containers, waiting/terminated reasons, Terminating', () => {
    const pod = (status: any, spec: any = {}, m: any = {}) => ({
      metadata: meta('p', m),
      spec: { containers: [{ name: 'a' }, { name: 'b' }], ...spec },
      status,
    });
    const t = table(
      'Pod',
      pod(
        {
          phase: 'Running',
          podIPs: [{ ip: '10.0.0.1' }],
          containerStatuses: [
            {
              name: 'a',
              ready: true,
              state: { running: {} },
              restartCount: 2,
              lastState: { terminated: { finishedAt: AGO(300) } },
            },
            { name: 'b', ready: true, state: { running: {} } },
          ],
        },
        { nodeName: 'n1' },
      ),
    );
    assert.deepEqual(t.columns, [
      'Name',
      'Ready',
      'Status',
      'Restarts',
      'Age',
      'IP',
      'Node',
      'Nominated Node',
      'Readiness Gates',
    ]);
    assert.deepEqual(t.wide, ['IP', 'Node', 'Nominated Node', 'Readiness Gates']);
    assert.deepEqual(t.rows[0], ['p', '2/2', 'Running', '2 (5m ago)', '60m', '10.0.0.1', 'n1', '<none>', '<none>']);
    const status = (...args: Parameters<typeof pod>) => table('Pod', pod(...args)).row().Status;
    assert.equal(
      status({ phase: 'Pending', containerStatuses: [{ state: { waiting: { reason: 'ImagePullBackOff' } } }] }),
      'ImagePullBackOff',
    );
    assert.equal(
      status({ phase: 'Failed', containerStatuses: [{ state: { terminated: { exitCode: 3 } } }] }),
      'ExitCode:3',
    );
    assert.equal(
      status({ phase: 'Failed', containerStatuses: [{ state: { terminated: { exitCode: 0, signal: 9 } } }] }),
      'Signal:9',
    );
    assert.equal(
      status(
        { phase: 'Pending', initContainerStatuses: [{ name: 'i', state: { waiting: { reason: 'PodInitializing' } } }] },
        { initContainers: [{ name: 'i' }, { name: 'j' }] },
      ),
      'Init:0/2',
    );
    assert.equal(
      status(
        {
          phase: 'Pending',
          initContainerStatuses: [
            { name: 'i', state: { terminated: { exitCode: 0 } } },
            { name: 'j', state: { terminated: { exitCode: 1, reason: 'Error' } } },
          ],
        },
        { initContainers: [{ name: 'i' }, { name: 'j' }] },
      ),
      'Init:Error',
    );
    assert.equal(
      status(
        {
          phase: 'Pending',
          initContainerStatuses: [{ name: 'i', state: { waiting: { reason: 'CrashLoopBackOff' } } }],
        },
        { initContainers: [{ name: 'i' }] },
      ),
      'Init:CrashLoopBackOff',
    );
    assert.equal(status({ phase: 'Running' }, {}, { deletionTimestamp: AGO(1) }), 'Terminating');
    assert.equal(status({ phase: 'Running', reason: 'NodeLost' }, {}, { deletionTimestamp: AGO(1) }), 'Unknown');
    assert.equal(status({ phase: 'Succeeded' }, {}, { deletionTimestamp: AGO(1) }), 'Succeeded');
    assert.equal(status({ phase: 'Pending', reason: 'Evicted' }), 'Evicted');
    assert.equal(
      status({ phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'SchedulingGated' }] }),
      'SchedulingGated',
    );
    assert.equal(
      status({
        phase: 'Running',
        conditions: [{ type: 'Ready', status: 'True' }],
        containerStatuses: [
          { state: { terminated: { exitCode: 0, reason: 'Completed' } } },
          { ready: true, state: { running: {} } },
        ],
      }),
      'Running',
    );
    // a restartable (sidecar) init container counts as a container once started
    const sidecar = table(
      'Pod',
      pod(
        {
          phase: 'Running',
          initContainerStatuses: [{ name: 's', started: true, ready: true, state: { running: {} } }],
          conditions: [{ type: 'Initialized', status: 'True' }],
        },
        { initContainers: [{ name: 's', restartPolicy: 'Always' }] },
      ),
    );
    assert.equal(sidecar.row().Ready, '1/3');
    const gates = table(
      'Pod',
      pod(
        { phase: 'Running', conditions: [{ type: 'g1', status: 'True' }] },
        { readinessGates: [{ conditionType: 'g1' }, { conditionType: 'g2' }] },
      ),
    );
    assert.equal(gates.row()['Readiness Gates'], '1/2');
  });

  test('ServiceAccount, ConfigMap, Secret, Namespace', () => {
    assert.deepEqual(table('ServiceAccount', { metadata: meta('default'), secrets: [{ name: 's' }] }).rows[0], [
      'default',
      1,
      '60m',
    ]);
    assert.deepEqual(table('ServiceAccount', { metadata: meta('sa') }).columns, ['Name', 'Secrets', 'Age']);
    assert.deepEqual(table('ConfigMap', { metadata: meta('c'), data: { a: '1' }, binaryData: { b: 'AA==' } }).rows[0], [
      'c',
      2,
      '60m',
    ]);
    assert.deepEqual(table('Secret', { metadata: meta('s'), type: 'Opaque', data: { a: 'eA==' } }).rows[0], [
      's',
      'Opaque',
      1,
      '60m',
    ]);
    assert.deepEqual(table('Namespace', { metadata: meta('n'), status: { phase: 'Active' } }).rows[0], [
      'n',
      'Active',
      '60m',
    ]);
  });

  test('Node: roles from node-role.<domain>/ and <domain>/role labels, addresses and versions', () => {
    const t = table('Node', {
      metadata: meta('n1', {
        labels: {
          'node-role.plat.io/control-plane': '',
          'node-role.kubernetes.io/worker': '',
          'plat.io/role': 'edge',
          'node-role.plat.io/': '',
        },
      }),
      spec: { unschedulable: true },
      status: {
        conditions: [{ type: 'Ready', status: 'Unknown' }],
        addresses: [{ type: 'InternalIP', address: '10.1.1.1' }],
        nodeInfo: { kubeletVersion: 'v1.32.0', osImage: 'Linux' },
      },
    });
    assert.deepEqual(t.columns, [
      'Name',
      'Status',
      'Roles',
      'Age',
      'Version',
      'Internal-IP',
      'External-IP',
      'OS-Image',
      'Kernel-Version',
      'Container-Runtime',
    ]);
    assert.deepEqual(t.rows[0], [
      'n1',
      'NotReady,SchedulingDisabled',
      'control-plane,edge,worker',
      '60m',
      'v1.32.0',
      '10.1.1.1',
      '<none>',
      'Linux',
      '<unknown>',
      '<unknown>',
    ]);
    assert.equal(table('Node', { metadata: meta('n2') }).row().Roles, '<none>');
  });

  test('ReplicationController, PodTemplate, ResourceQuota, ComponentStatus', () => {
    const tpl = {
      metadata: { labels: { b: '2', a: '1' } },
      spec: {
        containers: [
          { name: 'c', image: 'nginx' },
          { name: 'd', image: 'busybox' },
        ],
      },
    };
    const rc = table('ReplicationController', {
      metadata: meta('rc'),
      spec: { replicas: 3, selector: { app: 'x' }, template: tpl },
      status: { replicas: 2, readyReplicas: 1 },
    });
    assert.deepEqual(rc.rows[0], ['rc', 3, 2, 1, '60m', 'c,d', 'nginx,busybox', 'app=x']);
    assert.deepEqual(table('PodTemplate', { metadata: meta('pt'), template: tpl }).rows[0], [
      'pt',
      'c,d',
      'nginx,busybox',
      'a=1,b=2',
    ]);
    const rq = table('ResourceQuota', {
      metadata: meta('q'),
      status: {
        hard: { pods: '10', 'limits.cpu': '2', 'requests.cpu': '1' },
        used: { pods: '3', 'requests.cpu': '500m' },
      },
    });
    assert.deepEqual(rq.columns, ['Name', 'Request', 'Limit', 'Age']);
    assert.deepEqual(rq.rows[0], ['q', 'pods: 3/10, requests.cpu: 500m/1', 'limits.cpu: 0/2', '60m']);
    const cs = table('ComponentStatus', {
      metadata: { name: 'etcd-0' },
      conditions: [{ type: 'Healthy', status: 'False', message: 'm', error: 'e' }],
    });
    assert.deepEqual(
      [cs.columns, cs.rows[0]],
      [
        ['Name', 'Status', 'Message', 'Error'],
        ['etcd-0', 'Unhealthy', 'm', 'e'],
      ],
    );
  });

  test('Event: core and events.<domain>/v1 alike, with the wide columns', () => {
    const core = table('Event', {
      metadata: meta('e1'),
      type: 'Warning',
      reason: 'BackOff',
      involvedObject: { kind: 'Pod', name: 'web', fieldPath: 'spec.containers{c}' },
      source: { component: 'kubelet', host: 'n1' },
      message: ' restarting \n',
      firstTimestamp: AGO(600),
      lastTimestamp: AGO(60),
      count: 4,
    });
    assert.deepEqual(core.columns, [
      'Last Seen',
      'Type',
      'Reason',
      'Object',
      'Subobject',
      'Source',
      'Message',
      'First Seen',
      'Count',
      'Name',
    ]);
    assert.deepEqual(core.wide, ['Subobject', 'Source', 'First Seen', 'Count', 'Name']);
    assert.deepEqual(core.rows[0], [
      '60s',
      'Warning',
      'BackOff',
      'pod/web',
      'spec.containers{c}',
      'kubelet, n1',
      'restarting',
      '10m',
      4,
      'e1',
    ]);
    const v1 = table('Event', {
      metadata: meta('e2'),
      type: 'Normal',
      reason: 'Scheduled',
      regarding: { kind: 'Pod', name: 'web' },
      note: 'ok',
      eventTime: AGO(120),
      reportingController: 'sched',
      series: { count: 7, lastObservedTime: AGO(30) },
    });
    assert.deepEqual(v1.rows[0], ['30s', 'Normal', 'Scheduled', 'pod/web', '', 'sched', 'ok', '2m', 7, 'e2']);
    // core v1 names the reporting controller reportingComponent; a singleton event counts 1; no kind name without an object name
    const singleton = table('Event', {
      metadata: meta('e3'),
      involvedObject: { kind: 'Node' },
      reportingComponent: 'ctl',
      reportingInstance: 'i1',
      eventTime: AGO(5),
    });
    assert.deepEqual(singleton.rows[0], ['5s', '', '', 'node', '', 'ctl, i1', '', '5s', 1, 'e3']);
  });
});

describe('apps and batch', () => {
  const tpl = { spec: { containers: [{ name: 'c', image: 'nginx' }] } };

  test('Job: status from conditions, completions, duration, wide columns', () => {
    const job = (spec: any, status: any, m: any = {}) => ({
      metadata: meta('j', m),
      spec: { template: tpl, selector: { matchLabels: { 'controller-uid': 'u' } }, ...spec },
      status,
    });
    const t = table(
      'Job',
      job(
        { completions: 3 },
        {
          succeeded: 3,
          startTime: AGO(600),
          completionTime: AGO(450),
          conditions: [{ type: 'Complete', status: 'True' }],
        },
      ),
    );
    assert.deepEqual(t.columns, [
      'Name',
      'Status',
      'Completions',
      'Duration',
      'Age',
      'Containers',
      'Images',
      'Selector',
    ]);
    assert.deepEqual(t.rows[0], ['j', 'Complete', '3/3', '2m30s', '60m', 'c', 'nginx', 'controller-uid=u']);
    const row = (...a: Parameters<typeof job>) => table('Job', job(...a)).row();
    assert.deepEqual(
      [row({}, { startTime: AGO(30) }).Status, row({}, { startTime: AGO(30) }).Duration, row({}, {}).Duration],
      ['Running', '30s', ''],
    );
    assert.equal(row({ parallelism: 4 }, { succeeded: 1 }).Completions, '1/1 of 4');
    assert.equal(row({}, {}).Completions, '0/1');
    assert.equal(row({}, { conditions: [{ type: 'Failed', status: 'True' }] }).Status, 'Failed');
    assert.equal(row({}, { conditions: [{ type: 'Suspended', status: 'True' }] }).Status, 'Suspended');
    assert.equal(
      row({}, { conditions: [{ type: 'Suspended', status: 'True' }] }, { deletionTimestamp: AGO(1) }).Status,
      'Terminating',
    );
    assert.equal(row({}, { conditions: [{ type: 'FailureTarget', status: 'True' }] }).Status, 'FailureTarget');
    assert.equal(row({}, { conditions: [{ type: 'Complete', status: 'False' }] }).Status, 'Running');
  });

  test('CronJob: schedule, timezone, suspend, active, last schedule', () => {
    const cj = (spec: any, status: any = {}) => ({
      metadata: meta('cj'),
      spec: { schedule: '*/5 * * * *', jobTemplate: { spec: { template: tpl } }, ...spec },
      status,
    });
    const t = table(
      'CronJob',
      cj({ suspend: false }, { active: [{ name: 'a' }, { name: 'b' }], lastScheduleTime: AGO(90) }),
    );
    assert.deepEqual(t.columns, [
      'Name',
      'Schedule',
      'Timezone',
      'Suspend',
      'Active',
      'Last Schedule',
      'Age',
      'Containers',
      'Images',
      'Selector',
    ]);
    assert.equal(t.defs[3]!.type, 'boolean');
    assert.deepEqual(t.rows[0], ['cj', '*/5 * * * *', '<none>', 'False', 2, '90s', '60m', 'c', 'nginx', '<none>']);
    assert.deepEqual(table('CronJob', cj({ suspend: true, timeZone: 'Etc/UTC' })).rows[0].slice(2, 6), [
      'Etc/UTC',
      'True',
      0,
      '<none>',
    ]);
    assert.equal(table('CronJob', cj({})).row().Suspend, '<unset>');
  });

  test('Deployment, ReplicaSet, StatefulSet, DaemonSet, ControllerRevision', () => {
    const sel = {
      matchLabels: { app: 'x' },
      matchExpressions: [
        { key: 'tier', operator: 'In', values: ['web', 'api'] },
        { key: 'env', operator: 'DoesNotExist' },
      ],
    };
    const d = table('Deployment', {
      metadata: meta('d'),
      spec: { replicas: 3, selector: sel, template: tpl },
      status: { readyReplicas: 2, updatedReplicas: 3, availableReplicas: 2 },
    });
    assert.deepEqual(d.types, ['string', 'string', 'string', 'string', 'string', 'string', 'string', 'string']);
    assert.deepEqual(d.rows[0], ['d', '2/3', 3, 2, '60m', 'c', 'nginx', 'app=x,!env,tier in (api,web)']);
    assert.deepEqual(table('ReplicaSet', { metadata: meta('rs'), spec: { replicas: 1, template: tpl } }).rows[0], [
      'rs',
      1,
      0,
      0,
      '60m',
      'c',
      'nginx',
      '<none>',
    ]);
    assert.deepEqual(
      table('StatefulSet', { metadata: meta('ss'), spec: { replicas: 2, template: tpl }, status: { readyReplicas: 1 } })
        .rows[0],
      ['ss', '1/2', '60m', 'c', 'nginx'],
    );
    const ds = table('DaemonSet', {
      metadata: meta('ds'),
      spec: {
        selector: { matchLabels: { a: 'b' } },
        template: { spec: { ...tpl.spec, nodeSelector: { os: 'linux' } } },
      },
      status: { desiredNumberScheduled: 2 },
    });
    assert.deepEqual(ds.rows[0], ['ds', 2, 0, 0, 0, 0, 'os=linux', '60m', 'c', 'nginx', 'a=b']);
    const cr = table('ControllerRevision', {
      metadata: meta('web-1', {
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', controller: true }],
      }),
      revision: 4,
    });
    assert.deepEqual(cr.rows[0], ['web-1', 'statefulset.apps/web', 4, '60m']);
    assert.equal(table('ControllerRevision', { metadata: meta('x') }).row().Controller, '<none>');
  });

  test('HorizontalPodAutoscaler: targets, min/max pods, replicas (v2 and v1 shapes)', () => {
    const hpa = (spec: any, status: any = {}) => ({
      metadata: meta('h'),
      spec: { scaleTargetRef: { kind: 'Deployment', name: 'web' }, maxReplicas: 10, ...spec },
      status,
    });
    const cpu = {
      type: 'Resource',
      resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } },
    };
    const t = table('HorizontalPodAutoscaler', hpa({ minReplicas: 2, metrics: [cpu] }, { currentReplicas: 3 }));
    assert.deepEqual(t.columns, ['Name', 'Reference', 'Targets', 'MinPods', 'MaxPods', 'Replicas', 'Age']);
    assert.deepEqual(t.rows[0], ['h', 'Deployment/web', 'cpu: <unknown>/80%', '2', 10, 3, '60m']);
    const targets = (spec: any, status?: any) => table('HorizontalPodAutoscaler', hpa(spec, status)).row().Targets;
    assert.equal(
      targets(
        { metrics: [cpu] },
        { currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 45 } } }] },
      ),
      'cpu: 45%/80%',
    );
    assert.equal(targets({}), '<none>');
    assert.equal(table('HorizontalPodAutoscaler', hpa({})).row().MinPods, '<unset>');
    const pods = {
      type: 'Pods',
      pods: { metric: { name: 'qps' }, target: { type: 'AverageValue', averageValue: '1k' } },
    };
    const ext = {
      type: 'External',
      external: { metric: { name: 'q' }, target: { type: 'AverageValue', averageValue: '30' } },
    };
    const mem = {
      type: 'Resource',
      resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '100Mi' } },
    };
    assert.equal(targets({ metrics: [pods, ext, mem] }), '<unknown>/1k, <unknown>/30 (avg) + 1 more...');
    assert.equal(
      targets({ targetCPUUtilizationPercentage: 50 }, { currentCPUUtilizationPercentage: 20 }),
      'cpu: 20%/50%',
    );
  });
});

describe('rbac, policy, scheduling', () => {
  test('RoleBinding and ClusterRoleBinding: role kind/name; users, groups, service accounts in -o wide', () => {
    const subjects = [
      { kind: 'User', name: 'alice' },
      { kind: 'Group', name: 'devs' },
      { kind: 'User', name: 'bob' },
      { kind: 'ServiceAccount', namespace: 'ns', name: 'bot' },
    ];
    for (const kind of ['RoleBinding', 'ClusterRoleBinding']) {
      const t = table(kind, { metadata: meta('b'), roleRef: { kind: 'ClusterRole', name: 'view' }, subjects });
      assert.deepEqual(t.columns, ['Name', 'Role', 'Age', 'Users', 'Groups', 'ServiceAccounts']);
      assert.deepEqual(t.wide, ['Users', 'Groups', 'ServiceAccounts']);
      assert.deepEqual(t.rows[0], ['b', 'ClusterRole/view', '60m', 'alice, bob', 'devs', 'ns/bot']);
    }
  });

  test('Role and ClusterRole keep Name and Created At (no upstream printer)', () => {
    const t = table('ClusterRole', { metadata: meta('admin') });
    assert.deepEqual(
      [t.columns, t.types],
      [
        ['Name', 'Created At'],
        ['string', 'date'],
      ],
    );
  });

  test('PodDisruptionBudget: min available / max unavailable as int-or-string, N/A when unset, allowed disruptions', () => {
    const t = table('PodDisruptionBudget', {
      metadata: meta('pdb'),
      spec: { minAvailable: 2 },
      status: { disruptionsAllowed: 1 },
    });
    assert.deepEqual(
      [t.columns, t.rows[0]],
      [
        ['Name', 'Min Available', 'Max Unavailable', 'Allowed Disruptions', 'Age'],
        ['pdb', '2', 'N/A', 1, '60m'],
      ],
    );
    assert.deepEqual(
      table('PodDisruptionBudget', { metadata: meta('p2'), spec: { maxUnavailable: '25%' } }).rows[0].slice(1, 4),
      ['N/A', '25%', 0],
    );
  });

  test('PriorityClass, RuntimeClass, ClusterTrustBundle, LeaseCandidate', () => {
    const pc = table('PriorityClass', {
      metadata: meta('high'),
      value: 1000,
      globalDefault: true,
      preemptionPolicy: 'Never',
    });
    assert.deepEqual(
      [pc.columns, pc.types.slice(1, 3), pc.rows[0]],
      [
        ['Name', 'Value', 'Global-Default', 'Age', 'PreemptionPolicy'],
        ['integer', 'boolean'],
        ['high', 1000, true, '60m', 'Never'],
      ],
    );
    assert.deepEqual(table('RuntimeClass', { metadata: meta('rc'), handler: 'runc' }).rows[0], ['rc', 'runc', '60m']);
    assert.deepEqual(table('ClusterTrustBundle', { metadata: meta('b'), spec: {} }).rows[0], ['b', '<none>']);
    assert.deepEqual(
      table('LeaseCandidate', {
        metadata: meta('l'),
        spec: { leaseName: 'x', binaryVersion: '1.32', emulationVersion: '1.31' },
      }).rows[0],
      ['l', 'x', '1.32', '1.31', '60m'],
    );
  });
});

describe('storage and networking', () => {
  test('PersistentVolume: capacity, access modes (RWO, ROX, RWX, RWOP), claim, class, Terminating', () => {
    const pv = {
      metadata: meta('pv1', { annotations: {} }),
      spec: {
        capacity: { storage: '10Gi' },
        accessModes: ['ReadWriteOncePod', 'ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOnce'],
        persistentVolumeReclaimPolicy: 'Retain',
        claimRef: { namespace: 'ns', name: 'data' },
        storageClassName: 'fast',
        volumeMode: 'Filesystem',
      },
      status: { phase: 'Bound' },
    };
    const t = table('PersistentVolume', pv);
    assert.deepEqual(t.columns, [
      'Name',
      'Capacity',
      'Access Modes',
      'Reclaim Policy',
      'Status',
      'Claim',
      'StorageClass',
      'VolumeAttributesClass',
      'Reason',
      'Age',
      'VolumeMode',
    ]);
    assert.deepEqual(t.rows[0], [
      'pv1',
      '10Gi',
      'RWO,ROX,RWX,RWOP',
      'Retain',
      'Bound',
      'ns/data',
      'fast',
      '<unset>',
      '',
      '60m',
      'Filesystem',
    ]);
    const beta = table('PersistentVolume', {
      metadata: meta('pv2', {
        deletionTimestamp: AGO(1),
        annotations: { 'volume.beta.kubernetes.io/storage-class': 'old' },
      }),
      spec: { storageClassName: 'fast' },
    });
    assert.deepEqual(beta.rows[0].slice(1, 11), [
      '0',
      '',
      '',
      'Terminating',
      '',
      'old',
      '<unset>',
      '',
      '60m',
      '<unset>',
    ]);
  });

  test('PersistentVolumeClaim: capacity and access modes only once bound', () => {
    const pvc = (spec: any, status: any) => ({
      metadata: meta('data'),
      spec: { resources: { requests: { storage: '1Gi' } }, ...spec },
      status,
    });
    const t = table(
      'PersistentVolumeClaim',
      pvc(
        { volumeName: 'pv1', storageClassName: 'fast' },
        { phase: 'Bound', capacity: { storage: '2Gi' }, accessModes: ['ReadWriteMany', 'ReadOnlyMany'] },
      ),
    );
    assert.deepEqual(t.columns, [
      'Name',
      'Status',
      'Volume',
      'Capacity',
      'Access Modes',
      'StorageClass',
      'VolumeAttributesClass',
      'Age',
      'VolumeMode',
    ]);
    assert.deepEqual(t.rows[0], ['data', 'Bound', 'pv1', '2Gi', 'ROX,RWX', 'fast', '<unset>', '60m', '<unset>']);
    assert.deepEqual(
      table('PersistentVolumeClaim', pvc({}, { phase: 'Pending', accessModes: ['ReadWriteOnce'] })).rows[0].slice(1, 6),
      ['Pending', '', '', '', ''],
    );
  });

  test('Service: external IP rules (external IPs, load balancer ingress, <pending>, external name)', () => {
    const svc = (spec: any, status: any = {}) => ({
      metadata: meta('s'),
      spec: { clusterIPs: ['10.0.0.10'], ports: [{ port: 80, protocol: 'TCP' }], ...spec },
      status,
    });
    const ext = (spec: any, status?: any) => table('Service', svc(spec, status)).row()['External-IP'];
    assert.deepEqual(
      table(
        'Service',
        svc({
          type: 'NodePort',
          ports: [
            { port: 80, nodePort: 30080, protocol: 'TCP' },
            { port: 53, protocol: 'UDP' },
          ],
          selector: { app: 'x' },
        }),
      ).rows[0],
      ['s', 'NodePort', '10.0.0.10', '<none>', '80:30080/TCP,53/UDP', '60m', 'app=x'],
    );
    assert.equal(ext({ type: 'ClusterIP', externalIPs: ['1.2.3.4', '5.6.7.8'] }), '1.2.3.4,5.6.7.8');
    assert.equal(ext({ type: 'LoadBalancer' }), '<pending>');
    assert.equal(
      ext({ type: 'LoadBalancer' }, { loadBalancer: { ingress: [{ ip: '9.9.9.9' }, { hostname: 'lb.example.com' }] } }),
      '9.9.9.9,lb.example.com',
    );
    assert.equal(
      ext({ type: 'LoadBalancer', externalIPs: ['1.1.1.1'] }, { loadBalancer: { ingress: [{ ip: '9.9.9.9' }] } }),
      '9.9.9.9,1.1.1.1',
    );
    assert.equal(ext({ type: 'ExternalName', externalName: 'db.example.com' }), 'db.example.com');
    assert.deepEqual(
      table('Service', svc({ type: 'ClusterIP', clusterIPs: undefined, ports: [] })).rows[0].slice(2, 5),
      ['<none>', '<none>', '<none>'],
    );
  });

  test('Endpoints and EndpointSlice: three entries then "+ N more..."', () => {
    const ep = {
      metadata: meta('e'),
      subsets: [{ addresses: [{ ip: '10.0.0.1' }, { ip: 'fd00::1' }], ports: [{ port: 80 }, { port: 443 }] }],
    };
    assert.deepEqual(table('Endpoints', ep).rows[0], ['e', '10.0.0.1:80,[fd00::1]:80,10.0.0.1:443 + 1 more...', '60m']);
    assert.equal(table('Endpoints', { metadata: meta('none') }).row().Endpoints, '<none>');
    const slice = table('EndpointSlice', {
      metadata: meta('es'),
      addressType: 'IPv4',
      ports: [{ port: 80 }, { name: 'dns' }, {}],
      endpoints: [{ addresses: ['10.0.0.1'] }, { addresses: ['10.0.0.2', '10.0.0.3', '10.0.0.4'] }],
    });
    assert.deepEqual(slice.rows[0], ['es', 'IPv4', '80,dns,*', '10.0.0.1,10.0.0.2,10.0.0.3 + 1 more...', '60m']);
    assert.deepEqual(table('EndpointSlice', { metadata: meta('empty'), addressType: 'IPv6' }).rows[0].slice(2, 4), [
      '<unset>',
      '<unset>',
    ]);
  });

  test('Ingress, IngressClass, NetworkPolicy', () => {
    const ing = table('Ingress', {
      metadata: meta('i'),
      spec: {
        ingressClassName: 'nginx',
        rules: [{ host: 'a.io' }, {}, { host: 'b.io' }, { host: 'c.io' }, { host: 'd.io' }],
        tls: [{}],
      },
      status: { loadBalancer: { ingress: [{ ip: '2.2.2.2' }, { ip: '1.1.1.1' }] } },
    });
    assert.deepEqual(ing.columns, ['Name', 'Class', 'Hosts', 'Address', 'Ports', 'Age']);
    assert.deepEqual(ing.rows[0], ['i', 'nginx', 'a.io,b.io,c.io + 2 more...', '1.1.1.1,2.2.2.2', '80, 443', '60m']);
    assert.deepEqual(table('Ingress', { metadata: meta('j'), spec: {} }).rows[0].slice(1, 5), [
      '<none>',
      '*',
      '',
      '80',
    ]);
    assert.deepEqual(
      table('IngressClass', {
        metadata: meta('c'),
        spec: { controller: 'x.io/c', parameters: { apiGroup: 'k.io', kind: 'P', name: 'p' } },
      }).rows[0],
      ['c', 'x.io/c', 'P.k.io/p', '60m'],
    );
    assert.deepEqual(table('NetworkPolicy', { metadata: meta('np'), spec: { podSelector: {} } }).rows[0], [
      'np',
      '<none>',
      '60m',
    ]);
  });

  test('StorageClass (default marker), CSIDriver, CSINode, VolumeAttachment, CSIStorageCapacity', () => {
    const sc = table('StorageClass', {
      metadata: meta('std', { annotations: { 'storageclass.plat.io/is-default-class': 'true' } }),
      provisioner: 'csi.x',
    });
    assert.deepEqual(sc.rows[0], ['std (default)', 'csi.x', 'Delete', 'Immediate', false, '60m']);
    assert.deepEqual(
      table('StorageClass', {
        metadata: meta('slow', { annotations: { 'storageclass.beta.kubernetes.io/is-default-class': 'false' } }),
        provisioner: 'p',
        reclaimPolicy: 'Retain',
        volumeBindingMode: 'WaitForFirstConsumer',
        allowVolumeExpansion: true,
      }).rows[0],
      ['slow', 'p', 'Retain', 'WaitForFirstConsumer', true, '60m'],
    );
    assert.equal(
      table('VolumeAttributesClass', {
        metadata: meta('gold', {
          annotations: { 'volumeattributesclass.alpha.kubernetes.io/is-default-class': 'true' },
        }),
        driverName: 'd',
      }).row().Name,
      'gold (default)',
    );
    const drv = table('CSIDriver', {
      metadata: meta('d'),
      spec: {
        tokenRequests: [{ audience: 'a' }, { audience: 'b' }],
        volumeLifecycleModes: ['Persistent', 'Ephemeral'],
      },
    });
    assert.deepEqual(drv.rows[0], ['d', true, false, false, 'a,b', false, 'Persistent,Ephemeral', '60m']);
    assert.deepEqual(table('CSIDriver', { metadata: meta('e'), spec: { attachRequired: false } }).rows[0].slice(1, 7), [
      false,
      false,
      false,
      '<unset>',
      false,
      '<none>',
    ]);
    assert.deepEqual(table('CSINode', { metadata: meta('n'), spec: { drivers: [{ name: 'a' }] } }).rows[0], [
      'n',
      1,
      '60m',
    ]);
    const va = table('VolumeAttachment', {
      metadata: meta('va'),
      spec: { attacher: 'csi.x', nodeName: 'n1', source: { persistentVolumeName: 'pv1' } },
      status: { attached: true },
    });
    assert.deepEqual([va.defs[1]!.format, va.rows[0]], ['name', ['va', 'csi.x', 'pv1', 'n1', true, '60m']]);
    assert.deepEqual(table('CSIStorageCapacity', { metadata: meta('c'), storageClassName: 'fast' }).rows[0], [
      'c',
      'fast',
      '<unset>',
    ]);
  });
});

describe('admission and flow control', () => {
  test('webhook configurations count their webhooks', () => {
    for (const kind of ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']) {
      const t = table(kind, { metadata: meta('w'), webhooks: [{ name: 'a' }, { name: 'b' }] });
      assert.deepEqual([t.columns, t.types[1], t.rows[0]], [['Name', 'Webhooks', 'Age'], 'integer', ['w', 2, '60m']]);
    }
    assert.equal(table('ValidatingWebhookConfiguration', { metadata: meta('none') }).row().Webhooks, 0);
  });

  test('ValidatingAdmissionPolicy and its binding', () => {
    const vap = table('ValidatingAdmissionPolicy', {
      metadata: meta('p'),
      spec: { paramKind: { apiVersion: 'v1', kind: 'ConfigMap' }, validations: [{ expression: 'true' }] },
    });
    assert.deepEqual(
      [vap.columns, vap.rows[0]],
      [
        ['Name', 'Validations', 'ParamKind', 'Age'],
        ['p', 1, 'v1/ConfigMap', '60m'],
      ],
    );
    const b = (paramRef: any) =>
      table('ValidatingAdmissionPolicyBinding', { metadata: meta('b'), spec: { policyName: 'p', paramRef } }).rows[0];
    assert.deepEqual(b({ name: 'cm', namespace: 'ns' }), ['b', 'p', 'ns/cm', '60m']);
    assert.equal(b({ name: 'cm' })[2], '*/cm');
    assert.equal(b(undefined)[2], '<unset>');
    assert.equal(
      b({ selector: { matchLabels: { a: 'b' } } })[2],
      '&LabelSelector{MatchLabels:map[string]string{a: b,},MatchExpressions:[]LabelSelectorRequirement{},}',
    );
  });

  test('FlowSchema: priority level, matching precedence, distinguisher, MissingPL; rows in matching order', () => {
    const fs = (name: string, precedence: number, extra: any = {}, status: any = {}) => ({
      metadata: meta(name),
      spec: { priorityLevelConfiguration: { name: 'workload-low' }, matchingPrecedence: precedence, ...extra },
      status,
    });
    const objs = [
      fs(
        'b',
        9000,
        { distinguisherMethod: { type: 'ByUser' } },
        { conditions: [{ type: 'Dangling', status: 'False' }] },
      ),
      fs('a', 9000),
      fs('exempt', 1, {}, { conditions: [{ type: 'Dangling', status: 'True' }] }),
    ];
    const t = table('FlowSchema', ...objs);
    assert.deepEqual(t.columns, [
      'Name',
      'PriorityLevel',
      'MatchingPrecedence',
      'DistinguisherMethod',
      'Age',
      'MissingPL',
    ]);
    assert.deepEqual(t.rows, [
      ['exempt', 'workload-low', 1, '<none>', '60m', 'True'],
      ['a', 'workload-low', 9000, '<none>', '60m', '?'],
      ['b', 'workload-low', 9000, 'ByUser', '60m', 'False'],
    ]);
    const json = JSON.parse(
      tableJson(
        'FlowSchema',
        objs.map((o) => ({ obj: o, json: JSON.stringify(o) })),
        {},
        'meta.plat.io/v1',
        'Object',
        NOW,
      ),
    );
    assert.deepEqual(
      json.rows.map((r: any) => [r.cells[0], r.object.metadata.name]),
      [
        ['exempt', 'exempt'],
        ['a', 'a'],
        ['b', 'b'],
      ],
    );
  });

  test('PriorityLevelConfiguration: type, shares, queues, hand size, queue length limit', () => {
    const t = table(
      'PriorityLevelConfiguration',
      { metadata: meta('exempt'), spec: { type: 'Exempt', exempt: { nominalConcurrencyShares: 0 } } },
      {
        metadata: meta('global'),
        spec: {
          type: 'Limited',
          limited: {
            nominalConcurrencyShares: 100,
            limitResponse: { type: 'Queue', queuing: { queues: 128, handSize: 6, queueLengthLimit: 50 } },
          },
        },
      },
      {
        metadata: meta('catch'),
        spec: { type: 'Limited', limited: { nominalConcurrencyShares: 5, limitResponse: { type: 'Reject' } } },
      },
      { metadata: meta('old'), spec: { type: 'Limited', limited: { assuredConcurrencyShares: 7 } } },
    );
    assert.deepEqual(t.columns, [
      'Name',
      'Type',
      'NominalConcurrencyShares',
      'Queues',
      'HandSize',
      'QueueLengthLimit',
      'Age',
    ]);
    assert.deepEqual(t.rows, [
      ['exempt', 'Exempt', '<none>', '<none>', '<none>', '<none>', '60m'],
      ['global', 'Limited', 100, 128, 6, 50, '60m'],
      ['catch', 'Limited', 5, '<none>', '<none>', '<none>', '60m'],
      ['old', 'Limited', 7, '<none>', '<none>', '<none>', '60m'],
    ]);
  });

  test('APIService, StorageVersion, StorageVersionMigration', () => {
    const svc = (service: any, conditions: any[]) =>
      table('APIService', { metadata: meta('v1.x.io'), spec: { service }, status: { conditions } }).rows[0];
    assert.deepEqual(svc(undefined, [{ type: 'Available', status: 'True' }]), ['v1.x.io', 'Local', 'True', '60m']);
    assert.deepEqual(
      svc({ namespace: 'ns', name: 'api' }, [{ type: 'Available', status: 'False', reason: 'MissingEndpoints' }]).slice(
        1,
        3,
      ),
      ['ns/api', 'False (MissingEndpoints)'],
    );
    assert.equal(svc(undefined, [])[2], 'Unknown');
    const sv = table('StorageVersion', {
      metadata: meta('apps.deployments'),
      status: { storageVersions: [{ apiServerID: 'a', encodingVersion: 'apps/v1' }] },
    });
    assert.deepEqual(sv.rows[0], ['apps.deployments', '<unset>', 'a=apps/v1', '60m']);
    const svm = table('StorageVersionMigration', {
      metadata: meta('m'),
      spec: { resource: { group: 'apps', version: 'v1', resource: 'deployments' } },
    });
    assert.deepEqual([svm.defs[0]!.format, svm.rows[0]], ['', ['m', 'deployments.v1.apps']]);
  });
});
