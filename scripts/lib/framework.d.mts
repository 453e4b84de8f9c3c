/** Types of framework.mjs for the TypeScript tests that start functions-framework processes. */
export declare const FRAMEWORK_MAIN: string;

/** Suites about the runtime itself rather than one operation. */
export declare const RUNTIME_SUITES: readonly string[];
/** The framework phase's suites: every operation's (from the catalogue), the console function's, then the runtime's. */
export declare function frameworkSuites(): string[];

export interface HostingRewrite {
  path: string;
  target: string;
}
export declare function hostingRewrites(): HostingRewrite[];

export declare function frameworkEnv(target: string, extra?: Record<string, string>): Record<string, string | undefined>;

export interface FrameworkFunction {
  target: string;
  url: string;
  pid: number;
  /** Everything the process printed so far (its structured log lines). */
  output(): string;
  stop(): Promise<void>;
}
export declare function startFunction(options: { target: string; port: number; env?: Record<string, string>; logFile?: string }): Promise<FrameworkFunction>;

/** Whether a rewrite's `source` matches `path`: exactly, or below a source ending in `/**`, as Hosting's globs do. */
export declare function rewriteMatches(source: string, path: string): boolean;

export declare function startRouter(options: { port: number; routes: Array<{ path: string; url: string }> }): Promise<{
  url: string;
  /** Calls `listener(path)` for every request the router receives (the matched rewrite's source, else the path). */
  onRequest(listener: (path: string) => void): void;
  close(): Promise<void>;
}>;
