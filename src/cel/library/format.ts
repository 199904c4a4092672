/**
 * Upstream's CEL `format` library (apiserver/pkg/cel/library/format.go): named formats
 * (`format.dns1123Label()`, ..., `format.named("uuid")`) whose `validate(string)` is
 * `optional.none()` for a valid value, else an optional list of the reasons, worded as
 * apimachinery's validation messages.
 */
import { CelScalar, celFunc, celMethod, type CelFunc } from '@bufbuild/cel';
import { OPAQUE, opaque, opaqueValue } from './opaque.js';
import { optionalOf } from '../values.js';

const { STRING } = CelScalar;
const LABEL = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const LABEL_MSG = `a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '${LABEL}')`;
const SUBDOMAIN = `${LABEL}(\\.${LABEL})*`;
const SUBDOMAIN_MSG = `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '${SUBDOMAIN}')`;
const DNS1035 = '[a-z]([-a-z0-9]*[a-z0-9])?';
const DNS1035_MSG = `a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '${DNS1035}')`;
const LABEL_VALUE = '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?';

type Check = (s: string) => string[];

const pattern = (re: string, msg: string, max: number): Check => {
  const r = new RegExp(`^${re}$`);
  return (s) => [...(s.length > max ? [`must be no more than ${max} characters`] : []), ...(r.test(s) ? [] : [msg])];
};
/** a prefix (for generateName) may end in '-' or '.': it is checked with a trailing character added */
const prefix =
  (check: Check): Check =>
  (s) =>
    check(/[-.]$/.test(s) ? `${s}a` : s);

const FORMATS: Record<string, Check> = {
  dns1123Label: pattern(LABEL, LABEL_MSG, 63),
  dns1123Subdomain: pattern(SUBDOMAIN, SUBDOMAIN_MSG, 253),
  dns1035Label: pattern(DNS1035, DNS1035_MSG, 63),
  labelValue: pattern(
    LABEL_VALUE,
    `a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '${LABEL_VALUE}')`,
    63,
  ),
  uuid: (s) =>
    /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s) ? [] : ['does not match the UUID format'],
  byte: (s) => (/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(s) ? [] : ['invalid base64']),
  date: (s) => (/^\d{4}-\d{2}-\d{2}$/.test(s) && !Number.isNaN(Date.parse(s)) ? [] : ['invalid date']),
  datetime: (s) =>
    /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.test(s) ? [] : ['invalid datetime'],
  uri: (s) => {
    try {
      new URL(s);
      return [];
    } catch {
      return ['invalid URI'];
    }
  },
};
FORMATS.dns1123LabelPrefix = prefix(FORMATS.dns1123Label!);
FORMATS.dns1123SubdomainPrefix = prefix(FORMATS.dns1123Subdomain!);
FORMATS.dns1035LabelPrefix = prefix(FORMATS.dns1035Label!);
FORMATS.qualifiedName = (s) => {
  const [a, b, extra] = s.split('/');
  const name = b ?? a!;
  const nameRe = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
  const out =
    extra !== undefined
      ? [
          "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
        ]
      : [];
  if (b !== undefined) out.push(...FORMATS.dns1123Subdomain!(a!).map((m) => `prefix part ${m}`));
  if (name.length > 63) out.push('name part must be no more than 63 characters');
  if (!nameRe.test(name))
    out.push(
      "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    );
  return out;
};

export const FORMAT_FUNCS: CelFunc[] = [
  ...Object.keys(FORMATS).map((name) => celFunc(`format.${name}`, [], OPAQUE, () => opaque('Format', name))),
  celFunc('format.named', [STRING], OPAQUE, (name) =>
    optionalOf(Object.hasOwn(FORMATS, name) ? opaque('Format', name) : undefined),
  ),
  celMethod('validate', OPAQUE, [STRING], OPAQUE, function (s) {
    const errs = FORMATS[opaqueValue(this, 'Format')]!(s);
    return optionalOf(errs.length ? errs : undefined);
  }),
];
