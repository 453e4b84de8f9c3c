/**
 * Where everything runs: europe-central2 (Warsaw), docs/contract.md#hosts-and-versions. The HTTP functions, the
 * triggers (in the Firestore database's location) and the task queue of delayed notifications.
 * functions/src/index.ts writes the same value out (declaring the functions must not load this
 * module's neighbours); the functions manifest test checks that they agree.
 */
export const REGION = 'europe-central2';
