/**
 * The desk CLI's command line (console/cli/args.ts, docs/cli.md): each command's arguments and
 * options, the identity and workspace defaults, and the usage errors (exit 2 in the CLI).
 */
import { DEFAULT_WAIT_SECONDS, DEMO_WORKSPACE, START_WAIT_SECONDS, FLAG_OPTIONS, parseArgs, usage, VALUE_OPTIONS, type CommandName, type Invocation } from '../../../console/cli/args';
import { REPLY_MAX_CODE_POINTS } from '../../../functions/src/contract';

function ok(argv: string[], env: Record<string, string> = {}): Invocation {
  const result = parseArgs(argv, env);
  if (!result.ok) throw new Error(`expected ${JSON.stringify(argv)} to parse: ${result.error}`);
  return result.invocation;
}

function usageError(argv: string[], env: Record<string, string> = {}): string {
  const result = parseArgs(argv, env);
  if (result.ok) throw new Error(`expected ${JSON.stringify(argv)} to be refused, got ${JSON.stringify(result.invocation)}`);
  return result.error;
}

describe('commands', () => {
  test('no arguments, --help and help ask for the usage', () => {
    expect(ok([]).command).toEqual({ name: 'help', topic: undefined });
    expect(ok(['--help']).command).toEqual({ name: 'help', topic: undefined });
    expect(ok(['help', 'reply']).command).toEqual({ name: 'help', topic: 'reply' });
    expect(ok(['reply', '--help']).command).toEqual({ name: 'help', topic: 'reply' });
  });

  test('conversations takes a limit (default 20)', () => {
    expect(ok(['conversations']).command).toEqual({ name: 'conversations', limit: 20 });
    expect(ok(['conversations', '--limit', '5']).command).toEqual({ name: 'conversations', limit: 5 });
    expect(usageError(['conversations', '--limit', '0'])).toBe('--limit takes a whole number from 1 to 200, not "0"');
    expect(usageError(['conversations', 'extra'])).toBe('conversations takes no arguments, not "extra"');
  });

  test('reply: text, repeated files (in order), and the wait', () => {
    expect(ok(['reply', 'c_1', '--text', 'Hello there']).command).toEqual({ name: 'reply', conversationId: 'c_1', text: 'Hello there', files: [], waitSeconds: DEFAULT_WAIT_SECONDS });
    expect(ok(['reply', 'c_1', '--file', 'a.png', '--file=b.pdf', '--no-wait']).command).toEqual({ name: 'reply', conversationId: 'c_1', text: '', files: ['a.png', 'b.pdf'], waitSeconds: 0 });
    expect(ok(['reply', '--text=', 'c_1', '--file', 'a.png', '--wait-seconds', '40']).command).toMatchObject({ text: '', conversationId: 'c_1', waitSeconds: 40 });
    // A value may start with a single dash; `--` ends the options.
    expect(ok(['reply', 'c_1', '--text', '-1 is a number']).command).toMatchObject({ text: '-1 is a number' });
    expect(ok(['reply', '--text', 'x', '--', '--odd-id']).command).toMatchObject({ conversationId: '--odd-id' });
  });

  test('reply: usage errors', () => {
    expect(usageError(['reply'])).toBe('reply needs <conversationId>');
    expect(usageError(['reply', 'c_1'])).toBe('reply needs --text "..." or at least one --file <path> (or both)');
    expect(usageError(['reply', 'c_1', '--text'])).toBe('--text needs a value');
    expect(usageError(['reply', 'c_1', '--text', '--json'])).toBe('--text needs a value');
    expect(usageError(['reply', 'c_1', '--text', 'a', '--text', 'b'])).toBe('--text is given twice');
    expect(usageError(['reply', 'c_1', '--text', 'a', '--no-wait', '--wait-seconds', '3'])).toBe('--no-wait and --wait-seconds contradict each other');
    expect(usageError(['reply', 'c_1', 'c_2', '--text', 'a'])).toBe('reply takes <conversationId>, not "c_2"');
    expect(usageError(['reply', 'c_1', '--text', 'a', '--limit', '3'])).toBe('reply does not take --limit');
    expect(usageError(['reply', 'c_1', '--text', 'a', '--colour', 'red'])).toBe('unknown option --colour');
  });

  test('status, cancel and resend', () => {
    expect(ok(['status', 'c_1']).command).toEqual({ name: 'status', conversationId: 'c_1', replyId: undefined });
    expect(ok(['status', 'c_1', 'r_1']).command).toEqual({ name: 'status', conversationId: 'c_1', replyId: 'r_1' });
    expect(ok(['cancel', 'c_1', 'r_1']).command).toEqual({ name: 'cancel', conversationId: 'c_1', replyId: 'r_1', waitSeconds: DEFAULT_WAIT_SECONDS });
    expect(ok(['resend', 'c_1', 'r_1', '--no-wait']).command).toEqual({ name: 'resend', conversationId: 'c_1', replyId: 'r_1', waitSeconds: 0 });
    expect(usageError(['cancel', 'c_1'])).toBe('cancel needs <conversationId> <replyId>');
    expect(usageError(['status'])).toBe('status needs <conversationId>');
    expect(usageError(['status', 'c_1', '--no-wait'])).toBe('status does not take --no-wait');
    expect(usageError(['status', ''])).toBe('<conversationId> may not be empty');
  });

  test('capabilities: print, or attachments on with limits / off, and the lifecycle', () => {
    expect(ok(['capabilities', 'int-1']).command).toEqual({ name: 'capabilities', integrationId: 'int-1', attachments: undefined, contentTypes: undefined, maxBytes: undefined, maxCount: undefined, lifecycle: undefined });
    expect(ok(['capabilities', 'int-1', '--attachments', 'on', '--types', 'PNG, jpg,pdf,jpeg', '--max-mb', '2.5', '--max-files', '3']).command).toEqual({
      name: 'capabilities',
      integrationId: 'int-1',
      attachments: 'on',
      contentTypes: ['image/png', 'image/jpeg', 'application/pdf'],
      maxBytes: 2.5 * 1024 * 1024,
      maxCount: 3,
      lifecycle: undefined,
    });
    expect(ok(['capabilities', 'int-1', '--attachments=off', '--lifecycle', 'off']).command).toMatchObject({ attachments: 'off', lifecycle: 'off' });
    expect(usageError(['capabilities', 'int-1', '--attachments', 'yes'])).toBe('--attachments takes on or off, not "yes"');
    expect(usageError(['capabilities', 'int-1', '--types', 'png'])).toBe('--types go with --attachments on');
    expect(usageError(['capabilities', 'int-1', '--attachments', 'off', '--max-files', '2'])).toBe('--max-files go with --attachments on');
    expect(usageError(['capabilities', 'int-1', '--attachments', 'on', '--types', 'png,bmp'])).toBe('--types takes a comma-separated list of png, jpeg, jpg, webp, gif, pdf, text, txt, not "bmp"');
    expect(usageError(['capabilities', 'int-1', '--attachments', 'on', '--max-mb', 'ten'])).toBe('--max-mb takes a positive number of megabytes, not "ten"');
    expect(usageError(['capabilities'])).toBe('capabilities needs <integrationId>');
  });

  test('edit and unsend: a reply of a conversation; edit needs its new text', () => {
    expect(ok(['edit', 'c_1', 'r_1', '--text', 'Fixed typo']).command).toEqual({ name: 'edit', conversationId: 'c_1', replyId: 'r_1', text: 'Fixed typo', waitSeconds: DEFAULT_WAIT_SECONDS });
    expect(ok(['unsend', 'c_1', 'r_1', '--no-wait']).command).toEqual({ name: 'unsend', conversationId: 'c_1', replyId: 'r_1', waitSeconds: 0 });
    expect(usageError(['edit', 'c_1', 'r_1'])).toBe('edit needs --text "..." (the reply\'s new text)');
    expect(usageError(['edit', 'c_1'])).toBe('edit needs <conversationId> <replyId>');
    expect(usageError(['unsend', 'c_1', 'r_1', '--text', 'x'])).toBe('unsend does not take --text');
  });

  test('capabilities --lifecycle: off, or the kinds with their windows', () => {
    expect(ok(['capabilities', 'int-1', '--lifecycle', 'edit=900,unsend=3600']).command).toMatchObject({ attachments: undefined, lifecycle: { edit: { windowSeconds: 900 }, unsend: { windowSeconds: 3600 } } });
    expect(ok(['capabilities', 'int-1', '--lifecycle=unsend=172800']).command).toMatchObject({ lifecycle: { unsend: { windowSeconds: 172800 } } });
    expect(usageError(['capabilities', 'int-1', '--lifecycle', 'on'])).toBe('--lifecycle takes off, or edit=SECONDS and/or unsend=SECONDS separated by a comma (e.g. edit=900,unsend=3600), not "on"');
    expect(usageError(['capabilities', 'int-1', '--lifecycle', 'edit=900,edit=60'])).toBe('--lifecycle names edit twice');
  });

  test('erase: an external or customer id, optionally the integration', () => {
    expect(ok(['erase', 'cust-1']).command).toEqual({ name: 'erase', customer: 'cust-1', integrationId: undefined, waitSeconds: DEFAULT_WAIT_SECONDS });
    expect(ok(['erase', 'cust-1', '--integration', 'int-1', '--no-wait']).command).toEqual({ name: 'erase', customer: 'cust-1', integrationId: 'int-1', waitSeconds: 0 });
    expect(usageError(['erase'])).toBe('erase needs <externalCustomerId|customerId>');
    expect(usageError(['erase', 'cust-1', '--integration='])).toBe('--integration may not be empty');
  });

  test('erasures: the latest, or only those the connector has not acknowledged', () => {
    expect(ok(['erasures']).command).toEqual({ name: 'erasures', pending: false });
    expect(ok(['erasures', '--pending', '--json'])).toMatchObject({ command: { name: 'erasures', pending: true }, json: true });
    expect(usageError(['erasures', 'cust-1'])).toBe('erasures takes no arguments, not "cust-1"');
    expect(usageError(['erasures', '--pending=yes'])).toBe('--pending takes no value');
    expect(usageError(['erasures', '--no-wait'])).toBe('erasures does not take --no-wait');
    expect(usageError(['conversations', '--pending'])).toBe('conversations does not take --pending');
  });

  test('start: an integration, an address, and a text or a template with its params; the longer wait', () => {
    expect(ok(['start', '--integration', 'int-1', '--to', 'email:ana@example.com', '--text', 'Hello']).command).toEqual({
      name: 'start',
      integrationId: 'int-1',
      to: { kind: 'email', value: 'ana@example.com' },
      first: { text: 'Hello' },
      waitSeconds: START_WAIT_SECONDS,
    });
    expect(ok(['start', '--integration=int-1', '--to', 'handle:grace:42', '--template', 'order_update:en-US', '--param', 'name=Grace', '--param=order=A-1=2', '--wait-seconds', '5']).command).toEqual({
      name: 'start',
      integrationId: 'int-1',
      // A handle may hold a colon; a param's value may hold `=` (only the first one splits).
      to: { kind: 'handle', value: 'grace:42' },
      first: { template: { name: 'order_update', language: 'en-US', params: { name: 'Grace', order: 'A-1=2' } } },
      waitSeconds: 5,
    });
    expect(ok(['start', '--integration', 'int-1', '--to', 'phone: +447700900123 ', '--template', 'hello:en']).command).toMatchObject({ to: { kind: 'phone', value: '+447700900123' }, first: { template: { name: 'hello', language: 'en', params: {} } } });
    // A member's command: the operator by default.
    expect(ok(['start', '--integration', 'int-1', '--to', 'email:a@b.test', '--text', 'x']).identity).toEqual({ kind: 'demo', role: 'operator' });
  });

  test('start: usage errors, before anything is written', () => {
    const START = ['start', '--integration', 'int-1'];
    const usageLine = 'start needs --integration <id>, --to kind:address, and --text "..." or --template name:language';
    expect(usageError(['start'])).toBe(usageLine);
    expect(usageError([...START, '--text', 'Hi'])).toBe(usageLine);
    expect(usageError(['start', '--to', 'email:a@b.test', '--text', 'Hi'])).toBe(usageLine);
    expect(usageError([...START, '--to', 'email:a@b.test'])).toBe(usageLine);
    expect(usageError(['start', '--integration=', '--to', 'email:a@b.test', '--text', 'Hi'])).toBe('--integration may not be empty');
    expect(usageError([...START, '--to', 'ana@example.com', '--text', 'Hi'])).toBe('--to takes kind:address with a kind of phone, email, handle (e.g. email:ana@example.com), not "ana@example.com"');
    expect(usageError([...START, '--to', 'fax:123', '--text', 'Hi'])).toBe('--to takes kind:address with a kind of phone, email, handle (e.g. email:ana@example.com), not "fax:123"');
    // The address as the rules check it (the console's addressProblem).
    expect(usageError([...START, '--to', 'phone:07700 900123', '--text', 'Hi'])).toBe('--to phone: A phone number is + then the country code and number, 7 to 15 digits, no spaces (e.g. +447700900123).');
    expect(usageError([...START, '--to', 'email:ana', '--text', 'Hi'])).toBe('--to email: An email address has one @ with something on each side.');
    expect(usageError([...START, '--to', 'handle:', '--text', 'Hi'])).toBe("--to handle: Enter the customer's handle.");
    // The text as the form checks it.
    expect(usageError([...START, '--to', 'email:a@b.test', '--text', '  '])).toBe('--text: Write a reply first.');
    expect(usageError([...START, '--to', 'email:a@b.test', '--text', 'x'.repeat(REPLY_MAX_CODE_POINTS + 2)])).toBe(`--text: Too long by 2 characters (at most ${REPLY_MAX_CODE_POINTS}).`);
    expect(usageError([...START, '--to', 'email:a@b.test', '--text', 'Hi', '--template', 'hello:en'])).toBe('start takes --text or --template, not both');
    expect(usageError([...START, '--to', 'email:a@b.test', '--text', 'Hi', '--param', 'name=Ana'])).toBe('--param goes with --template');
    expect(usageError([...START, '--to', 'email:a@b.test', '--template', 'hello'])).toBe('--template takes name:language (e.g. order_update:en-US), not "hello"');
    expect(usageError([...START, '--to', 'email:a@b.test', '--template', 'hello:en', '--param', 'name'])).toBe('--param takes name=value, not "name"');
    expect(usageError([...START, '--to', 'email:a@b.test', '--template', 'hello:en', '--param', '=Ana'])).toBe('--param takes name=value, not "=Ana"');
    expect(usageError([...START, '--to', 'email:a@b.test', '--template', 'hello:en', '--param', 'name=A', '--param', 'name=B'])).toBe('--param names name twice');
    expect(usageError([...START, '--to', 'email:a@b.test', '--text', 'Hi', '--no-wait'])).toBe('start does not take --no-wait');
    expect(usageError([...START, '--to', 'email:a@b.test', '--text', 'Hi', 'c_1'])).toBe('start takes no arguments, not "c_1"');
    expect(parseArgs(['start'])).toMatchObject({ ok: false, command: 'start' });
  });

  test('an unknown command, or an option first, is refused', () => {
    expect(parseArgs(['send', 'x'])).toEqual({ ok: false, error: 'unknown command "send" (one of conversations, start, reply, status, cancel, resend, edit, unsend, capabilities, erase, erasures, help)', command: undefined });
    expect(parseArgs(['--json', 'conversations'])).toMatchObject({ ok: false, command: undefined });
    expect(parseArgs(['help', 'send'])).toMatchObject({ ok: false, command: 'help' });
    // The refusal names the command, so that only its usage is printed.
    expect(parseArgs(['cancel', 'c_1'])).toMatchObject({ ok: false, command: 'cancel' });
  });
});

