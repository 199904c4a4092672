/** The load scenarios by name. */
import { applyScenario } from './apply.js';
import { createScenario, getScenario, listScenario, updateScenario } from './basic.js';
import type { ScenarioCtx } from './ctx.js';
import { densityScenario } from './density.js';
import { mixedScenario } from './mixed.js';
import { informersScenario, watchFanoutScenario } from './watch.js';

export const SCENARIOS: Record<string, (ctx: ScenarioCtx) => Promise<void>> = {
  get: getScenario,
  list: listScenario,
  create: createScenario,
  update: updateScenario,
  apply: applyScenario,
  'watch-fanout': watchFanoutScenario,
  informers: informersScenario,
  density: densityScenario,
  mixed: mixedScenario,
};
