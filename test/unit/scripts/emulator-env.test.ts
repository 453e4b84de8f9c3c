/**
 * The emulators' JVM options (scripts/lib/emulator-env.mjs, docs/toolchain.md#emulator-jvm): the
 * Firestore emulator's through the variable only the `java` launcher reads, the Pub/Sub emulator's
 * through the one only its launch script reads; a value the environment already has wins.
 */
import { FIRESTORE_EMULATOR_JVM_OPTIONS, PUBSUB_EMULATOR_JVM_OPTIONS, emulatorJvmEnv } from '../../../scripts/lib/emulator-env.mjs';

test('by default: the Firestore JVM inlines less (both compilers), the Pub/Sub JVM runs the client compiler only', () => {
  expect(emulatorJvmEnv({})).toEqual({ JDK_JAVA_OPTIONS: FIRESTORE_EMULATOR_JVM_OPTIONS, CLOUD_PUBSUB_EMULATOR_OPTS: PUBSUB_EMULATOR_JVM_OPTIONS });
  expect(PUBSUB_EMULATOR_JVM_OPTIONS).toBe('-XX:TieredStopAtLevel=1');
  expect(FIRESTORE_EMULATOR_JVM_OPTIONS.split(' ')).toEqual(['-XX:MaxInlineLevel=6', '-XX:FreqInlineSize=100', '-XX:InlineSmallCode=1000', '-XX:MaxNodeLimit=30000']);
  // Neither compiler is switched off for Firestore: its hot code is worth C2's work over a run.
  expect(FIRESTORE_EMULATOR_JVM_OPTIONS).not.toContain('TieredStopAtLevel');
});

test("the environment's own values win, even empty (the JVM's defaults); JAVA_TOOL_OPTIONS, which every JVM and JDK tool reads, is never set", () => {
  expect(emulatorJvmEnv({ JDK_JAVA_OPTIONS: '', CLOUD_PUBSUB_EMULATOR_OPTS: '-Xmx512m' })).toEqual({});
  expect(emulatorJvmEnv({ JDK_JAVA_OPTIONS: '-Xmx2g' })).toEqual({ CLOUD_PUBSUB_EMULATOR_OPTS: PUBSUB_EMULATOR_JVM_OPTIONS });
  expect(emulatorJvmEnv({ CLOUD_PUBSUB_EMULATOR_OPTS: '' })).toEqual({ JDK_JAVA_OPTIONS: FIRESTORE_EMULATOR_JVM_OPTIONS });
  expect(Object.keys(emulatorJvmEnv({}))).not.toContain('JAVA_TOOL_OPTIONS');
});
