/**
 * The integration's `channel` (`PUT /v1/channel`, docs/contract.md#channel) as the console reads and
 * words it; pure (no DOM), for integration-channel.ts's panel and the unit tests.
 */
import { formatWindow } from './lifecycle';

/** One param of a template: its name (its `{{name}}` placeholder) and its own limit, when it declares one. */
export interface TemplateParamView {
  name: string;
  maxLength?: number;
}

/** One template as the card shows it and the template picker offers it. */
export interface ChannelTemplateView {
  name: string;
  language: string;
  params: TemplateParamView[];
  preview: string;
}

/** The integration's `channel` field as the card shows it. */
export interface IntegrationChannel {
  /** Seconds after the customer's latest message a free-text reply may go out; null: none declared. */
  windowSeconds: number | null;
  templates: ChannelTemplateView[];
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

function readParams(value: unknown): TemplateParamView[] {
  return (Array.isArray(value) ? (value as unknown[]) : []).map((p) => {
    const { name, maxLength } = (typeof p === 'object' && p !== null ? p : {}) as Record<string, unknown>;
    return typeof maxLength === 'number' ? { name: str(name), maxLength } : { name: str(name) };
  });
}

/** The stored `channel` (written only by the service), or undefined when the connector never declared one. */
export function readChannel(value: unknown): IntegrationChannel | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { window, templates } = value as { window?: unknown; templates?: unknown };
  const seconds = typeof window === 'object' && window !== null ? (window as { seconds?: unknown }).seconds : undefined;
  return {
    windowSeconds: typeof seconds === 'number' ? seconds : null,
    templates: (Array.isArray(templates) ? (templates as unknown[]) : []).map((t) => {
      const { name, language, preview, params } = (typeof t === 'object' && t !== null ? t : {}) as Record<string, unknown>;
      return { name: str(name), language: str(language), params: readParams(params), preview: str(preview) };
    }),
  };
}

/** The reply window in words ("Free-text replies within 1 day of the customer's latest message."). */
export function channelWindowText(channel: IntegrationChannel): string {
  return channel.windowSeconds === null
    ? 'No reply window declared.'
    : `Free-text replies within ${formatWindow(channel.windowSeconds)} of the customer's latest message.`;
}

