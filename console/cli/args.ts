/**
 * The desk CLI's command line (`npm run desk -- <command> ...`, docs/cli.md): what each command
 * takes, parsed into a typed command or a usage error. Pure (no Node, no Firebase): unit-tested in
 * test/unit/console/desk-args.test.ts. What the values mean is decided where they are used (the
 * capability's limits by the console's own check, attachments.ts `capabilityProblem`).
 */
import { replyProblem } from '../src/format';
import { ADDRESS_KINDS, addressProblem, type AddressKind } from '../src/start-format';
import type { TemplateChoice } from '../src/template-format';

/** The demo accounts `npm start` seeds (scripts/lib/seed.mjs): who `--as` signs in as. */
export type DemoRole = 'admin' | 'operator';

/** How long a command waits by default for the service's answer (a delivery's status, an erasure). */
export const DEFAULT_WAIT_SECONDS = 15;

/**
 * How long `start` waits by default for the service's answer on the start document: longer than
 * the others, since a start is the first write of its kind a cold start trigger may see.
 */
export const START_WAIT_SECONDS = 30;

/** The `--types` names and the content types they stand for (the contract's six). */
const TYPE_NAMES: Readonly<Record<string, string>> = {
  png: 'image/png',
  jpeg: 'image/jpeg',
  jpg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
  pdf: 'application/pdf',
  text: 'text/plain',
  txt: 'text/plain',
};

export type CommandName = 'help' | 'conversations' | 'start' | 'reply' | 'status' | 'cancel' | 'resend' | 'edit' | 'unsend' | 'capabilities' | 'erase' | 'erasures';

/** `--lifecycle edit=900,unsend=3600`: the kinds asked for, each with its window in seconds (checked where it is used). */
interface LifecycleRequest {
  edit?: { windowSeconds: number };
  unsend?: { windowSeconds: number };
}

export type Command =
  | { name: 'help'; topic: CommandName | undefined }
  | { name: 'conversations'; limit: number }
  | {
      name: 'start';
      integrationId: string;
      /** `--to kind:value`, the address checked as the rules check it (console/src/start-format.ts). */
      to: { kind: AddressKind; value: string };
      /**
       * `--text`, or `--template name:language` with its `--param name=value`s as given: whether the
       * channel declares that template with exactly those params is checked against the integration.
       */
      first: { text: string } | { template: TemplateChoice };
      waitSeconds: number;
    }
  | { name: 'reply'; conversationId: string; text: string; files: string[]; waitSeconds: number }
  | { name: 'status'; conversationId: string; replyId: string | undefined }
  | { name: 'cancel'; conversationId: string; replyId: string; waitSeconds: number }
  | { name: 'resend'; conversationId: string; replyId: string; waitSeconds: number }
  | { name: 'edit'; conversationId: string; replyId: string; text: string; waitSeconds: number }
  | { name: 'unsend'; conversationId: string; replyId: string; waitSeconds: number }
  | {
      name: 'capabilities';
      integrationId: string;
      /** Absent: only print the capabilities. */
      attachments: 'on' | 'off' | undefined;
      /** Content types (`--types`); absent: all six. */
      contentTypes: string[] | undefined;
      maxBytes: number | undefined;
      maxCount: number | undefined;
      /** `off` removes `replies.lifecycle`; the kinds with their windows set it; absent: unchanged. */
      lifecycle: 'off' | LifecycleRequest | undefined;
    }
  | { name: 'erase'; customer: string; integrationId: string | undefined; waitSeconds: number }
  /** `pending`: only the erasures the connector has not acknowledged (still erasing, or done and waiting). */
  | { name: 'erasures'; pending: boolean };

/** Who the CLI signs in as: a demo account by role, or an explicit account. */
export type Identity = { kind: 'demo'; role: DemoRole } | { kind: 'account'; email: string; password: string };

