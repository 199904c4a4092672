/**
 * API priority and fairness objects (flowcontrol.apiserver.plat.io/v1): upstream's v1 defaults.
 * nominalConcurrencyShares defaults to 30 only when unspecified; an explicit 0 is kept.
 */
import type { FlowSchema, PriorityLevelConfiguration } from '../../api/kinds.js';
import { DEFAULT_STRATEGY, type ResourceStrategy } from '../strategy.js';

const isObj = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** SetDefaults_FlowSchemaSpec: matchingPrecedence (a non-pointer field) 1000 when zero. */
function defaultFlowSchema(obj: FlowSchema): void {
  if (isObj(obj.spec)) obj.spec.matchingPrecedence ||= 1000;
}

/** SetDefaults_PriorityLevelConfiguration and those of its limited, exempt and queuing parts. */
function defaultPriorityLevel(obj: PriorityLevelConfiguration): void {
  const spec = obj.spec;
  if (!isObj(spec)) return;
  if (isObj(spec.limited)) {
    spec.limited.nominalConcurrencyShares ??= 30;
    spec.limited.lendablePercent ??= 0;
    const response = spec.limited.limitResponse;
    if (isObj(response) && response.type === 'Queue') {
      const q = isObj(response.queuing) ? response.queuing : (response.queuing = {});
      q.handSize ||= 8;
      q.queues ||= 64;
      q.queueLengthLimit ||= 50;
    }
  }
  if (isObj(spec.exempt)) {
    spec.exempt.nominalConcurrencyShares ??= 0;
    spec.exempt.lendablePercent ??= 0;
  }
}

export const flowSchemaStrategy: ResourceStrategy<FlowSchema> = {
  ...DEFAULT_STRATEGY,
  prepareForCreate: defaultFlowSchema,
  prepareForUpdate: defaultFlowSchema,
};

export const priorityLevelStrategy: ResourceStrategy<PriorityLevelConfiguration> = {
  ...DEFAULT_STRATEGY,
  prepareForCreate: defaultPriorityLevel,
  prepareForUpdate: defaultPriorityLevel,
};
