// Measures the layering of src/ from its own imports and keeps it so.
//
//   node scripts/check-layers.mjs            report, and fail (exit 1) on a violation
//   node scripts/check-layers.mjs --json     the measurements as JSON
//   node scripts/check-layers.mjs --write-baseline   record today's ratchet counts in scripts/layers-baseline.json
//   --root DIR                               measure DIR/src against DIR/scripts/layers-baseline.json (tests)
//
// Layers, bottom to top (a folder may import its own layer and the ones below, never above), as
// docs/architecture.md draws them. storage sits below registry: the generic store uses the storage
// interface (upstream's order), never the other way round.
// Rules (every `npm test` runs this):
//   - hard: no folder pair importing each other, no folder or file cycle, no upward import, no folder
//     missing from LAYERS. Any one fails, whatever the baseline says.
//   - ratchet (may only go down; --write-baseline after an improvement): files over 400 lines,
//     functions over 60 lines, and the `any` count.
import { readFileSync, readdirSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from '@babel/parser';

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
const rootAt = process.argv.indexOf('--root');
const ROOT = rootAt > 0 && process.argv[rootAt + 1] ? resolve(process.argv[rootAt + 1]) : process.cwd();
const SRC = resolve(ROOT, 'src');
const BASELINE = resolve(ROOT, 'scripts/layers-baseline.json');

function walk(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

const IMPORT_RE =
  /(?:^|\n)\s*(?:import|export)\b[^'";]*?\bfrom\s*['"]([^'"]+)['"]|(?:^|\n)\s*import\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

/** the relative imports of one file, resolved to src-relative .ts paths */
function importsOf(file, text) {
  const out = [];
  for (const m of text.matchAll(IMPORT_RE)) {
    const spec = m[1] ?? m[2] ?? m[3];
    if (!spec?.startsWith('.')) continue;
    const target = resolve(dirname(file), spec).replace(/\.js$/, '.ts');
    out.push(relative(SRC, target));
  }
  return out;
}

const folderOf = (rel) => (rel.includes('/') ? rel.slice(0, rel.indexOf('/')) : '.');

/** Tarjan's strongly connected components; returns the components with more than one member */
function cycles(graph) {
  let index = 0;
  const idx = new Map(),
    low = new Map(),
    onStack = new Set(),
    stack = [],
    out = [];
  const strong = (v) => {
    idx.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) {
        strong(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const comp = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        comp.push(w);
      } while (w !== v);
      if (comp.length > 1) out.push(comp.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) strong(v);
  return out;
}

const FUNCTION_TYPES = new Set([
  'FunctionDeclaration',
  'FunctionExpression',
  'ArrowFunctionExpression',
  'ObjectMethod',
  'ClassMethod',
  'ClassPrivateMethod',
]);
const MAX_FUNCTION_LINES = 60;

/** Functions (declarations, expressions, arrows, methods) longer than MAX_FUNCTION_LINES, as `file:line name (n)`. */
function longFunctions(rel, text) {
  const ast = parse(text, { sourceType: 'module', plugins: ['typescript', 'decorators'], errorRecovery: true });
  const out = [];
  const visit = (node, name) => {
    if (!node || typeof node.type !== 'string') return;
    if (FUNCTION_TYPES.has(node.type) && node.body && node.loc) {
      const lines = node.loc.end.line - node.loc.start.line + 1;
      const n = node.id?.name ?? node.key?.name ?? node.key?.id?.name ?? name ?? '<anonymous>';
      if (lines > MAX_FUNCTION_LINES) out.push(`${rel}:${node.loc.start.line} ${n} (${lines})`);
    }
    for (const key of Object.keys(node)) {
      if (key === 'loc' || key === 'leadingComments' || key === 'trailingComments' || key === 'innerComments') continue;
      const v = node[key];
      // a function assigned to a name (const f = () => ..., key: function ...) is reported under it
      const named =
        node.type === 'VariableDeclarator'
          ? node.id?.name
          : node.type === 'ObjectProperty' || node.type === 'ClassProperty'
            ? node.key?.name
            : undefined;
      if (Array.isArray(v)) for (const c of v) visit(c, named);
      else if (v && typeof v === 'object') visit(v, named);
    }
  };
  visit(ast.program, undefined);
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
  const long = [];
  for (const f of files) {
    const rel = relative(SRC, f);
    const text = readFileSync(f, 'utf8');
    const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
    anyCount += (code.match(ANY_RE) ?? []).length;
    const lines = text.split('\n').length;
    if (lines > 400) large.push(`${rel} (${lines})`);
    long.push(...longFunctions(rel, text));
    const deps = importsOf(f, text);
    fileGraph.set(rel, deps);
    const from = folderOf(rel);
    for (const d of deps) {
      const to = folderOf(d);
      if (to === from) continue;
      const key = `${from} -> ${to}`;
      folderEdges.set(key, (folderEdges.get(key) ?? 0) + 1);
      const rf = RANK.get(from),
        rt = RANK.get(to);
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
    longFunctions: long.sort(),
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
  if (args.includes('--json')) {
    console.log(JSON.stringify(m, null, 2));
    return;
  }
  if (args.includes('--write-baseline')) {
    // only the ratchets: the hard rules have no baseline
    const baseline = { anyCount: m.anyCount, largeFiles: m.largeFiles, longFunctionCount: m.longFunctions.length };
    writeFileSync(BASELINE, JSON.stringify(baseline, null, 2) + '\n');
    console.log(`wrote ${relative(process.cwd(), BASELINE)}`);
    return;
  }
  const base = existsSync(BASELINE) ? JSON.parse(readFileSync(BASELINE, 'utf8')) : {};
  const problems = [];
  // hard rules: none of these, whatever the baseline holds
  for (const name of ['mutualFolderPairs', 'folderCycles', 'fileCycles', 'upwardImports', 'unknownFolders']) {
    for (const x of m[name]) problems.push(`${name}: ${x}`);
  }
  // ratchets: a file over 400 lines not in the baseline fails; the counts may not grow
  for (const x of m.largeFiles) {
    if (!(base.largeFiles ?? []).some((b) => b.replace(/ \(\d+\)$/, '') === x.replace(/ \(\d+\)$/, '')))
      problems.push(`largeFiles: ${x}`);
  }
  if (m.anyCount > (base.anyCount ?? Infinity)) problems.push(`anyCount: ${m.anyCount} > baseline ${base.anyCount}`);
  const maxLong = base.longFunctionCount ?? Infinity;
  if (m.longFunctions.length > maxLong)
    problems.push(
      `longFunctions: ${m.longFunctions.length} > baseline ${maxLong} (functions over ${MAX_FUNCTION_LINES} lines; see --json)`,
    );
  console.log(
    `layers: ${m.files} files, ${m.mutualFolderPairs.length} folder pairs importing each other, ` +
      `${m.fileCycles.length} file cycles, ${m.upwardImports.length} upward imports, ${m.anyCount} any, ` +
      `${m.largeFiles.length} files over 400 lines, ${m.longFunctions.length} functions over ${MAX_FUNCTION_LINES} lines`,
  );
  if (problems.length) {
    console.error(`layers: ${problems.length} violation(s) (see docs/architecture.md for the layers):`);
    for (const p of problems) console.error(`  ${p}`);
    process.exit(1);
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
