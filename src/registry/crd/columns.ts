/** Registers the Table columns of every served custom resource version (both threads keep one copy). */
import { customColumns, setCustomColumns } from '../../codec/table.js';
import type { CustomType } from './types.js';

export function registerColumns(types: readonly CustomType[], previous: readonly CustomType[]): void {
  for (const t of previous) for (const v of t.versions) setCustomColumns(`${t.group}/${v.name}`, t.kind, undefined);
  for (const t of types)
    for (const v of t.versions) setCustomColumns(`${t.group}/${v.name}`, t.kind, customColumns(v.printerColumns));
}
