// node scripts/coverage-table.mjs [coverage/coverage-summary.json] [--subset "<filters>"] [--title "<first line>"]
//                                 [--write docs/testing.md] [--marker coverage-table]
//
// Folds c8's json-summary (one entry per source file) into line and branch coverage per src/
// folder (src/auth/authz apart from src/auth: the authorization decisions), as a markdown table.
// --write replaces the table between the markers (<!-- <marker>:start --> ... end) of the given
// file; --title replaces the line that says what was measured.
import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';

const args = process.argv.slice(2);
const opt = (name) => {
  const i = args.indexOf(name);
  return i < 0 ? undefined : args.splice(i, 2)[1];
};
const subset = opt('--subset');
const write = opt('--write');
const title = opt('--title');
const marker = opt('--marker') ?? 'coverage-table';
const summary = JSON.parse(readFileSync(args[0] ?? 'coverage/coverage-summary.json', 'utf8'));

const SPLIT = [
  'src/auth/authz',
  'src/auth/jwt',
  'src/registry/strategies',
  'src/registry/crd',
  'src/storage/lmdb',
  'src/storage/etcd',
  'src/storage/cacher',
];
const folderOf = (file) => {
  const rel = relative(process.cwd(), file)
    .replace(/^dist\//, '')
    .replace(/\.js$/, '.ts');
  const deep = SPLIT.find((f) => rel.startsWith(`${f}/`));
  if (deep) return deep;
  if (rel.startsWith('workers/')) return 'workers';
  const parts = rel.split('/');
  return parts.length > 2 ? parts.slice(0, 2).join('/') : 'src';
};

const folders = new Map();
const add = (key, m) => {
  const f = folders.get(key) ?? { files: 0, lines: [0, 0], branches: [0, 0] };
  f.files++;
  f.lines[0] += m.lines.covered;
  f.lines[1] += m.lines.total;
  f.branches[0] += m.branches.covered;
  f.branches[1] += m.branches.total;
  folders.set(key, f);
};
for (const [file, m] of Object.entries(summary)) {
  if (file === 'total' || file.includes('/generated/')) continue;
  add(folderOf(file), m);
  add('**all**', m);
}
const pct = ([c, t]) => (t === 0 ? '–' : `${((100 * c) / t).toFixed(1)}%`);
const rows = [...folders.entries()].sort(([a], [b]) =>
  a.startsWith('**') ? 1 : b.startsWith('**') ? -1 : a.localeCompare(b),
);
const table = [
  title ??
    (subset
      ? `Measured on a subset of the suite: \`node scripts/coverage.mjs ${subset}\` (files of other areas count as run by none of these tests).`
      : 'Measured on the whole suite: `npm run coverage`.'),
  '',
  '| Folder | Files | Lines | Branches |',
  '|---|---:|---:|---:|',
  ...rows.map(
    ([k, f]) =>
      `| ${k.startsWith('**') ? k : `\`${k}/\``} | ${f.files} | ${pct(f.lines)} (${f.lines[0]}/${f.lines[1]}) | ${pct(f.branches)} (${f.branches[0]}/${f.branches[1]}) |`,
  ),
].join('\n');

if (write) {
  const doc = readFileSync(write, 'utf8');
  const start = `<!-- ${marker}:start -->`,
    end = `<!-- ${marker}:end -->`;
  const a = doc.indexOf(start),
    b = doc.indexOf(end);
  if (a < 0 || b < a) throw new Error(`${write} has no ${start} ... ${end} markers`);
  writeFileSync(write, `${doc.slice(0, a + start.length)}\n${table}\n${doc.slice(b)}`);
  console.log(`# coverage table written to ${write}`);
} else {
  console.log(table);
}
