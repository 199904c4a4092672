/** HorizontalPodAutoscalers: upstream's per-version defaults on every write (conversion/hpa-defaults.ts). */
import { DEFAULT_STRATEGY, type ResourceStrategy } from '../strategy.js';
import { defaultHpa } from '../conversion/hpa-defaults.js';
import { isRecord } from '../../api/object.js';

export const hpaStrategy: ResourceStrategy = {
  ...DEFAULT_STRATEGY,
  prepareForCreate(obj) {
    defaultHpa(obj);
  },
  prepareForUpdate(obj) {
    // the v2 defaults write spec.behavior anew: into a copy, never the stored object's spec,
    // which an update's object shares when a patch left spec alone
    if (isRecord(obj.spec)) obj.spec = { ...obj.spec };
    defaultHpa(obj);
  },
};
