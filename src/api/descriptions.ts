/**
 * Kind and field descriptions of the served schemas (`kubectl explain`): generated into
 * `<reference>/descriptions.json` by scripts/gen-descriptions.ts from upstream's texts, in the
 * reference names, and merged into the reference definitions when the document is loaded,
 * renamed for the served API domain. A definition's own text wins over a generated one.
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { REFERENCE_DOMAIN, type Identity } from './identity.js';

export const DESCRIPTIONS_FILE = 'descriptions.json';

interface Described {
  description?: string;
  properties?: Record<string, string>;
}
type Schema = Record<string, unknown> & { description?: string; properties?: Record<string, Record<string, unknown>> };

/** Reference names → the served domain's names (texts; links untouched). */
export function renameForDomain(text: string, identity: Identity): string {
  if (identity.domain === REFERENCE_DOMAIN) return text;
  const short = identity.systemNamespace.replace(/-system$/, '');
  const productDomain = identity.domain === 'k8s.io' ? 'kubernetes.io' : `${identity.product}.io`;
  const ext = identity.domain === 'k8s.io' ? 'x-kubernetes-' : `x-${short}-`;
  return text
    .split(/(https?:\/\/\S+)/)
    .map((part, i) =>
      i % 2 === 1
        ? part
        : part
            .replace(/x-plat-/g, ext)
            .replace(/\bplatform\.io\b/g, productDomain)
            .replace(/\bplat\.io\b/g, identity.domain)
            .replace(/\bplat-(system|public|node-lease)\b/g, `${short}-$1`),
    )
    .join('');
}

/**
 * The definitions with their descriptions (new objects; the input is not changed). Without a
 * descriptions file the definitions are returned as they are.
 */
export function describedDefinitions<T>(
  definitions: Record<string, T>,
  referenceDir: string,
  identity: Identity,
): Record<string, T> {
  const file = resolve(referenceDir, DESCRIPTIONS_FILE);
  if (!existsSync(file)) return definitions;
  const texts = JSON.parse(readFileSync(file, 'utf8')) as Record<string, Described>;
  const rename = (s: string) => renameForDomain(s, identity);
  const out: Record<string, T> = {};
  for (const [name, def] of Object.entries(definitions)) {
    const d = texts[name];
    if (!d) {
      out[name] = def;
      continue;
    }
    const schema = def as Schema;
    let properties = schema.properties;
    if (properties && d.properties) {
      properties = Object.fromEntries(
        Object.entries(properties).map(([p, v]) => [
          p,
          d.properties![p] && v.description === undefined ? { description: rename(d.properties![p]!), ...v } : v,
        ]),
      );
    }
    const description = schema.description ?? (d.description ? rename(d.description) : undefined);
    out[name] = {
      ...(description !== undefined ? { description } : {}),
      ...schema,
      ...(properties ? { properties } : {}),
    } as T;
  }
  return out;
}

/** The texts of the shared query parameters (`parameters`), keyed like the file's (scripts/gen-descriptions.ts). */
const PARAMETERS_KEY = '#parameters';

/** The document's shared parameters with their descriptions (new objects; the input is not changed). */
export function describedParameters<T>(
  parameters: Record<string, T>,
  referenceDir: string,
  identity: Identity,
): Record<string, T> {
  const file = resolve(referenceDir, DESCRIPTIONS_FILE);
  if (!existsSync(file)) return parameters;
  const texts = (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>)[PARAMETERS_KEY] as
    | Record<string, string>
    | undefined;
  if (!texts) return parameters;
  const out: Record<string, T> = {};
  for (const [key, p] of Object.entries(parameters)) {
    const param = p as { name?: string; description?: string };
    const text = param.name !== undefined ? texts[param.name] : undefined;
    out[key] = (
      text && param.description === undefined ? { description: renameForDomain(text, identity), ...param } : p
    ) as T;
  }
  return out;
}
