/**
 * The modules a compiled entry loads through static imports (dist/, after `npm run build`; tsc
 * erases type-only imports): what a thread pays for before it runs a line of its own.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

export const DIST = resolve(process.cwd(), 'dist');
const STATIC_IMPORT = /^\s*(?:import|export)\s+(?:[^'"]*?\sfrom\s+)?['"]([^'"]+)['"]/gm;

export interface ImportGraph {
  /** the files reached, relative to dist/ */
  files: Set<string>;
  /** each package imported, with the first file (relative to dist/) that imports it */
  packages: Map<string, string>;
}

export function staticImports(entry: string): ImportGraph {
  const seen = new Set<string>();
  const packages = new Map<string, string>();
  const queue = [join(DIST, entry)];
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    if (seen.has(file)) continue;
    seen.add(file);
    for (const [, spec] of readFileSync(file, 'utf8').matchAll(STATIC_IMPORT)) {
      if (spec!.startsWith('.')) queue.push(resolve(dirname(file), spec!));
      else if (!spec!.startsWith('node:') && !packages.has(spec!)) packages.set(spec!, file.slice(DIST.length + 1));
    }
  }
  return { files: new Set([...seen].map((f) => f.slice(DIST.length + 1))), packages };
}