export interface Invocation {
  command: Command;
  identity: Identity;
  /** `--workspace`, `DESK_WORKSPACE`, else the demo workspace. */
  workspaceId: string;
  json: boolean;
}

/** A usage error names the command when it knows it, so that only that command's usage is printed. */
export type ParseResult = { ok: true; invocation: Invocation } | { ok: false; error: string; command: CommandName | undefined };

/** The workspace `npm start` seeds (scripts/lib/seed.mjs). */
export const DEMO_WORKSPACE = 'demo-workspace';

/**
 * Options that take a value, and the commands that accept each (the global ones: every command).
 * `satisfies` keeps the option names as a type, so that `OPTION_HELP` must describe each one.
 */
const VALUE_OPTION_TABLE = {
  '--as': 'all',
  '--email': 'all',
  '--password': 'all',
  '--workspace': 'all',
  '--limit': ['conversations'],
  '--text': ['reply', 'edit', 'start'],
  '--to': ['start'],
  '--template': ['start'],
  '--param': ['start'],
  '--file': ['reply'],
  '--wait-seconds': ['start', 'reply', 'cancel', 'resend', 'edit', 'unsend', 'erase'],
  '--attachments': ['capabilities'],
  '--types': ['capabilities'],
  '--max-mb': ['capabilities'],
  '--max-files': ['capabilities'],
  '--lifecycle': ['capabilities'],
  '--integration': ['erase', 'start'],
} as const satisfies Readonly<Record<string, readonly CommandName[] | 'all'>>;
const FLAG_OPTION_TABLE = {
  '--json': 'all',
  '--no-wait': ['reply', 'cancel', 'resend', 'edit', 'unsend', 'erase'],
  '--pending': ['erasures'],
} as const satisfies Readonly<Record<string, readonly CommandName[] | 'all'>>;
type OptionName = keyof typeof VALUE_OPTION_TABLE | keyof typeof FLAG_OPTION_TABLE;
export const VALUE_OPTIONS: Readonly<Record<string, readonly string[] | 'all'>> = VALUE_OPTION_TABLE;
export const FLAG_OPTIONS: Readonly<Record<string, readonly string[] | 'all'>> = FLAG_OPTION_TABLE;

/** Positional arguments of each command: names for the messages; `?` marks an optional one. */
const POSITIONALS: Readonly<Record<CommandName, readonly string[]>> = {
  conversations: [],
  start: [],
  reply: ['conversationId'],
  status: ['conversationId', 'replyId?'],
  cancel: ['conversationId', 'replyId'],
  resend: ['conversationId', 'replyId'],
  edit: ['conversationId', 'replyId'],
  unsend: ['conversationId', 'replyId'],
  capabilities: ['integrationId'],
  erase: ['externalCustomerId|customerId'],
  erasures: [],
  help: ['command?'],
};

const COMMANDS = Object.keys(POSITIONALS) as readonly CommandName[];

function isCommand(name: string): name is CommandName {
  return (COMMANDS as readonly string[]).includes(name);
}

/** Commands that need the workspace's admin rights: `--as` defaults to the admin account there. */
const ADMIN_COMMANDS: ReadonlySet<CommandName> = new Set(['capabilities', 'erase', 'erasures']);

const accepts = (table: Readonly<Record<string, readonly string[] | 'all'>>, option: string, command: string): boolean => {
  const allowed = table[option];
  return allowed === 'all' || (allowed !== undefined && allowed.includes(command));
};

function positiveInteger(value: string, option: string, max: number): number | string {
  if (!/^[0-9]+$/.test(value) || Number(value) < 1 || Number(value) > max) return `${option} takes a whole number from 1 to ${max}, not "${value}"`;
  return Number(value);
}

function onOff(value: string, option: string): 'on' | 'off' | string {
  return value === 'on' || value === 'off' ? value : `${option} takes on or off, not "${value}"`;
}

const LIFECYCLE_USAGE = '--lifecycle takes off, or edit=SECONDS and/or unsend=SECONDS separated by a comma (e.g. edit=900,unsend=3600)';

