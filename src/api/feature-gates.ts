/**
 * Feature gates (`--feature-gates=Name=true,...`) with upstream's lifecycle: alpha gates default
 * off, beta on, GA gates locked on (deprecated and non-operational: setting one warns, turning
 * one off fails), deprecated gates warn when set, removed or unknown gates fail at start. The
 * table holds every gate the spec names plus the ones the server reads, at their v1.32 stage.
 */

export type GateStage = 'ALPHA' | 'BETA' | 'GA' | 'DEPRECATED';

export interface GateSpec {
  stage: GateStage;
  default: boolean;
  /** the value cannot be changed (GA gates; some deprecated ones) */
  lockToDefault?: boolean;
}

const alpha: GateSpec = { stage: 'ALPHA', default: false };
const beta: GateSpec = { stage: 'BETA', default: true };
const betaOff: GateSpec = { stage: 'BETA', default: false };
const ga: GateSpec = { stage: 'GA', default: true, lockToDefault: true };

/** v1.32 stages. Gates removed before v1.32 (e.g. APISelfSubjectReview, GA 1.28, removed 1.30) are unknown. */
export const FEATURE_GATES: Readonly<Record<string, GateSpec>> = Object.freeze({
  // resource API (resource-api.md)
  AllowUnsafeMalformedObjectDeletion: alpha,
  CBORServingAndStorage: alpha,
  APIResponseCompression: beta,
  WatchList: beta,
  ConsistentListFromCache: beta,
  RetryGenerateName: ga,
  AggregatedDiscoveryEndpoint: ga,
  StorageVersionAPI: alpha,
  DefaultHostNetworkHostPortsInPodTemplates: { stage: 'DEPRECATED', default: false },
  // pods/resize is served only with it
  InPlacePodVerticalScaling: alpha,
  // access control (access-control.md)
  StructuredAuthenticationConfiguration: beta,
  AnonymousAuthConfigurableEndpoints: beta,
  StructuredAuthorizationConfiguration: ga,
  AuthorizeWithSelectors: beta,
  AuthorizeNodeWithSelectors: beta,
  ExternalServiceAccountTokenSigner: alpha,
  ServiceAccountTokenJTI: beta,
  ServiceAccountTokenNodeBinding: beta,
  ServiceAccountTokenPodNodeInfo: beta,
  LegacyServiceAccountTokenCleanUp: ga,
  // encryption at rest
  KMSv2: ga,
  KMSv2KDF: ga,
  // admission
  ValidatingAdmissionPolicy: ga,
  AdmissionWebhookMatchConditions: ga,
  MutatingAdmissionPolicy: alpha,
  WatchFromStorageWithoutResourceVersion: betaOff,
});

export interface ResolvedGates {
  /** the effective value of every known gate */
  gates: Record<string, boolean>;
  /** upstream's warnings for GA and deprecated gates that were set */
  warnings: string[];
}

/** strconv.ParseBool's spellings (also --runtime-config's, src/registry/registry.ts) */
export const GO_BOOLS: Record<string, boolean> = {
  '1': true,
  t: true,
  T: true,
  true: true,
  TRUE: true,
  True: true,
  '0': false,
  f: false,
  F: false,
  false: false,
  FALSE: false,
  False: false,
};

/** The defaults of every gate. */
export function defaultGates(): Record<string, boolean> {
  return Object.fromEntries(Object.entries(FEATURE_GATES).map(([k, g]) => [k, g.default]));
}

/**
 * Applies one `--feature-gates` value over the current gates (the flag may repeat, as upstream's
 * map flag). Throws upstream's message, wrapped as pflag reports an invalid argument.
 */
export function applyFeatureGates(
  value: string,
  current: ResolvedGates,
  known: Readonly<Record<string, GateSpec>> = FEATURE_GATES,
): void {
  const fail = (msg: string): never => {
    throw new Error(`invalid argument "${value}" for "--feature-gates" flag: ${msg}`);
  };
  const set: [string, boolean][] = [];
  for (const part of value.split(',')) {
    const entry = part.trim();
    if (entry === '') continue;
    const eq = entry.indexOf('=');
    if (eq < 0) fail(`missing bool value for ${entry}`);
    const k = entry.slice(0, eq).trim();
    const raw = entry.slice(eq + 1).trim();
    const v = GO_BOOLS[raw];
    if (v === undefined)
      fail(`invalid value of ${k}=${raw}, err: strconv.ParseBool: parsing ${JSON.stringify(raw)}: invalid syntax`);
    set.push([k, v!]);
  }
  // AllAlpha / AllBeta first: they only change gates of that stage that are not locked
  for (const [k, v] of set) {
    const stage = k === 'AllAlpha' ? 'ALPHA' : k === 'AllBeta' ? 'BETA' : undefined;
    if (!stage) continue;
    for (const [name, g] of Object.entries(known)) if (g.stage === stage && !g.lockToDefault) current.gates[name] = v;
  }
  for (const [k, v] of set) {
    if (k === 'AllAlpha' || k === 'AllBeta') continue;
    const g = known[k];
    if (!g) fail(`unrecognized feature gate: ${k}`);
    if (g!.lockToDefault && g!.default !== v)
      fail(`cannot set feature gate ${k} to ${v}, feature is locked to ${g!.default}`);
    current.gates[k] = v;
    if (g!.stage === 'DEPRECATED')
      current.warnings.push(`Setting deprecated feature gate ${k}=${v}. It will be removed in a future release.`);
    else if (g!.stage === 'GA')
      current.warnings.push(`Setting GA feature gate ${k}=${v}. It will be removed in a future release.`);
  }
}
