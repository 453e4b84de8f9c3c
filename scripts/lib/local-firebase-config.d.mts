/** Types of local-firebase-config.mjs for the unit test. */
export interface HostingHeaderRule {
  headers: Array<{ key: string; value: string }>;
  [key: string]: unknown;
}
export interface FirebaseConfig {
  hosting?: { headers?: HostingHeaderRule[]; [key: string]: unknown };
  emulators?: Record<string, { host?: string; port?: number }>;
  [key: string]: unknown;
}
export declare function emulatorOrigins(firebaseJson: FirebaseConfig): string[];
export declare function withConnectSources(policy: string, sources: readonly string[]): string;
export declare function contentSecurityPolicies(firebaseJson: FirebaseConfig): string[];
export declare function localFirebaseConfig(firebaseJson: FirebaseConfig): FirebaseConfig;
export declare function writeLocalFirebaseConfig(root: string, firebaseJson: FirebaseConfig): string[];
