/**
 * The flag sets (grouped as upstream kube-apiserver's --help) and the shape of one flag's
 * documentation; the rows themselves are in flag-rows-serving.ts and flag-rows-control.ts,
 * assembled and rendered by flag-docs.ts.
 */
export const FLAG_SETS = [
  'Generic',
  'Secure serving',
  'Node agents',
  'Etcd',
  'Auditing',
  'Features',
  'Authentication',
  'Authorization',
  'API enablement',
  'Admission',
  'Metrics',
  'Logs',
  'Controllers',
  'Storage',
  'Global',
] as const;
export type FlagSet = (typeof FLAG_SETS)[number];

export interface FlagDoc {
  name: string;
  set: FlagSet;
  /** pflag-style type word: string, int, bool, duration, strings, mapStringBool, ... ('' for a switch) */
  type: string;
  /** the default as written on the command line ('' when none) */
  default: string;
  usage: string;
}

/** one flag as written in the tables: name, pflag type word, default, usage */
export type Row = [name: string, type: string, def: string, usage: string];
