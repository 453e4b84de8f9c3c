export interface paths {
    "/v1/messages": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Send an incoming customer message or service alert
         * @description Idempotent on `eventId`: the first request creates the message (201); an identical retry answers 200 with the same ids and `duplicate: true`; the same `eventId` with different content is 409 `event_conflict`. The content compared covers every field after defaults (`providerMessageId` included), and the bytes and order of the images. A `providerMessageId` (the channel's id of the message, so that events may name it) is unique per integration: another message with it is 409 `provider_message_id_conflict`. Nothing is written for a rejected request.
         */
        post: operations["sendMessage"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/messages/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Report an edit, a deletion, a reaction or typing in a conversation
         * @description What happened to an earlier message on the channel: `edited` (the customer changed the text of their message), `deleted` (they took it back: its text and images are removed, a tombstone stays), `reaction` (anyone in the chat reacted to a customer message or an operator reply; `removed: true` takes it back), `typing` (shown for a few seconds, never stored as a message; in a chat the desk does not know, 200 not applied without a `conversationId`, nothing stored). The target is `{ eventId }` (a message's eventId) or `{ providerMessageId }` (the channel's id: a customer message's `providerMessageId`, or an id you reported for an operator reply; an id naming both is 409 `ambiguous_target`). Idempotent on `eventId`, in the same space as the eventIds of messages: an identical retry answers 200 with `duplicate: true` and the first answer's `applied`; the same `eventId` with other content (or the eventId of a message) is 409 `event_conflict`. A target not received yet is kept 24 hours and applied when it arrives (202). A target in another conversation, or (edits and deletions) a message of another sender or an alert, is 404 `target_not_found` and nothing is written. The rate limit, the key and the body limits are those of `POST /v1/messages`.
         */
        post: operations["sendMessageEvent"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/channel": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        /**
         * Declare the channel: its reply window and its message templates
         * @description Replaces what the body names of your integration's channel facts: `window` (how long after the customer's latest message a free-text reply may go out; null: none) and `templates` (every template the channel accepts, with its params and a preview). A field the body does not name stays as stored; a body names at least one. Each template's preview uses each of its params as `{{name}}` and no other placeholder; (`name`, `language`) is unique. The answer is the channel as stored; the same body again changes nothing (`updatedAt` stays). A refused body writes nothing. The console shows the channel, read-only, on the integration. The rate limit, the key and the body limits are those of `POST /v1/messages`.
         */
        put: operations["updateChannel"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/deliveries/claim": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Claim a delivery: read the reply and recipient under a lease
         * @description `ready`: a 120-second lease, the text and the recipient. A retried claim with the same `requestId` gets the same lease back; another `requestId` gets 503 `lease_busy` while the lease is live. `skip`: nothing to do now; `reason` is `waiting_for_previous` (an earlier reply of the conversation is unfinished: acknowledge the notification, a new one comes), `already_sent`, `already_failed` or `outcome_unknown`. For an integration with the `replies.lifecycle` capability a `ready` claim may carry `kind` (`edit`: change the sent message to `message.text`; `unsend`: take it back) and `target` (the reply's sent delivery and the provider ids reported for it); a claim without `kind` is a reply to send, exactly as in v1. A connector that cannot carry a kind fails the delivery `failed` with code `unsupported_kind`. Every `ready` claim of a conversation with connector metadata (the merge of the `metadata` of its incoming messages) carries it as `conversation.metadata`; without any there is no `conversation`.
         */
        post: operations["claimDelivery"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/deliveries/start": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Record the intent to send, before contacting the provider
         * @description Send through the provider only when the answer is `sending`. A retried start under the same lease answers `sending` again; `sent` means the delivery was already sent: do not send.
         */
        post: operations["startDelivery"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/deliveries/extend": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Extend the lease while the provider call is still running
         * @description Under the live current lease of a delivery that is `leased` or `sending`: the lease now ends 120 seconds from now (`leaseExpiresAt`, epoch ms), but never later than 15 minutes after its claim: the granted expiry is clamped to that cap, and once the lease already ends there, the answer is 409 `lease_limit_reached`. Extend when half of the remaining lease has passed and the provider call is still running (the SDK's `processDelivery` does). An expired lease, or one that a newer lease replaced, is 409 `lease_lost` (an expired lease is never revived); a finished delivery is 409 `delivery_finished`. After any refusal, let a running provider call finish and report its outcome as usual: complete is accepted from the last lease even after it expired. Safe to repeat: an extend never shortens the lease.
         */
        post: operations["extendDeliveryLease"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/deliveries/complete": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Report that the provider accepted the message
         * @description Only after the provider actually accepted the message. Accepted from the lease that holds or last held the delivery, even after the lease expired. Idempotent for the same lease and the same ids; anything else after `sent` is 409 `conflicting_completion`.
         */
        post: operations["completeDelivery"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/deliveries/fail": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Report a failed, rejected or ambiguous send
         * @description `retry` (definite temporary rejection) queues the delivery again (`queued`), or `failed` once the retry budget is spent (10 attempts or 24 hours). `failed` answers `failed`; `unknown` answers `unknown` and the provider call is never repeated automatically. On an already sent delivery the answer is `sent` and nothing changes. The same call repeated under the same lease gets the same answer.
         */
        post: operations["failDelivery"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/deliveries/pending": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * List the deliveries you can claim now (catch-up)
         * @description Your integration's deliveries that are claimable now (queued, due, first unfinished reply of their conversation), oldest first, each exactly the notification published to your topic for it: claim them as if notified. Call it at start-up and every few minutes, so a lost notification (a subscription created late, deleted or expired) never blocks a conversation. Page with `nextCursor` until it is null; deliveries that arrive meanwhile come after the current position (no duplicates, no gaps). A claimed delivery leaves the list; one that becomes claimable again comes back. The cost does not grow with finished deliveries.
         */
        post: operations["listPendingDeliveries"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/deliveries/receipt": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Report the channel's receipt for a sent reply
         * @description What the channel said after the provider accepted the message: `delivered`, `read`, or `failed` (with a `code`). Only for a `sent` delivery (409 `delivery_not_sent` otherwise); no lease is needed. Receipts never change the delivery, which stays `sent`, and only move forward: `read` is final and a later `delivered` changes nothing; `failed` after `delivered` is recorded; the same receipt again changes nothing. The console shows the latest as `delivery.receipt` on the reply.
         */
        post: operations["reportDeliveryReceipt"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/deliveries/attachment": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Download one attachment of the claimed reply
         * @description Under the live lease of a delivery that is `leased` or `sending`: the bytes of one file of the claim's `message.attachments`, with `Content-Type`, `Content-Length`, `Content-Disposition` (the sanitised file name), `ETag: "<sha256 hex>"` and `Repr-Digest: sha-256=:<base64>:`. Check the hash before sending the file on. A wrong or expired lease is 409 `lease_lost`; a finished delivery is 409 `delivery_finished`; an id that is not one of the delivery's files is 404 `attachment_not_found`.
         */
        post: operations["getDeliveryAttachment"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/erasures/pending": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * List the erasures you have not acknowledged yet
         * @description Your integration's finished customer erasures that you have not acknowledged, in `erasureId` order. The service has deleted the customer's messages (and every conversation in which they were the only customer); delete your own copies of the customer and of those conversations, then acknowledge each with `POST /v1/erasures/ack`. Page with `nextCursor` until it is null. Call it at start-up and every few minutes.
         */
        post: operations["listPendingErasures"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/erasures/ack": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Acknowledge that you purged an erased customer
         * @description Records that your connector deleted its own copies of the erased customer; the erasure leaves your pending list and the console shows it as confirmed. Repeatable (the first acknowledgement is kept). An unknown id, another integration's erasure, or one not finished yet is 404 `erasure_not_found`.
         */
        post: operations["acknowledgeErasure"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /** @description An incoming customer message or service alert. */
        IncomingMessage: {
            /** @description Identifies the source event; stable across retries. The idempotency key. */
            eventId: string;
            /** @description The channel's own id of this message, so that edits, deletions and reactions may name it as `target.providerMessageId`. Unique per integration: another message with it is 409 `provider_message_id_conflict`. */
            providerMessageId?: string;
            /** @description Stable identifier of the external chat. */
            externalConversationId: string;
            /** @description Who sent the message. */
            sender: {
                /** @description Stable identifier of the sender. */
                externalId: string;
                displayName?: string;
                /**
                 * @description `service` for alerts. Default: `"customer"`.
                 * @enum {string}
                 */
                kind?: "customer" | "service";
            };
            message?: {
                /** @description At most 10000 characters (code points). */
                text?: string;
            };
            /** @description The channel's own time of the message, Unix epoch milliseconds; at most 5 minutes after the time it is received (400 otherwise). Default: the time it is received. Part of the content compared for idempotency when given. */
            sentAt?: number;
            /** @description Connector metadata of the conversation: a flat map of at most 16 keys (1 to 64 of `A-Z a-z 0-9 _ . -`) to strings of at most 512 characters (code points), at most 2048 bytes in all (the UTF-8 of the map's JSON). The conversation keeps the merge (the latest message wins per key; `null` removes a key) within the same limits, and every `ready` claim of the conversation carries it as `conversation.metadata`. Part of the content compared for idempotency when not empty. */
            metadata?: {
                [key: string]: string | null;
            };
        };
        /** @description `POST /v1/messages` with images. The message JSON goes in the text field `payload`, the files in repeated file fields `images`; no other fields. A message needs non-empty `message.text` or at least one image. */
        IncomingMessageMultipart: {
            /** @description The message JSON (schema `IncomingMessage`), at most 65536 bytes of UTF-8. */
            payload: string;
            /** @description Up to 3 files in order: PNG, JPEG or static WebP, judged by their bytes (the declared part type is ignored); each at most 10485760 bytes, together at most 20971520 bytes, at most 16384 pixels per side and 40000000 pixels. The same eventId must be retried with the same files. */
            images?: string[];
        };
        IncomingMessageResponse: {
            conversationId: string;
            messageId: string;
            duplicate: boolean;
        };
        /** @description An event about an earlier message of a conversation: an edit, a deletion, a reaction, or typing. */
        MessageEventRequest: {
            /** @description Identifies this event; stable across retries. The idempotency key, in the same space as the eventIds of messages. */
            eventId: string;
            /** @description Stable identifier of the external chat. */
            externalConversationId: string;
            /** @description Who edited, deleted, reacted or is typing. */
            sender: {
                /** @description Stable identifier of the sender. */
                externalId: string;
                displayName?: string;
                /**
                 * @description `service` for alerts. Default: `"customer"`.
                 * @enum {string}
                 */
                kind?: "customer" | "service";
            };
            /**
             * @description `edited`, `deleted`, `reaction` or `typing`; each takes its own fields (see the fields).
             * @enum {string}
             */
            type: "edited" | "deleted" | "reaction" | "typing";
            /** @description `edited`, `deleted`, `reaction`: the message the event is about, exactly one of `eventId` and `providerMessageId`. */
            target?: {
                /** @description The `eventId` of the customer message (or alert, for a reaction) the event is about. */
                eventId?: string;
                /** @description The channel's id of the message: the `providerMessageId` a customer message came with, or an id your connector reported for an operator reply (or one of its parts) in `POST /v1/deliveries/complete`. An id naming both is 409 `ambiguous_target`. */
                providerMessageId?: string;
            };
            /** @description `edited` only (required): the new text, 1 to 10000 characters (code points). */
            text?: string;
            /** @description `reaction` only (required): one emoji, exactly one extended grapheme cluster of at most 32 bytes of UTF-8. */
            emoji?: string;
            /**
             * @description `reaction` only: `true` takes the sender's reaction with this emoji back.
             * @constant
             */
            removed?: true;
        };
        MessageEventResponse: {
            /** @description The conversation, as `POST /v1/messages` names it. Absent only for `typing` in a chat the desk does not know (200, not applied: nothing was stored). */
            conversationId?: string;
            /** @description True when the event changed what the desk shows (201, or a duplicate of a 201); false when it waits for its target (202) or was ignored (200: it changes nothing, its target was deleted, or typing in a chat the desk does not know). */
            applied: boolean;
            /** @description True for an identical retry of an earlier event: nothing new was written. */
            duplicate: boolean;
        };
        /** @description What the connector declares of its channel: the reply window, the templates, or both. At least one of the two. */
        ChannelRequest: {
            /** @description The reply window, or null: the channel has none (or the connector does not know it). Absent: the stored one stays. */
            window?: {
                /** @description How long after the customer's latest message a free-text reply may go out, 60 to 604800 seconds (WhatsApp: 86400). */
                seconds: number;
            } | null;
            /** @description Every template of the channel, at most 200, replacing the stored list (`[]`: none). Absent: the stored list stays. */
            templates?: {
                /** @description The template's name on the channel: lower-case letters, digits, `_`, 1 to 512. */
                name: string;
                /** @description A BCP 47 language tag (`en`, `en-US`, `pt-BR`). (`name`, `language`) is unique among the templates, the tag compared without case. */
                language: string;
                /** @description Its variable parts, at most 20; each used in `preview`. */
                params: {
                    /** @description The param, as its placeholder `{{name}}` in `preview` writes it: letters, digits, `_`, 1 to 64. Unique in its template. */
                    name: string;
                    /** @description At most this many characters (code points), 1 to 1024; absent: no limit of its own. */
                    maxLength?: number;
                }[];
                /** @description The text as the customer reads it, 1 to 1024 characters (code points), with a placeholder `{{name}}` (spaces inside the braces allowed) for each param: every param used, no placeholder naming another. */
                preview: string;
            }[];
        };
        ChannelResponse: {
            /** @description The reply window, or null when none was declared. */
            window: {
                seconds: number;
            } | null;
            /** @description The templates, in the order declared. */
            templates: {
                name: string;
                language: string;
                params: {
                    name: string;
                    maxLength?: number;
                }[];
                preview: string;
            }[];
            /** @description When the channel last changed, Unix epoch milliseconds (the same body again leaves it). */
            updatedAt: number;
        };
        ClaimRequest: {
            /** @description The delivery to claim (from the notification). */
            deliveryId: string;
            /** @description Chosen by the connector per claim attempt; a retried claim with the same requestId gets the same lease. */
            requestId: string;
        };
        ClaimResponse: components["schemas"]["ClaimSkip"] | components["schemas"]["ClaimReady"];
        ClaimSkip: {
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            status: "skip";
            /** @description One of the listed reasons; later versions may add others: treat an unknown one like any skip (acknowledge). */
            reason: ("waiting_for_previous" | "already_sent" | "already_failed" | "outcome_unknown") | string;
        };
        ClaimReady: {
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            status: "ready";
        } & (components["schemas"]["ClaimReadyEdit"] | components["schemas"]["ClaimReadyStart"] | components["schemas"]["ClaimReadyUnsend"] | components["schemas"]["ClaimReadySend"]);
        /** @description Edit a sent reply (only for an integration with `replies.lifecycle.edit`): replace the text of the messages in `target`. */
        ClaimReadyEdit: {
            /** @constant */
            status: "ready";
            /** @constant */
            kind: "edit";
            leaseId: string;
            /** @description Unix epoch milliseconds. */
            leaseExpiresAt: number;
            message: {
                /** @description The reply's new text (1 to 10000 code points): it replaces the text of the target's messages. */
                text: string;
                recipient: {
                    externalConversationId: string;
                    externalCustomerId: string;
                };
            };
            target: {
                /** @description The delivery that sent the reply. */
                deliveryId: string;
                /** @description The provider's ids of the sent reply, as its `complete` reported them: the message(s) to edit or delete. */
                providerMessageIds: string[];
                /** @description Only when the reply's delivery reported per-part outcomes: the ids of each part (its text and each file). */
                parts?: {
                    /** @description `text` or an `attachmentId` of the reply. */
                    part: string;
                    providerMessageIds: string[];
                }[];
            };
            /** @description Only when the conversation has connector metadata (sent with its incoming messages): absent otherwise. */
            conversation?: {
                /** @description The merge of the `metadata` of the conversation's incoming messages (the latest message wins per key). */
                metadata: {
                    [key: string]: string;
                };
            };
        };
        /** @description Start a conversation (only for an integration with `conversations.start`): send the first message to the address, then complete with the thread the channel made (`conversation`). */
        ClaimReadyStart: {
            /** @constant */
            status: "ready";
            /** @constant */
            kind: "start";
            leaseId: string;
            /** @description Unix epoch milliseconds. */
            leaseExpiresAt: number;
            message: {
                /** @description The message's text (for a template: its preview with the params filled in). */
                text: string;
                /** @description Only when the member started with one of the templates the channel declared. */
                template?: {
                    name: string;
                    language: string;
                    params: {
                        [key: string]: string;
                    };
                };
                recipient: {
                    /** @description Who to start the conversation with: there is no thread yet. */
                    address: {
                        /** @enum {string} */
                        kind: "phone" | "email" | "handle";
                        value: string;
                    };
                };
            };
            /** @description Only when the conversation has connector metadata (sent with its incoming messages): absent otherwise. */
            conversation?: {
                /** @description The merge of the `metadata` of the conversation's incoming messages (the latest message wins per key). */
                metadata: {
                    [key: string]: string;
                };
            };
        };
        /** @description Unsend a sent reply (only for an integration with `replies.lifecycle.unsend`): delete the messages in `target` for the recipient. */
        ClaimReadyUnsend: {
            /** @constant */
            status: "ready";
            /** @constant */
            kind: "unsend";
            leaseId: string;
            /** @description Unix epoch milliseconds. */
            leaseExpiresAt: number;
            message: {
                recipient: {
                    externalConversationId: string;
                    externalCustomerId: string;
                };
            };
            target: {
                /** @description The delivery that sent the reply. */
                deliveryId: string;
                /** @description The provider's ids of the sent reply, as its `complete` reported them: the message(s) to edit or delete. */
                providerMessageIds: string[];
                /** @description Only when the reply's delivery reported per-part outcomes: the ids of each part (its text and each file). */
                parts?: {
                    /** @description `text` or an `attachmentId` of the reply. */
                    part: string;
                    providerMessageIds: string[];
                }[];
            };
            /** @description Only when the conversation has connector metadata (sent with its incoming messages): absent otherwise. */
            conversation?: {
                /** @description The merge of the `metadata` of the conversation's incoming messages (the latest message wins per key). */
                metadata: {
                    [key: string]: string;
                };
            };
        };
        /** @description Send the reply. */
        ClaimReadySend: {
            /** @constant */
            status: "ready";
            leaseId: string;
            /** @description Unix epoch milliseconds. */
            leaseExpiresAt: number;
            message: {
                /** @description May be empty when the reply has attachments. */
                text: string;
                recipient: {
                    externalConversationId: string;
                    externalCustomerId: string;
                };
                /** @description Only for an integration with the `replies.attachments` capability, and only when the reply has files: fetch each with POST /v1/deliveries/attachment. */
                attachments?: {
                    attachmentId: string;
                    /** @description The file name the operator uploaded (send it sanitised). */
                    name: string;
                    /** @enum {string} */
                    contentType: "image/png" | "image/jpeg" | "image/webp" | "image/gif" | "application/pdf" | "text/plain";
                    /** @description Bytes. */
                    size: number;
                    /** @description SHA-256 of the bytes, lowercase hex. */
                    sha256: string;
                }[];
                /** @description Only when the reply is a template reply (only for an integration that declared templates with PUT /v1/channel): send this template with these params; `text` is its preview filled in, for a channel that has no real templates. */
                template?: {
                    /** @description The template's name, as declared. */
                    name: string;
                    /** @description The template's language, as declared. */
                    language: string;
                    /** @description Each of the template's params to its value (1 to 1024 characters). */
                    params: {
                        [key: string]: string;
                    };
                };
            };
            /** @description Only when the conversation has connector metadata (sent with its incoming messages): absent otherwise. */
            conversation?: {
                /** @description The merge of the `metadata` of the conversation's incoming messages (the latest message wins per key). */
                metadata: {
                    [key: string]: string;
                };
            };
        };
        StartRequest: {
            deliveryId: string;
            /** @description The leaseId of a `ready` claim. */
            leaseId: string;
        };
        StartResponse: {
            /**
             * @description `sending`: call the provider now, once. `sent`: already sent, do not send again.
             * @enum {string}
             */
            status: "sending" | "sent";
        };
        ExtendRequest: {
            deliveryId: string;
            /** @description The leaseId of a `ready` claim. */
            leaseId: string;
        };
        ExtendResponse: {
            /** @description The new expiry of the lease, Unix epoch milliseconds (like `leaseExpiresAt` of claim). */
            leaseExpiresAt: number;
        };
        CompleteRequest: {
            deliveryId: string;
            /** @description The leaseId of a `ready` claim. */
            leaseId: string;
            /** @description The provider's ids of the sent message (several when an adapter split the text). */
            providerMessageIds: string[];
            /** @description Optional: the outcome of each part of the reply (its text and each attachment), at most once each. */
            parts?: {
                /** @description `text` or an `attachmentId` of the claim's `message.attachments`. */
                part: string;
                /** @enum {string} */
                status: "sent" | "failed";
                providerMessageIds?: string[];
                /** @description Why the part failed. */
                code?: string;
            }[];
            /** @description Required for a start (a claim with `kind: "start"`), 400 `conversation_required` without it (the lease stays): the thread the customer's answers will come from. Ignored for any other delivery. */
            conversation?: {
                /** @description The thread the channel made (or found) for the started conversation: what its incoming messages will carry. */
                externalConversationId: string;
                /** @description The customer's id on the channel: what their messages will carry as `sender.externalId`. */
                externalCustomerId: string;
                /** @description Connector metadata of the conversation, merged as the `metadata` of an incoming message (`null` removes a key). */
                metadata?: {
                    [key: string]: string | null;
                };
            };
        };
        CompleteResponse: {
            /** @constant */
            status: "sent";
            /** @description The conversation's next delivery, present when this call ended the delivery and made the next one claimable now: exactly its notification (which is published too). Claim it at once instead of waiting for the notification; a second claim from the notification is harmless. */
            next?: {
                deliveryId: string;
                workspaceId: string;
                integrationId: string;
                conversationId: string;
                messageId: string;
            };
        };
        FailRequest: {
            deliveryId: string;
            /** @description The leaseId of a `ready` claim. */
            leaseId: string;
            /**
             * @description `retry` only after a definite temporary rejection; `failed` for a permanent failure; `unknown` for an ambiguous or partial send (never repeated automatically).
             * @enum {string}
             */
            outcome: "retry" | "failed" | "unknown";
            /** @description The connector's own reason, e.g. `provider_timeout`. */
            code: string;
            /** @description For `retry`: not claimable again before this many milliseconds (default: exponential backoff from 30 s to 1 h). */
            retryAfterMs?: number;
            /** @description For `unknown` or `failed`: ids of the parts the provider did accept (partial sends). */
            providerMessageIds?: string[];
            /** @description Optional: the outcome of each part of the reply (its text and each attachment), at most once each. */
            parts?: {
                /** @description `text` or an `attachmentId` of the claim's `message.attachments`. */
                part: string;
                /** @enum {string} */
                status: "sent" | "failed";
                providerMessageIds?: string[];
                /** @description Why the part failed. */
                code?: string;
            }[];
        };
        FailResponse: {
            /** @enum {string} */
            status: "queued" | "failed" | "unknown" | "sent";
            /** @description The conversation's next delivery, present when this call ended the delivery and made the next one claimable now: exactly its notification (which is published too). Claim it at once instead of waiting for the notification; a second claim from the notification is harmless. */
            next?: {
                deliveryId: string;
                workspaceId: string;
                integrationId: string;
                conversationId: string;
                messageId: string;
            };
        };
        PendingRequest: {
            /** @description Page size (default 50). */
            limit?: number;
            /** @description `nextCursor` of the previous page; omit for the first page. */
            cursor?: string;
        };
        PendingResponse: {
            /** @description Claimable now, oldest first; each item is exactly the delivery notification published to the integration's topic. */
            deliveries: {
                deliveryId: string;
                workspaceId: string;
                integrationId: string;
                conversationId: string;
                messageId: string;
            }[];
            /** @description Pass it as `cursor` for the next page; null on the last page. */
            nextCursor: string | null;
        };
        ReceiptRequest: {
            deliveryId: string;
            /**
             * @description `delivered` to the recipient, `read` by them, or `failed` after the provider had accepted it.
             * @enum {string}
             */
            status: "delivered" | "read" | "failed";
            /** @description Required when `status` is `failed`: why, e.g. `recipient_unreachable`. */
            code?: string;
            /** @description When it happened by the channel's clock, Unix epoch milliseconds (default: when the service receives the receipt). */
            at?: number;
            /** @description Which provider message it is about, when the reply was sent in several parts. */
            providerMessageId?: string;
        };
        ReceiptResponse: {
            /**
             * @description Receipts never change the delivery: it stays `sent`.
             * @constant
             */
            status: "sent";
        };
        AttachmentRequest: {
            deliveryId: string;
            /** @description The leaseId of a `ready` claim. */
            leaseId: string;
            /** @description An `attachmentId` of the claim's `message.attachments`. */
            attachmentId: string;
        };
        ErasuresPendingRequest: {
            /** @description Page size (default 50). */
            limit?: number;
            /** @description `nextCursor` of the previous page; omit for the first page. */
            cursor?: string;
        };
        ErasuresPendingResponse: {
            /** @description Finished erasures of your integration not acknowledged yet, in `erasureId` order. */
            erasures: {
                /** @description Acknowledge it with this id once your own copies are purged. */
                erasureId: string;
                /** @description The erased customer, in your system's words (`sender.externalId`). */
                externalCustomerId: string;
                /** @description The conversations in which the customer wrote (their messages are gone; a conversation with no other customer is gone entirely). */
                externalConversationIds: string[];
                /** @description When the admin asked for the erasure, Unix epoch milliseconds. */
                requestedAt: number;
            }[];
            /** @description Pass it as `cursor` for the next page; null on the last page. */
            nextCursor: string | null;
        };
        ErasuresAckRequest: {
            /** @description An `erasureId` from `POST /v1/erasures/pending`. */
            erasureId: string;
        };
        ErasuresAckResponse: {
            /** @constant */
            acknowledged: true;
        };
        /** @description The body of every error the service itself produces. */
        Error: {
            error: {
                /** @description Stable snake_case code. Each response lists the codes it can carry; handle unknown codes by HTTP status. */
                code: string;
                /** @description Human-readable detail (for logs, not for matching); 400s name the offending field path. Never contains secrets. */
                message?: string;
            };
        };
    };
    responses: {
        /**
         * @description Invalid or revoked key.
         *
         *     `error.code` is one of:
         *
         *     - `invalid_key`: Missing or malformed `Authorization` header, or an unknown or revoked integration key (one body for all cases).
         */
        Unauthorized: {
            headers: {
                "X-Request-Id": components["headers"]["XRequestId"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"] & {
                    error?: {
                        /** @enum {unknown} */
                        code?: "invalid_key";
                        message?: string;
                    };
                };
            };
        };
        /**
         * @description Inactive integration or disabled source.
         *
         *     `error.code` is one of:
         *
         *     - `integration_inactive`: The integration of the key is inactive.
         *     - `source_disabled`: The workspace disabled this source.
         */
        Forbidden: {
            headers: {
                "X-Request-Id": components["headers"]["XRequestId"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"] & {
                    error?: {
                        /** @enum {unknown} */
                        code?: "integration_inactive" | "source_disabled";
                        message?: string;
                    };
                };
            };
        };
        /**
         * @description Method not allowed: every path accepts one method, POST (PUT for `/v1/channel`), named in `Allow`. (Answered for any other method on this path; its own method never gets it.)
         *
         *     `error.code` is one of:
         *
         *     - `method_not_allowed`: A method other than POST.
         */
        MethodNotAllowed: {
            headers: {
                "X-Request-Id": components["headers"]["XRequestId"];
                Allow: components["headers"]["Allow"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"] & {
                    error?: {
                        /** @enum {unknown} */
                        code?: "method_not_allowed";
                        message?: string;
                    };
                };
            };
        };
        /**
         * @description Unsupported media type. Do not retry without correcting the request.
         *
         *     `error.code` is one of:
         *
         *     - `unsupported_media_type`: Missing, unsupported or malformed `Content-Type` (e.g. a parameter without a value: `application/json; charset`), a charset other than utf-8, or a `Content-Encoding` other than identity, gzip or deflate.
         */
        UnsupportedMediaType: {
            headers: {
                "X-Request-Id": components["headers"]["XRequestId"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"] & {
                    error?: {
                        /** @enum {unknown} */
                        code?: "unsupported_media_type";
                        message?: string;
                    };
                };
            };
        };
    };
    parameters: never;
    requestBodies: never;
    headers: {
        /**
         * @description Opaque id of this request, also in the service logs: quote it when asking for support. Sent on every response the service produces.
         * @example req_q2FTe0m1ZxJ6f1k2vA8c
         */
        XRequestId: string;
        /**
         * @description Whole seconds (at least 1) to wait before retrying the same request (same `eventId` / `requestId` / lease).
         * @example 5
         */
        RetryAfter: number;
        /**
         * @description The only method the path accepts: POST, or PUT for `/v1/channel`.
         * @example POST
         */
        Allow: "POST" | "PUT";
        /**
         * @description The integration's incoming message budget per minute (`limits.messagesPerMinute`, or the service default), enforced per service instance.
         * @example 1200
         */
        RateLimitLimit: number;
        /**
         * @description Messages this service instance still accepts right now for the integration (whole tokens left in its bucket). At 0, wait `RateLimit-Reset` seconds before the next message.
         * @example 1187
         */
        RateLimitRemaining: number;
        /**
         * @description Whole seconds until the budget is full again; when `RateLimit-Remaining` is 0, until the next message is accepted (on a 429 it equals `Retry-After`).
         * @example 1
         */
        RateLimitReset: number;
    };
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    sendMessage: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description JSON (at most 65536 bytes), or `multipart/form-data` with images (at most 22020096 bytes). */
        requestBody: {
            content: {
                "application/json": components["schemas"]["IncomingMessage"] & {
                    message: {
                        text: string;
                    };
                };
                "multipart/form-data": components["schemas"]["IncomingMessageMultipart"];
            };
        };
        responses: {
            /** @description An identical retry of an earlier event: the original ids, nothing new was written. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    "RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    "RateLimit-Reset": components["headers"]["RateLimitReset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["IncomingMessageResponse"] & {
                        /** @constant */
                        duplicate?: true;
                    };
                };
            };
            /** @description A new event: the message was recorded. */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    "RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    "RateLimit-Reset": components["headers"]["RateLimitReset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["IncomingMessageResponse"] & {
                        /** @constant */
                        duplicate?: false;
                    };
                };
            };
            /**
             * @description Invalid input. Do not retry without correcting the request.
             *
             *     `error.code` is one of:
             *
             *     - `invalid_json`: The JSON body (or the multipart `payload` field) is empty, not valid UTF-8, or not valid JSON (including a bare JSON value such as `123`).
             *     - `invalid_request`: The JSON does not match the request schema (the message names the offending field path), or the body cannot be read (it ends before its `Content-Length`, or does not match its `Content-Encoding`).
             *     - `invalid_multipart`: The multipart body cannot be read: no boundary, a field other than `payload`, a file field other than `images`, more parts than allowed, or no `payload` field.
             *     - `empty_message`: Neither non-empty `message.text` nor any image was sent.
             *     - `unsupported_image`: An image is empty, not PNG, JPEG or WebP (judged by its bytes, not its declared type), or an animated WebP.
             *     - `invalid_image`: An image header is truncated or corrupt, or has a zero width or height.
             *     - `image_too_large_dimensions`: An image has a side over 16384 pixels or more than 40000000 pixels in total.
             *     - `too_many_images`: More than 3 images in one message.
             */
            400: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    /** @description The integration's incoming message budget per minute (`limits.messagesPerMinute`, or the service default), enforced per service instance. Present whenever the key was accepted: absent only when the request was refused before that (e.g. a body the runtime could not parse, or a backend failure while checking the key). */
                    "RateLimit-Limit"?: number;
                    /** @description Messages this service instance still accepts right now for the integration (whole tokens left in its bucket). At 0, wait `RateLimit-Reset` seconds before the next message. Present whenever the key was accepted: absent only when the request was refused before that (e.g. a body the runtime could not parse, or a backend failure while checking the key). */
                    "RateLimit-Remaining"?: number;
                    /** @description Whole seconds until the budget is full again; when `RateLimit-Remaining` is 0, until the next message is accepted (on a 429 it equals `Retry-After`). Present whenever the key was accepted: absent only when the request was refused before that (e.g. a body the runtime could not parse, or a backend failure while checking the key). */
                    "RateLimit-Reset"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "invalid_json" | "invalid_request" | "invalid_multipart" | "empty_message" | "unsupported_image" | "invalid_image" | "image_too_large_dimensions" | "too_many_images";
                            message?: string;
                        };
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            405: components["responses"]["MethodNotAllowed"];
            /**
             * @description Conflict.
             *
             *     `error.code` is one of:
             *
             *     - `event_conflict`: The `eventId` was already used with different content (fields after defaults, image bytes and order), or by a message for an event (or an event for a message): messages and message events share one space of eventIds.
             *     - `provider_message_id_conflict`: Another message of your integration (another `eventId`) came with this `providerMessageId`: the channel's id names one message. Nothing is written. A retry of the same message (same `eventId` and content) is a duplicate, never this.
             */
            409: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    "RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    "RateLimit-Reset": components["headers"]["RateLimitReset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "event_conflict" | "provider_message_id_conflict";
                            message?: string;
                        };
                    };
                };
            };
            /**
             * @description Payload too large. Do not retry without correcting the request.
             *
             *     `error.code` is one of:
             *
             *     - `payload_too_large`: A JSON body (or the multipart `payload` field) over 65536 bytes, or a multipart body over 22020096 bytes.
             *     - `image_too_large`: One image over 10485760 bytes (10 MB).
             *     - `images_too_large`: All images of a message together over 20971520 bytes (20 MB).
             */
            413: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    /** @description The integration's incoming message budget per minute (`limits.messagesPerMinute`, or the service default), enforced per service instance. Present whenever the key was accepted: absent only when the request was refused before that (e.g. a body the runtime could not parse, or a backend failure while checking the key). */
                    "RateLimit-Limit"?: number;
                    /** @description Messages this service instance still accepts right now for the integration (whole tokens left in its bucket). At 0, wait `RateLimit-Reset` seconds before the next message. Present whenever the key was accepted: absent only when the request was refused before that (e.g. a body the runtime could not parse, or a backend failure while checking the key). */
                    "RateLimit-Remaining"?: number;
                    /** @description Whole seconds until the budget is full again; when `RateLimit-Remaining` is 0, until the next message is accepted (on a 429 it equals `Retry-After`). Present whenever the key was accepted: absent only when the request was refused before that (e.g. a body the runtime could not parse, or a backend failure while checking the key). */
                    "RateLimit-Reset"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "payload_too_large" | "image_too_large" | "images_too_large";
                            message?: string;
                        };
                    };
                };
            };
            /**
             * @description Unsupported media type. Do not retry without correcting the request.
             *
             *     `error.code` is one of:
             *
             *     - `unsupported_media_type`: Missing, unsupported or malformed `Content-Type` (e.g. a parameter without a value: `application/json; charset`), a charset other than utf-8, or a `Content-Encoding` other than identity, gzip or deflate.
             */
            415: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    /** @description The integration's incoming message budget per minute (`limits.messagesPerMinute`, or the service default), enforced per service instance. Present whenever the key was accepted: absent only when the request was refused before that (e.g. a body the runtime could not parse, or a backend failure while checking the key). */
                    "RateLimit-Limit"?: number;
                    /** @description Messages this service instance still accepts right now for the integration (whole tokens left in its bucket). At 0, wait `RateLimit-Reset` seconds before the next message. Present whenever the key was accepted: absent only when the request was refused before that (e.g. a body the runtime could not parse, or a backend failure while checking the key). */
                    "RateLimit-Remaining"?: number;
                    /** @description Whole seconds until the budget is full again; when `RateLimit-Remaining` is 0, until the next message is accepted (on a 429 it equals `Retry-After`). Present whenever the key was accepted: absent only when the request was refused before that (e.g. a body the runtime could not parse, or a backend failure while checking the key). */
                    "RateLimit-Reset"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "unsupported_media_type";
                            message?: string;
                        };
                    };
                };
            };
            /**
             * @description Rate limited: retry the same request after `Retry-After` seconds.
             *
             *     `error.code` is one of:
             *
             *     - `rate_limited`: The integration's incoming message rate limit is exhausted (messages and message events each have that budget). Retry the same event (same `eventId`) after `Retry-After` seconds.
             */
            429: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    "RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    "RateLimit-Reset": components["headers"]["RateLimitReset"];
                    "Retry-After": components["headers"]["RetryAfter"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "rate_limited";
                            message?: string;
                        };
                    };
                };
            };
            /**
             * @description Temporarily unavailable: retry the same request after `Retry-After` seconds.
             *
             *     `error.code` is one of:
             *
             *     - `deadline_exceeded`: The request could not be completed within its time budget (50 s from arrival, below the front end's 60 s timeout): a backend call was too slow. Retry with the same ids after `Retry-After`; a write that still landed is found by the retry (duplicate / idempotent answer).
             *     - `image_store_unavailable`: A message with images cannot be stored because the image store is not available (e.g. not configured). Messages without images are not affected. Retry with the same `eventId` and files after `Retry-After`.
             *     - `temporarily_unavailable`: Contention or a temporary backend failure. Every operation is safe to retry with the same ids after `Retry-After`.
             */
            503: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    /** @description The integration's incoming message budget per minute (`limits.messagesPerMinute`, or the service default), enforced per service instance. Present whenever the key was accepted: absent only when the request was refused before that (e.g. a body the runtime could not parse, or a backend failure while checking the key). */
                    "RateLimit-Limit"?: number;
                    /** @description Messages this service instance still accepts right now for the integration (whole tokens left in its bucket). At 0, wait `RateLimit-Reset` seconds before the next message. Present whenever the key was accepted: absent only when the request was refused before that (e.g. a body the runtime could not parse, or a backend failure while checking the key). */
                    "RateLimit-Remaining"?: number;
                    /** @description Whole seconds until the budget is full again; when `RateLimit-Remaining` is 0, until the next message is accepted (on a 429 it equals `Retry-After`). Present whenever the key was accepted: absent only when the request was refused before that (e.g. a body the runtime could not parse, or a backend failure while checking the key). */
                    "RateLimit-Reset"?: number;
                    "Retry-After": components["headers"]["RetryAfter"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "deadline_exceeded" | "image_store_unavailable" | "temporarily_unavailable";
                            message?: string;
                        };
                    };
                };
            };
        };
    };
    sendMessageEvent: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["MessageEventRequest"];
            };
        };
        responses: {
            /** @description Not applied (`applied: false`): an event on a deleted message, a reaction or an edit that changes nothing, or typing in a chat the desk does not know (no `conversationId`); or an identical retry of an earlier event (`duplicate: true`, the first answer's `applied`). Nothing new was written. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    "RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    "RateLimit-Reset": components["headers"]["RateLimitReset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MessageEventResponse"];
                };
            };
            /** @description Applied: the desk shows the edit, deletion, reaction or typing now. */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    "RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    "RateLimit-Reset": components["headers"]["RateLimitReset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MessageEventResponse"];
                };
            };
            /** @description Accepted, waiting for its target: kept 24 hours and applied when the target message arrives (an operator reply: when its delivery is completed with that provider id). */
            202: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    "RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    "RateLimit-Reset": components["headers"]["RateLimitReset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MessageEventResponse"];
                };
            };
            /**
             * @description Invalid input. Do not retry without correcting the request.
             *
             *     `error.code` is one of:
             *
             *     - `invalid_json`: The JSON body (or the multipart `payload` field) is empty, not valid UTF-8, or not valid JSON (including a bare JSON value such as `123`).
             *     - `invalid_request`: The JSON does not match the request schema (the message names the offending field path), or the body cannot be read (it ends before its `Content-Length`, or does not match its `Content-Encoding`).
             */
            400: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    /** @description The integration's incoming message budget per minute (`limits.messagesPerMinute`, or the service default), enforced per service instance. Present whenever the key was accepted: absent only when the request was refused before that (e.g. a body the runtime could not parse, or a backend failure while checking the key). */
                    "RateLimit-Limit"?: number;
                    /** @description Messages this service instance still accepts right now for the integration (whole tokens left in its bucket). At 0, wait `RateLimit-Reset` seconds before the next message. Present whenever the key was accepted: absent only when the request was refused before that (e.g. a body the runtime could not parse, or a backend failure while checking the key). */
                    "RateLimit-Remaining"?: number;
                    /** @description Whole seconds until the budget is full again; when `RateLimit-Remaining` is 0, until the next message is accepted (on a 429 it equals `Retry-After`). Present whenever the key was accepted: absent only when the request was refused before that (e.g. a body the runtime could not parse, or a backend failure while checking the key). */
                    "RateLimit-Reset"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "invalid_json" | "invalid_request";
                            message?: string;
                        };
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /**
             * @description Not found, or not yours (each code says what). Do not retry without correcting the request.
             *
             *     `error.code` is one of:
             *
             *     - `target_not_found`: A message event's target is someone else's: a message of another conversation of your integration, or (`edited`, `deleted`) a message of another sender or an alert, or a message that is no longer stored (erased or past retention). Nothing is written. A target that was never received is not this error: the event waits for it (202).
             */
            404: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    "RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    "RateLimit-Reset": components["headers"]["RateLimitReset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "target_not_found";
                            message?: string;
                        };
                    };
                };
            };
            405: components["responses"]["MethodNotAllowed"];
            /**
             * @description Conflict.
             *
             *     `error.code` is one of:
             *
             *     - `event_conflict`: The `eventId` was already used with different content (fields after defaults, image bytes and order), or by a message for an event (or an event for a message): messages and message events share one space of eventIds.
             *     - `ambiguous_target`: A message event's `target.providerMessageId` names both a customer message (its `providerMessageId`) and an operator reply (an id reported for it): the service cannot tell which. Nothing is written; name the customer message by `target.eventId`.
             */
            409: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    "RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    "RateLimit-Reset": components["headers"]["RateLimitReset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "event_conflict" | "ambiguous_target";
                            message?: string;
                        };
                    };
                };
            };
            /**
             * @description Payload too large. Do not retry without correcting the request.
             *
             *     `error.code` is one of:
             *
             *     - `payload_too_large`: A JSON body (or the multipart `payload` field) over 65536 bytes, or a multipart body over 22020096 bytes.
             */
            413: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    /** @description The integration's incoming message budget per minute (`limits.messagesPerMinute`, or the service default), enforced per service instance. Present whenever the key was accepted: absent only when the request was refused before that (e.g. a body the runtime could not parse, or a backend failure while checking the key). */
                    "RateLimit-Limit"?: number;
                    /** @description Messages this service instance still accepts right now for the integration (whole tokens left in its bucket). At 0, wait `RateLimit-Reset` seconds before the next message. Present whenever the key was accepted: absent only when the request was refused before that (e.g. a body the runtime could not parse, or a backend failure while checking the key). */
                    "RateLimit-Remaining"?: number;
                    /** @description Whole seconds until the budget is full again; when `RateLimit-Remaining` is 0, until the next message is accepted (on a 429 it equals `Retry-After`). Present whenever the key was accepted: absent only when the request was refused before that (e.g. a body the runtime could not parse, or a backend failure while checking the key). */
                    "RateLimit-Reset"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "payload_too_large";
                            message?: string;
                        };
                    };
                };
            };
            /**
             * @description Unsupported media type. Do not retry without correcting the request.
             *
             *     `error.code` is one of:
             *
             *     - `unsupported_media_type`: Missing, unsupported or malformed `Content-Type` (e.g. a parameter without a value: `application/json; charset`), a charset other than utf-8, or a `Content-Encoding` other than identity, gzip or deflate.
             */
            415: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    /** @description The integration's incoming message budget per minute (`limits.messagesPerMinute`, or the service default), enforced per service instance. Present whenever the key was accepted: absent only when the request was refused before that (e.g. a body the runtime could not parse, or a backend failure while checking the key). */
                    "RateLimit-Limit"?: number;
                    /** @description Messages this service instance still accepts right now for the integration (whole tokens left in its bucket). At 0, wait `RateLimit-Reset` seconds before the next message. Present whenever the key was accepted: absent only when the request was refused before that (e.g. a body the runtime could not parse, or a backend failure while checking the key). */
                    "RateLimit-Remaining"?: number;
                    /** @description Whole seconds until the budget is full again; when `RateLimit-Remaining` is 0, until the next message is accepted (on a 429 it equals `Retry-After`). Present whenever the key was accepted: absent only when the request was refused before that (e.g. a body the runtime could not parse, or a backend failure while checking the key). */
                    "RateLimit-Reset"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "unsupported_media_type";
                            message?: string;
                        };
                    };
                };
            };
            /**
             * @description Rate limited: retry the same request after `Retry-After` seconds.
             *
             *     `error.code` is one of:
             *
             *     - `rate_limited`: The integration's incoming message rate limit is exhausted (messages and message events each have that budget). Retry the same event (same `eventId`) after `Retry-After` seconds.
             */
            429: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    "RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    "RateLimit-Reset": components["headers"]["RateLimitReset"];
                    "Retry-After": components["headers"]["RetryAfter"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "rate_limited";
                            message?: string;
                        };
                    };
                };
            };
            /**
             * @description Temporarily unavailable: retry the same request after `Retry-After` seconds.
             *
             *     `error.code` is one of:
             *
             *     - `deadline_exceeded`: The request could not be completed within its time budget (50 s from arrival, below the front end's 60 s timeout): a backend call was too slow. Retry with the same ids after `Retry-After`; a write that still landed is found by the retry (duplicate / idempotent answer).
             *     - `temporarily_unavailable`: Contention or a temporary backend failure. Every operation is safe to retry with the same ids after `Retry-After`.
             */
            503: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    /** @description The integration's incoming message budget per minute (`limits.messagesPerMinute`, or the service default), enforced per service instance. Present whenever the key was accepted: absent only when the request was refused before that (e.g. a body the runtime could not parse, or a backend failure while checking the key). */
                    "RateLimit-Limit"?: number;
                    /** @description Messages this service instance still accepts right now for the integration (whole tokens left in its bucket). At 0, wait `RateLimit-Reset` seconds before the next message. Present whenever the key was accepted: absent only when the request was refused before that (e.g. a body the runtime could not parse, or a backend failure while checking the key). */
                    "RateLimit-Remaining"?: number;
                    /** @description Whole seconds until the budget is full again; when `RateLimit-Remaining` is 0, until the next message is accepted (on a 429 it equals `Retry-After`). Present whenever the key was accepted: absent only when the request was refused before that (e.g. a body the runtime could not parse, or a backend failure while checking the key). */
                    "RateLimit-Reset"?: number;
                    "Retry-After": components["headers"]["RetryAfter"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "deadline_exceeded" | "temporarily_unavailable";
                            message?: string;
                        };
                    };
                };
            };
        };
    };
    updateChannel: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ChannelRequest"];
            };
        };
        responses: {
            /** @description The channel as stored. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    "RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    "RateLimit-Reset": components["headers"]["RateLimitReset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ChannelResponse"];
                };
            };
            /**
             * @description Invalid input. Do not retry without correcting the request.
             *
             *     `error.code` is one of:
             *
             *     - `invalid_json`: The JSON body (or the multipart `payload` field) is empty, not valid UTF-8, or not valid JSON (including a bare JSON value such as `123`).
             *     - `invalid_request`: The JSON does not match the request schema (the message names the offending field path), or the body cannot be read (it ends before its `Content-Length`, or does not match its `Content-Encoding`).
             */
            400: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    /** @description The integration's incoming message budget per minute (`limits.messagesPerMinute`, or the service default), enforced per service instance. Present whenever the key was accepted: absent only when the request was refused before that (e.g. a body the runtime could not parse, or a backend failure while checking the key). */
                    "RateLimit-Limit"?: number;
                    /** @description Messages this service instance still accepts right now for the integration (whole tokens left in its bucket). At 0, wait `RateLimit-Reset` seconds before the next message. Present whenever the key was accepted: absent only when the request was refused before that (e.g. a body the runtime could not parse, or a backend failure while checking the key). */
                    "RateLimit-Remaining"?: number;
                    /** @description Whole seconds until the budget is full again; when `RateLimit-Remaining` is 0, until the next message is accepted (on a 429 it equals `Retry-After`). Present whenever the key was accepted: absent only when the request was refused before that (e.g. a body the runtime could not parse, or a backend failure while checking the key). */
                    "RateLimit-Reset"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "invalid_json" | "invalid_request";
                            message?: string;
                        };
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            405: components["responses"]["MethodNotAllowed"];
            /**
             * @description Payload too large. Do not retry without correcting the request.
             *
             *     `error.code` is one of:
             *
             *     - `payload_too_large`: A JSON body (or the multipart `payload` field) over 65536 bytes, or a multipart body over 22020096 bytes.
             */
            413: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    /** @description The integration's incoming message budget per minute (`limits.messagesPerMinute`, or the service default), enforced per service instance. Present whenever the key was accepted: absent only when the request was refused before that (e.g. a body the runtime could not parse, or a backend failure while checking the key). */
                    "RateLimit-Limit"?: number;
                    /** @description Messages this service instance still accepts right now for the integration (whole tokens left in its bucket). At 0, wait `RateLimit-Reset` seconds before the next message. Present whenever the key was accepted: absent only when the request was refused before that (e.g. a body the runtime could not parse, or a backend failure while checking the key). */
                    "RateLimit-Remaining"?: number;
                    /** @description Whole seconds until the budget is full again; when `RateLimit-Remaining` is 0, until the next message is accepted (on a 429 it equals `Retry-After`). Present whenever the key was accepted: absent only when the request was refused before that (e.g. a body the runtime could not parse, or a backend failure while checking the key). */
                    "RateLimit-Reset"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "payload_too_large";
                            message?: string;
                        };
                    };
                };
            };
            /**
             * @description Unsupported media type. Do not retry without correcting the request.
             *
             *     `error.code` is one of:
             *
             *     - `unsupported_media_type`: Missing, unsupported or malformed `Content-Type` (e.g. a parameter without a value: `application/json; charset`), a charset other than utf-8, or a `Content-Encoding` other than identity, gzip or deflate.
             */
            415: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    /** @description The integration's incoming message budget per minute (`limits.messagesPerMinute`, or the service default), enforced per service instance. Present whenever the key was accepted: absent only when the request was refused before that (e.g. a body the runtime could not parse, or a backend failure while checking the key). */
                    "RateLimit-Limit"?: number;
                    /** @description Messages this service instance still accepts right now for the integration (whole tokens left in its bucket). At 0, wait `RateLimit-Reset` seconds before the next message. Present whenever the key was accepted: absent only when the request was refused before that (e.g. a body the runtime could not parse, or a backend failure while checking the key). */
                    "RateLimit-Remaining"?: number;
                    /** @description Whole seconds until the budget is full again; when `RateLimit-Remaining` is 0, until the next message is accepted (on a 429 it equals `Retry-After`). Present whenever the key was accepted: absent only when the request was refused before that (e.g. a body the runtime could not parse, or a backend failure while checking the key). */
                    "RateLimit-Reset"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "unsupported_media_type";
                            message?: string;
                        };
                    };
                };
            };
            /**
             * @description Rate limited: retry the same request after `Retry-After` seconds.
             *
             *     `error.code` is one of:
             *
             *     - `rate_limited`: The integration's incoming message rate limit is exhausted (messages and message events each have that budget). Retry the same event (same `eventId`) after `Retry-After` seconds.
             */
            429: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    "RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    "RateLimit-Reset": components["headers"]["RateLimitReset"];
                    "Retry-After": components["headers"]["RetryAfter"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "rate_limited";
                            message?: string;
                        };
                    };
                };
            };
            /**
             * @description Temporarily unavailable: retry the same request after `Retry-After` seconds.
             *
             *     `error.code` is one of:
             *
             *     - `deadline_exceeded`: The request could not be completed within its time budget (50 s from arrival, below the front end's 60 s timeout): a backend call was too slow. Retry with the same ids after `Retry-After`; a write that still landed is found by the retry (duplicate / idempotent answer).
             *     - `temporarily_unavailable`: Contention or a temporary backend failure. Every operation is safe to retry with the same ids after `Retry-After`.
             */
            503: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    /** @description The integration's incoming message budget per minute (`limits.messagesPerMinute`, or the service default), enforced per service instance. Present whenever the key was accepted: absent only when the request was refused before that (e.g. a body the runtime could not parse, or a backend failure while checking the key). */
                    "RateLimit-Limit"?: number;
                    /** @description Messages this service instance still accepts right now for the integration (whole tokens left in its bucket). At 0, wait `RateLimit-Reset` seconds before the next message. Present whenever the key was accepted: absent only when the request was refused before that (e.g. a body the runtime could not parse, or a backend failure while checking the key). */
                    "RateLimit-Remaining"?: number;
                    /** @description Whole seconds until the budget is full again; when `RateLimit-Remaining` is 0, until the next message is accepted (on a 429 it equals `Retry-After`). Present whenever the key was accepted: absent only when the request was refused before that (e.g. a body the runtime could not parse, or a backend failure while checking the key). */
                    "RateLimit-Reset"?: number;
                    "Retry-After": components["headers"]["RetryAfter"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "deadline_exceeded" | "temporarily_unavailable";
                            message?: string;
                        };
                    };
                };
            };
        };
    };
    claimDelivery: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ClaimRequest"];
            };
        };
        responses: {
            /** @description The claim result. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ClaimResponse"];
                };
            };
            /**
             * @description Invalid input. Do not retry without correcting the request.
             *
             *     `error.code` is one of:
             *
             *     - `invalid_json`: The JSON body (or the multipart `payload` field) is empty, not valid UTF-8, or not valid JSON (including a bare JSON value such as `123`).
             *     - `invalid_request`: The JSON does not match the request schema (the message names the offending field path), or the body cannot be read (it ends before its `Content-Length`, or does not match its `Content-Encoding`).
             */
            400: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "invalid_json" | "invalid_request";
                            message?: string;
                        };
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /**
             * @description Not found, or not yours (each code says what). Do not retry without correcting the request.
             *
             *     `error.code` is one of:
             *
             *     - `delivery_not_found`: No such delivery, or it belongs to another integration (reported identically).
             */
            404: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "delivery_not_found";
                            message?: string;
                        };
                    };
                };
            };
            405: components["responses"]["MethodNotAllowed"];
            /**
             * @description Payload too large. Do not retry without correcting the request.
             *
             *     `error.code` is one of:
             *
             *     - `payload_too_large`: A JSON body (or the multipart `payload` field) over 65536 bytes, or a multipart body over 22020096 bytes.
             */
            413: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "payload_too_large";
                            message?: string;
                        };
                    };
                };
            };
            415: components["responses"]["UnsupportedMediaType"];
            /**
             * @description Temporarily unavailable: retry the same request after `Retry-After` seconds.
             *
             *     `error.code` is one of:
             *
             *     - `lease_busy`: Another claim (another `requestId`) holds a live lease on the delivery; `Retry-After` is the time left on that lease.
             *     - `retry_delayed`: The delivery was failed with outcome `retry` and may not be claimed yet; `Retry-After` is the time to wait.
             *     - `deadline_exceeded`: The request could not be completed within its time budget (50 s from arrival, below the front end's 60 s timeout): a backend call was too slow. Retry with the same ids after `Retry-After`; a write that still landed is found by the retry (duplicate / idempotent answer).
             *     - `temporarily_unavailable`: Contention or a temporary backend failure. Every operation is safe to retry with the same ids after `Retry-After`.
             */
            503: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    "Retry-After": components["headers"]["RetryAfter"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "lease_busy" | "retry_delayed" | "deadline_exceeded" | "temporarily_unavailable";
                            message?: string;
                        };
                    };
                };
            };
        };
    };
    startDelivery: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["StartRequest"];
            };
        };
        responses: {
            /** @description The delivery status. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["StartResponse"];
                };
            };
            /**
             * @description Invalid input. Do not retry without correcting the request.
             *
             *     `error.code` is one of:
             *
             *     - `invalid_json`: The JSON body (or the multipart `payload` field) is empty, not valid UTF-8, or not valid JSON (including a bare JSON value such as `123`).
             *     - `invalid_request`: The JSON does not match the request schema (the message names the offending field path), or the body cannot be read (it ends before its `Content-Length`, or does not match its `Content-Encoding`).
             */
            400: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "invalid_json" | "invalid_request";
                            message?: string;
                        };
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /**
             * @description Not found, or not yours (each code says what). Do not retry without correcting the request.
             *
             *     `error.code` is one of:
             *
             *     - `delivery_not_found`: No such delivery, or it belongs to another integration (reported identically).
             */
            404: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "delivery_not_found";
                            message?: string;
                        };
                    };
                };
            };
            405: components["responses"]["MethodNotAllowed"];
            /**
             * @description Conflict.
             *
             *     `error.code` is one of:
             *
             *     - `lease_lost`: The lease does not hold the delivery (expired, replaced by a newer lease, or never held it).
             *     - `delivery_finished`: start or extend on a delivery that already finished (start: as `failed` or `unknown`; extend: in any terminal status): do not send.
             */
            409: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "lease_lost" | "delivery_finished";
                            message?: string;
                        };
                    };
                };
            };
            /**
             * @description Payload too large. Do not retry without correcting the request.
             *
             *     `error.code` is one of:
             *
             *     - `payload_too_large`: A JSON body (or the multipart `payload` field) over 65536 bytes, or a multipart body over 22020096 bytes.
             */
            413: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "payload_too_large";
                            message?: string;
                        };
                    };
                };
            };
            415: components["responses"]["UnsupportedMediaType"];
            /**
             * @description Temporarily unavailable: retry the same request after `Retry-After` seconds.
             *
             *     `error.code` is one of:
             *
             *     - `deadline_exceeded`: The request could not be completed within its time budget (50 s from arrival, below the front end's 60 s timeout): a backend call was too slow. Retry with the same ids after `Retry-After`; a write that still landed is found by the retry (duplicate / idempotent answer).
             *     - `temporarily_unavailable`: Contention or a temporary backend failure. Every operation is safe to retry with the same ids after `Retry-After`.
             */
            503: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    "Retry-After": components["headers"]["RetryAfter"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "deadline_exceeded" | "temporarily_unavailable";
                            message?: string;
                        };
                    };
                };
            };
        };
    };
    extendDeliveryLease: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ExtendRequest"];
            };
        };
        responses: {
            /** @description The lease is extended. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ExtendResponse"];
                };
            };
            /**
             * @description Invalid input. Do not retry without correcting the request.
             *
             *     `error.code` is one of:
             *
             *     - `invalid_json`: The JSON body (or the multipart `payload` field) is empty, not valid UTF-8, or not valid JSON (including a bare JSON value such as `123`).
             *     - `invalid_request`: The JSON does not match the request schema (the message names the offending field path), or the body cannot be read (it ends before its `Content-Length`, or does not match its `Content-Encoding`).
             */
            400: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "invalid_json" | "invalid_request";
                            message?: string;
                        };
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /**
             * @description Not found, or not yours (each code says what). Do not retry without correcting the request.
             *
             *     `error.code` is one of:
             *
             *     - `delivery_not_found`: No such delivery, or it belongs to another integration (reported identically).
             */
            404: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "delivery_not_found";
                            message?: string;
                        };
                    };
                };
            };
            405: components["responses"]["MethodNotAllowed"];
            /**
             * @description Conflict.
             *
             *     `error.code` is one of:
             *
             *     - `lease_lost`: The lease does not hold the delivery (expired, replaced by a newer lease, or never held it).
             *     - `delivery_finished`: start or extend on a delivery that already finished (start: as `failed` or `unknown`; extend: in any terminal status): do not send.
             *     - `lease_limit_reached`: extend on a lease whose expiry already is 15 minutes after its claim, the most a lease may live: no time can be added. Finish the provider call and report the outcome (complete is accepted even after the lease expired).
             */
            409: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "lease_lost" | "delivery_finished" | "lease_limit_reached";
                            message?: string;
                        };
                    };
                };
            };
            /**
             * @description Payload too large. Do not retry without correcting the request.
             *
             *     `error.code` is one of:
             *
             *     - `payload_too_large`: A JSON body (or the multipart `payload` field) over 65536 bytes, or a multipart body over 22020096 bytes.
             */
            413: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "payload_too_large";
                            message?: string;
                        };
                    };
                };
            };
            415: components["responses"]["UnsupportedMediaType"];
            /**
             * @description Temporarily unavailable: retry the same request after `Retry-After` seconds.
             *
             *     `error.code` is one of:
             *
             *     - `deadline_exceeded`: The request could not be completed within its time budget (50 s from arrival, below the front end's 60 s timeout): a backend call was too slow. Retry with the same ids after `Retry-After`; a write that still landed is found by the retry (duplicate / idempotent answer).
             *     - `temporarily_unavailable`: Contention or a temporary backend failure. Every operation is safe to retry with the same ids after `Retry-After`.
             */
            503: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    "Retry-After": components["headers"]["RetryAfter"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "deadline_exceeded" | "temporarily_unavailable";
                            message?: string;
                        };
                    };
                };
            };
        };
    };
    completeDelivery: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CompleteRequest"];
            };
        };
        responses: {
            /** @description Sent. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CompleteResponse"];
                };
            };
            /**
             * @description Invalid input. Do not retry without correcting the request.
             *
             *     `error.code` is one of:
             *
             *     - `invalid_json`: The JSON body (or the multipart `payload` field) is empty, not valid UTF-8, or not valid JSON (including a bare JSON value such as `123`).
             *     - `invalid_request`: The JSON does not match the request schema (the message names the offending field path), or the body cannot be read (it ends before its `Content-Length`, or does not match its `Content-Encoding`).
             *     - `unknown_part`: A `parts` entry of complete or fail names a part the delivery does not have (its text, when it has one, and its attachment ids are its parts). Nothing is written.
             *     - `conversation_required`: complete of a start (a claim with `kind: "start"`) without `conversation`: the thread the channel made is what lets the customer's answer join the started conversation. Nothing is written and the lease stays: complete again with it.
             */
            400: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "invalid_json" | "invalid_request" | "unknown_part" | "conversation_required";
                            message?: string;
                        };
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /**
             * @description Not found, or not yours (each code says what). Do not retry without correcting the request.
             *
             *     `error.code` is one of:
             *
             *     - `delivery_not_found`: No such delivery, or it belongs to another integration (reported identically).
             */
            404: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "delivery_not_found";
                            message?: string;
                        };
                    };
                };
            };
            405: components["responses"]["MethodNotAllowed"];
            /**
             * @description Conflict.
             *
             *     `error.code` is one of:
             *
             *     - `lease_lost`: The lease does not hold the delivery (expired, replaced by a newer lease, or never held it).
             *     - `conflicting_completion`: complete contradicts what is recorded: the delivery was completed under another lease or with other provider ids, or this lease already reported a definite failure.
             */
            409: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "lease_lost" | "conflicting_completion";
                            message?: string;
                        };
                    };
                };
            };
            /**
             * @description Payload too large. Do not retry without correcting the request.
             *
             *     `error.code` is one of:
             *
             *     - `payload_too_large`: A JSON body (or the multipart `payload` field) over 65536 bytes, or a multipart body over 22020096 bytes.
             */
            413: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "payload_too_large";
                            message?: string;
                        };
                    };
                };
            };
            415: components["responses"]["UnsupportedMediaType"];
            /**
             * @description Temporarily unavailable: retry the same request after `Retry-After` seconds.
             *
             *     `error.code` is one of:
             *
             *     - `deadline_exceeded`: The request could not be completed within its time budget (50 s from arrival, below the front end's 60 s timeout): a backend call was too slow. Retry with the same ids after `Retry-After`; a write that still landed is found by the retry (duplicate / idempotent answer).
             *     - `temporarily_unavailable`: Contention or a temporary backend failure. Every operation is safe to retry with the same ids after `Retry-After`.
             */
            503: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    "Retry-After": components["headers"]["RetryAfter"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "deadline_exceeded" | "temporarily_unavailable";
                            message?: string;
                        };
                    };
                };
            };
        };
    };
    failDelivery: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["FailRequest"];
            };
        };
        responses: {
            /** @description The delivery status after the report. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["FailResponse"];
                };
            };
            /**
             * @description Invalid input. Do not retry without correcting the request.
             *
             *     `error.code` is one of:
             *
             *     - `invalid_json`: The JSON body (or the multipart `payload` field) is empty, not valid UTF-8, or not valid JSON (including a bare JSON value such as `123`).
             *     - `invalid_request`: The JSON does not match the request schema (the message names the offending field path), or the body cannot be read (it ends before its `Content-Length`, or does not match its `Content-Encoding`).
             *     - `unknown_part`: A `parts` entry of complete or fail names a part the delivery does not have (its text, when it has one, and its attachment ids are its parts). Nothing is written.
             */
            400: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "invalid_json" | "invalid_request" | "unknown_part";
                            message?: string;
                        };
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /**
             * @description Not found, or not yours (each code says what). Do not retry without correcting the request.
             *
             *     `error.code` is one of:
             *
             *     - `delivery_not_found`: No such delivery, or it belongs to another integration (reported identically).
             */
            404: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "delivery_not_found";
                            message?: string;
                        };
                    };
                };
            };
            405: components["responses"]["MethodNotAllowed"];
            /**
             * @description Conflict.
             *
             *     `error.code` is one of:
             *
             *     - `lease_lost`: The lease does not hold the delivery (expired, replaced by a newer lease, or never held it).
             */
            409: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "lease_lost";
                            message?: string;
                        };
                    };
                };
            };
            /**
             * @description Payload too large. Do not retry without correcting the request.
             *
             *     `error.code` is one of:
             *
             *     - `payload_too_large`: A JSON body (or the multipart `payload` field) over 65536 bytes, or a multipart body over 22020096 bytes.
             */
            413: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "payload_too_large";
                            message?: string;
                        };
                    };
                };
            };
            415: components["responses"]["UnsupportedMediaType"];
            /**
             * @description Temporarily unavailable: retry the same request after `Retry-After` seconds.
             *
             *     `error.code` is one of:
             *
             *     - `deadline_exceeded`: The request could not be completed within its time budget (50 s from arrival, below the front end's 60 s timeout): a backend call was too slow. Retry with the same ids after `Retry-After`; a write that still landed is found by the retry (duplicate / idempotent answer).
             *     - `temporarily_unavailable`: Contention or a temporary backend failure. Every operation is safe to retry with the same ids after `Retry-After`.
             */
            503: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    "Retry-After": components["headers"]["RetryAfter"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "deadline_exceeded" | "temporarily_unavailable";
                            message?: string;
                        };
                    };
                };
            };
        };
    };
    listPendingDeliveries: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["PendingRequest"];
            };
        };
        responses: {
            /** @description One page of the list. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PendingResponse"];
                };
            };
            /**
             * @description Invalid input. Do not retry without correcting the request.
             *
             *     `error.code` is one of:
             *
             *     - `invalid_json`: The JSON body (or the multipart `payload` field) is empty, not valid UTF-8, or not valid JSON (including a bare JSON value such as `123`).
             *     - `invalid_request`: The JSON does not match the request schema (the message names the offending field path), or the body cannot be read (it ends before its `Content-Length`, or does not match its `Content-Encoding`).
             *     - `invalid_cursor`: The `cursor` is not a `nextCursor` of this integration's list (malformed, or from another integration): start again without one.
             */
            400: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "invalid_json" | "invalid_request" | "invalid_cursor";
                            message?: string;
                        };
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            405: components["responses"]["MethodNotAllowed"];
            /**
             * @description Payload too large. Do not retry without correcting the request.
             *
             *     `error.code` is one of:
             *
             *     - `payload_too_large`: A JSON body (or the multipart `payload` field) over 65536 bytes, or a multipart body over 22020096 bytes.
             */
            413: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "payload_too_large";
                            message?: string;
                        };
                    };
                };
            };
            415: components["responses"]["UnsupportedMediaType"];
            /**
             * @description Temporarily unavailable: retry the same request after `Retry-After` seconds.
             *
             *     `error.code` is one of:
             *
             *     - `deadline_exceeded`: The request could not be completed within its time budget (50 s from arrival, below the front end's 60 s timeout): a backend call was too slow. Retry with the same ids after `Retry-After`; a write that still landed is found by the retry (duplicate / idempotent answer).
             *     - `temporarily_unavailable`: Contention or a temporary backend failure. Every operation is safe to retry with the same ids after `Retry-After`.
             */
            503: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    "Retry-After": components["headers"]["RetryAfter"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "deadline_exceeded" | "temporarily_unavailable";
                            message?: string;
                        };
                    };
                };
            };
        };
    };
    reportDeliveryReceipt: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ReceiptRequest"];
            };
        };
        responses: {
            /** @description Recorded (or already known). */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ReceiptResponse"];
                };
            };
            /**
             * @description Invalid input. Do not retry without correcting the request.
             *
             *     `error.code` is one of:
             *
             *     - `invalid_json`: The JSON body (or the multipart `payload` field) is empty, not valid UTF-8, or not valid JSON (including a bare JSON value such as `123`).
             *     - `invalid_request`: The JSON does not match the request schema (the message names the offending field path), or the body cannot be read (it ends before its `Content-Length`, or does not match its `Content-Encoding`).
             */
            400: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "invalid_json" | "invalid_request";
                            message?: string;
                        };
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /**
             * @description Not found, or not yours (each code says what). Do not retry without correcting the request.
             *
             *     `error.code` is one of:
             *
             *     - `delivery_not_found`: No such delivery, or it belongs to another integration (reported identically).
             */
            404: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "delivery_not_found";
                            message?: string;
                        };
                    };
                };
            };
            405: components["responses"]["MethodNotAllowed"];
            /**
             * @description Conflict.
             *
             *     `error.code` is one of:
             *
             *     - `delivery_not_sent`: A receipt for a delivery that is not `sent` (still queued or being sent, failed, or outcome unknown): receipts are taken for sent deliveries only.
             */
            409: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "delivery_not_sent";
                            message?: string;
                        };
                    };
                };
            };
            /**
             * @description Payload too large. Do not retry without correcting the request.
             *
             *     `error.code` is one of:
             *
             *     - `payload_too_large`: A JSON body (or the multipart `payload` field) over 65536 bytes, or a multipart body over 22020096 bytes.
             */
            413: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "payload_too_large";
                            message?: string;
                        };
                    };
                };
            };
            415: components["responses"]["UnsupportedMediaType"];
            /**
             * @description Temporarily unavailable: retry the same request after `Retry-After` seconds.
             *
             *     `error.code` is one of:
             *
             *     - `deadline_exceeded`: The request could not be completed within its time budget (50 s from arrival, below the front end's 60 s timeout): a backend call was too slow. Retry with the same ids after `Retry-After`; a write that still landed is found by the retry (duplicate / idempotent answer).
             *     - `temporarily_unavailable`: Contention or a temporary backend failure. Every operation is safe to retry with the same ids after `Retry-After`.
             */
            503: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    "Retry-After": components["headers"]["RetryAfter"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "deadline_exceeded" | "temporarily_unavailable";
                            message?: string;
                        };
                    };
                };
            };
        };
    };
    getDeliveryAttachment: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["AttachmentRequest"];
            };
        };
        responses: {
            /** @description The bytes of the file, exactly `size` long, whose SHA-256 is the `sha256` of the claim. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    /** @description Bytes. */
                    "Content-Length": number;
                    /**
                     * @description `attachment` with the sanitised file name (`filename` in ASCII, `filename*` in UTF-8, RFC 6266).
                     * @example attachment; filename="screenshot.png"; filename*=UTF-8''screenshot.png
                     */
                    "Content-Disposition": string;
                    /**
                     * @description The SHA-256 of the bytes, lowercase hex, quoted.
                     * @example "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
                     */
                    ETag: string;
                    /**
                     * @description The SHA-256 of the bytes (RFC 9530).
                     * @example sha-256=:n4bQgYhMfWWaL+qgxVrQFaO/TxsrC4Is0V1sFbDwCgg=:
                     */
                    "Repr-Digest": string;
                    [name: string]: unknown;
                };
                content: {
                    "image/png": string;
                    "image/jpeg": string;
                    "image/webp": string;
                    "image/gif": string;
                    "application/pdf": string;
                    "text/plain; charset=utf-8": string;
                    "application/octet-stream": string;
                };
            };
            /**
             * @description Invalid input. Do not retry without correcting the request.
             *
             *     `error.code` is one of:
             *
             *     - `invalid_json`: The JSON body (or the multipart `payload` field) is empty, not valid UTF-8, or not valid JSON (including a bare JSON value such as `123`).
             *     - `invalid_request`: The JSON does not match the request schema (the message names the offending field path), or the body cannot be read (it ends before its `Content-Length`, or does not match its `Content-Encoding`).
             */
            400: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "invalid_json" | "invalid_request";
                            message?: string;
                        };
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /**
             * @description Not found, or not yours (each code says what). Do not retry without correcting the request.
             *
             *     `error.code` is one of:
             *
             *     - `delivery_not_found`: No such delivery, or it belongs to another integration (reported identically).
             *     - `attachment_not_found`: The `attachmentId` is not one of the delivery's files (`message.attachments` of its claim).
             */
            404: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "delivery_not_found" | "attachment_not_found";
                            message?: string;
                        };
                    };
                };
            };
            405: components["responses"]["MethodNotAllowed"];
            /**
             * @description Conflict.
             *
             *     `error.code` is one of:
             *
             *     - `lease_lost`: The lease does not hold the delivery (expired, replaced by a newer lease, or never held it).
             *     - `delivery_finished`: start or extend on a delivery that already finished (start: as `failed` or `unknown`; extend: in any terminal status): do not send.
             */
            409: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "lease_lost" | "delivery_finished";
                            message?: string;
                        };
                    };
                };
            };
            /**
             * @description Payload too large. Do not retry without correcting the request.
             *
             *     `error.code` is one of:
             *
             *     - `payload_too_large`: A JSON body (or the multipart `payload` field) over 65536 bytes, or a multipart body over 22020096 bytes.
             */
            413: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "payload_too_large";
                            message?: string;
                        };
                    };
                };
            };
            415: components["responses"]["UnsupportedMediaType"];
            /**
             * @description Temporarily unavailable: retry the same request after `Retry-After` seconds.
             *
             *     `error.code` is one of:
             *
             *     - `deadline_exceeded`: The request could not be completed within its time budget (50 s from arrival, below the front end's 60 s timeout): a backend call was too slow. Retry with the same ids after `Retry-After`; a write that still landed is found by the retry (duplicate / idempotent answer).
             *     - `temporarily_unavailable`: Contention or a temporary backend failure. Every operation is safe to retry with the same ids after `Retry-After`.
             */
            503: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    "Retry-After": components["headers"]["RetryAfter"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "deadline_exceeded" | "temporarily_unavailable";
                            message?: string;
                        };
                    };
                };
            };
        };
    };
    listPendingErasures: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ErasuresPendingRequest"];
            };
        };
        responses: {
            /** @description OK. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErasuresPendingResponse"];
                };
            };
            /**
             * @description Invalid input. Do not retry without correcting the request.
             *
             *     `error.code` is one of:
             *
             *     - `invalid_json`: The JSON body (or the multipart `payload` field) is empty, not valid UTF-8, or not valid JSON (including a bare JSON value such as `123`).
             *     - `invalid_request`: The JSON does not match the request schema (the message names the offending field path), or the body cannot be read (it ends before its `Content-Length`, or does not match its `Content-Encoding`).
             *     - `invalid_cursor`: The `cursor` is not a `nextCursor` of this integration's list (malformed, or from another integration): start again without one.
             */
            400: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "invalid_json" | "invalid_request" | "invalid_cursor";
                            message?: string;
                        };
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            405: components["responses"]["MethodNotAllowed"];
            /**
             * @description Payload too large. Do not retry without correcting the request.
             *
             *     `error.code` is one of:
             *
             *     - `payload_too_large`: A JSON body (or the multipart `payload` field) over 65536 bytes, or a multipart body over 22020096 bytes.
             */
            413: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "payload_too_large";
                            message?: string;
                        };
                    };
                };
            };
            415: components["responses"]["UnsupportedMediaType"];
            /**
             * @description Temporarily unavailable: retry the same request after `Retry-After` seconds.
             *
             *     `error.code` is one of:
             *
             *     - `deadline_exceeded`: The request could not be completed within its time budget (50 s from arrival, below the front end's 60 s timeout): a backend call was too slow. Retry with the same ids after `Retry-After`; a write that still landed is found by the retry (duplicate / idempotent answer).
             *     - `temporarily_unavailable`: Contention or a temporary backend failure. Every operation is safe to retry with the same ids after `Retry-After`.
             */
            503: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    "Retry-After": components["headers"]["RetryAfter"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "deadline_exceeded" | "temporarily_unavailable";
                            message?: string;
                        };
                    };
                };
            };
        };
    };
    acknowledgeErasure: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ErasuresAckRequest"];
            };
        };
        responses: {
            /** @description OK. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErasuresAckResponse"];
                };
            };
            /**
             * @description Invalid input. Do not retry without correcting the request.
             *
             *     `error.code` is one of:
             *
             *     - `invalid_json`: The JSON body (or the multipart `payload` field) is empty, not valid UTF-8, or not valid JSON (including a bare JSON value such as `123`).
             *     - `invalid_request`: The JSON does not match the request schema (the message names the offending field path), or the body cannot be read (it ends before its `Content-Length`, or does not match its `Content-Encoding`).
             */
            400: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "invalid_json" | "invalid_request";
                            message?: string;
                        };
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /**
             * @description Not found, or not yours (each code says what). Do not retry without correcting the request.
             *
             *     `error.code` is one of:
             *
             *     - `erasure_not_found`: No finished erasure of your integration has this `erasureId` (unknown, another integration's, or not finished yet).
             */
            404: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "erasure_not_found";
                            message?: string;
                        };
                    };
                };
            };
            405: components["responses"]["MethodNotAllowed"];
            /**
             * @description Payload too large. Do not retry without correcting the request.
             *
             *     `error.code` is one of:
             *
             *     - `payload_too_large`: A JSON body (or the multipart `payload` field) over 65536 bytes, or a multipart body over 22020096 bytes.
             */
            413: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "payload_too_large";
                            message?: string;
                        };
                    };
                };
            };
            415: components["responses"]["UnsupportedMediaType"];
            /**
             * @description Temporarily unavailable: retry the same request after `Retry-After` seconds.
             *
             *     `error.code` is one of:
             *
             *     - `deadline_exceeded`: The request could not be completed within its time budget (50 s from arrival, below the front end's 60 s timeout): a backend call was too slow. Retry with the same ids after `Retry-After`; a write that still landed is found by the retry (duplicate / idempotent answer).
             *     - `temporarily_unavailable`: Contention or a temporary backend failure. Every operation is safe to retry with the same ids after `Retry-After`.
             */
            503: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    "Retry-After": components["headers"]["RetryAfter"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "deadline_exceeded" | "temporarily_unavailable";
                            message?: string;
                        };
                    };
                };
            };
        };
    };
}
