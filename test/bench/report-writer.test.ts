/**
 * The one report writer of the bench harnesses (bench/lib/report-writer.ts): a report directory
 * (the load CLI: report.md, report.json one-space indented, the charts) and a section appended to
 * a markdown document (the wrk mode's --record: the header only when the document is new).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { appendReportSection, writeReportDir } from '../../bench/lib/report-writer.js';

test('a report directory: report.md and report.json with final newlines, the charts as given', () => {
  const root = mkdtempSync(join(tmpdir(), 'report-writer-'));
  try {
    const dir = join(root, 'out', 'run-1');
    const md = writeReportDir(dir, {
      markdown: '# Bench report',
      json: { schemaVersion: 1, scenarios: [{ name: 'get' }] },
      charts: { 'throughput.svg': '<svg/>' },
    });
    assert.equal(md, join(dir, 'report.md'));
    assert.deepEqual(readdirSync(dir).sort(), ['report.json', 'report.md', 'throughput.svg']);
    assert.equal(readFileSync(md, 'utf8'), '# Bench report\n');
    assert.equal(
      readFileSync(join(dir, 'report.json'), 'utf8'),
      '{\n "schemaVersion": 1,\n "scenarios": [\n  {\n   "name": "get"\n  }\n ]\n}\n',
    );
    assert.equal(readFileSync(join(dir, 'throughput.svg'), 'utf8'), '<svg/>');
    writeReportDir(join(root, 'md-only'), { markdown: 'x' });
    assert.deepEqual(readdirSync(join(root, 'md-only')), ['report.md']);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('a section appended to a document: the header only when the document is missing or blank', () => {
  const root = mkdtempSync(join(tmpdir(), 'report-writer-'));
  try {
    const doc = join(root, 'benchmarks.md');
    appendReportSection(doc, '# Benchmarks', '## run 1');
    appendReportSection(doc, '# Benchmarks', '## run 2');
    assert.equal(readFileSync(doc, 'utf8'), '# Benchmarks\n## run 1\n## run 2\n');
    writeFileSync(doc, '  \n');
    appendReportSection(doc, '# Benchmarks', '## run 3');
    assert.equal(readFileSync(doc, 'utf8'), '# Benchmarks\n## run 3\n');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
