/**
 * The one report writer of the bench harnesses. A report is markdown for a person, JSON for a
 * program (when the harness has a schema for it: bench/load/report.ts) and chart files; it is
 * written either into a directory (report.md, report.json, the charts: the load CLI's --out) or
 * appended as one section to a markdown document that keeps every run (docs/benchmarks.md: the
 * wrk mode's --record, bench/scaling.ts). Nothing else in bench/ writes report files.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface ReportFiles {
  /** report.md: written with a final newline */
  markdown: string;
  /** report.json: one-space indented, final newline (the load report's documented layout) */
  json?: unknown;
  /** further files by name (SVG charts), written as given */
  charts?: Readonly<Record<string, string>>;
}

/** Writes the report into dir (created if missing); returns the path of report.md. */
export function writeReportDir(dir: string, files: ReportFiles): string {
  mkdirSync(dir, { recursive: true });
  if (files.json !== undefined) writeFileSync(join(dir, 'report.json'), JSON.stringify(files.json, null, 1) + '\n');
  const md = join(dir, 'report.md');
  writeFileSync(md, files.markdown + '\n');
  for (const [name, text] of Object.entries(files.charts ?? {})) writeFileSync(join(dir, name), text);
  return md;
}

/** Appends a section to a markdown document, first writing header if the document is missing or blank. */
export function appendReportSection(doc: string, header: string, section: string): void {
  if (!existsSync(doc) || !readFileSync(doc, 'utf8').trim()) writeFileSync(doc, header + '\n');
  appendFileSync(doc, section + '\n');
}
