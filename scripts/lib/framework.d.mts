/** Types of framework.mjs for the TypeScript tests that start functions-framework processes. */
export declare const FRAMEWORK_MAIN: string;

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

export declare function startRouter(options: { port: number; routes: Array<{ path: string; url: string }> }): Promise<{ url: string; close(): Promise<void> }>;