/** `off`, or `edit=900,unsend=3600` (either or both, each once); a string is the usage error. The windows' bounds are checked by the console's lifecycleProblem. */
function lifecycleValue(value: string): { value: 'off' | LifecycleRequest } | { error: string } {
  if (value === 'off') return { value: 'off' };
  const request: LifecycleRequest = {};
  for (const item of value.split(',').map((s) => s.trim())) {
    const match = /^(edit|unsend)=([0-9]+)$/.exec(item);
    if (match === null) return { error: `${LIFECYCLE_USAGE}, not "${item}"` };
    const kind = match[1] as 'edit' | 'unsend';
    if (request[kind] !== undefined) return { error: `--lifecycle names ${kind} twice` };
    request[kind] = { windowSeconds: Number(match[2]) };
  }
  return { value: request };
}

const START_USAGE = 'start needs --integration <id>, --to kind:address, and --text "..." or --template name:language';

/**
 * `start`'s options into its command, or the usage error: the address checked as the rules check
 * it (the console's addressProblem), the text as the console's form checks it (replyProblem), a
 * template named `name:language` with each `--param name=value` once. The channel's own terms
 * (whether it declares the template with those params, whether it needs one) are the integration's,
 * checked by the command before it writes.
 */
function startCommand(one: (option: string) => string | undefined, params: readonly string[], waitSeconds: number): { command: Extract<Command, { name: 'start' }> } | { error: string } {
  const integrationId = one('--integration');
  const to = one('--to');
  const text = one('--text');
  const template = one('--template');
  if (integrationId === undefined || to === undefined || (text === undefined && template === undefined)) return { error: START_USAGE };
  if (integrationId === '') return { error: '--integration may not be empty' };
  const colon = to.indexOf(':');
  const kind = to.slice(0, colon);
  if (colon === -1 || !(ADDRESS_KINDS as readonly string[]).includes(kind)) return { error: `--to takes kind:address with a kind of ${ADDRESS_KINDS.join(', ')} (e.g. email:ana@example.com), not "${to}"` };
  const value = to.slice(colon + 1).trim();
  const addressKind = kind as AddressKind;
  const bad = addressProblem(addressKind, value);
  if (bad !== undefined) return { error: `--to ${kind}: ${bad}` };
  const base = { name: 'start' as const, integrationId, to: { kind: addressKind, value }, waitSeconds };
  if (text !== undefined) {
    if (template !== undefined) return { error: 'start takes --text or --template, not both' };
    if (params.length > 0) return { error: '--param goes with --template' };
    const problem = replyProblem(text);
    if (problem !== undefined) return { error: `--text: ${problem}` };
    return { command: { ...base, first: { text } } };
  }
  const match = /^([^:]+):([^:]+)$/.exec(template ?? '');
  if (match === null) return { error: `--template takes name:language (e.g. order_update:en-US), not "${template ?? ''}"` };
  const values: Record<string, string> = {};
  for (const param of params) {
    const eq = param.indexOf('=');
    if (eq < 1) return { error: `--param takes name=value, not "${param}"` };
    const name = param.slice(0, eq);
    if (Object.hasOwn(values, name)) return { error: `--param names ${name} twice` };
    values[name] = param.slice(eq + 1);
  }
  return { command: { ...base, first: { template: { name: match[1] as string, language: match[2] as string, params: values } } } };
}

/**
 * Parses the arguments after `npm run desk --`. `env` supplies `DESK_WORKSPACE`, `DESK_EMAIL` and
 * `DESK_PASSWORD` (a password kept out of the command line).
 */
