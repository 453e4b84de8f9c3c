/** Types of test-results.mjs for the unit test. */
import type { ChildProcess } from 'node:child_process';
export declare const hungMarker: (outputFile: string) => string;
export declare function resetTestResults(): void;
export declare function jestResultArgs(name: string): string[];
export declare function stopJestIfItHangs(child: ChildProcess, args: readonly string[], options?: { graceMs?: number }): void;
export declare function printFailures(): void;
export declare function recordFailure(run: string, message: string, dir?: string): void;
export declare function collectFailures(dir?: string): string[];
