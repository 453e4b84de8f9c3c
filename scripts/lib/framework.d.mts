/** Types of framework.mjs for the TypeScript tests that start functions-framework processes. */
export declare const FRAMEWORK_MAIN: string;

export declare function frameworkEnv(target: string, extra?: Record<string, string>): Record<string, string | undefined>;

export interface FrameworkFunction {
  target: string;
  url: string;
  pid: number;
  /** Everything the process printed so far (its structured log lines). */
  output(): string;
  stop(): Promise<void>;
}
export declare function startFunction(options: { target: string; port: number; env?: Record<string, string>; logFile?: string; echo?: (line: string) => void }): Promise<FrameworkFunction>;

/** Whether a rewrite's `source` matches `path`: exactly, or below a source ending in `/**`, as Hosting's globs do. */
export declare function rewriteMatches(source: string, path: string): boolean;