describe('identity and workspace', () => {
  test('the demo operator by default, the demo admin for admin commands', () => {
    expect(ok(['conversations'])).toMatchObject({ identity: { kind: 'demo', role: 'operator' }, workspaceId: DEMO_WORKSPACE, json: false });
    expect(ok(['capabilities', 'int-1']).identity).toEqual({ kind: 'demo', role: 'admin' });
    expect(ok(['erase', 'cust-1']).identity).toEqual({ kind: 'demo', role: 'admin' });
    expect(ok(['erasures']).identity).toEqual({ kind: 'demo', role: 'admin' });
    expect(ok(['capabilities', 'int-1', '--as', 'operator']).identity).toEqual({ kind: 'demo', role: 'operator' });
    expect(usageError(['conversations', '--as', 'owner'])).toBe('--as takes admin or operator, not "owner"');
  });

  test('an account by --email and --password, or from the environment', () => {
    expect(ok(['conversations', '--email', 'a@b.test', '--password', 'pw']).identity).toEqual({ kind: 'account', email: 'a@b.test', password: 'pw' });
    expect(ok(['conversations'], { DESK_EMAIL: 'e@b.test', DESK_PASSWORD: 'secret' }).identity).toEqual({ kind: 'account', email: 'e@b.test', password: 'secret' });
    // --as wins over the environment's account; with --email it is a contradiction.
    expect(ok(['conversations', '--as', 'admin'], { DESK_EMAIL: 'e@b.test', DESK_PASSWORD: 'secret' }).identity).toEqual({ kind: 'demo', role: 'admin' });
    expect(usageError(['conversations', '--as', 'admin', '--email', 'a@b.test', '--password', 'pw'])).toBe('--as and --email name two identities: give one');
    expect(usageError(['conversations', '--email', 'a@b.test'])).toBe('--email needs --password (or DESK_PASSWORD)');
  });

  test('the workspace from --workspace, else DESK_WORKSPACE, else the demo one; --json anywhere', () => {
    expect(ok(['conversations', '--workspace', 'ws-1'], { DESK_WORKSPACE: 'ws-env' }).workspaceId).toBe('ws-1');
    expect(ok(['conversations'], { DESK_WORKSPACE: 'ws-env' }).workspaceId).toBe('ws-env');
    expect(ok(['status', '--json', 'c_1']).json).toBe(true);
  });
});

