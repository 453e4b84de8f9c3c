import type { Channel, ChannelInput } from '../types.js';
import { updateChannel, type UpdateChannelRequest } from './api.generated.js';
import { readOperation } from './response.js';
import type { CallOptions, Transport } from './transport.js';

/**
 * `client.channel`: the channel as the connector declares it (docs/contract.md#channel): the reply
 * window and the message templates the console shows on the integration.
 */
export class ChannelApi {
  readonly #transport: Transport;

  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /**
   * Replaces what `input` names of the channel (`window`, `templates`, or both; a field left out
   * stays as stored) and returns the channel as stored, `{ window, templates, updatedAt }`. The
   * same input again changes nothing (`updatedAt` stays), so call it at every start-up. A refused
   * input (a placeholder naming no param, a param the preview does not use, a (name, language)
   * pair twice, a limit exceeded) is a `BadRequestError` naming the field, and nothing is stored.
   */
  async update(input: ChannelInput, options: CallOptions = {}): Promise<Channel> {
    const json: UpdateChannelRequest = {};
    if (input.window !== undefined) json.window = input.window;
    if (input.templates !== undefined) json.templates = input.templates;
    const answer = await this.#transport.put(updateChannel.path, json, options);
    return readOperation(answer, updateChannel);
  }
}
