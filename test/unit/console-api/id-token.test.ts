/**
 * The ID-token check every console function runs (functions/src/platform/http/id-token.ts
 * `verifiedUid`, which `idTokenUid` calls with the Admin SDK's Auth): it always asks the Admin SDK
 * to check revocation and disabled users. Against the Auth emulator the Admin SDK checks them even
 * without the flag, so the emulator suites cannot tell; this test records what is passed.
 */
import { verifiedUid, type IdTokenVerifier } from '../../../functions/src/platform/http/id-token';

// The refusals' log lines (firebase-functions' logger writes them with console.warn) are not this test's subject.
beforeEach(() => jest.spyOn(console, 'warn').mockImplementation(() => undefined));
afterEach(() => jest.restoreAllMocks());

/** A stand-in for the Admin SDK's Auth: records each call, answers with `outcome`. */
function verifier(outcome: { uid: string } | { code: string }): IdTokenVerifier & { calls: Array<[string, boolean | undefined]> } {
  const calls: Array<[string, boolean | undefined]> = [];
  return {
    calls,
    verifyIdToken(idToken: string, checkRevoked?: boolean) {
      calls.push([idToken, checkRevoked]);
      if ('uid' in outcome) return Promise.resolve(outcome);
      return Promise.reject(Object.assign(new Error(`refused: ${outcome.code}`), { code: outcome.code }));
    },
  };
}

test('a valid token: its uid, checked with checkRevoked = true', async () => {
  const auth = verifier({ uid: 'user-1' });
  await expect(verifiedUid(auth, 'token-1', 'test.unauthenticated')).resolves.toBe('user-1');
  expect(auth.calls).toEqual([['token-1', true]]);
});

test.each(['auth/id-token-revoked', 'auth/user-disabled', 'auth/user-not-found', 'auth/id-token-expired', 'auth/argument-error'])('%s: refused (null: 401 invalid_token)', async (code) => {
  const auth = verifier({ code });
  await expect(verifiedUid(auth, 'token-1', 'test.unauthenticated')).resolves.toBeNull();
  expect(auth.calls).toEqual([['token-1', true]]);
});

test.each(['auth/internal-error', 'app/network-error'])('%s: the Auth backend did not answer, a 503 with Retry-After (the user stays signed in)', async (code) => {
  await expect(verifiedUid(verifier({ code }), 'token-1', 'test.unauthenticated')).rejects.toMatchObject({ status: 503, code: 'temporarily_unavailable', retryAfterSeconds: 5 });
});
