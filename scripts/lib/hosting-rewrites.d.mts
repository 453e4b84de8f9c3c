/** Types of hosting-rewrites.mjs for the unit test. */
export interface RewriteOperation {
  path: string;
  functionName: string;
}
export interface FunctionRewrite {
  source: string;
  function: { functionId: string; region: string };
}
export declare function operationRewrites(operations: readonly RewriteOperation[], region: string): FunctionRewrite[];
export declare function renderFirebaseJson(firebaseJsonText: string, operations: readonly RewriteOperation[], region: string): string;
/** The path prefixes whose rewrites are generated (`/v1/`, `/console/v1/`). */
export declare const GENERATED_PREFIXES: readonly string[];
