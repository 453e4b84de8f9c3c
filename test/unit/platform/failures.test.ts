import { GRPC, isTransientFailure, retryTransient, TRIGGER_ATTEMPTS } from '../../../functions/src/platform/failures';

const grpcError = (code: number, message: string): Error => Object.assign(new Error(`${code} ${message}`), { code });

describe('isTransientFailure', () => {
  test.each([
    ['aborted (contention)', grpcError(GRPC.ABORTED, 'ABORTED: too much contention')],
    ['unavailable', grpcError(GRPC.UNAVAILABLE, 'UNAVAILABLE: connection reset')],
    ['deadline exceeded', grpcError(GRPC.DEADLINE_EXCEEDED, 'DEADLINE_EXCEEDED')],
    ['transaction dropped by the emulator', grpcError(GRPC.INVALID_ARGUMENT, 'INVALID_ARGUMENT: Transaction is invalid or closed.')],
    ['transaction expired in Firestore', grpcError(GRPC.INVALID_ARGUMENT, 'INVALID_ARGUMENT: The referenced transaction has expired or is no longer valid.')],
  ])('%s is transient', (_name, err) => {
    expect(isTransientFailure(err)).toBe(true);
  });

  test.each([
    ['any other invalid argument (a bug)', grpcError(GRPC.INVALID_ARGUMENT, 'INVALID_ARGUMENT: Value for argument "data" is not a valid Firestore document.')],
    ['permission denied', grpcError(GRPC.PERMISSION_DENIED, 'PERMISSION_DENIED')],
    ['a plain error', new Error('boom')],
    ['a thrown string', 'boom'],
  ])('%s is not', (_name, err) => {
    expect(isTransientFailure(err)).toBe(false);
  });
});

describe('retryTransient', () => {
  test('runs the work again after transient failures and returns its result', async () => {
    let calls = 0;
    const result = await retryTransient(async () => {
      calls += 1;
      if (calls < 3) throw grpcError(GRPC.INVALID_ARGUMENT, 'Transaction is invalid or closed.');
      return 'done';
    }, TRIGGER_ATTEMPTS, 1);
    expect(result).toBe('done');
    expect(calls).toBe(3);
  });

  test('rethrows the last transient failure after the attempts are used up', async () => {
    let calls = 0;
    const failure = grpcError(GRPC.ABORTED, 'contention');
    await expect(retryTransient(async () => {
      calls += 1;
      throw failure;
    }, 3, 1)).rejects.toBe(failure);
    expect(calls).toBe(3);
  });

  test('does not retry a permanent failure', async () => {
    let calls = 0;
    const failure = grpcError(GRPC.PERMISSION_DENIED, 'denied');
    await expect(retryTransient(async () => {
      calls += 1;
      throw failure;
    }, TRIGGER_ATTEMPTS, 1)).rejects.toBe(failure);
    expect(calls).toBe(1);
  });
});