test('the usage names every command, or only the one asked about', () => {
  const all = usage();
  for (const name of ['conversations', 'start', 'reply', 'status', 'cancel', 'resend', 'edit', 'unsend', 'capabilities', 'erase', 'erasures', 'help']) expect(all).toContain(`\n  ${name} `);
  expect(usage('cancel')).toContain('cancel <conversationId> <replyId>');
  expect(usage('cancel')).not.toContain('reply <conversationId>');
});

describe('help lists every option, from the parser\'s tables', () => {
  const tables = { ...VALUE_OPTIONS, ...FLAG_OPTIONS };
  const commands = [...new Set(Object.values(tables).flatMap((c) => (c === 'all' ? [] : c)))];
  /** The option lines of a usage text: `      --name [value]   what it does` (a command's) or `  --name ...` (the global ones). */
  const optionLines = (text: string, indent: string): string[] => text.split('\n').flatMap((line) => (line.startsWith(`${indent}--`) && !line.startsWith(`${indent} `) ? [/^\s*(--[a-z-]+)/.exec(line)?.[1] ?? ''] : []));
  const commandSection = (command: CommandName): string => usage(command).split('\nOptions of every command:\n')[0] ?? '';
  const globalSection = usage().split('\nOptions of every command:\n')[1] ?? '';

  // Every option of one command or a few, in each of its commands' help as a line of its own.
  const perCommand = Object.entries(tables).flatMap(([option, accepted]) => (accepted === 'all' ? [] : accepted.map((command) => [command, option] as const)));
  test.each(perCommand)('help %s has a line for %s', (command, option) => {
    expect(optionLines(commandSection(command as CommandName), '      ')).toContain(option);
  });

  test('the global options have a line each in the general part', () => {
    const global = Object.entries(tables).flatMap(([option, accepted]) => (accepted === 'all' ? [option] : []));
    expect(global.length).toBeGreaterThan(0);
    expect(optionLines(globalSection, '  ').filter((o) => o !== '--help').sort()).toEqual(global.sort());
  });

  // The other way round: a command's help lists exactly the options the parser accepts for it, so
  // an option added to a table without its help, or help left behind for an option removed, fails.
  test.each(commands)('help %s lists exactly the options the parser accepts for it', (command) => {
    const accepted = Object.entries(tables).flatMap(([option, c]) => (c !== 'all' && c.includes(command) ? [option] : []));
    expect(optionLines(commandSection(command as CommandName), '      ').sort()).toEqual(accepted.sort());
  });

  test('every option the synopses name is one the command accepts', () => {
    for (const command of commands) {
      const synopsis = commandSection(command as CommandName).split('\n').find((l) => l.startsWith(`  ${command}`)) ?? '';
      for (const option of synopsis.match(/--[a-z-]+/g) ?? []) {
        const accepted = tables[option];
        expect({ command, option, accepted: accepted === 'all' || (accepted?.includes(command) ?? false) }).toEqual({ command, option, accepted: true });
      }
    }
  });
});
