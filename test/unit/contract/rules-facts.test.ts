/**
 * firestore.rules' generated block of contract facts (scripts/rules-facts.mjs): the committed rules
 * are a fresh rendering of the contract module, a changed contract makes them stale, and the
 * hand-written rules cannot keep a copy of a fact beside the block.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as contract from '../../../functions/src/contract';
import { BEGIN_MARKER, END_MARKER, codePointsPattern, renderRules, rulesFacts, rulesPattern } from '../../../scripts/lib/rules-facts.mjs';

const ROOT = join(__dirname, '..', '..', '..');
const rules = readFileSync(join(ROOT, 'firestore.rules'), 'utf8');

/** The contract with some facts changed (what a contract edit without `node scripts/rules-facts.mjs` leaves behind). */
const doctored = (changes: Partial<Record<keyof typeof contract, unknown>>): typeof contract => ({ ...contract, ...changes }) as typeof contract;

/** The rules text outside the generated block. */
function handWritten(text: string): string {
  const begin = text.indexOf(BEGIN_MARKER);
  const end = text.indexOf('\n', text.indexOf(END_MARKER));
  return text.slice(0, begin) + text.slice(end);
}

test('firestore.rules is a fresh rendering of the contract (run `node scripts/rules-facts.mjs` after changing a fact)', () => {
  expect(renderRules(rules, contract)).toBe(rules);
});

test('every fact of the block is the contract value, and the hand-written rules call it', () => {
  const facts = rulesFacts(contract);
  expect(Object.fromEntries(facts.filter((f) => f.body === undefined).map((f) => [f.name, f.value]))).toEqual({
    topicNamePattern: 'projects/[a-z][a-z0-9-]{4,28}[a-z0-9]/topics/[A-Za-z][A-Za-z0-9._~%+-]{2,254}',
    replyMaxCodePoints: contract.REPLY_MAX_CODE_POINTS,
    replyCodePointsPattern: '(?s)(.{1000}){0,9}.{0,1000}',
    attachmentContentTypes: [...contract.ATTACHMENT_CONTENT_TYPES],
    attachmentMaxBytes: contract.ATTACHMENT_LIMITS.maxBytesPerFile,
    attachmentMaxCount: contract.ATTACHMENT_LIMITS.maxCount,
    attachmentNameMax: contract.ATTACHMENT_LIMITS.name,
    attachmentIdPattern: 'a_[A-Za-z0-9_-]{1,126}',
    sha256HexPattern: '[0-9a-f]{64}',
    documentIdMax: contract.CONSOLE_LIMITS.documentId,
    integrationNameMax: contract.CONSOLE_LIMITS.integrationName,
    externalCustomerIdMax: contract.CONSOLE_LIMITS.externalCustomerId,
    retentionDaysMin: contract.RETENTION_DAYS.min,
    retentionDaysMax: contract.RETENTION_DAYS.max,
    lifecycleWindowSecondsMin: contract.LIFECYCLE_LIMITS.windowSecondsMin,
    lifecycleWindowSecondsMax: contract.LIFECYCLE_LIMITS.windowSecondsMax,
    startAddressKinds: [...contract.START_ADDRESS_KINDS],
    startPhonePattern: '\\+[1-9][0-9]{6,14}',
    startEmailMax: contract.START_ADDRESS_LIMITS.emailMax,
    startHandlePattern: `[^\\p{Cc}]{1,${contract.START_ADDRESS_LIMITS.handleMax}}`,
    windowMarginSeconds: 60,
    templateParamMaxCodePoints: contract.TEMPLATE_PARAM_MAX_CODE_POINTS,
    templateParamCodePointsPattern: '(?s)(.{1000}){0,1}.{0,24}',
  });
  const outside = handWritten(rules);
  for (const fact of facts) expect(outside).toContain(fact.params === undefined ? `${fact.name}()` : `${fact.name}(`);
});

test("a template reply's params are checked one line per param, TEMPLATE_MAX_PARAMS of them", () => {
  const unrolled = rulesFacts({ ...contract, TEMPLATE_MAX_PARAMS: 3 }).find((f) => f.name === 'validTemplateParamValues');
  expect(unrolled?.body).toEqual(['names.size() <= 3', '(names.size() < 1 || validTemplateParam(p[names[0]]))', '(names.size() < 2 || validTemplateParam(p[names[1]]))', '(names.size() < 3 || validTemplateParam(p[names[2]]))']);
  const block = renderRules(rules, contract);
  expect(block).toContain(`(names.size() < ${contract.TEMPLATE_MAX_PARAMS} || validTemplateParam(p[names[${contract.TEMPLATE_MAX_PARAMS - 1}]]))`);
  expect(block).not.toContain(`validTemplateParam(p[names[${contract.TEMPLATE_MAX_PARAMS}]])`);
});