export function parseArgs(argv: readonly string[], env: Readonly<Record<string, string | undefined>> = {}): ParseResult {
  const [first, ...rest] = argv;
  const fail = (error: string): ParseResult => ({ ok: false, error, command: first !== undefined && isCommand(first) ? first : undefined });
  if (first === undefined || first === '--help' || first === '-h') return { ok: true, invocation: { command: { name: 'help', topic: undefined }, identity: { kind: 'demo', role: 'operator' }, workspaceId: DEMO_WORKSPACE, json: false } };
  if (first.startsWith('-')) return fail(`the command comes first (one of ${COMMANDS.join(', ')}), not the option ${first}`);
  if (!isCommand(first)) return fail(`unknown command "${first}" (one of ${COMMANDS.join(', ')})`);
  const name = first;

  const values = new Map<string, string[]>();
  const flags = new Set<string>();
  const positionals: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i] as string;
    if (arg === '--help' || arg === '-h') return { ok: true, invocation: { command: { name: 'help', topic: name }, identity: { kind: 'demo', role: 'operator' }, workspaceId: DEMO_WORKSPACE, json: false } };
    if (arg === '--') {
      positionals.push(...rest.slice(i + 1));
      break;
    }
    if (!arg.startsWith('--')) {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const option = eq === -1 ? arg : arg.slice(0, eq);
    if (option in FLAG_OPTIONS) {
      if (eq !== -1) return fail(`${option} takes no value`);
      if (!accepts(FLAG_OPTIONS, option, name)) return fail(`${name} does not take ${option}`);
      flags.add(option);
      continue;
    }
    if (!(option in VALUE_OPTIONS)) return fail(`unknown option ${option}`);
    if (!accepts(VALUE_OPTIONS, option, name)) return fail(`${name} does not take ${option}`);
    let value: string | undefined;
    if (eq !== -1) value = arg.slice(eq + 1);
    else {
      value = rest[i + 1];
      // `--text ""` is a value; `--text --json` is a missing one.
      if (value === undefined || (value.startsWith('--') && value.length > 2)) return fail(`${option} needs a value`);
      i++;
    }
    if (option !== '--file' && option !== '--param' && values.has(option)) return fail(`${option} is given twice`);
    values.set(option, [...(values.get(option) ?? []), value]);
  }
  const one = (option: string): string | undefined => values.get(option)?.[0];

  const expected = POSITIONALS[name];
  const required = expected.filter((p) => !p.endsWith('?'));
  if (positionals.length < required.length) return fail(`${name} needs ${required.map((p) => `<${p}>`).join(' ')}`);
  if (positionals.length > expected.length) return fail(`${name} takes ${expected.length === 0 ? 'no arguments' : expected.map((p) => `<${p.replace('?', '')}>`).join(' ')}, not "${positionals.slice(expected.length).join(' ')}"`);
  for (const [i, p] of positionals.entries()) {
    if (p === '') return fail(`<${(expected[i] ?? '').replace('?', '')}> may not be empty`);
  }

  // Identity: --email/--password (or DESK_EMAIL/DESK_PASSWORD) name an account; --as a demo one.
  const as = one('--as');
  const email = one('--email') ?? env.DESK_EMAIL;
  const password = one('--password') ?? env.DESK_PASSWORD;
  let identity: Identity;
  if (as !== undefined) {
    if (as !== 'admin' && as !== 'operator') return fail(`--as takes admin or operator, not "${as}"`);
    if (one('--email') !== undefined) return fail('--as and --email name two identities: give one');
    identity = { kind: 'demo', role: as };
  } else if (email !== undefined && email !== '') {
    if (password === undefined || password === '') return fail('--email needs --password (or DESK_PASSWORD)');
    identity = { kind: 'account', email, password };
  } else {
    identity = { kind: 'demo', role: ADMIN_COMMANDS.has(name) ? 'admin' : 'operator' };
  }
  const workspaceId = one('--workspace') ?? env.DESK_WORKSPACE ?? DEMO_WORKSPACE;
  if (workspaceId === '') return fail('--workspace may not be empty');

  let waitSeconds = flags.has('--no-wait') ? 0 : DEFAULT_WAIT_SECONDS;
  const waitOption = one('--wait-seconds');
  if (waitOption !== undefined) {
    if (flags.has('--no-wait')) return fail('--no-wait and --wait-seconds contradict each other');
    const n = positiveInteger(waitOption, '--wait-seconds', 600);
    if (typeof n === 'string') return fail(n);
    waitSeconds = n;
  }

  const p0 = positionals[0] as string;
  let command: Command;
  switch (name) {
    case 'help':
      if (positionals[0] !== undefined && !isCommand(positionals[0])) return fail(`no help on "${positionals[0]}": not a command (one of ${COMMANDS.join(', ')})`);
      command = { name, topic: positionals[0] };
      break;
    case 'conversations': {
      const limit = positiveInteger(one('--limit') ?? '20', '--limit', 200);
      if (typeof limit === 'string') return fail(limit);
      command = { name, limit };
      break;
    }
    case 'start': {
      const parsed = startCommand(one, values.get('--param') ?? [], values.has('--wait-seconds') ? waitSeconds : START_WAIT_SECONDS);
      if ('error' in parsed) return fail(parsed.error);
      command = parsed.command;
      break;
    }
    case 'reply': {
      const files = values.get('--file') ?? [];
      const text = one('--text');
      if (text === undefined && files.length === 0) return fail('reply needs --text "..." or at least one --file <path> (or both)');
      if (files.some((f) => f === '')) return fail('--file needs a path');
      command = { name, conversationId: p0, text: text ?? '', files, waitSeconds };
      break;
    }
    case 'status':
      command = { name, conversationId: p0, replyId: positionals[1] };
      break;
    case 'cancel':
      command = { name, conversationId: p0, replyId: positionals[1] as string, waitSeconds };
      break;
    case 'resend':
      command = { name, conversationId: p0, replyId: positionals[1] as string, waitSeconds };
      break;
    case 'edit': {
      const text = one('--text');
      if (text === undefined) return fail('edit needs --text "..." (the reply\'s new text)');
      command = { name, conversationId: p0, replyId: positionals[1] as string, text, waitSeconds };
      break;
    }
    case 'unsend':
      command = { name, conversationId: p0, replyId: positionals[1] as string, waitSeconds };
      break;
    case 'capabilities': {
      const attachmentsValue = one('--attachments');
      const attachments = attachmentsValue === undefined ? undefined : onOff(attachmentsValue, '--attachments');
      if (attachments !== undefined && attachments !== 'on' && attachments !== 'off') return fail(attachments);
      const lifecycleOption = one('--lifecycle');
      const parsedLifecycle = lifecycleOption === undefined ? undefined : lifecycleValue(lifecycleOption);
      if (parsedLifecycle !== undefined && 'error' in parsedLifecycle) return fail(parsedLifecycle.error);
      const lifecycle = parsedLifecycle?.value;
      const limits = ['--types', '--max-mb', '--max-files'].filter((o) => values.has(o));
      if (limits.length > 0 && attachments !== 'on') return fail(`${limits.join(', ')} go with --attachments on`);
      let contentTypes: string[] | undefined;
      const types = one('--types');
      if (types !== undefined) {
        contentTypes = [];
        for (const t of types.split(',').map((s) => s.trim().toLowerCase())) {
          const type = TYPE_NAMES[t];
          if (type === undefined) return fail(`--types takes a comma-separated list of ${Object.keys(TYPE_NAMES).join(', ')}, not "${t}"`);
          if (!contentTypes.includes(type)) contentTypes.push(type);
        }
      }
      let maxBytes: number | undefined;
      const maxMb = one('--max-mb');
      if (maxMb !== undefined) {
        // Megabytes as the console's form counts them (1 MB = 1024 × 1024 bytes); the limit itself is checked with the console's capabilityProblem.
        if (!/^[0-9]+(\.[0-9]+)?$/.test(maxMb) || Number(maxMb) <= 0) return fail(`--max-mb takes a positive number of megabytes, not "${maxMb}"`);
        maxBytes = Math.round(Number(maxMb) * 1024 * 1024);
      }
      let maxCount: number | undefined;
      const maxFiles = one('--max-files');
      if (maxFiles !== undefined) {
        const n = positiveInteger(maxFiles, '--max-files', 1000);
        if (typeof n === 'string') return fail(n);
        maxCount = n;
      }
      command = { name, integrationId: p0, attachments, contentTypes, maxBytes, maxCount, lifecycle };
      break;
    }
    case 'erase':
      if (one('--integration') === '') return fail('--integration may not be empty');
      command = { name, customer: p0, integrationId: one('--integration'), waitSeconds };
      break;
    case 'erasures':
      command = { name, pending: flags.has('--pending') };
      break;
  }
  return { ok: true, invocation: { command, identity, workspaceId, json: flags.has('--json') } };
}

