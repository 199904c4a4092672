/** A CronTab CRD with two versions for the custom resource tests, and a bounded wait for Established. */
import { request } from '../../helpers/server.js';
import { until } from '../../helpers/poll.js';

export const GROUP = 'stable.example.com';

const COLUMNS = [
  { name: 'Spec', type: 'string', jsonPath: '.spec.cronSpec' },
  { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
];

const SUBRESOURCES = {
  status: {},
  scale: {
    specReplicasPath: '.spec.replicas',
    statusReplicasPath: '.status.replicas',
    labelSelectorPath: '.status.labelSelector',
  },
};

export function cronTabCRD(apiGroup = 'apiextensions.plat.io', ext = 'x-plat'): any {
  return {
    apiVersion: `${apiGroup}/v1`,
    kind: 'CustomResourceDefinition',
    metadata: { name: `crontabs.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural: 'crontabs', singular: 'crontab', kind: 'CronTab', shortNames: ['ct'], categories: ['all'] },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: SUBRESOURCES,
          additionalPrinterColumns: COLUMNS,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  required: ['cronSpec'],
                  properties: {
                    cronSpec: { type: 'string', pattern: '^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$' },
                    image: { type: 'string', default: 'busybox', maxLength: 20 },
                    replicas: { type: 'integer', minimum: 1, maximum: 10, default: 1 },
                    mode: { type: 'string', enum: ['a', 'b'] },
                    port: { [`${ext}-int-or-string`]: true },
                    email: { type: 'string', format: 'email' },
                    tags: { type: 'array', maxItems: 2, items: { type: 'string' } },
                    ports: {
                      type: 'array',
                      [`${ext}-list-type`]: 'map',
                      [`${ext}-list-map-keys`]: ['name'],
                      items: {
                        type: 'object',
                        required: ['name'],
                        properties: { name: { type: 'string' }, port: { type: 'integer' } },
                      },
                    },
                    free: { type: 'object', [`${ext}-preserve-unknown-fields`]: true },
                    template: {
                      type: 'object',
                      [`${ext}-embedded-resource`]: true,
                      [`${ext}-preserve-unknown-fields`]: true,
                    },
                  },
                },
                status: {
                  type: 'object',
                  properties: { replicas: { type: 'integer' }, labelSelector: { type: 'string' } },
                },
              },
            },
          },
        },
        {
          name: 'v2',
          served: true,
          storage: false,
          additionalPrinterColumns: COLUMNS,
          subresources: SUBRESOURCES,
          schema: { openAPIV3Schema: { type: 'object', [`${ext}-preserve-unknown-fields`]: true } },
        },
      ],
    },
  };
}

export function cronTab(
  name: string,
  spec: Record<string, unknown>,
  version = 'v1',
  extra: Record<string, unknown> = {},
): any {
  return { apiVersion: `${GROUP}/${version}`, kind: 'CronTab', metadata: { name }, spec, ...extra };
}

/** Polls the CRD until Established=True (bounded: 10 s). */
export async function waitEstablished(url: string, name: string, apiGroup = 'apiextensions.plat.io'): Promise<any> {
  const deadline = Date.now() + 10_000;
  for (let i = 0; i < 200 && Date.now() < deadline; i++) {
    const r = await request(url, 'GET', `/apis/${apiGroup}/v1/customresourcedefinitions/${name}`);
    if ((r.json?.status?.conditions ?? []).some((c: any) => c.type === 'Established' && c.status === 'True'))
      return r.json;
    await new Promise((res) => setTimeout(res, 50));
  }
  throw new Error(`CRD ${name} not established within 10s`);
}

/** Polls until path answers `status` (bounded: 10 s). */
export async function waitStatus(url: string, path: string, status: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (let i = 0; i < 200 && Date.now() < deadline; i++) {
    if ((await request(url, 'GET', path)).status === status) return;
    await new Promise((res) => setTimeout(res, 50));
  }
  throw new Error(`${path} did not answer ${status} within 10s`);
}

/**
 * Creates a namespaced CRD `<plural>.example.com` (v1, schema preserving unknown fields) and waits
 * until its collection in the default namespace is served.
 */
export async function createOpenCRD(url: string, plural: string, kind: string): Promise<void> {
  const singular = kind.toLowerCase();
  const crd = await request(url, 'POST', '/apis/apiextensions.plat.io/v1/customresourcedefinitions', {
    metadata: { name: `${plural}.example.com` },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural, singular, kind, listKind: `${kind}List` },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', 'x-plat-preserve-unknown-fields': true } },
        },
      ],
    },
  });
  if (crd.status !== 201) throw new Error(`CRD ${plural}: ${crd.status} ${crd.text}`);
  const served = `/apis/example.com/v1/namespaces/default/${plural}`;
  await until(async () => ((await request(url, 'GET', served)).status === 200 ? true : undefined), `${plural} served`);
}
