/**
 * Selector requirements of authorization attributes (upstream AuthorizeWithSelectors): a list
 * or watch carries its field and label selectors as parsed requirements, the shape the access
 * review API and webhooks use (`{key, operator: In|NotIn|Exists|DoesNotExist, values}`).
 * Parsing never fails a request: an unparsable selector yields what could be read (upstream:
 * selectors only narrow, so fewer requirements never allow more).
 */
import { parseLabelSelector } from '../../api/selectors.js';
import { parseFieldSelector } from '../../api/field-selectors.js';

export interface SelectorRequirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  values?: string[];
}

/** `a=b`, `a==b` → In [b]; `a!=b` → NotIn [b]. */
export function fieldRequirements(raw: string): SelectorRequirement[] {
  try {
    return parseFieldSelector(raw).requirements.map((r) => ({
      key: r.field,
      operator: r.op === '=' ? 'In' : 'NotIn',
      values: [r.value],
    }));
  } catch {
    return [];
  }
}

/** `=`, `==`, `in` → In; `!=`, `notin` → NotIn; `key` → Exists; `!key` → DoesNotExist; gt/lt are dropped (no API form). */
export function labelRequirements(raw: string): SelectorRequirement[] {
  try {
    const out: SelectorRequirement[] = [];
    for (const r of parseLabelSelector(raw).requirements) {
      if (r.operator === 'exists') out.push({ key: r.key, operator: 'Exists' });
      else if (r.operator === '!') out.push({ key: r.key, operator: 'DoesNotExist' });
      else if (r.operator === '=' || r.operator === '==' || r.operator === 'in')
        out.push({ key: r.key, operator: 'In', values: [...r.values] });
      else if (r.operator === '!=' || r.operator === 'notin')
        out.push({ key: r.key, operator: 'NotIn', values: [...r.values] });
    }
    return out;
  } catch {
    return [];
  }
}

const OPERATORS = new Set(['In', 'NotIn', 'Exists', 'DoesNotExist']);

/**
 * The requirements of an access review's `fieldSelector` / `labelSelector`: its `requirements`
 * (entries with an unknown operator are ignored, as webhooks are told to), else its `rawSelector`.
 */
/** One requirement of a review's selector as written (the filter checks key and operator). */
type ReviewRequirement = { key?: unknown; operator?: unknown; values?: unknown } | null;
type KnownRequirement = { key: string; operator: SelectorRequirement['operator']; values?: unknown };
const known = (r: ReviewRequirement): r is KnownRequirement =>
  !!r && typeof r.key === 'string' && OPERATORS.has(r.operator as SelectorRequirement['operator']);

export function reviewRequirements(sel: unknown, kind: 'field' | 'label'): SelectorRequirement[] {
  if (!sel || typeof sel !== 'object') return [];
  const s: { requirements?: unknown; rawSelector?: unknown } = sel;
  if (Array.isArray(s.requirements) && s.requirements.length) {
    return s.requirements.filter(known).map((r: KnownRequirement) => ({
      key: r.key,
      operator: r.operator,
      ...(Array.isArray(r.values) ? { values: r.values.map(String) } : {}),
    }));
  }
  if (typeof s.rawSelector === 'string' && s.rawSelector)
    return kind === 'field' ? fieldRequirements(s.rawSelector) : labelRequirements(s.rawSelector);
  return [];
}
