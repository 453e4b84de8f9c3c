/**
 * The connector under test, as the conformance runner drives it: an in-process module
 * (`start()` / `stop()`, plus the optional `sendIncoming` hook), or a process that receives the
 * notifications as Pub/Sub push requests (started per scenario with the service's address and key
 * in its environment). docs/conformance.md documents both.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { byLifecycleKind, START_ADDRESS_KINDS, type LifecycleKind } from '../internal/contract.generated.js';
import type { ConnectorStartContext } from '../testing/types.js';

/** One incoming customer message the runner asks the connector to post through its own inbound path. */
export interface IncomingInput {
  text: string;
  /** The external chat (for the email connector: the thread) the message belongs to. */
  externalConversationId: string;
  /** The customer's id in the channel (for the email connector: the sender's address). */
  externalCustomerId: string;
}

/** What `start()` receives: the service's address, the integration key, the notifications, and the scenario's settings. */
export interface ConformanceStartContext extends ConnectorStartContext {
  /** The scenario about to run (for logs). */
  scenario: string;
  /**
   * How long each provider call should take, in ms (0 in every scenario but `long-provider-call`).
   * A connector that cannot slow its provider fails that scenario: make it a test option.
   */
  providerDelayMs: number;
}

/** The kinds of delivery after the send a connector implements (`edit`, `unsend`, ...: the contract's kinds): their scenarios run only for those. */
export type LifecycleDeclaration = { [K in LifecycleKind]?: boolean };

/** A kind of address a conversation the desk starts goes to (`phone`, `email`, `handle`: the contract's). */
export type StartAddressKind = (typeof START_ADDRESS_KINDS)[number];

/** What the connector's (fake) channel shows of one provider message: its current text, and whether it was deleted. */
export interface ChannelMessage {
  text?: string;
  deleted?: boolean;
}

/**
 * An in-process connector: what the module given to `support-desk-connector-check` exports (or its
 * default export). One connector runs at a time: `start()` for a scenario, `stop()` after it.
 */
export interface ConformanceModule {
  /** Starts the connector: an SDK client on `baseUrl` with `key`, its loop on `subscription`. Resolve once it listens. */
  start(context: ConformanceStartContext): Promise<void> | void;
  /** Stops it (deliveries in progress finish; nothing keeps running). */
  stop(): Promise<void> | void;
  /**
   * Optional: posts one customer message through the connector's own inbound path (its webhook
   * handler, SMTP server, ...), resolving once the connector posted it (`POST /v1/messages`
   * answered) or rejecting when it gave up. Without it the scenario `message-retry-after-503` is skipped.
   */
  sendIncoming?(input: IncomingInput): Promise<void>;
  /**
   * Optional: the delivery kinds after the send the connector implements (its `edit` / `unsend`
   * callbacks). The scenarios `edit-reply` / `unsend-reply` run only for what it declares; a
   * connector that declares nothing runs exactly the other scenarios.
   */
  lifecycle?: LifecycleDeclaration;
  /**
   * Optional: the connector handles a channel's reply window. It fails a reply whose text starts
   * with `#window` with `{ outcome: "failed", code: "window_closed" }` (as its channel's refusal
   * outside the window would be: WhatsApp 131047), so the scenario `window-closed` runs.
   */
  windows?: boolean;
  /**
   * Optional: the kinds of address the connector starts conversations by (docs/contract.md,
   * "Conversations the desk starts"): its `send` handles `input.start` (the claim's
   * `recipient.address`) and returns `{ providerMessageIds, conversation: { externalConversationId,
   * externalCustomerId } }`, so the scenario `start-conversation` runs, one start per kind.
   */
  starts?: readonly StartAddressKind[];
  /**
   * Optional, with `lifecycle`: what the connector's channel shows of a provider message id it
   * reported (its fake provider's state), so that the lifecycle scenarios check that the provider
   * really edited or deleted the sent message (not only what was reported to the service).
   */
  channelMessage?(providerMessageId: string): ChannelMessage | undefined;
}

