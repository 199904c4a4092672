/**
 * Writes docs/flags.md from the flag table (src/server/flag-docs.ts), the same table `--help`
 * prints. Run: npm run gen:flags (test/server/flags-doc.test.ts fails when the file is stale).
 */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { renderFlagsMarkdown } from '../src/server/flag-docs.js';

const out = resolve(process.cwd(), 'docs/flags.md');
writeFileSync(out, renderFlagsMarkdown());
process.stdout.write(`wrote ${out}\n`);
