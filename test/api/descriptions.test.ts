/**
 * Descriptions in the served OpenAPI (issue 20 item 7): reference/descriptions.json (generated
 * by scripts/gen-descriptions.ts from @kubernetes/client-node's models) is merged into the
 * definitions of /openapi/v2 and /openapi/v3, renamed for the served API domain.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openapiV2, openapiV3Doc } from '../../src/registry/openapi-documents.js';
import { renameForDomain } from '../../src/api/descriptions.js';
import { makeIdentity } from '../../src/api/identity.js';
import { Registry } from '../../src/registry/registry.js';

type Schema = { description?: string; properties?: Record<string, { description?: string }> };

test('kind and field descriptions in /openapi/v2 and /openapi/v3', () => {
  const registry = new Registry(makeIdentity());
  const v2 = openapiV2(registry).definitions as Record<string, Schema>;
  const spec = v2['io.plat.api.apps.v1.DeploymentSpec']!;
  assert.match(spec.description!, /^DeploymentSpec is the specification of the desired behavior of the Deployment\./);
  assert.match(spec.properties!['replicas']!.description!, /^Number of desired pods\./);
  const v3 = openapiV3Doc(registry, 'apis/apps/v1')!.components.schemas as Record<string, Schema>;
  assert.match(
    v3['io.plat.api.apps.v1.DeploymentSpec']!.properties!['replicas']!.description!,
    /^Number of desired pods\./,
  );
});

test('renamed for the served domain; links kept', () => {
  const k8s = makeIdentity('k8s.io');
  assert.equal(
    renameForDomain(
      'the platform.io/hostname label of plat-system, x-plat-list-type, group apps.plat.io; see https://platform.io/x',
      k8s,
    ),
    'the kubernetes.io/hostname label of kube-system, x-kubernetes-list-type, group apps.k8s.io; see https://platform.io/x',
  );
  const v2 = openapiV2(new Registry(k8s)).definitions as Record<string, Schema>;
  const texts = JSON.stringify(v2);
  assert.doesNotMatch(
    texts.replace(/https?:\/\/[^\s"]+/g, ''),
    /\bplatform\.io\//,
    'no reference label domain under --api-domain k8s.io',
  );
  assert.match(texts, /kubernetes\.io\//);
});

test('reference/descriptions.json is what scripts/gen-descriptions.ts generates (npm run gen:descriptions)', async () => {
  const { generateDescriptions, DESCRIPTIONS_OUT } = await import('../../scripts/gen-descriptions.js');
  const { readFileSync } = await import('node:fs');
  assert.equal(
    readFileSync(DESCRIPTIONS_OUT, 'utf8'),
    generateDescriptions().text,
    'stale: run npm run gen:descriptions',
  );
});

test("the shared query parameters are described: what upstream's run_swagger_tests greps /openapi/v2 for", () => {
  const k8s = JSON.stringify(openapiV2(new Registry(makeIdentity('k8s.io'))));
  // test/cmd/discovery.sh run_swagger_tests: grep -q "list of returned", "List of services", "Watch for changes to the described resources"
  assert.match(k8s, /list of returned/);
  assert.match(k8s, /List of services/);
  assert.match(k8s, /Watch for changes to the described resources/);
  const doc = openapiV2(new Registry(makeIdentity('k8s.io'))) as unknown as {
    parameters: Record<string, { name: string; description?: string }>;
  };
  const watch = Object.values(doc.parameters).find((p) => p.name === 'watch');
  assert.match(
    watch?.description ?? '',
    /^Watch for changes to the described resources and return them as a stream of add, update, and remove notifications/,
  );
  const bookmarks = Object.values(doc.parameters).find((p) => p.name === 'allowWatchBookmarks');
  assert.match(bookmarks?.description ?? '', /watch events with type "BOOKMARK"/);
});
