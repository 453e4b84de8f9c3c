/** Types of test-suites.mjs for the unit test. */
export declare function integrationSuites(): string[];
export declare function splitSuites(suites: readonly string[]): { standalone: string[]; ownProject: string[]; serial: string[]; parallel: string[] };
export declare function parseTestArgs(args: readonly string[]): { flags: string[]; filters: RegExp[]; selects: (suite: string) => boolean };