/** Each command's synopsis and what it does (its options are listed from the tables, `OPTION_HELP`). */
const COMMAND_USAGE: Readonly<Record<CommandName, { synopsis: string; does: string }>> = {
  conversations: { synopsis: 'conversations [--limit N]', does: "the workspace's conversations, most recent first" },
  start: {
    synopsis: 'start --integration <id> --to kind:address (--text "..." | --template name:language [--param name=value]...) [--wait-seconds N]',
    does: "start a conversation as the console's New conversation form does, and wait for the service's answer",
  },
  reply: { synopsis: 'reply <conversationId> [--text "..."] [--file <path>]... [--no-wait | --wait-seconds N]', does: 'write an operator reply, with files uploaded as the console does' },
  status: { synopsis: 'status <conversationId> [replyId]', does: "each reply's delivery (status, attempts, parts, receipt) and who is typing" },
  cancel: { synopsis: 'cancel <conversationId> <replyId> [--no-wait | --wait-seconds N]', does: 'recall a reply before the connector sends it' },
  resend: { synopsis: 'resend <conversationId> <replyId> [--no-wait | --wait-seconds N]', does: 'deliver a failed or unknown reply again' },
  edit: { synopsis: 'edit <conversationId> <replyId> --text "..." [--no-wait | --wait-seconds N]', does: "edit a sent reply on the channel (within the integration's edit window)" },
  unsend: { synopsis: 'unsend <conversationId> <replyId> [--no-wait | --wait-seconds N]', does: 'take a sent reply back on the channel (within the unsend window)' },
  capabilities: {
    synopsis: 'capabilities <integrationId> [--attachments on|off [--types png,pdf,...] [--max-mb N] [--max-files N]] [--lifecycle off|edit=S,unsend=S]',
    does: "print, or (admin) set, what the integration's replies may carry and what may follow their sending",
  },
  erase: { synopsis: 'erase <externalCustomerId|customerId> [--integration <id>] [--no-wait | --wait-seconds N]', does: "(admin) erase one customer, as the console's Privacy view does" },
  erasures: { synopsis: 'erasures [--pending]', does: "(admin) the latest 50 erasures, each with the connector's acknowledgement or how long it has been waiting" },
  help: { synopsis: 'help [command]', does: 'this text, of every command or of one' },
};

