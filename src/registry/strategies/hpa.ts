/** HorizontalPodAutoscalers: upstream's per-version defaults on every write (conversion/hpa-defaults.ts). */
import { DEFAULT_STRATEGY, type ResourceStrategy } from '../strategy.js';
import { defaultHpa } from '../conversion/hpa-defaults.js';

export const hpaStrategy: ResourceStrategy = {
  ...DEFAULT_STRATEGY,
  prepareForCreate(obj) {
    defaultHpa(obj);
  },
  prepareForUpdate(obj) {
    defaultHpa(obj);
  },
};
