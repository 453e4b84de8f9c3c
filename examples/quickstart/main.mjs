// Runs connector.mjs on the local stack (`npm start`): its Pub/Sub subscription, then a first customer message.
import { PubSub } from '@google-cloud/pubsub';
import { start, stop, sendIncoming } from './connector.mjs';

const key = process.env.INTEGRATION_KEY;
if (!key) throw new Error('Set INTEGRATION_KEY to the key `npm start` printed');
const { API_BASE_URL = 'http://127.0.0.1:5000', PUBSUB_EMULATOR_HOST = '127.0.0.1:8085' } = process.env;

const pubsub = new PubSub({ projectId: 'demo-support-desk', apiEndpoint: PUBSUB_EMULATOR_HOST, emulatorMode: true });
await start({ baseUrl: API_BASE_URL, key, subscription: pubsub.subscription('connector-notifications-pull') });

const { conversationId } = await sendIncoming({ text: 'Hi, where is my order?', externalConversationId: 'chat-1', externalCustomerId: 'ada' });
console.log(`Customer message posted. Reply to it:\n  npm run desk -- reply ${conversationId} --text "On its way!"`);
process.on('SIGINT', () => stop().then(() => process.exit(0)));
