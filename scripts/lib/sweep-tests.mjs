// sweep-alone.mjs --tests: every test the alone draw of run-tests.mjs may pick, each run alone
// exactly as the draw runs it (the runner's flags, `--test-name-pattern=^name$`, one file), with
// the TAP reporter so the run can be checked to have run that one test and nothing else.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { getPriority, loadavg, setPriority } from 'node:os';
import { join, relative } from 'node:path';
import { RUNNER_FLAGS, aloneCandidates, alonePattern, topLevelTestNames } from './test-names.mjs';

/** The TypeScript source of a compiled test file (dist/test/x.test.js -> test/x.test.ts). */
const sourceOf = (file) => file.replace(/^dist\//, '').replace(/\.js$/, '.ts');

/** 1-based line of each top-level test name in the TypeScript source (first one wins). */
function lineNumbers(tree, file) {
  const lines = new Map();
  const src = join(tree, sourceOf(file));
  if (!existsSync(src)) return lines;
  const text = readFileSync(src, 'utf8');
  const re = /^test\(\s*(['"])((?:\\.|(?!\1)[^\\\n])*)\1\s*,/gm;
  for (const m of text.matchAll(re)) {
    const [name] = topLevelTestNames(m[0]);
    if (name !== undefined && !lines.has(name)) lines.set(name, text.slice(0, m.index).split('\n').length);
  }
  return lines;
}

/** One run per candidate test of the files: the argv of `node`, a label, where it is. */
function planTests(tree, files) {
  const entries = [];
  const duplicates = [];
  for (const file of files) {
    const { names, duplicates: dup } = aloneCandidates(readFileSync(join(tree, file), 'utf8'));
    for (const name of dup) duplicates.push(`${sourceOf(file)} :: ${name}`);
    const lines = lineNumbers(tree, file);
    for (const name of names) {
      entries.push({
        file,
        name,
        where: `${sourceOf(file)}:${lines.get(name) ?? '?'}`,
        folder: file.split('/')[2],
        label: `${sourceOf(file)} :: ${name}`,
        argv: [...RUNNER_FLAGS, '--test-reporter=tap', alonePattern(name), file],
        env: {},
      });
    }
  }
  return { entries, duplicates };
}

/** Node's TAP reporter escapes `\` and `#` in a test name. */
const untap = (s) => s.replace(/\\([\\#])/g, '$1');

/**
 * The top-level tests a run reported as run: not skipped by the pattern, and no describe() whose
 * every test was (a suite is reported at the top level even when the pattern left it empty). An
 * alone run passes only when it exited 0 and ran exactly the one test it was meant to.
 */
function judge(text, code, name) {
  const ran = [];
  let nested = [];
  for (const m of text.matchAll(/^( *)(not ok|ok) \d+ - (.*?)(?: # (SKIP|TODO)\b.*)?$/gm)) {
    if (m[1].length > 0) {
      nested.push(m[4] === 'SKIP');
      continue;
    }
    const test = { ok: m[2] === 'ok', name: untap(m[3]) };
    const emptied = nested.length > 0 && nested.every(Boolean);
    if (test.name === name || (m[4] !== 'SKIP' && !emptied)) ran.push(test);
    nested = [];
  }
  const only = ran.length === 1 && ran[0].name === name;
  if (code === 0 && only) return { status: 'pass', ran };
  if (ran.length === 0) return { status: code === 0 ? 'ran nothing' : 'FAIL', ran };
  if (!only) return { status: `ran ${ran.length} tests`, ran };
  return { status: 'FAIL', ran };
}

/** First lines of the failure in a TAP log, for the report: the assertion or error message. */
function firstError(text) {
  const m = text.match(/^\s+error: (.*)$/m);
  return m ? m[1].replace(/^['|>-]\s*/, '').slice(0, 160) : '';
}

/** The markdown and console summary of a --tests sweep. */
function testsReport(rows, meta) {
  const folders = new Map();
  for (const r of rows) {
    const f = folders.get(r.folder) ?? { swept: 0, failed: 0 };
    f.swept++;
    if (r.status !== 'pass') f.failed++;
    folders.set(r.folder, f);
  }
  const bad = rows.filter((r) => r.status !== 'pass');
  const md = [
    '# sweep: every test alone (as the alone draw of run-tests.mjs runs one)',
    '',
    meta.summary,
    '',
    '| Folder | Tests swept | Failed alone |',
    '|---|---:|---:|',
    ...[...folders].sort().map(([k, v]) => `| ${k} | ${v.swept} | ${v.failed} |`),
    '',
    bad.length ? '| Test | Where | Result | Time | Log |' : 'Every swept test passed alone.',
    ...(bad.length ? ['|---|---|---|---:|---|'] : []),
    ...bad.map(
      (r) =>
        `| ${r.name.replace(/\|/g, '\\|')} | \`${r.where}\` | ${r.status}${r.error ? `: ${r.error.replace(/\|/g, '\\|')}` : ''} | ${r.seconds.toFixed(1)} s | \`${r.log}\` |`,
    ),
    ...(meta.duplicates.length
      ? ['', 'Names left out of the draw (used by more than one test or suite of the file):', '']
      : []),
    ...meta.duplicates.map((d) => `- ${d}`),
    ...meta.notRun.map((e) => `- not run (--budget): ${e.where} ${e.name}`),
  ].join('\n');
  const lines = bad.map((r) => `# ${r.status}: ${r.where} ${r.name} (${r.log})`);
  return { md, lines };
}

const load = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');

/** --tests: every alone-draw candidate of the files, each alone; reports and exits. */
export async function sweepTests(files, o, ctx) {
  const { out, runFile, pool } = ctx;
  setPriority(Math.max(getPriority(), 10));
  const { entries, duplicates } = planTests(ctx.tree, files);
  entries.forEach((e, i) => {
    e.n = i + 1;
    e.logName = `${e.where.replace(/^test\//, '').replace(/\.test\.ts:/, '-L')}`;
  });
  console.log(`# ${entries.length} tests alone from ${files.length} files, ${o.jobs} job(s), nice ${getPriority()}`);
  const t0 = Date.now();
  let n = 0;
  const results = await pool(entries, o.jobs, o.budget ? t0 + o.budget * 60000 : 0, async (e) => {
    const r = await runFile(e, o, ctx);
    const verdict = e.timedOut ? { status: 'FAIL (killed after --test-timeout)' } : judge(r.text, r.code, e.name);
    const row = { ...e, status: verdict.status, seconds: r.seconds, log: r.log, error: firstError(r.text) };
    delete row.argv;
    n++;
    console.log(
      `${String(n).padStart(4)}/${entries.length} ${row.status === 'pass' ? 'pass' : 'FAIL'} ${r.seconds.toFixed(1).padStart(6)} s  ${e.where} ${e.name}${row.status === 'pass' ? '' : `  (${row.status}, ${r.log})`}`,
    );
    return row;
  });
  const rows = entries.filter((e) => results.has(e)).map((e) => results.get(e));
  const notRun = entries.filter((e) => !results.has(e));
  const minutes = ((Date.now() - t0) / 60000).toFixed(1);
  const failed = rows.filter((r) => r.status !== 'pass').length;
  const summary = `${rows.length - failed} of ${rows.length} tests passed alone${notRun.length ? ` (${notRun.length} not run: --budget)` : ''}; files: ${o.filters.join(' ') || 'all'}; ${o.jobs} job(s), ${minutes} min, load average at the end ${load()}`;
  const { md, lines } = testsReport(rows, { summary, duplicates, notRun });
  writeFileSync(join(out, 'sweep-tests.md'), `${md}\n`);
  writeFileSync(join(out, 'sweep-tests.json'), JSON.stringify({ summary, rows, duplicates }, null, 2));
  for (const line of lines) console.log(line);
  console.log(`# ${summary}\n# table: ${relative(process.cwd(), join(out, 'sweep-tests.md'))}`);
  process.exit(failed === 0 && notRun.length === 0 ? 0 : 1);
}
