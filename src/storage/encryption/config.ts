/**
 * `--encryption-provider-config`: the EncryptionConfiguration file
 * (apiserver.config.plat.io/v1), read and validated once on the front thread at start; the
 * shard actors receive it as plain data (ActorConfig.encryption) and build their transformers.
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';

export type ProviderConfig =
  | { type: 'identity' }
  | { type: 'aescbc' | 'aesgcm' | 'secretbox'; keys: { name: string; secret: string }[] };

export interface ResourceEncryption {
  /** `secrets`, `deployments.apps`, `*.apps`, `*.` (all core), `*.*` (everything) */
  resources: string[];
  providers: ProviderConfig[];
}

export interface EncryptionConfig {
  resources: ResourceEncryption[];
}

/** The file as parsed: any field may be missing or of another type until checked. */
interface RawDoc {
  apiVersion?: unknown;
  kind?: unknown;
  resources?: unknown;
}
interface RawResource {
  resources?: unknown;
  providers?: unknown;
}
interface RawKey {
  name?: unknown;
  secret?: unknown;
}
type RawProvider = Record<string, { keys?: unknown } | undefined>;

const KEY_SIZES: Record<string, number[]> = { aescbc: [16, 24, 32], aesgcm: [16, 24, 32], secretbox: [32] };

export function loadEncryptionConfig(path: string, domain: string): EncryptionConfig {
  const fail = (problem: string): never => {
    throw new Error(`error while parsing file: --encryption-provider-config "${path}": ${problem}`);
  };
  let doc: unknown;
  try {
    doc = parseYaml(readFileSync(path, 'utf8'));
  } catch (e) {
    return fail((e as Error).message);
  }
  return parseEncryptionConfig(doc, domain, fail);
}

export function parseEncryptionConfig(
  value: unknown,
  domain: string,
  fail: (problem: string) => never,
): EncryptionConfig {
  const apiVersion = `apiserver.config.${domain}/v1`;
  const doc = value as RawDoc | null | undefined;
  if (!doc || doc.apiVersion !== apiVersion || doc.kind !== 'EncryptionConfiguration') {
    return fail(`apiVersion must be ${apiVersion} and kind EncryptionConfiguration`);
  }
  if (!Array.isArray(doc.resources) || doc.resources.length === 0)
    return fail('resources: Required value: EncryptionConfiguration.Resources must contain at least one resource');
  const errs: string[] = [];
  const resources = doc.resources.map((r: unknown, i: number) => parseResource(r, `resources[${i}]`, errs));
  if (errs.length) fail(errs.join(', '));
  return { resources };
}

function parseResource(value: unknown, f: string, errs: string[]): ResourceEncryption {
  const r = value as RawResource | null | undefined;
  const names: string[] = Array.isArray(r?.resources) ? r.resources.filter((x: unknown) => typeof x === 'string') : [];
  if (names.length === 0) errs.push(`${f}.resources: Required value: resources is required`);
  const providers: ProviderConfig[] = [];
  if (!Array.isArray(r?.providers) || r.providers.length === 0)
    errs.push(`${f}.providers: Required value: providers is required`);
  else
    r.providers.forEach((p: RawProvider | null | undefined, j: number) => {
      const pf = `${f}.providers[${j}]`;
      const kinds = Object.keys(p ?? {});
      if (kinds.length !== 1)
        return void errs.push(
          `${pf}: Invalid value: more than one provider specified in a single element, should split into different list elements`,
        );
      const type = kinds[0]!;
      if (type === 'identity') return void providers.push({ type: 'identity' });
      if (!(type in KEY_SIZES))
        return void errs.push(
          `${pf}: Unsupported value: "${type}": supported values: "identity", "aescbc", "aesgcm", "secretbox"`,
        );
      const keys: (RawKey | null | undefined)[] = Array.isArray(p![type]?.keys) ? (p![type]!.keys as RawKey[]) : [];
      if (keys.length === 0) errs.push(`${pf}.${type}.keys: Required value: keys (list) is required`);
      keys.forEach((k, n: number) => {
        const kf = `${pf}.${type}.keys[${n}]`;
        if (typeof k?.name !== 'string' || k.name === '') errs.push(`${kf}.name: Required value: key.name is required`);
        else if (k.name.includes(':'))
          errs.push(`${kf}.name: Invalid value: "${k.name}": key name must not contain ":"`);
        const bytes = typeof k?.secret === 'string' ? Buffer.from(k.secret, 'base64') : undefined;
        if (!bytes || bytes.length === 0) errs.push(`${kf}.secret: Required value: key.secret is required`);
        else if (!KEY_SIZES[type]!.includes(bytes.length))
          errs.push(
            `${kf}.secret: Invalid value: "REDACTED": secret is not of the expected length, got ${bytes.length}, expected one of ${JSON.stringify(KEY_SIZES[type])}`,
          );
      });
      providers.push({
        type: type as 'aescbc',
        keys: keys.map((k) => ({ name: k!.name as string, secret: k!.secret as string })),
      });
    });
  return { resources: names, providers };
}
