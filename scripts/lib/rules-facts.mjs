/**
 * The contract facts firestore.rules apply, generated from the contract module
 * (functions/src/contract/index.ts), which the rules cannot import: one rules function per fact
 * (`function attachmentMaxCount() { return 5; }`), between the BEGIN / END GENERATED markers. The
 * hand-written rules call these functions and write none of the values themselves.
 *
 * `renderRules` also refuses rules that would let a copy drift back in: a fact function nobody
 * calls, a fact's string (a content type, a pattern) or a number of 10 or more written outside the
 * block, or an unrolled attachment list whose checks are not exactly `maxCount`.
 *
 * Written by `node scripts/rules-facts.mjs` (`--check` compares); test/unit/contract/rules-facts.test.ts
 * fails when the committed rules differ from a fresh rendering.
 */

export const BEGIN_MARKER = '    // BEGIN GENERATED contract facts';
export const END_MARKER = '    // END GENERATED contract facts';

const INDENT = '    ';

/**
 * A JavaScript RegExp of the contract as the pattern of rules' `matches()`, which is a full match
 * (RE2): the anchors dropped, `\/` unescaped. Only an anchored pattern without flags has the same
 * meaning there.
 */
export function rulesPattern(regexp) {
  const { source, flags } = regexp;
  if (flags !== '') throw new Error(`rules-facts: /${source}/${flags}: a pattern with flags has no rules equivalent`);
  if (!source.startsWith('^') || !source.endsWith('$') || source.endsWith('\\$')) {
    throw new Error(`rules-facts: /${source}/ must be anchored (^...$): rules' matches() is a full match`);
  }
  return source.slice(1, -1).replace(/\\\//g, '/');
}

/**
 * The pattern that counts a reply's code points up to `max` (RE2's `.` is one code point, `(?s)`
 * lets it match a newline). A counted repetition may not exceed 1000 in RE2, hence blocks of 1000
 * and a remainder: `(.{1000}){0,q}.{0,r}` with 1000 q + r = max.
 */
export function codePointsPattern(max) {
  if (!Number.isInteger(max) || max < 1) throw new Error(`rules-facts: a code-point limit must be a positive integer, not ${max}`);
  const blocks = Math.ceil(max / 1000) - 1;
  return `(?s)(.{1000}){0,${blocks}}.{0,${max - 1000 * blocks}}`;
}

/** A rules string literal. */
const rulesString = (text) => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
const rulesValue = (value) => (Array.isArray(value) ? `[${value.map(rulesValue).join(', ')}]` : typeof value === 'string' ? rulesString(value) : String(value));

/**
 * Each fact the rules apply: the rules function's name, what it is in the contract, and its value.
 * `contract` is the contract module's exports.
 */
export function rulesFacts(contract) {
  const {
    ATTACHMENT_CONTENT_TYPES,
    ATTACHMENT_ID_PATTERN,
    ATTACHMENT_LIMITS,
    CONSOLE_LIMITS,
    LIFECYCLE_LIMITS,
    REPLY_MAX_CODE_POINTS,
    RETENTION_DAYS,
    SHA256_HEX_PATTERN,
    START_ADDRESS_KINDS,
    START_ADDRESS_LIMITS,
    TEMPLATE_MAX_PARAMS,
    TEMPLATE_PARAM_MAX_CODE_POINTS,
    TOPIC_NAME_PATTERN,
    WINDOW_MARGIN_MS,
  } = contract;
  return [
    { name: 'topicNamePattern', from: 'TOPIC_NAME_PATTERN (without anchors: matches() is a full match)', value: rulesPattern(TOPIC_NAME_PATTERN) },
    { name: 'replyMaxCodePoints', from: 'REPLY_MAX_CODE_POINTS', value: REPLY_MAX_CODE_POINTS },
    { name: 'replyCodePointsPattern', from: 'REPLY_MAX_CODE_POINTS, counted in code points by RE2 (blocks of 1000: the longest counted repetition)', value: codePointsPattern(REPLY_MAX_CODE_POINTS) },
    { name: 'attachmentContentTypes', from: 'ATTACHMENT_CONTENT_TYPES', value: [...ATTACHMENT_CONTENT_TYPES] },
    { name: 'attachmentMaxBytes', from: 'ATTACHMENT_LIMITS.maxBytesPerFile', value: ATTACHMENT_LIMITS.maxBytesPerFile },
    { name: 'attachmentMaxCount', from: 'ATTACHMENT_LIMITS.maxCount', value: ATTACHMENT_LIMITS.maxCount },
    { name: 'attachmentNameMax', from: 'ATTACHMENT_LIMITS.name', value: ATTACHMENT_LIMITS.name },
    { name: 'attachmentIdPattern', from: 'ATTACHMENT_ID_PATTERN', value: rulesPattern(ATTACHMENT_ID_PATTERN) },
    { name: 'sha256HexPattern', from: 'SHA256_HEX_PATTERN', value: rulesPattern(SHA256_HEX_PATTERN) },
    { name: 'documentIdMax', from: 'CONSOLE_LIMITS.documentId', value: CONSOLE_LIMITS.documentId },
    { name: 'integrationNameMax', from: 'CONSOLE_LIMITS.integrationName', value: CONSOLE_LIMITS.integrationName },
    { name: 'externalCustomerIdMax', from: 'CONSOLE_LIMITS.externalCustomerId', value: CONSOLE_LIMITS.externalCustomerId },
    { name: 'retentionDaysMin', from: 'RETENTION_DAYS.min', value: RETENTION_DAYS.min },
    { name: 'retentionDaysMax', from: 'RETENTION_DAYS.max', value: RETENTION_DAYS.max },
    { name: 'lifecycleWindowSecondsMin', from: 'LIFECYCLE_LIMITS.windowSecondsMin', value: LIFECYCLE_LIMITS.windowSecondsMin },
    { name: 'lifecycleWindowSecondsMax', from: 'LIFECYCLE_LIMITS.windowSecondsMax', value: LIFECYCLE_LIMITS.windowSecondsMax },
    { name: 'startAddressKinds', from: 'START_ADDRESS_KINDS', value: [...START_ADDRESS_KINDS] },
    { name: 'startPhonePattern', from: 'START_ADDRESS_LIMITS.phonePattern (without anchors: matches() is a full match)', value: rulesPattern(START_ADDRESS_LIMITS.phonePattern) },
    { name: 'startEmailMax', from: 'START_ADDRESS_LIMITS.emailMax', value: START_ADDRESS_LIMITS.emailMax },
    { name: 'startHandlePattern', from: 'START_ADDRESS_LIMITS.handleMax code points without a control character (Unicode Cc), counted by RE2', value: `[^\\p{Cc}]{1,${START_ADDRESS_LIMITS.handleMax}}` },
    { name: 'windowMarginSeconds', from: 'WINDOW_MARGIN_MS / 1000', value: WINDOW_MARGIN_MS / 1000 },
    { name: 'templateParamMaxCodePoints', from: 'TEMPLATE_PARAM_MAX_CODE_POINTS', value: TEMPLATE_PARAM_MAX_CODE_POINTS },
    { name: 'templateParamCodePointsPattern', from: 'TEMPLATE_PARAM_MAX_CODE_POINTS, counted in code points by RE2', value: codePointsPattern(TEMPLATE_PARAM_MAX_CODE_POINTS) },
    {
      name: 'validTemplateParamValues',
      from: 'TEMPLATE_MAX_PARAMS: each value of a template reply\'s params (`names`: its template\'s), one line per param (rules cannot loop)',
      params: 'p, names',
      body: [
        `names.size() <= ${TEMPLATE_MAX_PARAMS}`,
        ...Array.from({ length: TEMPLATE_MAX_PARAMS }, (_, i) => `(names.size() < ${i + 1} || validTemplateParam(p[names[${i}]]))`),
      ],
    },
  ];
}

/** The generated block, markers included (no trailing newline). */
function renderFactsBlock(contract) {
  const lines = [
    `${BEGIN_MARKER}: written by \`node scripts/rules-facts.mjs\` from`,
    `${INDENT}// functions/src/contract/index.ts (rules cannot import it). Do not edit: change the contract and run`,
    `${INDENT}// the script; test/unit/contract/rules-facts.test.ts fails when this block is stale.`,
  ];
  for (const fact of rulesFacts(contract)) {
    // A fact is a value; a few are a function of arguments unrolled from a count (rules cannot loop).
    const body = fact.body === undefined ? rulesValue(fact.value) : fact.body.join(`\n${INDENT}    && `);
    lines.push(`${INDENT}// ${fact.from}`, `${INDENT}function ${fact.name}(${fact.params ?? ''}) {`, `${INDENT}  return ${body};`, `${INDENT}}`);
  }
  lines.push(END_MARKER);
  return lines.join('\n');
}

/** The rules' code without comments and string literals (what the checks below read). */
function codeOf(text) {
  return text.replace(/\/\/[^\n]*/g, '').replace(/'(?:[^'\\\n]|\\.)*'/g, "''");
}