/** What each option takes and does: a `Record` over the tables' names, so an option without its line here does not compile. */
const OPTION_HELP: Readonly<Record<OptionName, { value?: string; does: string }>> = {
  '--as': { value: 'operator|admin', does: `sign in as the demo account npm start seeds (operator@demo.test, admin@demo.test); default: admin for ${[...ADMIN_COMMANDS].join(', ')}, else operator` },
  '--email': { value: '<e>', does: 'sign in as another account, with --password (or DESK_EMAIL)' },
  '--password': { value: '<p>', does: "that account's password (or DESK_PASSWORD)" },
  '--workspace': { value: '<id>', does: `the workspace (or DESK_WORKSPACE; default ${DEMO_WORKSPACE})` },
  '--json': { does: 'machine-readable output on stdout' },
  '--limit': { value: 'N', does: 'how many, 1 to 200 (default 20)' },
  '--text': { value: '"..."', does: "the reply's text (edit: its new text; start: the first message)" },
  '--to': { value: 'kind:address', does: 'the customer to start with: phone:+447700900123, email:ana@example.com or handle:<name>' },
  '--template': { value: 'name:language', does: 'start with a template the channel declared (needed on a channel with a reply window)' },
  '--param': { value: 'name=value', does: "a value of the template's params; repeat it for each" },
  '--file': { value: '<path>', does: 'a file to send with the reply; repeat it for more (up to the integration\'s maxCount)' },
  '--wait-seconds': { value: 'N', does: `how long to wait for the service's answer, 1 to 600 (default ${DEFAULT_WAIT_SECONDS}; start: ${START_WAIT_SECONDS})` },
  '--no-wait': { does: "do not wait for the service's answer" },
  '--attachments': { value: 'on|off', does: '(admin) let replies carry files, or not' },
  '--types': { value: 'png,pdf,...', does: `with --attachments on: the file types, of ${Object.keys(TYPE_NAMES).join(', ')} (default all)` },
  '--max-mb': { value: 'N', does: 'with --attachments on: megabytes per file, at most 10 (default 10)' },
  '--max-files': { value: 'N', does: 'with --attachments on: files per reply, at most 5 (default 5)' },
  '--lifecycle': { value: 'off|edit=S,unsend=S', does: '(admin) the edit and unsend windows in seconds (60 to 604800), or off' },
  '--integration': { value: '<id>', does: "the customer's integration (erase: needed with an external id when the workspace has several; start: the integration to start on)" },
  '--pending': { does: 'only those the connector has not acknowledged (still erasing, or done and waiting)' },
};

