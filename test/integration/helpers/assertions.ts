/**
 * Jest assertions shared by the integration suites: the error envelope (docs/contract.md#errors), the request
 * id header, and "a rejected request wrote nothing".
 */
import { type ApiResponse, type TestIntegration, listImageFilesExceptOtherWorkspaces, workspaceDocPaths } from './stack';

export const SNAKE_CASE = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;

/** Every response of the service carries a request id for support. */
export function expectRequestId(res: ApiResponse): string {
  const id = res.headers.get('x-request-id');
  expect(id).toEqual(expect.stringMatching(/^req_[A-Za-z0-9_-]{8,}$/));
  return id as string;
}

/**
 * Asserts `res` is exactly `{ "error": { "code": <snake_case>, "message"?: string } }` with the
 * given status and code, a JSON content type and a request id. Returns the message ('' if none).
 */
export function expectError(res: ApiResponse, status: number, code?: string): string {
  const context = `HTTP ${res.status}: ${res.text.slice(0, 500)}`;
  expect({ status: res.status, context }).toEqual({ status, context });
  expect(res.headers.get('content-type') ?? '').toMatch(/^application\/json/);
  expectRequestId(res);
  const body = res.body as Record<string, unknown>;
  expect(typeof body).toBe('object');
  expect(Object.keys(body)).toEqual(['error']);
  const error = body.error as Record<string, unknown>;
  expect(typeof error).toBe('object');
  expect(error).not.toBeNull();
  const keys = Object.keys(error).sort();
  expect(keys.every((k) => k === 'code' || k === 'message')).toBe(true);
  expect(keys).toContain('code');
  expect(error.code).toEqual(expect.stringMatching(SNAKE_CASE));
  if (code !== undefined) expect(error.code).toBe(code);
  if ('message' in error) expect(typeof error.message).toBe('string');
  return typeof error.message === 'string' ? error.message : '';
}

/** Asserts a success body of POST /v1/messages and returns it. */
export function expectAccepted(res: ApiResponse, status: 200 | 201): { conversationId: string; messageId: string; duplicate: boolean } {
  const context = `HTTP ${res.status}: ${res.text.slice(0, 500)}`;
  expect({ status: res.status, context }).toEqual({ status, context });
  expectRequestId(res);
  const body = res.body as { conversationId: string; messageId: string; duplicate: boolean };
  expect(body).toEqual({
    conversationId: expect.stringMatching(/^[A-Za-z0-9_-]{1,128}$/),
    messageId: expect.stringMatching(/^[A-Za-z0-9_-]{1,128}$/),
    duplicate: status === 200,
  });
  return body;
}

/**
 * Snapshot before a request that must be rejected; the returned check asserts that afterwards the
 * workspace holds only its integration document and that no image file appeared anywhere in the
 * image store (including temporary files) but in other workspaces' directories, where suites
 * running at the same time write their own.
 */
export async function guardNoWrites(integration: TestIntegration): Promise<() => Promise<void>> {
  const images = () => listImageFilesExceptOtherWorkspaces([integration.workspaceId]);
  const imagesBefore = await images();
  return async () => {
    expect(await workspaceDocPaths(integration.workspaceId)).toEqual([`integrations/${integration.integrationId}`]);
    expect(await images()).toEqual(imagesBefore);
  };
}
