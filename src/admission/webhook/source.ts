/**
 * Mutating and Validating WebhookConfigurations, kept current from the change events and
 * compiled once per stored version (selectors, CEL matchConditions): the admission plugins
 * read `hooks(kind)` on every write, sorted as upstream (configurations by name, webhooks in
 * their order).
 */
import { groupFor, type Identity } from '../../api/identity.js';
import type { CachedObject, ChangeEvent } from '../../actors/protocol.js';
import type { Informer } from '../../actors/informer.js';
import { typeKeyOf } from '../../actors/routing.js';
import type { Registry } from '../../registry/registry.js';
import type { ReadCache } from '../../actors/read-cache.js';
import { compileHook, type Hook, type WebhookSpec } from './matching.js';

export type HookKind = 'mutating' | 'validating';

export class WebhookSource implements Informer {
  private readonly keys: Record<HookKind, string>;
  private readonly configs: Record<HookKind, Map<string, Hook[]>> = { mutating: new Map(), validating: new Map() };
  private readonly sorted: Record<HookKind, Hook[]> = { mutating: [], validating: [] };

  constructor(
    readonly identity: Identity,
    readonly registry: Registry,
    readonly readCache: ReadCache,
  ) {
    const group = groupFor(identity, 'admissionregistration.plat.io');
    this.keys = {
      mutating: typeKeyOf(group, 'mutatingwebhookconfigurations'),
      validating: typeKeyOf(group, 'validatingwebhookconfigurations'),
    };
  }

  load(objects: readonly CachedObject[]): void {
    for (const o of objects) this.set(o.typeKey, o.name, o.json);
  }

  observe(evs: readonly ChangeEvent[]): void {
    for (const ev of evs) this.set(ev.typeKey, ev.name, ev.type === 'DELETED' ? undefined : ev.json);
  }

  /** The webhooks of one kind, in calling order. */
  hooks(kind: HookKind): readonly Hook[] {
    return this.sorted[kind];
  }

  private set(typeKey: string, name: string, json: string | undefined): void {
    const kind: HookKind | undefined =
      typeKey === this.keys.mutating ? 'mutating' : typeKey === this.keys.validating ? 'validating' : undefined;
    if (!kind) return;
    const m = this.configs[kind];
    if (json === undefined) m.delete(name);
    else {
      const obj = JSON.parse(json);
      m.set(
        name,
        (Array.isArray(obj.webhooks) ? obj.webhooks : []).map((h: WebhookSpec, i: number) => compileHook(name, i, h)),
      );
    }
    this.sorted[kind] = [...m.keys()].sort().flatMap((k) => m.get(k)!);
  }
}
