/** HorizontalPodAutoscaler autoscaling/v1 ⇄ v2: lossless round trips through annotations. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hpaV1ToV2, hpaV2ToV1 } from '../../../src/registry/conversion/hpa.js';
import { Converter } from '../../../src/registry/conversion/conversion.js';

const D = 'plat.io';
const ref = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' };
const v2 = {
  apiVersion: 'autoscaling/v2',
  kind: 'HorizontalPodAutoscaler',
  metadata: { name: 'h', namespace: 'ns', annotations: { keep: 'me' } },
  spec: {
    scaleTargetRef: ref,
    minReplicas: 2,
    maxReplicas: 10,
    metrics: [
      { type: 'Pods', pods: { metric: { name: 'qps' }, target: { type: 'AverageValue', averageValue: '10' } } },
      { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } },
      { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '500Mi' } } },
      {
        type: 'External',
        external: {
          metric: { name: 'queue', selector: { matchLabels: { q: 'a' } } },
          target: { type: 'Value', value: '30' },
        },
      },
      {
        type: 'Object',
        object: {
          describedObject: { kind: 'Service', name: 's', apiVersion: 'v1' },
          metric: { name: 'rps' },
          target: { type: 'Value', value: '5' },
        },
      },
    ],
    behavior: {
      scaleDown: { stabilizationWindowSeconds: 300, policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] },
    },
  },
  status: {
    currentReplicas: 3,
    desiredReplicas: 4,
    currentMetrics: [
      { type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 55, averageValue: '120m' } } },
      { type: 'Pods', pods: { metric: { name: 'qps' }, current: { averageValue: '8' } } },
    ],
    conditions: [
      { type: 'AbleToScale', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z', reason: 'ReadyForNewScale' },
    ],
  },
};

test('v2 → v1: CPU utilization in v1 fields, the rest in annotations; back to v2 unchanged', () => {
  const v1: any = hpaV2ToV1(v2, D);
  assert.equal(v1.apiVersion, 'autoscaling/v1');
  assert.deepEqual(v1.spec, {
    scaleTargetRef: ref,
    minReplicas: 2,
    maxReplicas: 10,
    targetCPUUtilizationPercentage: 70,
  });
  assert.deepEqual(v1.status, { currentReplicas: 3, desiredReplicas: 4, currentCPUUtilizationPercentage: 55 });
  const a: any = v1.metadata?.annotations;
  assert.equal(a.keep, 'me');
  assert.deepEqual(JSON.parse(a['autoscaling.alpha.plat.io/metrics'])[0], {
    type: 'Pods',
    pods: { metricName: 'qps', targetAverageValue: '10' },
  });
  assert.deepEqual(JSON.parse(a['autoscaling.alpha.plat.io/metrics'])[2], {
    type: 'External',
    external: { metricName: 'queue', metricSelector: { matchLabels: { q: 'a' } }, targetValue: '30' },
  });
  assert.deepEqual(JSON.parse(a['autoscaling.alpha.plat.io/behavior']), v2.spec.behavior);
  assert.ok(a['autoscaling.alpha.plat.io/conditions'] && a['autoscaling.alpha.plat.io/current-metrics']);
  const back: any = hpaV1ToV2(v1, D);
  // the CPU metric moves after the others (upstream's order), nothing is lost
  const { metrics, ...spec } = back.spec;
  const { metrics: want, ...wantSpec } = v2.spec;
  assert.deepEqual(spec, wantSpec);
  assert.deepEqual(
    new Set(metrics.map((m: unknown) => JSON.stringify(m))),
    new Set(want.map((m) => JSON.stringify(m))),
  );
  assert.deepEqual(back.metadata, v2.metadata);
  assert.equal(back.status.conditions[0].reason, 'ReadyForNewScale');
  assert.deepEqual(
    back.status.currentMetrics.find((m: any) => m.type === 'Pods'),
    v2.status.currentMetrics[1],
  );
  // the CPU average value has no v1 field: upstream drops it too; the utilization survives
  assert.equal(
    back.status.currentMetrics.find((m: any) => m.type === 'Resource').resource.current.averageUtilization,
    55,
  );
});

test('v1 → v2 → v1 is exact; the inputs are never changed', () => {
  const v1 = {
    apiVersion: 'autoscaling/v1',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name: 'h' },
    spec: { scaleTargetRef: ref, maxReplicas: 5, targetCPUUtilizationPercentage: 60 },
  };
  const frozen = JSON.stringify(v1);
  const up: any = hpaV1ToV2(v1, D);
  assert.deepEqual(up.spec.metrics, [
    { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } } },
  ]);
  assert.equal(up.metadata.annotations, undefined);
  assert.deepEqual(hpaV2ToV1(up, D), v1);
  assert.equal(JSON.stringify(v1), frozen);
  const v2Frozen = JSON.stringify(v2);
  hpaV2ToV1(v2, D);
  assert.equal(JSON.stringify(v2), v2Frozen);
});

test('absent spec and status stay absent both ways', () => {
  const bare = { apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { name: 'b' } };
  const up: any = hpaV1ToV2(bare, D);
  assert.deepEqual(up, { ...bare, apiVersion: 'autoscaling/v2' });
  assert.deepEqual(hpaV2ToV1(up, D), bare);
});

test('the converter: storage version, identity for the same version, apiVersion swap for types without conversion', () => {
  const c = new Converter(D);
  const hpa = 'autoscaling/horizontalpodautoscalers';
  assert.equal(c.storageVersion(hpa), 'autoscaling/v2');
  assert.equal(c.convert(hpa, v2, 'autoscaling/v2'), v2);
  assert.equal(c.toStorage(hpa, hpaV2ToV1(v2, D)).apiVersion, 'autoscaling/v2');
  assert.deepEqual(c.convert('apps/deployments', { apiVersion: 'apps/v1', kind: 'Deployment' }, 'apps/v1beta9'), {
    apiVersion: 'apps/v1beta9',
    kind: 'Deployment',
  });
});
