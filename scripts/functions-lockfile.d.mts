/** Types of functions-lockfile.mjs for its unit test. */
export declare const FUNCTIONS_LOCKFILE: string;
export declare function resolveIn(packages: Record<string, unknown>, from: string, name: string): string | null;
export declare function edgesOf(entry: Record<string, unknown>): Array<{ name: string; range: string; optional: boolean }>;
export declare function deriveFunctionsLockfile(rootLock: unknown, functionsPackage: unknown): unknown;
export declare function renderFunctionsLockfile(): string;
