/**
 * `@support-desk/connector-sdk/testing`: the test service (decision 16). Every connector operation
 * of the API served on loopback from memory, the operator's side as calls, faults on demand,
 * inspection, and the delivery-rules checker. See "Testing your connector" in the SDK README.
 */
export { startTestService } from './service.js';
export { findViolations, VIOLATION_RULES } from './violations.js';
export type * from './types.js';
