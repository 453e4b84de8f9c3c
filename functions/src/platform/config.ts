import * as z from 'zod';
import { SHARD_COUNTS } from '../contract';
import { DEFAULT_UNCLAIMED_EXPIRY_MS } from '../rules/record';

/**
 * Runtime configuration, parsed once at cold start from the environment (functions/.env for
 * deployments, overridden by the local stack). A bad value fails the instance at load time with
 * a message naming the variable, instead of failing requests later.
 */
const intFromEnv = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

const DURATION_UNITS_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
/** A duration such as `24h`, `90m`, `3600s` or `2d` (a whole number and one unit), in ms, within [min, max]. */
const durationFromEnv = (minMs: number, maxMs: number) =>
  z
    .string()
    .regex(/^[1-9][0-9]{0,6}[smhd]$/, 'a whole number and a unit: s, m, h or d (e.g. 24h)')
    .transform((v) => Number(v.slice(0, -1)) * DURATION_UNITS_MS[v.slice(-1) as keyof typeof DURATION_UNITS_MS])
    .refine((ms) => ms >= minMs && ms <= maxMs, `between ${minMs / 60_000} minutes and ${maxMs / 86_400_000} days`);

const ConfigSchema = z.object({
  /** Default incoming rate limit per integration per instance; an integration may override it. */
  MESSAGES_PER_MINUTE_DEFAULT: intFromEnv(1, 1_000_000).default(1200),
  /** Key lookups are cached per instance; docs/contract.md#authentication caps revocation latency at 30 s. */
  KEY_CACHE_TTL_MS: intFromEnv(0, 30_000).default(20_000),
  /** Unknown keys are remembered briefly so a flood of bad keys does not hit Firestore. */
  KEY_NEGATIVE_CACHE_TTL_MS: intFromEnv(0, 30_000).default(5_000),
  /** Idempotency records live at least 30 days (docs/contract.md#idempotency). */
  EVENT_RETENTION_DAYS: intFromEnv(30, 3650).default(30),
  /** Where images go: Cloud Storage in deployments; a local directory under the emulators. */
  IMAGE_STORE: z.enum(['gcs', 'local']).optional(),
  LOCAL_IMAGE_DIR: z.string().min(1).optional(),
  /**
   * Cloud Storage bucket for images, required with IMAGE_STORE=gcs (projects created since late
   * 2024 have no default bucket). Missing, it does not stop the instance: messages with images
   * are refused with 503 `image_store_unavailable` and an ERROR log naming it (messages/image-store.ts).
   */
  // An empty `IMAGE_BUCKET=` line in functions/.env counts as missing, not as a bad value.
  IMAGE_BUCKET: z.preprocess((v) => (v === '' ? undefined : v), z.string().min(1).optional()),
  /**
   * Every HTTP request is answered within this budget from its arrival: below Firebase Hosting's
   * 60 s timeout, so a hung call ends in our 503 rather than the front end's HTML error page.
   */
  REQUEST_DEADLINE_MS: intFromEnv(1_000, 55_000).default(50_000),
  /**
   * A claimable delivery nobody claims for this long fails `not_claimed` and releases the next
   * reply (docs/contract.md#liveness). At least 10 minutes (two re-notifications), at most 30 days.
   */
  UNCLAIMED_EXPIRY: durationFromEnv(10 * 60_000, 30 * 86_400_000).prefault(`${DEFAULT_UNCLAIMED_EXPIRY_MS / 3_600_000}h`),
  /** docs/operations.md#operational-events: a head reply claimable this long blocks its conversation (`conversation.blocked`). */
  OPS_BLOCKED_AFTER: durationFromEnv(60_000, 86_400_000).prefault('15m'),
  /** docs/operations.md#operational-events: an integration whose oldest claimable delivery waits this long is unhealthy. */
  OPS_UNHEALTHY_AFTER: durationFromEnv(60_000, 86_400_000).prefault('15m'),
  /**
   * Shards of the queue-like indexes the sweeper reads (outbox, delivery checks): each is one index
   * range of ~500 writes/s (docs/capacity.md). Raise only, never lower (platform/shards.ts).
   */
  QUEUE_SHARDS: intFromEnv(SHARD_COUNTS.queue.min, SHARD_COUNTS.queue.max).default(SHARD_COUNTS.queue.default),
  /**
   * Shards of the per-integration catch-up list index and health indexes (docs/capacity.md); a
   * page reads every shard. Raise only, never lower. Only the service reads these indexes; the
   * console's conversation list has the contract's fixed `CONVERSATION_LIST_SHARDS`.
   */
  LIST_SHARDS: intFromEnv(SHARD_COUNTS.list.min, SHARD_COUNTS.list.max).default(SHARD_COUNTS.list.default),
  /**
   * The retention job also deletes documents whose `expireAt` has passed (docs/privacy.md#retention):
   * the emulator runs no TTL deletion, so this is on by default there and off in deployments.
   */
  RETENTION_DELETE_EXPIRED: z.enum(['true', 'false']).optional(),
  FUNCTIONS_EMULATOR: z.string().optional(),
  STORAGE_EMULATOR_HOST: z.string().optional(),
});

