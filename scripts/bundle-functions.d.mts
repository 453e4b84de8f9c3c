/** Types of bundle-functions.mjs for its unit test. */
/** The handler modules bundled, relative to functions/src (`deliveries/http.ts`, ...). */
export declare const BUNDLED_HANDLERS: readonly string[];
export declare function bundleFunctions(libDir?: string): Promise<void>;
