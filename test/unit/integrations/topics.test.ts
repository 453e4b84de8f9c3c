/**
 * The replies topic check (functions/src/integrations/topics.ts): classification with fake topics for
 * every Pub/Sub answer, including the permission paths the emulator cannot produce; when the
 * integrations trigger re-checks; what the outbox does with a recorded status.
 */
import { Timestamp, type Firestore } from 'firebase-admin/firestore';
import { PUBLISH_PERMISSION, TOPIC_RECHECK_AFTER_MS, classifyTopic, knownTopicProblem, type CheckableTopic } from '../../../functions/src/integrations/topics';
import { topicToCheck } from '../../../functions/src/integrations/triggers';

const TOPIC = 'projects/owner-project/topics/replies';

const grpcError = (code: number, message = 'boom') => Object.assign(new Error(`${code} ${message}`), { code });

function fakeTopic(permissions: () => Promise<unknown>, exists: () => Promise<unknown> = async () => [true]): CheckableTopic & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    iam: {
      testPermissions: async (perms: string[]) => {
        calls.push(`testPermissions:${perms.join(',')}`);
        return permissions();
      },
    },
    exists: async () => {
      calls.push('exists');
      return exists();
    },
  };
}

const prod = { emulator: false };
const emulator = { emulator: true };

describe('classifyTopic', () => {
  test('publish permission granted: ok, without looking further', async () => {
    const topic = fakeTopic(async () => [{ [PUBLISH_PERMISSION]: true }, {}]);
    expect(await classifyTopic(TOPIC, topic, prod)).toEqual({ status: 'ok', message: expect.stringContaining(TOPIC) });
    expect(topic.calls).toEqual([`testPermissions:${PUBLISH_PERMISSION}`]);
  });

  test.each([
    ['an empty answer', async () => []],
    ['an empty permissions map', async () => [{}, {}]],
    ['publish: false', async () => [{ [PUBLISH_PERMISSION]: false }, {}]],
    ['an empty raw permissions list', async () => [[]]],
  ])('not granted (%s) on an existing topic: permission_denied', async (_what, answer) => {
    const check = await classifyTopic(TOPIC, fakeTopic(answer, async () => [true]), prod);
    expect(check.status).toBe('permission_denied');
    expect(check.message).toMatch(/roles\/pubsub\.publisher/);
  });

  test('not granted and the topic does not exist: not_found', async () => {
    expect((await classifyTopic(TOPIC, fakeTopic(async () => [{}], async () => [false]), prod)).status).toBe('not_found');
  });

  test('not granted and the existence check itself is denied (publisher-only grant elsewhere): permission_denied', async () => {
    const topic = fakeTopic(async () => [{}], async () => Promise.reject(grpcError(7)));
    expect((await classifyTopic(TOPIC, topic, prod)).status).toBe('permission_denied');
  });

  test.each([
    [7, 'permission_denied'],
    [5, 'not_found'],
    [3, 'invalid'],
  ])('testPermissions throwing gRPC code %i: %s', async (code, status) => {
    const topic = fakeTopic(async () => Promise.reject(grpcError(code)));
    expect((await classifyTopic(TOPIC, topic, prod)).status).toBe(status);
    expect(topic.calls).not.toContain('exists');
  });

  test.each([
    ['a malformed name', 'my-topic'],
    ['a too short project id', 'projects/abc/topics/replies'],
    ['a subscription name', 'projects/owner-project/subscriptions/replies'],
  ])('%s is invalid without calling Pub/Sub', async (_what, name) => {
    const topic = fakeTopic(async () => [{ [PUBLISH_PERMISSION]: true }]);
    expect(await classifyTopic(name, topic, prod)).toEqual({ status: 'invalid', message: expect.stringContaining('projects/<project>/topics/<topic>') });
    expect(topic.calls).toEqual([]);
  });

  test('UNIMPLEMENTED under the emulator: cannot verify, so the existing topic is assumed publishable (documented)', async () => {
    const check = await classifyTopic(TOPIC, fakeTopic(async () => Promise.reject(grpcError(12)), async () => [true]), emulator);
    expect(check).toEqual({ status: 'ok', message: expect.stringMatching(/not verified.*emulator/) });
    expect((await classifyTopic(TOPIC, fakeTopic(async () => Promise.reject(grpcError(12)), async () => [false]), emulator)).status).toBe('not_found');
  });

  test('UNIMPLEMENTED outside the emulator, and transient errors, are thrown (the trigger retries)', async () => {
    await expect(classifyTopic(TOPIC, fakeTopic(async () => Promise.reject(grpcError(12))), prod)).rejects.toMatchObject({ code: 12 });
    await expect(classifyTopic(TOPIC, fakeTopic(async () => Promise.reject(grpcError(14))), prod)).rejects.toMatchObject({ code: 14 });
    await expect(classifyTopic(TOPIC, fakeTopic(async () => [{}], async () => Promise.reject(grpcError(4))), prod)).rejects.toMatchObject({ code: 4 });
  });
});

describe('topicToCheck (integrations trigger)', () => {
  const withReplies = (replies: Record<string, unknown>) => ({ name: 'x', replies });

  test('a new integration with a topic is checked', () => {
    expect(topicToCheck(undefined, withReplies({ enabled: true, topic: TOPIC }))).toBe(TOPIC);
  });

  test('a changed topic is checked, an unchanged checked one is not (no trigger loop on the status write)', () => {
    const checked = withReplies({ enabled: true, topic: TOPIC, topicStatus: 'ok' });
    expect(topicToCheck(checked, withReplies({ enabled: true, topic: 'projects/owner-project/topics/other' }))).toBe('projects/owner-project/topics/other');
    expect(topicToCheck(withReplies({ enabled: true, topic: TOPIC }), checked)).toBeNull();
    expect(topicToCheck(checked, { ...checked, active: false })).toBeNull();
  });

  test('removing the status asks for a re-check; no topic, nothing to check', () => {
    expect(topicToCheck(withReplies({ enabled: true, topic: TOPIC, topicStatus: 'permission_denied' }), withReplies({ enabled: true, topic: TOPIC }))).toBe(TOPIC);
    expect(topicToCheck(undefined, withReplies({ enabled: false, topic: null }))).toBeNull();
    expect(topicToCheck(undefined, { name: 'no replies at all' })).toBeNull();
  });
});

describe('knownTopicProblem (outbox)', () => {
  const db = {} as Firestore; // a recent status is used as recorded: no Firestore, no Pub/Sub
  const now = 1_800_000_000_000;
  const recent = Timestamp.fromMillis(now - TOPIC_RECHECK_AFTER_MS + 1_000);

  test('not checked yet, or ok: publish', async () => {
    expect(await knownTopicProblem(db, 'ws', 'i', { topic: TOPIC }, now)).toBeNull();
    expect(await knownTopicProblem(db, 'ws', 'i', { topic: TOPIC, topicStatus: 'ok', topicCheckedAt: recent }, now)).toBeNull();
  });

  test.each([
    ['not_found', 'topic_not_found'],
    ['permission_denied', 'topic_permission_denied'],
    ['invalid', 'topic_invalid'],
  ])('a recent %s status is recorded on the delivery as %s instead of publishing', async (status, code) => {
    expect(await knownTopicProblem(db, 'ws', 'i', { topic: TOPIC, topicStatus: status, topicMessage: 'why', topicCheckedAt: recent }, now)).toEqual({ code, detail: 'why' });
  });
});
