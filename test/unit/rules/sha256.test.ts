import { createHash, randomBytes } from 'node:crypto';
import { sha256Hex } from '../../../functions/src/rules/sha256';

const native = (input: string | Uint8Array): string => createHash('sha256').update(input).digest('hex');

describe('sha256Hex (the rules\' own SHA-256)', () => {
  it('matches the published test vectors', () => {
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256Hex('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')).toBe('248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1');
  });

  it('matches node:crypto on every length around the block boundaries, strings (UTF-8) and bytes', () => {
    for (let length = 0; length <= 200; length++) {
      const bytes = randomBytes(length);
      expect(sha256Hex(bytes)).toBe(native(bytes));
    }
    for (const text of ['trace:d_abc', 'żółć 🙂 \u202e', 'x'.repeat(1000)]) expect(sha256Hex(text)).toBe(native(text));
  });
});
