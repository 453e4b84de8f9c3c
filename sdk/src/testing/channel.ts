/**
 * `PUT /v1/channel` on the test service: the same rules as the service (../internal/rules/channel.ts,
 * generated from functions/src/rules/channel.ts) after the document's request schema, the channel
 * kept on the integration.
 */
import type { UpdateChannelRequest } from '../internal/api.generated.js';
import { applyChannelUpdate, channelUpdateProblems, type ChannelProblem } from '../internal/rules/channel.js';
import { body, invalidRequest, type Answer, type Handlers, type OperationRequest } from './operations.js';
import { spendIncomingBudget } from './rate-limit.js';
import type { ServiceState } from './state.js';

/** A problem's field as the service's 400 names it (`templates[0].preview`; functions/src/platform/schema.ts). */
const fieldOf = (problem: ChannelProblem): string =>
  problem.path.length === 0 ? 'body' : problem.path.map((p) => (typeof p === 'number' ? `[${p}]` : p)).join('.').replace(/\.\[/g, '[');

export function channelHandlers(state: ServiceState): Pick<Handlers, 'updateChannel'> {
  return { updateChannel: (request) => updateChannel(state, request) };
}

function updateChannel(state: ServiceState, request: OperationRequest): Answer {
  // The messages' budget, as the service's endpoint spends it (functions/src/messages/http.ts).
  spendIncomingBudget(state, request);
  const update = body<UpdateChannelRequest>('updateChannel', request.json);
  const problems = channelUpdateProblems(update);
  if (problems.length > 0) throw invalidRequest(problems.map((problem) => `${fieldOf(problem)}: ${problem.message}`));
  const { channel } = applyChannelUpdate(request.integration.channel ?? null, update, request.now);
  request.integration.channel = channel;
  return { status: 200, body: channel };
}
