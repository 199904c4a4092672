/** The release this server implements (API lifecycle, metrics stability, /version). */
export const RELEASE = { major: 1, minor: 32 } as const;
export const RELEASE_STRING = `${RELEASE.major}.${RELEASE.minor}`;
/** The gitVersion of /version and `--version`. */
export const GIT_VERSION = `v${RELEASE_STRING}.0-platform`;

/** The body of /version (upstream version.Info fields). */
export const VERSION_INFO = {
  major: String(RELEASE.major),
  minor: String(RELEASE.minor),
  gitVersion: GIT_VERSION,
  gitCommit: 'platform-apiserver',
  gitTreeState: 'clean',
  buildDate: '2026-11-22T00:00:00Z',
  goVersion: 'node' + process.versions.node,
  compiler: 'tsc',
  platform: `${process.platform}/${process.arch}`,
};

/** Whether release "x.y" is at or before the current one. */
export function reached(release: string): boolean {
  const [major, minor] = release.split('.').map(Number) as [number, number];
  return major < RELEASE.major || (major === RELEASE.major && minor <= RELEASE.minor);
}
