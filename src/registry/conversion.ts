import { referenceGroup, type Identity } from '../api/identity.js';
import { stringifyValue } from '../schema/deep-value.js';
import { setOwn } from '../api/own-keys.js';
import type { Stored } from '../api/object.js';

/**
 * Conversions between a served version and the version its objects are stored in, for
 * resources whose versions differ in more than the apiVersion (other versions of a resource
 * only restamp apiVersion). Pure functions on JSON objects: a store converts what it reads
 * from its cache into its own version and what it writes back into the storage version; the
 * front thread converts live watch events the same way.
 *
 * events.<domain>/v1 Events are stored as core v1 Events (upstream
 * pkg/apis/events/v1/conversion.go): involvedObject↔regarding, message↔note,
 * source↔deprecatedSource, firstTimestamp/lastTimestamp/count ↔
 * deprecatedFirstTimestamp/deprecatedLastTimestamp/deprecatedCount,
 * reportingComponent↔reportingController; eventTime, series, related, action, reason, type
 * and reportingInstance keep their names.
 */
/** A stored object whose other fields (an Event's) are read by name. */
export type StoredFields = Stored & Record<string, unknown>;

export interface Conversion {
  /** the apiVersion objects are stored in */
  storageVersion: string;
  /** a stored object as this version (never changes obj) */
  fromStorage(obj: Stored, apiVersion: string): StoredFields;
  /** an object of this version as stored (never changes obj) */
  toStorage(obj: Stored): StoredFields;
  /** this version's field selector labels -> the labels of the stored object's field set */
  fieldLabels: Readonly<Record<string, string>>;
}

/** core v1 Event field -> events v1 field (the renamed ones) */
const CORE_TO_EVENTS: Readonly<Record<string, string>> = {
  involvedObject: 'regarding',
  message: 'note',
  source: 'deprecatedSource',
  firstTimestamp: 'deprecatedFirstTimestamp',
  lastTimestamp: 'deprecatedLastTimestamp',
  count: 'deprecatedCount',
  reportingComponent: 'reportingController',
};
const EVENTS_TO_CORE: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(CORE_TO_EVENTS).map(([a, b]) => [b, a]),
);

/** upstream field order of each type, so a converted object reads like one written in its version */
const CORE_ORDER = [
  'kind',
  'apiVersion',
  'metadata',
  'involvedObject',
  'reason',
  'message',
  'source',
  'firstTimestamp',
  'lastTimestamp',
  'count',
  'type',
  'eventTime',
  'series',
  'action',
  'related',
  'reportingComponent',
  'reportingInstance',
];
const EVENTS_ORDER = [
  'kind',
  'apiVersion',
  'metadata',
  'eventTime',
  'series',
  'reportingController',
  'reportingInstance',
  'action',
  'reason',
  'regarding',
  'related',
  'note',
  'type',
  'deprecatedSource',
  'deprecatedFirstTimestamp',
  'deprecatedLastTimestamp',
  'deprecatedCount',
];

/** upstream AddFieldLabelConversionsForEvent (events/v1) */
const EVENTS_FIELD_LABELS: Readonly<Record<string, string>> = {
  'reason': 'reason',
  'regarding.kind': 'involvedObject.kind',
  'regarding.namespace': 'involvedObject.namespace',
  'regarding.name': 'involvedObject.name',
  'regarding.uid': 'involvedObject.uid',
  'regarding.apiVersion': 'involvedObject.apiVersion',
  'regarding.resourceVersion': 'involvedObject.resourceVersion',
  'regarding.fieldPath': 'involvedObject.fieldPath',
  'reportingController': 'reportingComponent',
  'source': 'source',
  'type': 'type',
  'metadata.namespace': 'metadata.namespace',
  'metadata.name': 'metadata.name',
};

/** Renames fields by `names` (never metadata), sets apiVersion, and orders the known fields as `order`. */
function renamed(
  obj: Stored,
  apiVersion: string,
  names: Readonly<Record<string, string>>,
  order: readonly string[],
): StoredFields {
  const moved: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) setOwn(moved, Object.hasOwn(names, k) ? names[k]! : k, v);
  moved.apiVersion = apiVersion;
  const out: Record<string, unknown> = {};
  for (const k of order) if (Object.hasOwn(moved, k)) setOwn(out, k, moved[k]);
  for (const [k, v] of Object.entries(moved)) if (!Object.hasOwn(out, k)) setOwn(out, k, v);
  // every field of obj is in out, metadata under its own name: out is the same stored object, renamed
  return out as StoredFields;
}

const EVENTS: Conversion = {
  storageVersion: 'v1',
  fromStorage: (obj, apiVersion) => renamed(obj, apiVersion, CORE_TO_EVENTS, EVENTS_ORDER),
  toStorage: (obj) => renamed(obj, 'v1', EVENTS_TO_CORE, CORE_ORDER),
  fieldLabels: EVENTS_FIELD_LABELS,
};

/** The conversion of a served version (group in the reference domain), or undefined when it is stored as itself. */
export function conversionFor(referenceGroup: string, version: string, resource: string): Conversion | undefined {
  return referenceGroup === 'events.plat.io' && version === 'v1' && resource === 'events' ? EVENTS : undefined;
}

/**
 * For the front thread's watch fan-out: a stored object's JSON (type key `<group>/<resource>`)
 * as another served version; the conversion of each (type, version) is looked up once.
 */
export function jsonConverter(
  identity: Identity,
  fallback?: (typeKey: string, apiVersion: string, json: string) => string,
): (typeKey: string, apiVersion: string, json: string) => string {
  const found = new Map<string, Conversion | undefined>();
  return (typeKey, apiVersion, json) => {
    const id = `${typeKey} ${apiVersion}`;
    if (!found.has(id)) {
      const slash = apiVersion.lastIndexOf('/');
      const group = slash < 0 ? '' : apiVersion.slice(0, slash);
      found.set(
        id,
        conversionFor(
          referenceGroup(identity, group),
          apiVersion.slice(slash + 1),
          typeKey.slice(typeKey.indexOf('/') + 1),
        ),
      );
    }
    const conv = found.get(id);
    if (!conv && fallback) return fallback(typeKey, apiVersion, json);
    const obj = JSON.parse(json);
    return stringifyValue(conv ? conv.fromStorage(obj, apiVersion) : { ...obj, apiVersion });
  };
}
