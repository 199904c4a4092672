#!/usr/bin/env node
/**
 * Entry point (`npm start`, the `platform-apiserver` bin, the test and bench harnesses): sets
 * the heap up, then loads the command line (src/server/cli.ts). The rest is loaded by a dynamic
 * import on purpose: loading the module graph allocates enough to grow V8's young generation,
 * so src/server/young-generation.ts must run before it, which a static import cannot ensure
 * (every static import is loaded before any module runs). src/server/heap-growth.ts caps the
 * old generation's growing factor of every thread.
 */
import './server/young-generation.js';
import './server/heap-growth.js';

await import('./server/cli.js');
