/**
 * A console member's side of reply attachments, for tests: a user on the Auth emulator with a
 * membership and an ID token, the integration's capability (as an admin sets it), an upload through
 * `POST /console/v1/attachments`, and a reply that carries uploads (as the console writes it).
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { FieldValue } from 'firebase-admin/firestore';
import { SHARD_COUNTS, type AttachmentContentType } from '../../../functions/src/contract';
import { newAttachmentId, uploadRecord } from '../../../functions/src/console-api/store';
import { adminDb, apiBaseUrl, testImageDir } from './stack';
import { signedUpUser } from './auth-emulator';

export interface Member {
  uid: string;
  idToken: string;
}

/** The uploaded file as the service answers it (and as a reply's `attachments` carry it). */
export interface Uploaded {
  attachmentId: string;
  name: string;
  contentType: string;
  size: number;
  sha256: string;
}

/** A new user on the Auth emulator, made a member of `workspaceId` with `role`, and their ID token. */
export async function newMember(workspaceId: string, role: 'admin' | 'operator' = 'operator'): Promise<Member> {
  const user = await signedUpUser(`member-${randomUUID().slice(0, 8)}@uploads.test`, `pw-${randomUUID()}`);
  await adminDb().doc(`workspaces/${workspaceId}/members/${user.uid}`).set({ role });
  return user;
}

/** Sets `replies.attachments` on an integration (what an admin does in the console). */
export async function allowAttachments(workspaceId: string, integrationId: string, capability: { contentTypes: string[]; maxBytes: number; maxCount: number }): Promise<void> {
  await adminDb().doc(`workspaces/${workspaceId}/integrations/${integrationId}`).update({ 'replies.attachments': capability });
}

/** Uploads one file for a reply in `conversationId`; the status and the parsed answer. */
export async function upload(member: Member, workspaceId: string, conversationId: string, file: { bytes: Buffer; name: string; type: string }): Promise<{ status: number; body: unknown }> {
  const form = new FormData();
  form.append('workspaceId', workspaceId);
  form.append('conversationId', conversationId);
  form.append('file', new Blob([file.bytes], { type: file.type }), file.name);
  const res = await fetch(`${apiBaseUrl()}/console/v1/attachments`, { method: 'POST', headers: { Authorization: `Bearer ${member.idToken}` }, body: form });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: kept as text for the assertion message
  }
  return { status: res.status, body };
}

/** Uploads and expects 201; the answer. */
export async function uploaded(member: Member, workspaceId: string, conversationId: string, file: { bytes: Buffer; name: string; type: string }): Promise<Uploaded> {
  const { status, body } = await upload(member, workspaceId, conversationId, file);
  if (status !== 201) throw new Error(`upload of ${file.name}: ${status} ${JSON.stringify(body)}`);
  return body as Uploaded;
}

/**
 * Stores a file as the upload function does (the upload record, written by the service's own
 * `uploadRecord`, and its object in the functions' local store, docs/data-model.md#attachment-uploads),
 * for suites about what happens after an upload (the connector's side, the cleanup); the upload
 * itself is tested through its endpoint. `createdAt` backdates the upload (the cleanup's 24 hours).
 */
export async function seedUpload(
  workspaceId: string,
  conversationId: string,
  uploadedBy: string,
  file: { bytes: Buffer; name: string; type: string },
  options: { createdAt?: number } = {},
): Promise<Uploaded> {
  const sha256 = createHash('sha256').update(file.bytes).digest('hex');
  const attachmentId = newAttachmentId();
  const record = uploadRecord({
    workspaceId,
    conversationId,
    attachmentId,
    uploadedBy,
    name: file.name,
    // As stored: the type the upload function sniffed (a test may seed one a capability refuses).
    contentType: file.type as AttachmentContentType,
    size: file.bytes.length,
    sha256,
    now: options.createdAt ?? Date.now(),
    shardCount: SHARD_COUNTS.queue.default,
  });
  const storagePath = record.storagePath as string;
  const local = join(testImageDir(), storagePath);
  await mkdir(dirname(local), { recursive: true });
  await writeFile(local, file.bytes);
  await adminDb().doc(`workspaces/${workspaceId}/attachmentUploads/${attachmentId}`).create(record);
  return { attachmentId, name: file.name, contentType: file.type, size: file.bytes.length, sha256 };
}

/** An operator reply with files, written as the console writes it; its message id. */
export async function writeReplyWithAttachments(workspaceId: string, conversationId: string, member: Member, text: string, attachments: Uploaded[]): Promise<string> {
  const ref = adminDb().collection(`workspaces/${workspaceId}/conversations/${conversationId}/messages`).doc();
  await ref.create({ direction: 'outbound', author: { type: 'operator', uid: member.uid }, text, attachments, createdAt: FieldValue.serverTimestamp() });
  return ref.id;
}

/** A real, decodable PNG (RGB, one colour), so that Chromium draws the thumbnail. */
export function realPng(width: number, height: number, rgb: [number, number, number]): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (buf: Buffer) => {
    let c = 0xffffffff;
    for (const byte of buf) c = (crcTable[(c ^ byte) & 0xff] ?? 0) ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const out = Buffer.alloc(8 + data.length + 4);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc(body), 8 + data.length);
    return out;
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // RGB
  const row = Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: width }, () => rgb).flat())]);
  const raw = Buffer.concat(Array.from({ length: height }, () => row));
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}
