/** The text of an incoming message (pure). */
import { convert } from 'html-to-text';

/** Most characters (code points) of a message text the API accepts. */
export const MAX_TEXT_LENGTH = 10_000;

/**
 * HTML -> readable plain text, for a mail without a text part: paragraphs and line breaks kept,
 * links as `text [url]`, images, scripts and styles dropped, no hard wrapping (the console wraps).
 */
export function htmlToPlainText(html: string): string {
  return convert(html, {
    wordwrap: false,
    selectors: [
      { selector: 'img', format: 'skip' },
      { selector: 'a', options: { hideLinkHrefIfSameAsText: true, ignoreHref: false } },
      { selector: 'h1', options: { uppercase: false } },
      { selector: 'h2', options: { uppercase: false } },
      { selector: 'h3', options: { uppercase: false } },
      { selector: 'table', format: 'dataTable', options: { uppercaseHeaderCells: false } },
    ],
  }).trim();
}

/** An attachment that is not sent as an image, and why. */
export interface OmittedAttachment {
  filename: string;
  contentType: string;
  size: number;
  /** e.g. "not an image", "more than 3 images", "over 10 MB". */
  reason: string;
}

export interface MessageTextParts {
  /** The subject, shown as the first line when the mail starts a thread. */
  subject?: string | undefined;
  body: string;
  omitted: readonly OmittedAttachment[];
}

const codePoints = (s: string): number => [...s].length;

function humanSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/**
 * The message text: the subject line (when given), the body, then one line per attachment that
 * was not sent as an image. Never longer than the API's limit: the body is cut (with a marker),
 * the attachment list is kept, since the operator must know what the customer sent.
 */
export function composeMessageText(parts: MessageTextParts): string {
  const head = parts.subject !== undefined && parts.subject.trim() !== '' ? `Subject: ${parts.subject.trim()}\n\n` : '';
  const tail =
    parts.omitted.length === 0
      ? ''
      : `\n\n[Attachments not shown: ${parts.omitted.map((a) => `${a.filename} (${a.contentType}, ${humanSize(a.size)}; ${a.reason})`).join(', ')}]`;
  const body = parts.body.replace(/\r\n?/g, '\n').trim();
  const full = `${head}${body}${tail}`;
  if (codePoints(full) <= MAX_TEXT_LENGTH) return full.trim();
  const marker = '\n[… message truncated]';
  const room = MAX_TEXT_LENGTH - codePoints(head) - codePoints(tail) - codePoints(marker);
  if (room <= 0) return [...full].slice(0, MAX_TEXT_LENGTH).join('');
  return `${head}${[...body].slice(0, room).join('')}${marker}${tail}`;
}
