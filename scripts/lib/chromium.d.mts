/** Types of chromium.mjs for the browser suites' helpers. */
export declare const CHROMIUM_PATH: string;
export declare const CHROMIUM_LAUNCH_OPTIONS: Readonly<{ executablePath: string; headless: boolean; args: readonly string[] }>;
export declare const SHARED_BROWSER_ENV: string;
export declare function drivesBrowser(source: string): boolean;
