#!/usr/bin/env node
/**
 * `npm run example:email:send -- --from alice@example.test --text "hi"`: sends one mail to the
 * connector's inbound SMTP server, as a customer's mail server would.
 *
 *   --from ADDRESS        sender (default alice@example.test)     --name NAME       display name
 *   --to ADDRESS          default support@support-desk.test       --subject TEXT
 *   --text TEXT           plain text part                         --html HTML       HTML part
 *   --image FILE          attach a file (repeatable; PNG/JPEG/WebP become images, others are named)
 *   --in-reply-to ID      answer a Message-ID (threads with it)   --message-id ID   set the Message-ID
 *   --host HOST --port N  the connector's SMTP server (default 127.0.0.1:2525, or EMAIL_SMTP_PORT)
 */
import { basename } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULTS } from './config.js';
import { sendMail } from './mail-client.js';

const { values } = parseArgs({
  options: {
    from: { type: 'string', default: 'alice@example.test' },
    name: { type: 'string' },
    to: { type: 'string', default: process.env.EMAIL_SUPPORT_ADDRESS ?? DEFAULTS.supportAddress },
    subject: { type: 'string', default: 'Question about my order' },
    text: { type: 'string' },
    html: { type: 'string' },
    image: { type: 'string', multiple: true },
    'in-reply-to': { type: 'string' },
    'message-id': { type: 'string' },
    host: { type: 'string', default: process.env.EMAIL_SMTP_HOST ?? DEFAULTS.smtpHost },
    port: { type: 'string', default: process.env.EMAIL_SMTP_PORT ?? String(DEFAULTS.smtpPort) },
    help: { type: 'boolean' },
  },
});
if (values.help === true || (values.text === undefined && values.html === undefined && values.image === undefined)) {
  console.log('usage: npm run example:email:send -- --from alice@example.test [--name Alice] --text "hi" [--html "<p>hi</p>"] [--image file.png ...] [--subject S] [--in-reply-to ID] [--port 2525]');
  process.exit(values.help === true ? 0 : 2);
}
try {
  const sent = await sendMail({
    host: values.host,
    port: Number(values.port),
    from: values.from,
    ...(values.name === undefined ? {} : { fromName: values.name }),
    to: values.to,
    subject: values.subject,
    ...(values.text === undefined ? {} : { text: values.text }),
    ...(values.html === undefined ? {} : { html: values.html }),
    ...(values.image === undefined ? {} : { attachments: values.image.map((path) => ({ filename: basename(path), path })) }),
    ...(values['in-reply-to'] === undefined ? {} : { inReplyTo: values['in-reply-to'].replace(/^<|>$/g, ''), references: [values['in-reply-to'].replace(/^<|>$/g, '')] }),
    ...(values['message-id'] === undefined ? {} : { messageId: values['message-id'].replace(/^<|>$/g, '') }),
  });
  console.log(`sent <${sent.messageId}> from ${values.from} to ${values.to}: ${sent.response}`);
} catch (err) {
  const e = err as Error & { response?: string };
  console.error(`not accepted: ${e.response ?? e.message}`);
  process.exit(1);
}
