/**
 * A real `node:http` server for the SDK tests (no fetch mocks): every request is recorded with
 * its headers and raw body, and answered by a scripted handler.
 */
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** The body parsed as JSON when the content type says JSON. */
  json: unknown;
}

export type Handler = (req: RecordedRequest, res: http.ServerResponse, index: number) => unknown;

export interface TestServer {
  url: string;
  requests: RecordedRequest[];
  /** Replace the handler between steps of a test. */
  setHandler(handler: Handler): void;
  close(): Promise<void>;
}

export function reply(res: http.ServerResponse, status: number, body?: unknown, headers: Record<string, string> = {}): void {
  const text = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': typeof body === 'string' ? 'text/plain' : 'application/json', ...headers });
  res.end(text);
}

export function errorReply(res: http.ServerResponse, status: number, code: string, message?: string, headers: Record<string, string> = {}): void {
  reply(res, status, { error: message === undefined ? { code } : { code, message } }, headers);
}

export async function startServer(handler: Handler = (_req, res) => reply(res, 404, { error: { code: 'not_found' } })): Promise<TestServer> {
  let current = handler;
  const requests: RecordedRequest[] = [];
  const sockets = new Set<import('node:net').Socket>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      let json: unknown;
      if ((req.headers['content-type'] ?? '').startsWith('application/json')) {
        try {
          json = JSON.parse(body.toString('utf8'));
        } catch {
          json = undefined;
        }
      }
      const recorded: RecordedRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, json };
      requests.push(recorded);
      Promise.resolve(current(recorded, res, requests.length - 1)).catch((err: unknown) => {
        res.destroy(err instanceof Error ? err : new Error(String(err)));
      });
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    setHandler(h) {
      current = h;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * A URL on which nothing listens (connection refused): port 2 of the loopback. A port the system
 * handed out and took back (listen on 0, then close) may be handed to another suite's server before
 * the request arrives: in a fresh-clone npm test the "closed" default host of the fallback scenario
 * once got an answer that was not a refusal, and the SDK tried it twice. Ports below 1024 are never
 * handed out for listen(0), and nothing here listens on port 2: checked once per test file. (Not
 * port 1: fetch refuses the ports on the Fetch standard's blocked list, 1 among them.)
 */
export async function closedPortUrl(): Promise<string> {
  refusalChecked ??= new Promise<void>((resolve, reject) => {
    const socket = net.connect(REFUSING_PORT, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      reject(new Error(`something listens on 127.0.0.1:${REFUSING_PORT}; the tests need a port that refuses connections`));
    });
    socket.once('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNREFUSED' ? resolve() : reject(err)));
  });
  await refusalChecked;
  return `http://127.0.0.1:${REFUSING_PORT}`;
}
const REFUSING_PORT = 2;
let refusalChecked: Promise<void> | undefined;

/** A fake `sleep` that records the requested delays and returns at once. */
export function fakeSleep(): { sleep: (ms: number) => Promise<void>; delays: number[] } {
  const delays: number[] = [];
  return {
    delays,
    sleep: async (ms: number) => {
      delays.push(ms);
    },
  };
}

export const KEY = 'sdk_live_TESTKEY0123456789abcdefghijklmnopqrstuvwxyzABCDE';
