/**
 * What the framework-only tests need around a functions-framework process: starting one with its
 * own environment, and injecting hangs into what it talks to.
 */
import net from 'node:net';
import { startFunction as startFrameworkFunction, type FrameworkFunction } from '../../scripts/lib/framework.mjs';
import { expectError } from '../integration/helpers/assertions';
import type { ApiResponse } from '../integration/helpers/stack';

export type { FrameworkFunction };

/**
 * Ports from FRAMEWORK_TEST_PORT, 20 per Jest worker: npm test runs these suites in parallel
 * workers (scripts/test-stack.mjs), each starting its own processes.
 */
const PORTS_PER_WORKER = 20;
let nextPort = Number(process.env.FRAMEWORK_TEST_PORT ?? 5260) + (Number(process.env.JEST_WORKER_ID ?? 1) - 1) * PORTS_PER_WORKER;

/** Starts `target` in its own functions-framework process (NODE_ENV=production) with `env` on top of the test environment. */
export function startFunction(target: string, env: Record<string, string>): Promise<FrameworkFunction> {
  return startFrameworkFunction({ target, port: nextPort++, env });
}

export interface Hang {
  /** `host:port` to point a client at. */
  host: string;
  /** Connections accepted so far. */
  connections(): number;
  close(): Promise<void>;
}

/** A TCP server that accepts connections and never answers: every call through it hangs. */
export function blackHole(): Promise<Hang> {
  const sockets = new Set<net.Socket>();
  let accepted = 0;
  const server = net.createServer((socket) => {
    accepted++;
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  return listening(server, sockets, () => accepted);
}

/**
 * A TCP proxy to `target` that delays every chunk from the client by `delayMs`: each round trip
 * of a client through it (gRPC to the Firestore emulator) takes at least that long, in order.
 */
export function slowProxy(target: string, delayMs: number): Promise<Hang> {
  const [targetHost, targetPort] = target.split(':');
  const sockets = new Set<net.Socket>();
  let accepted = 0;
  const server = net.createServer((client) => {
    accepted++;
    const upstream = net.connect(Number(targetPort), targetHost);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => {
        sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    let chain = Promise.resolve();
    client.on('data', (chunk) => {
      chain = chain.then(() => new Promise((resolve) => setTimeout(resolve, delayMs))).then(() => {
        if (!upstream.destroyed) upstream.write(chunk);
      });
    });
    upstream.pipe(client);
  });
  return listening(server, sockets, () => accepted);
}

function listening(server: net.Server, sockets: Set<net.Socket>, accepted: () => number): Promise<Hang> {
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      resolve({
        host: `127.0.0.1:${port}`,
        connections: accepted,
        close: () => {
          for (const s of sockets) s.destroy();
          return new Promise((done) => server.close(() => done()));
        },
      });
    });
  });
}

/**
 * `track(r)` returns `r` and stops it after the suite's tests (an `afterAll` registered here),
 * processes and hangs alike, the last started first.
 */
export function stopsAfterAll(): <T extends FrameworkFunction | Hang>(r: T) => T {
  const running: Array<FrameworkFunction | Hang> = [];
  afterAll(async () => {
    for (const r of running.reverse()) await ('stop' in r ? r.stop() : r.close());
  });
  return (r) => {
    running.push(r);
    return r;
  };
}

/** `call`'s answer and how long it took, in milliseconds. */
export async function timed(call: () => Promise<ApiResponse>): Promise<{ res: ApiResponse; ms: number }> {
  const started = performance.now();
  const res = await call();
  return { res, ms: performance.now() - started };
}

/** The answer of a request whose budget ran out (docs/contract.md#time-budget). */
export function expectDeadlineExceeded(res: ApiResponse): void {
  expectError(res, 503, 'deadline_exceeded');
  expect(res.headers.get('retry-after')).toBe('5');
}
