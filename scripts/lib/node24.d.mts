/** Types of node24.mjs for the unit test. */
export declare const NODE_24_VERSION: string;
export declare const NODE_24_PACKAGES: Readonly<Record<string, { name: string; integrity: string }>>;
export declare function integrityOf(file: string): string;
export declare function node24Binary(cacheDir: string, options?: { platform?: string; env?: Record<string, string | undefined> }): Promise<string | null>;
