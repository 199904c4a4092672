/**
 * Static token file (`--token-auth-file`): CSV `token,user,uid[,"group1,group2"]`, read once at
 * start; a malformed file is a startup error naming the line. Audience agnostic.
 */
import { readFileSync } from 'node:fs';
import { NOT_MINE, type AuthResult, type TokenAuthenticator, type UserInfo } from '../api/user.js';
import { audienceAgnostic } from './audiences.js';

/** Splits one CSV record (RFC 4180 quoting, "" escapes, leading spaces trimmed as Go's reader). */
export function parseCsvLine(line: string): string[] {
  const out: string[] = [];
  let i = 0;
  for (;;) {
    while (line[i] === ' ' || line[i] === '\t') i++;
    let field = '';
    if (line[i] === '"') {
      i++;
      for (;;) {
        if (i >= line.length) throw new Error('extraneous or missing " in quoted-field');
        if (line[i] === '"') {
          if (line[i + 1] === '"') {
            field += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        field += line[i++];
      }
      if (i < line.length && line[i] !== ',') throw new Error(`extraneous or missing " in quoted-field`);
    } else {
      const end = line.indexOf(',', i);
      field = line.slice(i, end < 0 ? line.length : end);
      if (field.includes('"')) throw new Error('bare " in non-quoted-field');
      i = end < 0 ? line.length : end;
    }
    out.push(field);
    if (i >= line.length) return out;
    i++; // the comma
  }
}

/** Parses the file text into token → user; throws `line N: ...` for the first bad record. */
export function parseTokenFile(text: string): Map<string, UserInfo> {
  const tokens = new Map<string, UserInfo>();
  const lines = text.split(/\r?\n/);
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n]!;
    if (line.trim() === '') continue;
    let rec: string[];
    try {
      rec = parseCsvLine(line);
    } catch (e) {
      throw new Error(`line ${n + 1}: ${(e as Error).message}`);
    }
    if (rec.length < 3)
      throw new Error(`line ${n + 1}: must have at least 3 columns (token, user name, user uid), found ${rec.length}`);
    const [token, username, uid] = rec as [string, string, string];
    if (token === '') throw new Error(`line ${n + 1}: empty token`);
    if (username === '') throw new Error(`line ${n + 1}: empty user name`);
    const user: UserInfo = { username, uid, groups: rec.length >= 4 && rec[3] !== '' ? rec[3]!.split(',') : [] };
    tokens.set(token, user);
  }
  return tokens;
}

export function loadTokenFile(path: string): Map<string, UserInfo> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new Error(`--token-auth-file: cannot read ${path}: ${(e as Error).message}`);
  }
  try {
    return parseTokenFile(text);
  } catch (e) {
    throw new Error(`--token-auth-file ${path}: ${(e as Error).message}`);
  }
}

/** Token → user lookup; answers synchronously (one Map lookup on the hot path). */
export function tokenFileAuthenticator(
  tokens: Map<string, UserInfo>,
  apiAudiences: readonly string[],
): TokenAuthenticator {
  // results are built once per entry so an authenticated request allocates nothing here
  const results = new Map<string, AuthResult>();
  for (const [t, user] of tokens) results.set(t, { kind: 'user', user });
  return audienceAgnostic(apiAudiences, { authenticateToken: (token) => results.get(token) ?? NOT_MINE });
}
