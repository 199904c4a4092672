/**
 * Server-side apply by two managers: each worker owns one Deployment and alternates a
 * `deployer` apply of the whole intent minus replicas (new image tags and env each round, no
 * force) with an `autoscaler` apply of spec.replicas only (force=true), the bodies of the
 * in-process apply bench (bench/scenarios/apply.ts).
 */
import { deployerBody, scalerBody } from '../../scenarios/apply.js';
import { closedLoop } from '../engine.js';
import { dropNamespace, ensureNamespace, measured, type ScenarioCtx } from './ctx.js';

const APPLY = 'application/apply-patch+yaml';

export async function applyScenario(ctx: ScenarioCtx): Promise<void> {
  const ns = `${ctx.tag}-apply`;
  await ensureNamespace(ctx, ns);
  const base = `/apis/apps/v1/namespaces/${ns}/deployments`;
  const rounds: number[] = [];
  let conflicts = 0;
  await measured(ctx, (signal) =>
    closedLoop({
      concurrency: ctx.opts.concurrency,
      maxRequests: ctx.opts.maxRequests,
      signal,
      step: async (w) => {
        const k = (rounds[w] = (rounds[w] ?? -1) + 1);
        const name = `d-${w}`;
        const deployer = k % 2 === 0;
        const path = `${base}/${name}?fieldManager=${deployer ? 'deployer' : 'autoscaler&force=true'}`;
        const a = await ctx.client.call({
          verb: 'APPLY',
          group: 'apps',
          resource: 'deployments',
          method: 'PATCH',
          path,
          contentType: APPLY,
          body: deployer ? deployerBody(name, k) : scalerBody(name, k),
        });
        if (a.status === 409) conflicts++;
      },
    }),
  );
  ctx.params.managers = ['deployer', 'autoscaler (force)'];
  ctx.figures.conflicts = conflicts;
  await dropNamespace(ctx, ns);
}
