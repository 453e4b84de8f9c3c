/**
 * The console function's rules (docs/console.md#console-endpoints), pure: what an uploaded file's
 * name becomes, whether an upload fits its conversation's capability, and which stored file a
 * media request names. ./upload.ts and ./media.ts apply them; test/unit/console-api/rules.test.ts
 * checks them.
 */
import { ATTACHMENT_LIMITS, codePointLength, isAttachmentContentType, type AttachmentCapability, type AttachmentContentType } from '../contract';
import { DEFAULT_FILE_NAME, withoutInvisibleCharacters } from '../contract/file-names';
import { BadRequestError, ConflictError, PayloadTooLargeError, UnsupportedMediaTypeError, type ApiError } from '../rules/errors';
import { isStorableDocumentId } from '../platform/ids';

/** The name of a file whose part gave none (or only characters that are removed). */
export const DEFAULT_UPLOAD_NAME = DEFAULT_FILE_NAME;

/**
 * The longest extension kept whole when a long name is shortened (`.jpeg`, `.tar.gz` are shorter).
 * What follows the last dot of a long name is often no extension at all (`Minutes 3.5 of the
 * meeting with ...`): kept whole whatever its length, it would push the name itself out.
 */
const MAX_KEPT_EXTENSION = 16;

/**
 * The stored `name` of an upload (docs/contract.md#attachments: 1 to 255 code points): the last
 * segment of the client's file name (browsers send the bare name, older ones a Windows path), in
 * NFC, without control characters, bidi controls and invisible characters
 * (../contract/file-names.ts), trimmed; `attachment` when nothing is left; shortened to the limit
 * keeping its extension (the part from the last dot, when at most 16 code points). The bytes' type
 * is sniffed, never taken from the name; a connector sanitises the name for its channel.
 */
export function uploadName(raw: string | undefined): string {
  // Browsers escape `"`, CR and LF in a multipart file name as %22, %0D and %0A (the HTML standard's
  // form encoding); read back, a quote is a quote and CR/LF go with the other control characters.
  const unescaped = (raw ?? '').replace(/%22/g, '"').replace(/%0[DA]/gi, '\n');
  const segment = unescaped.split(/[\\/]/).at(-1) ?? '';
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is removed
  const cleaned = withoutInvisibleCharacters(segment.normalize('NFC').replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, '')).trim();
  if (cleaned === '' || cleaned === '.' || cleaned === '..') return DEFAULT_UPLOAD_NAME;
  if (codePointLength(cleaned) <= ATTACHMENT_LIMITS.name) return cleaned;
  const points = [...cleaned];
  const dot = cleaned.lastIndexOf('.');
  const extension = dot > 0 ? [...cleaned.slice(dot)] : [];
  const kept = extension.length > 0 && extension.length <= MAX_KEPT_EXTENSION ? extension : [];
  return [...points.slice(0, ATTACHMENT_LIMITS.name - kept.length), ...kept].join('');
}

/** What the upload's checks need to know about the file and its conversation. */
export interface UploadFacts {
  /** The type the bytes are (../deliveries/sniff.ts), or null when they are none of the six. */
  sniffed: AttachmentContentType | null;
  /** The part's declared Content-Type (any value; only compared with what the bytes are). */
  declared: string | undefined;
  size: number;
  /** The capability of the conversation's integration; null when it takes no files. */
  capability: AttachmentCapability | null;
}

const TYPE_NAMES: Record<AttachmentContentType, string> = {
  'image/png': 'PNG',
  'image/jpeg': 'JPEG',
  'image/webp': 'static WebP',
  'image/gif': 'GIF',
  'application/pdf': 'PDF',
  'text/plain': 'plain text (UTF-8)',
};

