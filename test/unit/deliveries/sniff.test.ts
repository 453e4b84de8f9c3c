import { sniffAttachmentType } from '../../../functions/src/deliveries/sniff';

const b = (...parts: Array<string | number[]>): Buffer => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : Buffer.from(p))));
const webp = (chunk: string, flags = 0): Buffer => b('RIFF', [0, 0, 0, 0], 'WEBP', chunk, [10, 0, 0, 0], [flags, 0, 0, 0], [0, 0, 0, 0, 0, 0]);

test.each([
  ['PNG', b([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'rest'), 'image/png'],
  ['JPEG', b([0xff, 0xd8, 0xff, 0xe0], 'rest'), 'image/jpeg'],
  ['GIF89a', b('GIF89a', [1, 0]), 'image/gif'],
  ['GIF87a', b('GIF87a', [1, 0]), 'image/gif'],
  ['PDF', b('%PDF-1.7\n', [0, 1, 2]), 'application/pdf'],
  ['static WebP (VP8)', webp('VP8 '), 'image/webp'],
  ['static WebP (VP8L)', webp('VP8L'), 'image/webp'],
  ['static WebP (VP8X, no animation flag)', webp('VP8X', 0x10), 'image/webp'],
  ['UTF-8 text', Buffer.from('Grüße, 世界 🙂\n'), 'text/plain'],
])('%s is %s', (_name, bytes, type) => {
  expect(sniffAttachmentType(bytes)).toBe(type);
});

test.each([
  ['an animated WebP', webp('VP8X', 0x02)],
  ['an empty file', Buffer.alloc(0)],
  ['text with a NUL', Buffer.from('abc\u0000def')],
  ['invalid UTF-8', Buffer.from([0x61, 0xc3, 0x28])],
  ['a ZIP pretending to be anything', b('PK', [3, 4, 0, 0, 0xff, 0xfe])],
  ['an HTML file is text, but an EXE is not', b('MZ', [0x90, 0, 3, 0, 0, 0, 4, 0, 0, 0, 0xff, 0xff])],
])('%s is refused', (_name, bytes) => {
  expect(sniffAttachmentType(bytes)).toBeNull();
});
