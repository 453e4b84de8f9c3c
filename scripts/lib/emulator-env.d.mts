/** Types of emulator-env.mjs for the unit test. */
export declare const FIRESTORE_EMULATOR_JVM_OPTIONS: string;
export declare const PUBSUB_EMULATOR_JVM_OPTIONS: string;
export declare function emulatorJvmEnv(env?: Record<string, string | undefined>): Record<string, string>;
export declare function offlineEmulatorEnv(workDir: string): Record<string, string>;
