/** Types of release-check.mjs for its unit test. */
export declare const TAG_PREFIX: string;
export declare function versionOfTag(tag: string): string | null;
export declare function sdkVersionOf(versionSource: string): string | null;
export declare function changelogSection(changelog: string, version: string): { heading: string; released: boolean } | null;
export declare function entryFiles(pkg: { exports?: unknown; bin?: unknown }): string[];
export interface ReleaseInput {
  tag: string;
  pkg: { version: string; exports?: unknown; bin?: unknown; repository?: string | { url?: string; directory?: string } };
  versionSource: string;
  changelog: string;
  packedFiles: readonly string[];
  repository: string | undefined;
}
export declare function releaseProblems(input: ReleaseInput): string[];