export interface Config {
  messagesPerMinuteDefault: number;
  keyCacheTtlMs: number;
  keyNegativeCacheTtlMs: number;
  eventRetentionMs: number;
  requestDeadlineMs: number;
  unclaimedExpiryMs: number;
  opsBlockedAfterMs: number;
  opsUnhealthyAfterMs: number;
  queueShards: number;
  listShards: number;
  imageStore: { kind: 'gcs'; bucket: string | undefined } | { kind: 'local'; dir: string };
  retentionDeletesExpired: boolean;
}

/** Parses an environment into a Config; throws an Error that names every bad variable. */
export function parseConfig(env: NodeJS.ProcessEnv): Config {
  const parsed = ConfigSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`Invalid configuration: ${problems}`);
  }
  const e = parsed.data;
  // Under the emulators without a Storage emulator (it cannot run offline), images go to a
  // local directory; deployments always use Cloud Storage.
  const underEmulatorWithoutStorage = e.FUNCTIONS_EMULATOR === 'true' && !e.STORAGE_EMULATOR_HOST;
  const kind = e.IMAGE_STORE ?? (underEmulatorWithoutStorage ? 'local' : 'gcs');
  return {
    messagesPerMinuteDefault: e.MESSAGES_PER_MINUTE_DEFAULT,
    keyCacheTtlMs: e.KEY_CACHE_TTL_MS,
    keyNegativeCacheTtlMs: e.KEY_NEGATIVE_CACHE_TTL_MS,
    eventRetentionMs: e.EVENT_RETENTION_DAYS * 24 * 3600 * 1000,
    requestDeadlineMs: e.REQUEST_DEADLINE_MS,
    unclaimedExpiryMs: e.UNCLAIMED_EXPIRY,
    opsBlockedAfterMs: e.OPS_BLOCKED_AFTER,
    opsUnhealthyAfterMs: e.OPS_UNHEALTHY_AFTER,
    queueShards: e.QUEUE_SHARDS,
    listShards: e.LIST_SHARDS,
    retentionDeletesExpired: (e.RETENTION_DELETE_EXPIRED ?? (e.FUNCTIONS_EMULATOR === 'true' ? 'true' : 'false')) === 'true',
    imageStore:
      kind === 'local'
        ? { kind: 'local', dir: e.LOCAL_IMAGE_DIR ?? '.local/images' }
        : { kind: 'gcs', bucket: e.IMAGE_BUCKET },
  };
}

let cached: Config | undefined;
/** The process-wide configuration, parsed on first use (cold start). */
export function config(): Config {
  cached ??= parseConfig(process.env);
  return cached;
}