/** The string literals of the rules' code (comments excluded), unescaped. */
function stringsOf(text) {
  const code = text.replace(/\/\/[^\n]*/g, '');
  return [...code.matchAll(/'((?:[^'\\\n]|\\.)*)'/g)].map((m) => m[1].replace(/\\(.)/g, '$1'));
}

/**
 * `rulesText` with its generated block replaced by a fresh one from `contract`. Throws when the
 * markers are missing, or when the hand-written rules (outside the block) copy a fact instead of
 * calling its function, leave a fact function unused, or unroll the attachment list to another
 * count than the contract's `maxCount`.
 */
export function renderRules(rulesText, contract) {
  const begin = rulesText.indexOf(BEGIN_MARKER);
  const endAt = rulesText.indexOf(END_MARKER);
  if (begin < 0 || endAt < begin || rulesText.indexOf(BEGIN_MARKER, begin + 1) >= 0) {
    throw new Error(`rules-facts: firestore.rules needs exactly one block from "${BEGIN_MARKER.trim()}" to "${END_MARKER.trim()}"`);
  }
  const lineEnd = rulesText.indexOf('\n', endAt);
  const end = lineEnd < 0 ? rulesText.length : lineEnd;
  const outside = rulesText.slice(0, begin) + rulesText.slice(end);
  const facts = rulesFacts(contract);
  const problems = [];

  const code = codeOf(outside);
  for (const fact of facts) {
    if (!new RegExp(`\\b${fact.name}\\(${fact.params === undefined ? '\\)' : ''}`).test(code)) problems.push(`${fact.name}() is generated but never called: apply the fact, or remove it from scripts/lib/rules-facts.mjs`);
  }
  // Numbers of 10 or more are facts (limits, lengths, bounds): each comes from the block. What is
  // left by hand is structure: `>= 1`, `2 *` (UTF-16 units per code point), list indices.
  for (const match of code.matchAll(/\b\d{2,}\b/g)) problems.push(`the number ${match[0]} is written by hand: a contract fact belongs in the generated block`);
  const factStrings = new Set(facts.flatMap((fact) => (Array.isArray(fact.value) ? fact.value : [fact.value])).filter((v) => typeof v === 'string'));
  for (const literal of stringsOf(outside)) {
    if (factStrings.has(literal)) problems.push(`'${literal}' is written by hand: call its generated function`);
  }
  // Rules cannot loop: the attachment list checks each index, exactly maxCount of them.
  const maxCount = facts.find((fact) => fact.name === 'attachmentMaxCount').value;
  const list = /function validAttachmentList\(l\) \{([\s\S]*?)\n {4}\}/.exec(outside)?.[1];
  const indices = list === undefined ? [] : [...list.matchAll(/validAttachmentRef\(l\[(\d+)\]\)/g)].map((m) => Number(m[1]));
  if (indices.join() !== Array.from({ length: maxCount }, (_, i) => i).join()) {
    problems.push(`validAttachmentList checks the indices [${indices.join(', ')}]: it must check each of 0 .. ${maxCount - 1} (the contract's maxCount)`);
  }
  if (problems.length > 0) throw new Error(`rules-facts: firestore.rules:\n- ${problems.join('\n- ')}`);
  return rulesText.slice(0, begin) + renderFactsBlock(contract) + rulesText.slice(end);
}