/** The declared type when it is one of the attachment types (without parameters), else null. */
function declaredType(declared: string | undefined): AttachmentContentType | null {
  const type = (declared ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  return isAttachmentContentType(type) ? type : null;
}

/**
 * Why an upload is refused, or null when it may be stored (docs/console.md#console-endpoints), in
 * this order: the integration takes no files (409 `attachments_unsupported`); the bytes are none of
 * the six types, whatever was declared, or the part declares one of the six and the bytes are
 * another (a lying type: 415 `unsupported_attachment_type`); the integration does not take that type
 * (415, same code); the file is empty or over the capability's `maxBytes` (400 `invalid_request` /
 * 413 `attachment_too_large`). A declared type outside the six (`application/octet-stream`,
 * `text/csv`) is no claim about our types: the bytes decide.
 */
export function uploadRefusal(facts: UploadFacts): ApiError | null {
  const { sniffed, size, capability } = facts;
  const declared = declaredType(facts.declared);
  if (capability === null) {
    return new ConflictError('attachments_unsupported', "This conversation's integration takes no files in replies (an admin may allow them on the integration).");
  }
  if (size === 0) return new BadRequestError('invalid_request', 'file: is empty.');
  const accepted = capability.contentTypes.map((t) => TYPE_NAMES[t]).join(', ');
  if (sniffed === null) {
    return new UnsupportedMediaTypeError('unsupported_attachment_type', `file: its bytes are not a file type replies may carry (this integration accepts ${accepted}).`);
  }
  if (declared !== null && declared !== sniffed) {
    return new UnsupportedMediaTypeError('unsupported_attachment_type', `file: is declared ${TYPE_NAMES[declared]} but its bytes are ${TYPE_NAMES[sniffed]}.`);
  }
  if (!capability.contentTypes.includes(sniffed)) {
    return new UnsupportedMediaTypeError('unsupported_attachment_type', `file: is ${TYPE_NAMES[sniffed]}; this integration accepts ${accepted}.`);
  }
  if (size > capability.maxBytes) {
    return new PayloadTooLargeError('attachment_too_large', `file: is ${size} bytes; this integration accepts files up to ${capability.maxBytes} bytes.`);
  }
  return null;
}

/** A stored file a media request names: an incoming image of a message, or a reply's attachment. */
export type MediaRef =
  | { kind: 'image'; workspaceId: string; conversationId: string; messageId: string; index: number }
  | { kind: 'attachment'; workspaceId: string; conversationId: string; attachmentId: string };

/** The most images a message has (docs/contract.md#limits: 3); a larger index names nothing. */
const MAX_IMAGE_INDEX = 99;

const single = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/**
 * The media reference of a `GET /console/v1/media` query: `workspaceId`, `conversationId`, and
 * either `messageId` + `image` (the image's index, 0-based) or `attachmentId`. Anything else is a
 * 400 `invalid_request` naming the parameter.
 */
export function parseMediaQuery(query: Record<string, unknown>): MediaRef {
  const workspaceId = single(query.workspaceId);
  const conversationId = single(query.conversationId);
  const bad = (detail: string) => new BadRequestError('invalid_request', `${detail} (query: workspaceId, conversationId, then messageId and image, or attachmentId).`);
  if (workspaceId === undefined || !isStorableDocumentId(workspaceId)) throw bad('workspaceId: is required');
  if (conversationId === undefined || !isStorableDocumentId(conversationId)) throw bad('conversationId: is required');
  const messageId = single(query.messageId);
  const image = single(query.image);
  const attachmentId = single(query.attachmentId);
  if (attachmentId !== undefined && messageId === undefined && image === undefined) {
    if (!isStorableDocumentId(attachmentId) || attachmentId.length > ATTACHMENT_LIMITS.id) throw bad('attachmentId: is not an attachment id');
    return { kind: 'attachment', workspaceId, conversationId, attachmentId };
  }
  if (messageId !== undefined && image !== undefined && attachmentId === undefined) {
    if (!isStorableDocumentId(messageId)) throw bad('messageId: is not a message id');
    if (!/^(0|[1-9][0-9]?)$/.test(image) || Number(image) > MAX_IMAGE_INDEX) throw bad('image: is the index of an image of the message (0, 1, 2)');
    return { kind: 'image', workspaceId, conversationId, messageId, index: Number(image) };
  }
  throw bad('name either messageId and image, or attachmentId');
}