/** How the runner reaches the connector under test. */
export type ConnectorTarget =
  | { kind: 'module'; module: ConformanceModule }
  | {
      kind: 'process';
      /** A shell command that starts the connector; it reads the `SUPPORT_DESK_*` variables below. */
      command: string;
      /** Where the connector takes Pub/Sub push requests (e.g. `http://127.0.0.1:8080/push`). */
      pushUrl: string;
      /** Optional: where the runner POSTs an `IncomingInput` (JSON) for the connector to post as a customer message; 2xx once posted. */
      incomingUrl?: string;
      cwd?: string;
      /** Extra environment (added to the runner's own). */
      env?: Readonly<Record<string, string>>;
      /** Where the process's output goes (default: dropped). */
      output?: (chunk: string) => void;
      /** The delivery kinds after the send the process implements (`--lifecycle edit,unsend`). */
      lifecycle?: LifecycleDeclaration;
      /** The process handles a reply window (`--windows`): see `ConformanceModule.windows`. */
      windows?: boolean;
      /** The kinds of address the process starts conversations by (`--starts handle,email`): see `ConformanceModule.starts`. */
      starts?: readonly StartAddressKind[];
    };

/** A started connector, whatever its kind. */
export interface RunningTarget {
  sendIncoming?: (input: IncomingInput) => Promise<void>;
  channelMessage?: (providerMessageId: string) => ChannelMessage | undefined;
  stop(): Promise<void>;
}

/** The environment a process connector receives (docs/conformance.md#process-mode). */
function processEnv(context: Omit<ConformanceStartContext, 'subscription'>): Record<string, string> {
  return {
    SUPPORT_DESK_API_BASE_URL: context.baseUrl,
    SUPPORT_DESK_INTEGRATION_KEY: context.key,
    SUPPORT_DESK_CHECK_SCENARIO: context.scenario,
    SUPPORT_DESK_CHECK_PROVIDER_DELAY_MS: String(context.providerDelayMs),
  };
}

async function postIncoming(url: string, input: IncomingInput): Promise<void> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(input), signal: AbortSignal.timeout(30_000) });
  const text = await res.text();
  if (res.status < 200 || res.status > 299) throw new Error(`the connector answered ${res.status} to the incoming message: ${text.slice(0, 200)}`);
}

function stopProcess(child: ChildProcess, graceMs: number): Promise<void> {
  return new Promise((done) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      done();
      return;
    }
    const kill = (signal: NodeJS.Signals): void => {
      // The shell and what it started share a process group of their own (detached): stop them all.
      try {
        if (child.pid !== undefined) process.kill(-child.pid, signal);
      } catch {
        child.kill(signal);
      }
    };
    const timer = setTimeout(() => kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      done();
    });
    kill('SIGTERM');
  });
}

/** Starts the connector for one scenario. */
export async function startTarget(target: ConnectorTarget, context: ConformanceStartContext, pushTo: (url: string) => () => void): Promise<RunningTarget> {
  if (target.kind === 'module') {
    await target.module.start(context);
    const { module } = target;
    const send = module.sendIncoming;
    const channel = module.channelMessage;
    return {
      ...(send === undefined ? {} : { sendIncoming: (input: IncomingInput) => send.call(module, input) }),
      ...(channel === undefined ? {} : { channelMessage: (id: string) => channel.call(module, id) }),
      stop: async () => {
        await module.stop();
      },
    };
  }
  const child = spawn(target.command, {
    shell: true,
    detached: true,
    cwd: target.cwd ?? process.cwd(),
    env: { ...process.env, ...target.env, ...processEnv(context) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = target.output ?? (() => undefined);
  child.stdout?.on('data', (c: Buffer) => output(c.toString('utf8')));
  child.stderr?.on('data', (c: Buffer) => output(c.toString('utf8')));
  // Pushes are retried until the process answers 2xx (as Pub/Sub does), so none is lost while it starts.
  const stopPushing = pushTo(target.pushUrl);
  const { incomingUrl } = target;
  return {
    ...(incomingUrl === undefined ? {} : { sendIncoming: (input: IncomingInput) => postIncoming(incomingUrl, input) }),
    stop: async () => {
      stopPushing();
      await stopProcess(child, 5_000);
    },
  };
}

/** Whether the connector under test declares it handles a reply window (`windows`, `--windows`). */
export function windowsOf(target: ConnectorTarget): boolean {
  return (target.kind === 'module' ? target.module.windows : target.windows) === true;
}

/** The kinds of address the connector under test declares it starts conversations by (`starts`, `--starts`), in the contract's order; empty: none. */
export function startsOf(target: ConnectorTarget): StartAddressKind[] {
  const declared: readonly unknown[] = (target.kind === 'module' ? target.module.starts : target.starts) ?? [];
  return START_ADDRESS_KINDS.filter((kind) => Array.isArray(declared) && declared.includes(kind));
}

/** What the connector under test declares it implements after the send. */
export function lifecycleOf(target: ConnectorTarget): LifecycleDeclaration {
  const declared = target.kind === 'module' ? target.module.lifecycle : target.lifecycle;
  return byLifecycleKind((kind) => declared?.[kind] === true);
}
