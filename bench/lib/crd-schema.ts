/** The custom resource bench schema and flag reader shared by bench/crd-create.ts and bench/crd-rules.ts. */

/** `--name N` from the command line, else def. */
export function arg(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
}

/** 30 fields: strings with bounds/patterns/enums, integers with bounds and defaults, booleans. */
export function schema(): { type: 'object'; properties: { spec: { type: 'object'; properties: Record<string, unknown> } } } {
  const props: Record<string, unknown> = {};
  for (let i = 1; i <= 30; i++) {
    const k = `f${String(i).padStart(2, '0')}`;
    if (i % 3 === 0) props[k] = { type: 'integer', minimum: 0, maximum: 1_000_000, default: i };
    else if (i % 5 === 0) props[k] = { type: 'string', enum: ['alpha', 'beta', 'gamma'] };
    else if (i % 7 === 0) props[k] = { type: 'boolean' };
    else props[k] = { type: 'string', maxLength: 64, pattern: '^[a-z0-9-]*$' };
  }
  return { type: 'object', properties: { spec: { type: 'object', properties: props } } };
}
