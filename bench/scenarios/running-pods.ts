/**
 * A second Pod shape for the encodings benchmark: Pods as a running Deployment's look once the
 * cluster has acted on them. The ReplicaSet controller creates each (generateName, the
 * pod-template-hash label, a controller ownerReference; field manager kube-controller-manager),
 * the scheduler binds it (pods/binding, no managed-fields entry, as upstream), and the kubelet
 * writes its status (strategic merge patch on pods/status as field manager kubelet: phase,
 * five conditions, host and pod IPs, start time, two container statuses). The served objects then
 * carry two managed-fields entries, as `kubectl get pods -o json` shows on a real cluster.
 */
import { expect, parallel } from '../lib/http.js';

const HASH = '7d9f8c6b5';

/** One of a benchmark Pod's two containers (pod number i): a port, env, requests and limits. */
export function benchContainer(i: number, n: string, port: number): object {
  return {
    name: n,
    image: `registry.example/${n}:1.${i % 10}`,
    ports: [{ containerPort: port, protocol: 'TCP' }],
    env: [
      { name: 'MODE', value: 'production' },
      { name: 'REPLICA', value: String(i) },
    ],
    resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '500m', memory: '256Mi' } },
  };
}

function podBody(i: number, rsUid: string): string {
  const container = (n: string, port: number) => benchContainer(i, n, port);
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `web-${HASH}-${i.toString(36).padStart(5, '0')}`,
      generateName: `web-${HASH}-`,
      labels: { app: 'web', 'pod-template-hash': HASH },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: `web-${HASH}`,
          uid: rsUid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: { containers: [container('app', 8080), container('sidecar', 9090)] },
  });
}

function statusPatch(i: number): string {
  const t = '2026-11-23T03:00:00Z';
  const containerStatus = (n: string) => ({
    name: n,
    state: { running: { startedAt: t } },
    lastState: {},
    ready: true,
    restartCount: 0,
    image: `registry.example/${n}:1.${i % 10}`,
    imageID: `registry.example/${n}@sha256:${(i * 7919).toString(16).padStart(64, '0')}`,
    containerID: `containerd://${(i * 104729).toString(16).padStart(64, '0')}`,
    started: true,
  });
  const hostIP = `10.0.${(i >> 8) & 255}.${i & 255}`;
  const podIP = `10.244.${(i >> 8) & 255}.${i & 255}`;
  return JSON.stringify({
    status: {
      phase: 'Running',
      conditions: ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map(
        (type) => ({ type, status: 'True', lastProbeTime: null, lastTransitionTime: t }),
      ),
      hostIP,
      hostIPs: [{ ip: hostIP }],
      podIP,
      podIPs: [{ ip: podIP }],
      startTime: t,
      containerStatuses: [containerStatus('app'), containerStatus('sidecar')],
      qosClass: 'Burstable',
    },
  });
}

/** Creates `count` running Pods (and their ReplicaSet) in namespace `ns`; returns the list path. */
export async function createRunningPods(base: string, ns: string, count: number): Promise<string> {
  const rs = await expect(
    base,
    'POST',
    `/apis/apps/v1/namespaces/${ns}/replicasets?fieldManager=kube-controller-manager`,
    JSON.stringify({
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: `web-${HASH}`, labels: { app: 'web', 'pod-template-hash': HASH } },
      spec: {
        replicas: count,
        selector: { matchLabels: { app: 'web', 'pod-template-hash': HASH } },
        template: {
          metadata: { labels: { app: 'web', 'pod-template-hash': HASH } },
          spec: { containers: [{ name: 'app', image: 'registry.example/app:1' }] },
        },
      },
    }),
    [201],
  );
  const rsUid = JSON.parse(rs.text).metadata.uid as string;
  const pods = `/api/v1/namespaces/${ns}/pods`;
  await parallel(count, 32, async (i) => {
    const created = JSON.parse(
      (await expect(base, 'POST', `${pods}?fieldManager=kube-controller-manager`, podBody(i, rsUid), [201])).text,
    );
    const name = created.metadata.name as string;
    await expect(
      base,
      'POST',
      `${pods}/${name}/binding`,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Binding',
        metadata: { name },
        target: { kind: 'Node', name: `node-${i % 50}` },
      }),
      [201],
    );
    await expect(
      base,
      'PATCH',
      `${pods}/${name}/status?fieldManager=kubelet`,
      statusPatch(i),
      [200],
      'application/strategic-merge-patch+json',
    );
  });
  return pods;
}
