// Measures the layering of src/ from its own imports and keeps it from getting worse.
//
//   node scripts/check-layers.mjs            report, and fail (exit 1) on anything not in the baseline
//   node scripts/check-layers.mjs --json     the measurements as JSON
//   node scripts/check-layers.mjs --write-baseline   record today's violations in scripts/layers-baseline.json
//
// Layers, bottom to top (a folder may import its own layer and the ones below, never above), as
// docs/architecture.md draws them. storage sits below registry: the generic store uses the storage
// interface (upstream's order), never the other way round. A violation already in the baseline is reported
// but tolerated (the renovation removes them); a new one fails `npm test`.
import { readFileSync, readdirSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

export const LAYERS = [
  ['api'],
  ['codec', 'schema', 'patch', 'apply', 'x509', 'metrics', 'cel'],
  ['storage'],
  ['registry'],
  ['actors'],
  ['http'],
  ['auth', 'audit', 'kubelet'],
  ['filters', 'admission', 'flowcontrol'],
  ['handlers', 'aggregator'],
  ['controllers'],
  ['server'],
];
const RANK = new Map(LAYERS.flatMap((names, i) => names.map((n) => [n, i])));
const SRC = resolve('src');
const BASELINE = resolve('scripts/layers-baseline.json');

function walk(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

const IMPORT_RE = /(?:^|\n)\s*(?:import|export)\b[^'";]*?\bfrom\s*['"]([^'"]+)['"]|(?:^|\n)\s*import\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

/** the relative imports of one file, resolved to src-relative .ts paths */
function importsOf(file, text) {
  const out = [];
  for (const m of text.matchAll(IMPORT_RE)) {
    const spec = m[1] ?? m[2] ?? m[3];
    if (!spec || !spec.startsWith('.')) continue;
    const target = resolve(dirname(file), spec).replace(/\.js$/, '.ts');
    out.push(relative(SRC, target));
  }
  return out;
}

const folderOf = (rel) => (rel.includes('/') ? rel.slice(0, rel.indexOf('/')) : '.');

/** Tarjan's strongly connected components; returns the components with more than one member */
function cycles(graph) {
  let index = 0;
  const idx = new Map(), low = new Map(), onStack = new Set(), stack = [], out = [];
  const strong = (v) => {
    idx.set(v, index); low.set(v, index); index++; stack.push(v); onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) { strong(w); low.set(v, Math.min(low.get(v), low.get(w))); }
      else if (onStack.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const comp = [];
      let w;
      do { w = stack.pop(); onStack.delete(w); comp.push(w); } while (w !== v);
      if (comp.length > 1) out.push(comp.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) strong(v);
  return out;
}

const ANY_RE = /(?::\s*any\b|\bas\s+any\b|<any\b|\bany\[\]|,\s*any\s*[>,)]|\(\s*any\s*[,)])/g;

export function measure() {
  const files = walk(SRC).filter((f) => !f.includes('/generated/'));
  const fileGraph = new Map();
  const folderEdges = new Map();
  const upward = [];
  let anyCount = 0;
  const large = [];
  for (const f of files) {
    const rel = relative(SRC, f);
    const text = readFileSync(f, 'utf8');
    const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
    anyCount += (code.match(ANY_RE) ?? []).length;
    const lines = text.split('\n').length;
    if (lines > 400) large.push(`${rel} (${lines})`);
    const deps = importsOf(f, text);
    fileGraph.set(rel, deps);
    const from = folderOf(rel);
    for (const d of deps) {
      const to = folderOf(d);
      if (to === from) continue;
      const key = `${from} -> ${to}`;
      folderEdges.set(key, (folderEdges.get(key) ?? 0) + 1);
      const rf = RANK.get(from), rt = RANK.get(to);
      if (rf !== undefined && rt !== undefined && rt > rf) upward.push(`${rel} -> ${d}`);
    }
  }
  const mutual = [];
  for (const key of folderEdges.keys()) {
    const [a, b] = key.split(' -> ');
    if (a < b && folderEdges.has(`${b} -> ${a}`)) mutual.push(`${a} <-> ${b}`);
  }
  const folderGraph = new Map();
  for (const key of folderEdges.keys()) {
    const [a, b] = key.split(' -> ');
    if (!folderGraph.has(a)) folderGraph.set(a, []);
    folderGraph.get(a).push(b);
  }
  const unknownFolders = [...new Set([...fileGraph.keys()].map(folderOf))].filter((f) => f !== '.' && !RANK.has(f));
  return {
    files: files.length,
    anyCount,
    largeFiles: large.sort(),
    mutualFolderPairs: mutual.sort(),
    folderCycles: cycles(folderGraph).map((c) => c.join(' ')),
    fileCycles: cycles(fileGraph).map((c) => c.join(' ')),
    upwardImports: upward.sort(),
    unknownFolders,
  };
}

function main() {
  const m = measure();
  const args = process.argv.slice(2);
  if (args.includes('--json')) { console.log(JSON.stringify(m, null, 2)); return; }
  if (args.includes('--write-baseline')) {
    const { files, ...rest } = m;
    writeFileSync(BASELINE, JSON.stringify(rest, null, 2) + '\n');
    console.log(`wrote ${relative(process.cwd(), BASELINE)}`);
    return;
  }
  const base = existsSync(BASELINE) ? JSON.parse(readFileSync(BASELINE, 'utf8')) : {};
  const problems = [];
  const newOf = (name) => m[name].filter((x) => !(base[name] ?? []).includes(x));
  for (const name of ['mutualFolderPairs', 'upwardImports', 'largeFiles', 'unknownFolders']) {
    for (const x of newOf(name)) problems.push(`${name}: ${x}`);
  }
  // a file cycle is new when it is not contained in a baseline cycle
  const baseCycles = (base.fileCycles ?? []).map((c) => new Set(c.split(' ')));
  for (const c of m.fileCycles) {
    const members = c.split(' ');
    if (!baseCycles.some((b) => members.every((x) => b.has(x)))) problems.push(`fileCycles: ${c}`);
  }
  if (m.anyCount > (base.anyCount ?? Infinity)) problems.push(`anyCount: ${m.anyCount} > baseline ${base.anyCount}`);
  console.log(
    `layers: ${m.files} files, ${m.mutualFolderPairs.length} folder pairs importing each other, ` +
      `${m.fileCycles.length} file cycles, ${m.upwardImports.length} upward imports, ${m.anyCount} any, ` +
      `${m.largeFiles.length} files over 400 lines`,
  );
  if (problems.length) {
    console.error(`layers: ${problems.length} new violation(s) (see docs/architecture.md for the layers):`);
    for (const p of problems) console.error(`  ${p}`);
    process.exit(1);
  }
}

if (process.argv[1] && resolve(process.argv[1]) === resolve('scripts/check-layers.mjs')) main();
