/** The release this server implements (API lifecycle, metrics stability, /version). */
export const RELEASE = { major: 1, minor: 32 } as const;
export const RELEASE_STRING = `${RELEASE.major}.${RELEASE.minor}`;

/** Whether release "x.y" is at or before the current one. */
export function reached(release: string): boolean {
  const [major, minor] = release.split('.').map(Number) as [number, number];
  return major < RELEASE.major || (major === RELEASE.major && minor <= RELEASE.minor);
}
