/**
 * Pure parts of the runtime contract (docs/contract.md#time-budget): how a body-parser failure maps to our errors,
 * and the request deadline.
 */
import { BadRequestError, PayloadTooLargeError, ServiceUnavailableError, UnsupportedMediaTypeError } from '../../../functions/src/rules/errors';
import { Deadline, DEADLINE_RETRY_AFTER_SECONDS } from '../../../functions/src/platform/http/deadline';
import { apiErrorForUnreadableBody } from '../../../functions/src/platform/http/runtime';

describe('apiErrorForUnreadableBody', () => {
  test.each([
    [{ type: 'entity.parse.failed', status: 400 }, BadRequestError, 400, 'invalid_json'],
    [{ type: 'charset.unsupported', status: 415, charset: 'latin1' }, UnsupportedMediaTypeError, 415, 'unsupported_media_type'],
    [{ type: 'encoding.unsupported', status: 415, encoding: 'compress' }, UnsupportedMediaTypeError, 415, 'unsupported_media_type'],
    [{ type: 'entity.too.large', status: 413 }, PayloadTooLargeError, 413, 'payload_too_large'],
    [{ type: 'parameters.too.many', status: 413 }, UnsupportedMediaTypeError, 415, 'unsupported_media_type'],
    [{ type: 'request.size.invalid', status: 400 }, BadRequestError, 400, 'invalid_request'],
    [{ status: 400, code: 'Z_DATA_ERROR' }, BadRequestError, 400, 'invalid_request'],
    [{ status: 413 }, PayloadTooLargeError, 413, 'payload_too_large'],
    [{ status: 415 }, UnsupportedMediaTypeError, 415, 'unsupported_media_type'],
    [{ type: 'stream.not.readable', status: 500 }, ServiceUnavailableError, 503, 'temporarily_unavailable'],
    [new Error('anything else'), ServiceUnavailableError, 503, 'temporarily_unavailable'],
    ['not even an object', ServiceUnavailableError, 503, 'temporarily_unavailable'],
  ])('%j -> %p %i %s', (err, cls, status, code) => {
    const error = apiErrorForUnreadableBody(err);
    expect(error).toBeInstanceOf(cls);
    expect({ status: error.status, code: error.code }).toEqual({ status, code });
    if (status === 503) expect(error.retryAfterSeconds).toBeGreaterThan(0);
  });

  test('messages never echo the parser message or the body', () => {
    const error = apiErrorForUnreadableBody({ type: 'entity.parse.failed', status: 400, body: '{"secret":', message: 'Unexpected token s' });
    expect(error.message).not.toMatch(/secret|Unexpected token/);
  });
});

describe('Deadline', () => {
  test('assertTimeLeft throws 503 deadline_exceeded with Retry-After once the budget is spent', () => {
    let now = 1_000;
    const deadline = new Deadline(2_000, () => now);
    expect(deadline.remainingMs()).toBe(1_000);
    expect(() => deadline.assertTimeLeft()).not.toThrow();
    now = 2_000;
    expect(() => deadline.assertTimeLeft()).toThrow(expect.objectContaining({ status: 503, code: 'deadline_exceeded', retryAfterSeconds: DEADLINE_RETRY_AFTER_SECONDS }));
  });

  test('race: work that finishes in time wins, and nothing is reported late', async () => {
    const late = jest.fn();
    await expect(new Deadline(Date.now() + 1_000).race(Promise.resolve('done'), late)).resolves.toBe('done');
    expect(late).not.toHaveBeenCalled();
  });

  test('race: the budget wins over hung work; the work ending later is reported, not unhandled', async () => {
    let finish: (v: string) => void = () => undefined;
    const work = new Promise<string>((resolve) => (finish = resolve));
    const late = jest.fn();
    await expect(new Deadline(Date.now() + 20).race(work, late)).rejects.toMatchObject({ code: 'deadline_exceeded' });
    finish('committed');
    await work;
    await Promise.resolve();
    expect(late).toHaveBeenCalledWith({ status: 'fulfilled', value: 'committed' });
  });

  test('race: hung work that fails later is reported as rejected', async () => {
    let fail: (e: Error) => void = () => undefined;
    const work = new Promise<string>((_resolve, reject) => (fail = reject));
    const late = jest.fn();
    await expect(new Deadline(Date.now() + 20).race(work, late)).rejects.toMatchObject({ code: 'deadline_exceeded' });
    const reason = new Error('gave up');
    fail(reason);
    await work.catch(() => undefined);
    await Promise.resolve();
    expect(late).toHaveBeenCalledWith({ status: 'rejected', reason });
  });
});
