/**
 * upstream webhook.ValidateWebhookURL with forceHttps (k8s.io/apiserver/pkg/util/webhook): the
 * URL of an admission webhook (and of a CRD conversion webhook) must be `https://host[/path]`,
 * without user information, query or fragment. The URL is split as Go's url.Parse splits it
 * (scheme, then `//authority`), so a relative or schemeless value has an empty scheme and host.
 */
import { invalid, required, type Cause } from './field-errors.js';

const FORM = '; desired format: https://host[/path]';

interface UrlParts {
  scheme: string;
  user?: string;
  host: string;
  query: string;
  fragment: string;
}

/** Go url.Parse's split of the parts checked; undefined for what it refuses (missing scheme). */
function split(url: string): UrlParts | undefined {
  let rest = url;
  const hash = rest.indexOf('#');
  const fragment = hash < 0 ? '' : rest.slice(hash + 1);
  if (hash >= 0) rest = rest.slice(0, hash);
  const m = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(rest);
  if (!m && rest.startsWith(':')) return undefined;
  const scheme = m ? m[1]!.toLowerCase() : '';
  if (m) rest = rest.slice(m[0].length);
  const q = rest.indexOf('?');
  const query = q < 0 ? '' : rest.slice(q + 1);
  if (q >= 0) rest = rest.slice(0, q);
  if (!rest.startsWith('//')) return { scheme, host: '', query, fragment };
  const authority = rest.slice(2).split('/')[0]!;
  const at = authority.lastIndexOf('@');
  return {
    scheme,
    user: at < 0 ? undefined : authority.slice(0, at),
    host: at < 0 ? authority : authority.slice(at + 1),
    query,
    fragment,
  };
}

export function validateWebhookUrl(url: string, path: string): Cause[] {
  const u = split(url);
  if (!u)
    return [required(path, `url must be a valid URL: parse ${JSON.stringify(url)}: missing protocol scheme${FORM}`)];
  const out: Cause[] = [];
  if (u.scheme !== 'https') out.push(invalid(path, u.scheme, `'https' is the only allowed URL scheme${FORM}`));
  if (!u.host) out.push(invalid(path, u.host, `host must be provided${FORM}`));
  if (u.user !== undefined) out.push(invalid(path, u.user, 'user information is not permitted in the URL'));
  if (u.fragment) out.push(invalid(path, u.fragment, 'fragments are not permitted in the URL'));
  if (u.query) out.push(invalid(path, u.query, 'query parameters are not permitted in the URL'));
  return out;
}
