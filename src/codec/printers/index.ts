/** The built-in printers, merged: columns by kind, and the kinds whose rows print in an order of their own. */
import type { Column } from './common.js';
import { CORE_COLUMNS } from './core.js';
import { APPS_BATCH_COLUMNS } from './apps-batch.js';
import { RBAC_POLICY_COLUMNS } from './rbac-policy.js';
import { STORAGE_NETWORKING_COLUMNS } from './storage-networking.js';
import { ADMISSION_FLOWCONTROL_COLUMNS, ROW_ORDER } from './admission-flowcontrol.js';

export const COLUMNS: Record<string, Column[]> = {
  ...CORE_COLUMNS,
  ...APPS_BATCH_COLUMNS,
  ...RBAC_POLICY_COLUMNS,
  ...STORAGE_NETWORKING_COLUMNS,
  ...ADMISSION_FLOWCONTROL_COLUMNS,
};

export { ROW_ORDER };