test.each([
  ['ATTACHMENT_LIMITS.maxBytesPerFile', { ATTACHMENT_LIMITS: { ...contract.ATTACHMENT_LIMITS, maxBytesPerFile: 20 * 1024 * 1024 } }, 'return 20971520;'],
  ['ATTACHMENT_LIMITS.name', { ATTACHMENT_LIMITS: { ...contract.ATTACHMENT_LIMITS, name: 300 } }, 'return 300;'],
  ['ATTACHMENT_CONTENT_TYPES', { ATTACHMENT_CONTENT_TYPES: [...contract.ATTACHMENT_CONTENT_TYPES, 'image/avif'] }, "'text/plain', 'image/avif']"],
  ['TOPIC_NAME_PATTERN', { TOPIC_NAME_PATTERN: /^projects\/[a-z][a-z0-9-]{4,28}[a-z0-9]\/topics\/[A-Za-z][A-Za-z0-9._~%+-]{2,100}$/ }, '{2,100}'],
  ['REPLY_MAX_CODE_POINTS', { REPLY_MAX_CODE_POINTS: 4_000 }, "'(?s)(.{1000}){0,3}.{0,1000}'"],
  ['CONSOLE_LIMITS.documentId', { CONSOLE_LIMITS: { ...contract.CONSOLE_LIMITS, documentId: 64 } }, 'return 64;'],
  ['CONSOLE_LIMITS.integrationName', { CONSOLE_LIMITS: { ...contract.CONSOLE_LIMITS, integrationName: 100 } }, 'return 100;'],
  ['CONSOLE_LIMITS.externalCustomerId', { CONSOLE_LIMITS: { ...contract.CONSOLE_LIMITS, externalCustomerId: 512 } }, 'return 512;'],
  ['RETENTION_DAYS', { RETENTION_DAYS: { min: 1, max: 365 } }, 'return 365;'],
  ['LIFECYCLE_LIMITS', { LIFECYCLE_LIMITS: { windowSecondsMin: 30, windowSecondsMax: 86_400 } }, 'return 86400;'],
  ['SHA256_HEX_PATTERN', { SHA256_HEX_PATTERN: /^[0-9A-F]{64}$/ }, "'[0-9A-F]{64}'"],
  ['ATTACHMENT_ID_PATTERN', { ATTACHMENT_ID_PATTERN: /^att_[A-Za-z0-9_-]{1,124}$/ }, "'att_[A-Za-z0-9_-]{1,124}'"],
] as const)('a changed %s makes the committed rules stale (the --check fails)', (_name, changes, expected) => {
  const fresh = renderRules(rules, doctored(changes));
  expect(fresh).not.toBe(rules);
  expect(fresh).toContain(expected);
  expect(handWritten(fresh)).toBe(handWritten(rules)); // only the block changes
});

test('a hand-edited block is stale: the generated values are the contract, not what the file says', () => {
  const edited = rules.replace('      return 10485760;', '      return 20971520;');
  expect(edited).not.toBe(rules);
  expect(renderRules(edited, contract)).toBe(rules);
});

test('a copy of a fact written by hand beside the block is refused', () => {
  const numberCopy = rules.replace('a.size <= attachmentMaxBytes()', 'a.size <= 10485760');
  expect(numberCopy).not.toBe(rules);
  expect(() => renderRules(numberCopy, contract)).toThrow(/10485760 is written by hand/);
  const stringCopy = rules.replace('a.contentType in attachmentContentTypes()', "a.contentType in ['image/png', 'image/jpeg']");
  expect(stringCopy).not.toBe(rules);
  expect(() => renderRules(stringCopy, contract)).toThrow(/'image\/png' is written by hand/);
  const patternCopy = rules.replace('t.matches(topicNamePattern())', "t.matches('projects/[a-z][a-z0-9-]{4,28}[a-z0-9]/topics/[A-Za-z][A-Za-z0-9._~%+-]{2,254}')");
  expect(patternCopy).not.toBe(rules);
  expect(() => renderRules(patternCopy, contract)).toThrow(/is written by hand/);
  const unused = rules.replace('d.externalCustomerId.size() <= externalCustomerIdMax()', 'd.externalCustomerId.size() <= 9');
  expect(() => renderRules(unused, contract)).toThrow(/externalCustomerIdMax\(\) is generated but never called/);
});

test("the unrolled attachment list checks exactly the contract's maxCount files", () => {
  // A contract with more files per reply than the rules check one by one is refused, not rendered.
  expect(() => renderRules(rules, doctored({ ATTACHMENT_LIMITS: { ...contract.ATTACHMENT_LIMITS, maxCount: 6 } }))).toThrow(/validAttachmentList checks the indices \[0, 1, 2, 3, 4\]: it must check each of 0 \.\. 5/);
  const missingLine = rules.replace('\n        && (l.size() < 5 || validAttachmentRef(l[4]))', '');
  expect(missingLine).not.toBe(rules);
  expect(() => renderRules(missingLine, contract)).toThrow(/validAttachmentList/);
});

test('the rules need their markers', () => {
  expect(() => renderRules(rules.replace(END_MARKER, '    // end'), contract)).toThrow(/exactly one block/);
  expect(() => renderRules(rules.replace(BEGIN_MARKER, '    // begin'), contract)).toThrow(/exactly one block/);
});

test('patterns: an anchored RegExp without flags, as a full match; code points in blocks of at most 1000', () => {
  expect(rulesPattern(/^a\/b$/)).toBe('a/b');
  expect(() => rulesPattern(/a$/)).toThrow(/anchored/);
  expect(() => rulesPattern(/^a/)).toThrow(/anchored/);
  expect(() => rulesPattern(/^a$/i)).toThrow(/flags/);
  for (const max of [1, 999, 1000, 1001, 10_000, 12_345]) {
    const pattern = codePointsPattern(max);
    const [, blocks, rest] = /^\(\?s\)\(\.\{1000\}\)\{0,(\d+)\}\.\{0,(\d+)\}$/.exec(pattern)?.map(Number) ?? [];
    expect(1000 * (blocks as number) + (rest as number)).toBe(max);
    expect(rest).toBeGreaterThanOrEqual(1);
    expect(rest).toBeLessThanOrEqual(1000);
    // The pattern (as JavaScript with the u flag: one code point per `.`) admits exactly max code points.
    const regexp = new RegExp(`^${pattern.replace('(?s)', '')}$`, 'su');
    expect(regexp.test('😀'.repeat(max))).toBe(true);
    expect(regexp.test('😀'.repeat(max + 1))).toBe(false);
  }
});
