/**
 * The contract module (functions/src/contract/index.ts) that the service, the console and the SDK
 * share: its rules, and how firestore.rules (which cannot import it) apply them. The rules' copy is
 * generated (scripts/rules-facts.mjs, test/unit/contract/rules-facts.test.ts); the tests here check
 * independently that what is generated means the contract's rule.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  allShards,
  codePointLength,
  CONVERSATION_LIST_SHARDS,
  conversationListShard,
  isValidTopicName,
  REPLY_MAX_CODE_POINTS,
  SHARD_COUNTS,
  shardOf,
  TOPIC_NAME_PATTERN,
} from '../../../functions/src/contract';
import { parseConfig } from '../../../functions/src/platform/config';
import { conversationIdFor } from '../../../functions/src/platform/ids';

const ROOT = join(__dirname, '..', '..', '..');
const rules = readFileSync(join(ROOT, 'firestore.rules'), 'utf8');

/** The body of the rules function `name` (up to the closing brace at its indentation). */
function rulesFunction(name: string): string {
  const match = new RegExp(`function ${name}\\([^)]*\\) \\{([\\s\\S]*?)\\n    \\}`).exec(rules);
  if (!match?.[1]) throw new Error(`firestore.rules has no function ${name}`);
  return match[1];
}

test('code points, not UTF-16 units: an emoji counts one, a lone surrogate one', () => {
  expect(codePointLength('')).toBe(0);
  expect(codePointLength('a😀b')).toBe(3);
  expect(codePointLength('😀'.repeat(REPLY_MAX_CODE_POINTS))).toBe(REPLY_MAX_CODE_POINTS);
  expect(codePointLength('\uD83D')).toBe(1);
});

test('the topic-name rule: a full Pub/Sub topic name, a valid project id and topic id', () => {
  expect(isValidTopicName('projects/demo-support-desk/topics/connector-notifications')).toBe(true);
  expect(isValidTopicName('projects/x/topics/connector-notifications')).toBe(false); // project id under 6
  expect(isValidTopicName('projects/demo-support-desk/topics/ab')).toBe(false); // topic id under 3
  expect(isValidTopicName('projects/demo-support-desk/topics/1abc')).toBe(false); // topic id starts with a digit
  expect(isValidTopicName('projects/demo-support-desk/topics/abc\n')).toBe(false);
  expect(isValidTopicName(' projects/demo-support-desk/topics/abc')).toBe(false);
});

test("firestore.rules applies the contract's topic-name rule (its generated copy: rules cannot import)", () => {
  expect(rulesFunction('validTopic')).toContain('t.matches(topicNamePattern())');
  const copy = /return '([^']+)';/.exec(rulesFunction('topicNamePattern'))?.[1];
  // The rules' matches() is a full match: the same pattern without the anchors, `/` unescaped.
  const contract = TOPIC_NAME_PATTERN.source.replace(/^\^/, '').replace(/\$$/, '').replace(/\\\//g, '/');
  expect(copy?.replace(/^\(\?s\)/, '')).toBe(contract);
  expect(TOPIC_NAME_PATTERN.flags).toBe('');
});

test("firestore.rules limits a reply to the contract's code points", () => {
  const body = rulesFunction('validReplyText');
  // size() counts UTF-16 units: up to the limit is certainly fine, over twice the limit certainly not;
  // in between, blocks of `.` (one code point each in RE2) count to exactly the limit.
  expect(body).toContain('(t.size() <= replyMaxCodePoints() || (t.size() <= 2 * replyMaxCodePoints() && t.matches(replyCodePointsPattern())))');
  expect(rulesFunction('replyMaxCodePoints')).toContain(`return ${REPLY_MAX_CODE_POINTS};`);
  const blocks = /\(\?s\)\(\.\{(\d+)\}\)\{0,(\d+)\}\.\{0,(\d+)\}/.exec(rulesFunction('replyCodePointsPattern'));
  expect(blocks).not.toBeNull();
  const [, block, repeat, rest] = (blocks ?? []).map(Number);
  expect((block as number) * (repeat as number) + (rest as number)).toBe(REPLY_MAX_CODE_POINTS);
});

test('shards: every id lands in 0 .. count-1, and allShards lists exactly those', () => {
  for (const count of [1, 2, 8, 64, 1024]) {
    expect(allShards(count)).toEqual(Array.from({ length: count }, (_, i) => i));
    for (let i = 0; i < 200; i++) {
      const shard = shardOf(`d_${i}_${count}`, count);
      expect(Number.isInteger(shard) && shard >= 0 && shard < count).toBe(true);
    }
  }
});

test("the console's conversation list cannot miss a conversation, whatever the service's configuration", () => {
  // What the console reads (console/src/conversations.ts): every shard below the contract's count.
  const consoleReads = new Set(allShards(CONVERSATION_LIST_SHARDS));
  // What the service writes (messages/store.ts): conversationListShard, which no configuration
  // enters. Every allowed LIST_SHARDS parses, and the shards written stay the ones the console reads.
  const written = new Set<number>();
  for (let listShards = SHARD_COUNTS.list.min; listShards <= SHARD_COUNTS.list.max; listShards++) {
    expect(parseConfig({ LIST_SHARDS: String(listShards) }).listShards).toBe(listShards);
  }
  for (let i = 0; i < 2_000; i++) written.add(conversationListShard(conversationIdFor('i_1', `chat-${i}`)));
  expect([...written].sort((a, b) => a - b)).toEqual([...consoleReads]); // all used, none outside
  const messagesStore = readFileSync(join(ROOT, 'functions', 'src', 'messages', 'store.ts'), 'utf8');
  expect(messagesStore).toMatch(/listShard = conversationListShard\(/);
  expect(messagesStore).not.toMatch(/listShards/);
});

test('the shard counts the service may be configured with are the contract ranges', () => {
  expect(parseConfig({})).toMatchObject({ queueShards: SHARD_COUNTS.queue.default, listShards: SHARD_COUNTS.list.default });
  for (const [variable, range] of [['QUEUE_SHARDS', SHARD_COUNTS.queue], ['LIST_SHARDS', SHARD_COUNTS.list]] as const) {
    expect(() => parseConfig({ [variable]: String(range.max) })).not.toThrow();
    expect(() => parseConfig({ [variable]: String(range.max + 1) })).toThrow(variable);
    expect(() => parseConfig({ [variable]: String(range.min - 1) })).toThrow(variable);
  }
});
