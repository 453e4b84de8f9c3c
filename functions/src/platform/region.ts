/**
 * Where everything runs: europe-central2 (Warsaw), docs/contract.md#hosts-and-versions. The HTTP functions, the
 * triggers (in the Firestore database's location) and the task queue of delayed notifications.
 * The one place the region is written: the service imports it (functions/src/index.ts,
 * operations.ts, whose HTTP_REGION firebase.json's generated rewrites carry), and the scripts, the
 * bench and its no-op function read this line through scripts/lib/region.cjs (the console build
 * through scripts/build-console.mjs), so keep it a single `export const REGION = '<region>';`.
 */
export const REGION = 'europe-central2';