const OPTION_COLUMN = 26;

/** One option's line: the option with its value, then what it does (on the next line when the option is long). */
function optionLine(option: OptionName, indent: string): string {
  const help = OPTION_HELP[option];
  const left = `${indent}${option}${help.value === undefined ? '' : ` ${help.value}`}`;
  return left.length < OPTION_COLUMN - 1 ? `${left.padEnd(OPTION_COLUMN)}${help.does}` : `${left}\n${' '.repeat(OPTION_COLUMN)}${help.does}`;
}

const OPTION_NAMES = [...Object.keys(VALUE_OPTION_TABLE), ...Object.keys(FLAG_OPTION_TABLE)] as OptionName[];
const tableOf = (option: OptionName): Readonly<Record<string, readonly string[] | 'all'>> => (option in VALUE_OPTION_TABLE ? VALUE_OPTIONS : FLAG_OPTIONS);

/** A command's synopsis, what it does, and each of its own options (the global ones are listed once, below the commands). */
function commandUsage(command: CommandName): string {
  const { synopsis, does } = COMMAND_USAGE[command];
  const own = OPTION_NAMES.filter((o) => tableOf(o)[o] !== 'all' && accepts(tableOf(o), o, command));
  return [`  ${synopsis}`, `      ${does}`, ...own.map((o) => optionLine(o, '      '))].join('\n');
}

/** The usage text (of one command, or of all): every option the parser accepts, from its tables. */
export function usage(topic?: CommandName): string {
  const commands = topic === undefined ? COMMANDS : [topic];
  const global = OPTION_NAMES.filter((o) => tableOf(o)[o] === 'all');
  return `Usage: npm run desk -- <command> [arguments] [options]

The operator's and admin's side of the local stack, under the same Firestore rules as the console
(docs/cli.md).

Commands:
${commands.map(commandUsage).join('\n')}

Options of every command:
${global.map((o) => optionLine(o, '  ')).join('\n')}
  --help, -h              the usage (after a command: of that command)

Exit status: 0 done, 1 refused or failed (the reason on stderr), 2 usage error.`;
}
