/**
 * The CEL runtime, loaded on first use. Every module of a thread's graph is loaded before that
 * thread serves (a server start loads three: the front and two shard actors, each ~130 ms of CPU
 * for @bufbuild/cel), while most servers compile no expression at all. So the modules of src/cel
 * that other layers import statically (compile, env, values, types) load nothing of
 * @bufbuild/cel themselves: cel() and celEnvs() load it synchronously the first time an
 * expression is compiled or a value converted (require of an ES module: Node ≥ 20.19), and the
 * same module instances as a static import would (one module map per thread).
 */
import { createRequire } from 'node:module';
import type * as Bufbuild from './bufbuild.js';
import type { CelEnv } from '@bufbuild/cel';

const load = createRequire(import.meta.url);
let bufbuild: typeof Bufbuild | undefined;
/** what ./envs.ts exports (a type of its own: ./envs.ts imports the libraries, which import this module) */
interface Envs {
  RULE_ENV: CelEnv;
  PLAIN_ENV: CelEnv;
}
let envs: Envs | undefined;
let standard: ReturnType<typeof Bufbuild.celEnv> | undefined;

/** @bufbuild/cel (and the protobuf helpers of ./bufbuild.ts). */
export function cel(): typeof Bufbuild {
  bufbuild ??= load('./bufbuild.js') as typeof Bufbuild;
  return bufbuild;
}

/** The environments of ./envs.ts (the Kubernetes libraries, metered and not). */
export function celEnvs(): Envs {
  envs ??= load('./envs.js') as Envs;
  return envs;
}

/** The standard environment (celEnv() without extensions: authentication, authorization and admission expressions). */
export function standardCelEnv(): ReturnType<typeof Bufbuild.celEnv> {
  standard ??= cel().celEnv();
  return standard;
}

/** Whether this thread has loaded the CEL runtime (test/cel/lazy.test.ts). */
export function celLoaded(): boolean {
  return bufbuild !== undefined;
}
