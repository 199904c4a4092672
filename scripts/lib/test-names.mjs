// The single tests `run-tests.mjs` may draw to run alone, and the exact way it runs one: shared
// by run-tests.mjs (the draw) and sweep-alone.mjs --tests (every candidate alone), so the sweep
// covers exactly what the draw can pick.
import { readFileSync } from 'node:fs';

// a test-defining call whose name is a plain string literal (top level: at the start of a line)
const QUOTED = String.raw`(['"])((?:\\.|(?!\1)[^\\\n])*)\1`;
const TOP_LEVEL = new RegExp(String.raw`^test\(\s*${QUOTED}\s*,`, 'gm');
const ANY_DEPTH = new RegExp(String.raw`\b(?:test|it|describe|suite)\(\s*${QUOTED}\s*[,)]`, 'g');

// the escapes tsc leaves in a string literal (a name with any other backslash is not drawn)
const unquote = (s) => s.replace(/\\(['"\\])/g, '$1');

/** Top-level test names of a compiled file's source, in file order (duplicates kept). */
export function topLevelTestNames(src) {
  return [...src.matchAll(TOP_LEVEL)].filter((m) => !/\\[^'"\\]/.test(m[2])).map((m) => unquote(m[2]));
}

/**
 * The names the alone draw may pick in a compiled file: top-level tests whose name appears once
 * among every string-named test or suite of the file. `--test-name-pattern=^name$` runs every
 * test so named whose parent runs (a describe() always runs its children's check), so a name used
 * twice would run two tests; those are left out of the draw (`duplicates` lists them).
 */
export function aloneCandidates(src) {
  const counts = new Map();
  for (const m of src.matchAll(ANY_DEPTH)) {
    const name = unquote(m[2]);
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  const top = topLevelTestNames(src);
  return {
    names: top.filter((n) => counts.get(n) === 1),
    duplicates: [...new Set(top.filter((n) => counts.get(n) !== 1))],
  };
}

export const aloneCandidatesOf = (file) => aloneCandidates(readFileSync(file, 'utf8'));

export const escapeRegExp = (s) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** The runner flag that runs one test alone (with its file's hooks and its own subtests). */
export const alonePattern = (name) => `--test-name-pattern=^${escapeRegExp(name)}$`;

/**
 * Files (each its own process) run at once: 2, or TEST_CONCURRENCY (a positive integer; for a
 * machine with more cores: the suite's timings were all measured at 2), and the bound of each
 * test and of each file.
 */
export const RUNNER_CONCURRENCY = concurrencyOf(process.env.TEST_CONCURRENCY);

function concurrencyOf(value) {
  if (value === undefined || value === '') return 2;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`TEST_CONCURRENCY must be a positive integer, got "${value}"`);
  return n;
}
export const RUNNER_TIMEOUT_MS = 180_000;

/** The runner's flags for a compiled test file, as run-tests.mjs passes them. */
export const RUNNER_FLAGS = [
  '--test',
  `--test-concurrency=${RUNNER_CONCURRENCY}`,
  `--test-timeout=${RUNNER_TIMEOUT_MS}`,
];

/**
 * The suites a full run (run-tests.mjs) and sweep-alone.mjs re-run on etcd
 * (PLAT_TEST_STORAGE=etcd3): the resource, watch and patch suites, each named by its path under
 * test/ without `.test.ts`. Exact names, not substrings: a new file beside one of them (say
 * registry/crud-extra) is not re-run on etcd unless it is added here.
 */
export const ETCD_SUITES = [
  'registry/crud',
  'registry/list',
  'registry/list-history',
  'registry/scale',
  'apply/apply',
  'patch/patch',
  'handlers/watch',
  'http/watch-coalescing',
  'http/watch-hub',
  'registry/watch-restart',
  'registry/watch-rv',
];

/** Whether a test file (source or compiled, any prefix before `test/`) is one of ETCD_SUITES. */
export function isEtcdSuite(file) {
  const path = file.replaceAll('\\', '/').replace(/\.test\.[jt]s$/, '');
  return ETCD_SUITES.some((name) => path.endsWith(`test/${name}`));
}
