// npm run mutate -- [--module authz|admission|registry|registry-concurrency|storage|apply|watch] [--sample N] [--seed S] [--list]
//                   [--survivors reports/mutation/<module>.json] [--files <substring>] [--tests <filters,...>]
//
// Mutation testing with Stryker (stryker.conf.json holds the shared settings): the command test
// runner runs `node scripts/run-tests.mjs <the module's test files>` once per mutant after one
// build of the instrumented tree, so only the tests relevant to the mutated module run.
// --sample N draws N mutants of the module (seeded, so a run can be repeated) and passes
// Stryker their exact source ranges; a range also holds the mutants nested in it, which the draw
// counts, so exactly N mutants run. --list prints the draw without running it. --survivors runs
// again only the mutants a previous report lists as survived (after new tests were written).
// --files keeps only the drawn ranges of files whose path contains the substring, and --tests
// runs other test filters: one draw can then run per file with only that file's tests (a
// group's report is reports/mutation/<module>-<files>.json), which is what makes a sample of
// the admission plugins affordable on a loaded machine. Not in CI: a
// sample of 100 authorization mutants takes ~15 min on a loaded 2-core machine.
import { readFileSync, readdirSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { Instrumenter } from '@stryker-mutator/instrumenter';
import { parse as parseTs } from '@babel/parser';
import { mulberry32 } from '../dist/bench/lib/mulberry32.js';

/**
 * Per module: the files mutated (files or folders; `file.ts#a,b` only the functions or methods
 * named a and b of that file) and the run-tests.mjs filters of its tests.
 */
const MODULES = {
  // the decision code the unit tests reach in-process (the end-to-end authz suites take 25-80 s
  // per file: too slow per mutant; `--module authz-e2e` runs them)
  authz: {
    mutate: [
      'src/auth/authz/authorizer.ts',
      'src/auth/authz/rbac.ts',
      'src/auth/authz/rbac-rules.ts',
      'src/auth/authz/rbac-index.ts',
      'src/auth/authz/attributes.ts',
      'src/auth/authz/escalation.ts',
    ],
    tests: ['authz/rbac.test', 'authz/attributes.test', 'authz/chain.test', 'authz/escalation.test', 'auth/authz/'],
  },
  'authz-e2e': {
    mutate: ['src/auth/authz/'],
    tests: ['test/authz/', 'auth/authz/', 'security/rbac'],
  },
  admission: { mutate: ['src/admission/'], tests: ['test/admission/'] },
  registry: {
    mutate: [
      'src/registry/store.ts',
      'src/registry/txn.ts',
      'src/registry/ops.ts',
      'src/registry/patch.ts',
      'src/registry/deletion.ts',
      'src/registry/validation.ts',
    ],
    tests: ['test/registry/registry', 'registry/crud', 'patch/patch', 'security/write-race', 'actors/commit-isolation'],
  },
  // the optimistic-concurrency checks only: resourceVersion and uid preconditions, the conflict
  // checks of update, patch and delete, the pin of a write to the version its checks saw
  'registry-concurrency': {
    mutate: [
      'src/registry/store.ts#checkPin,checkResourceVersion,updateFrom,deleteOne',
      'src/registry/deletion.ts#checkPreconditions,checkTypes',
      'src/http/pin.ts',
    ],
    tests: [
      'registry/preconditions',
      'registry/store-pin',
      'registry/deletion',
      'http/pin',
      'registry/crud',
      'patch/patch',
      'security/write-race',
    ],
  },
  // the storage unit suites (the end-to-end ones under test/storage/ start servers and etcd clusters)
  storage: {
    mutate: ['src/storage/'],
    tests: [
      'storage/backend-conformance',
      'storage/type-cache',
      'storage/encryption/transformer',
      'storage/etcd/etcd-backend',
      'storage/etcd/etcd-batch',
      'test/actors/',
    ],
  },
  apply: { mutate: ['src/apply/'], tests: ['test/apply/'] },
  watch: {
    mutate: ['src/registry/watch.ts', 'src/storage/cacher/'],
    tests: [
      'handlers/watch',
      'http/watch-coalescing',
      'http/watch-hub',
      'registry/watch-restart',
      'registry/watch-rv',
      'storage/backend-conformance',
    ],
  },
};

function parse(argv) {
  const o = { module: 'authz', sample: 0, seed: 25, list: false, survivors: '', files: '', tests: '' };
  for (let i = 0; i < argv.length; i++) {
    const [k, inline] = argv[i].split('=', 2);
    const val = () => inline ?? argv[++i];
    if (k === '--module') o.module = val();
    else if (k === '--sample') o.sample = Number(val());
    else if (k === '--seed') o.seed = Number(val());
    else if (k === '--list') o.list = true;
    else if (k === '--survivors') o.survivors = val();
    else if (k === '--files') o.files = val();
    else if (k === '--tests') o.tests = val();
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  if (!MODULES[o.module])
    throw new Error(`--module must be one of ${Object.keys(MODULES).join(', ')}, got "${o.module}"`);
  if (!Number.isInteger(o.sample) || o.sample < 0)
    throw new Error(`--sample must be a non-negative integer, got "${o.sample}"`);
  return o;
}

/** The files of the module: [{ file, only? }], only = the source ranges of the named functions. */
function expand(paths) {
  const out = [];
  const walk = (p) => {
    if (statSync(p).isDirectory()) for (const n of readdirSync(p).sort()) walk(join(p, n));
    else if (p.endsWith('.ts') && !p.includes('/generated/')) out.push({ file: p });
  };
  for (const p of paths) {
    const [path, names] = p.split('#');
    if (names) out.push({ file: path, only: functionRanges(path, names.split(',')) });
    else walk(path.replace(/\/$/, ''));
  }
  return out;
}

/** The locations (lines 1-based, columns 0-based, as Babel's) of the named functions and methods. */
function functionRanges(file, names) {
  const ast = parseTs(readFileSync(file, 'utf8'), { sourceType: 'module', plugins: ['typescript'] });
  const found = new Map();
  const visit = (node) => {
    if (!node || typeof node.type !== 'string') return;
    const name =
      node.type === 'FunctionDeclaration'
        ? node.id?.name
        : node.type === 'ClassMethod' || node.type === 'ClassPrivateMethod'
          ? node.key?.name
          : undefined;
    if (name && names.includes(name)) found.set(name, node.loc);
    for (const v of Object.values(node))
      for (const c of Array.isArray(v) ? v : [v]) if (c && typeof c === 'object' && c.type) visit(c);
  };
  visit(ast.program);
  const missing = names.filter((n) => !found.has(n));
  if (missing.length) throw new Error(`${file} has no function or method named ${missing.join(', ')}`);
  return [...found.values()];
}

/** Stryker's range syntax (1-based lines, 0-based columns). */
const rangeSpec = (file, loc) => `${file}:${loc.start.line}:${loc.start.column}-${loc.end.line}:${loc.end.column}`;

const rng = mulberry32;

const within = (outer, inner) =>
  (outer.start.line < inner.start.line ||
    (outer.start.line === inner.start.line && outer.start.column <= inner.start.column)) &&
  (outer.end.line > inner.end.line || (outer.end.line === inner.end.line && outer.end.column >= inner.end.column));

async function listMutants(files) {
  const quiet = {
    isTraceEnabled: () => false,
    isDebugEnabled: () => false,
    trace() {},
    debug() {},
    info() {},
    warn() {},
    error: console.error,
    fatal: console.error,
  };
  const input = files.map((name) => ({ name, content: readFileSync(name, 'utf8'), mutate: true }));
  const r = await new Instrumenter(quiet).instrument(input, {
    plugins: null,
    ignorers: [],
    excludedMutations: [],
    noHeader: true,
  });
  return r.mutants;
}

/**
 * Draws mutants in a seeded order; a drawn mutant's range brings every mutant located inside it
 * (Stryker mutates every node within a range), and a draw is kept only while the total stays <= n.
 */
function draw(mutants, n, seed) {
  const random = rng(seed);
  const order = mutants
    .map((m) => [random(), m])
    .sort((a, b) => a[0] - b[0])
    .map(([, m]) => m);
  const chosen = new Set();
  const ranges = [];
  for (const m of order) {
    if (chosen.size >= n) break;
    if (chosen.has(m)) continue;
    const brought = mutants.filter(
      (x) => x.fileName === m.fileName && within(m.location, x.location) && !chosen.has(x),
    );
    if (chosen.size + brought.length > n) continue;
    for (const x of brought) chosen.add(x);
    ranges.push(m);
  }
  // Stryker's ranges: 1-based lines, 0-based columns (the instrumenter's lines are 0-based)
  const spec = ranges.map(
    (m) =>
      `${m.fileName}:${m.location.start.line + 1}:${m.location.start.column}-${m.location.end.line + 1}:${m.location.end.column}`,
  );
  return { spec, chosen: [...chosen] };
}

const o = parse(process.argv.slice(2));
const mod = MODULES[o.module];
const targets = expand(mod.mutate);
// a mutant of a function-scoped file counts only inside the named functions (instrumenter lines are 0-based)
const inScope = (m) => {
  const t = targets.find((x) => x.file === m.fileName);
  return (
    !t?.only ||
    t.only.some((loc) =>
      within(
        {
          start: { line: loc.start.line - 1, column: loc.start.column },
          end: { line: loc.end.line - 1, column: loc.end.column },
        },
        m.location,
      ),
    )
  );
};
let mutate = targets.flatMap((t) => (t.only ? t.only.map((loc) => rangeSpec(t.file, loc)) : [t.file]));
if (o.sample > 0 || o.list) {
  const all = (await listMutants(targets.map((t) => t.file))).filter(inScope);
  if (o.sample > 0) {
    const { spec, chosen } = draw(all, o.sample, o.seed);
    console.log(`# ${chosen.length} of ${all.length} mutants of ${o.module} drawn with seed ${o.seed}`);
    if (o.list)
      for (const m of chosen)
        console.log(
          `${m.fileName}:${m.location.start.line + 1}:${m.location.start.column + 1} ${m.mutatorName} -> ${m.replacement.slice(0, 60).replace(/\s+/g, ' ')}`,
        );
    mutate = spec;
  } else if (!o.survivors) {
    console.log(`# ${all.length} mutants of ${o.module}`);
    for (const m of all)
      console.log(
        `${m.fileName}:${m.location.start.line + 1}:${m.location.start.column + 1} ${m.mutatorName} -> ${m.replacement.slice(0, 60).replace(/\s+/g, ' ')}`,
      );
  }
}
if (o.survivors) {
  // the report's columns are 1-based, Stryker's ranges take them 0-based (lines 1-based in both)
  const report = JSON.parse(readFileSync(o.survivors, 'utf8'));
  mutate = Object.entries(report.files).flatMap(([file, f]) =>
    f.mutants
      .filter((m) => m.status === 'Survived')
      .map(({ location: { start, end } }) => `${file}:${start.line}:${start.column - 1}-${end.line}:${end.column - 1}`),
  );
  console.log(`# ${mutate.length} survivors of ${o.survivors}`);
  if (o.list) for (const m of mutate) console.log(m);
}
if (o.files) {
  const before = mutate.length;
  mutate = mutate.filter((m) => m.split(':')[0].includes(o.files));
  console.log(`# --files ${o.files}: ${mutate.length} of ${before} mutate entries`);
  if (o.list) for (const m of mutate) console.log(m);
  if (mutate.length === 0) process.exit(0);
}
if (o.list) process.exit(0);
const group = o.files ? `-${o.files.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '')}` : '';
const tag = `${o.module}${group}${o.survivors ? '-survivors' : ''}`;
const tests = o.tests ? o.tests.split(',') : mod.tests;
const base = JSON.parse(readFileSync('stryker.conf.json', 'utf8'));
delete base._comment;
delete base.$schema;
mkdirSync('reports/mutation', { recursive: true });
const config = {
  ...base,
  mutate,
  commandRunner: { command: `node scripts/run-tests.mjs ${tests.join(' ')}` },
  jsonReporter: { fileName: `reports/mutation/${tag}.json` },
  // a sandbox per module: two modules can run side by side (a run cleans only its own folder,
  // and no sandbox copies another one)
  tempDirName: `.stryker-tmp/${tag}`,
  ignorePatterns: [...(base.ignorePatterns ?? []), '.stryker-tmp'],
};
const path = `reports/mutation/stryker.${tag}.conf.json`;
writeFileSync(path, JSON.stringify(config, null, 2));
console.log(`# ${path}: ${mutate.length} mutate entries, tests: ${config.commandRunner.command}`);
const r = spawnSync(process.execPath, ['node_modules/@stryker-mutator/core/bin/stryker.js', 'run', path], {
  stdio: 'inherit',
});
process.exit(r.status ?? 1);
