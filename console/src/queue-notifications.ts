/**
 * Browser notifications for new customer messages while the console's tab is hidden
 * (docs/console.md#the-queue). Off until the member turns them on with the button (the permission
 * is asked on that click, never on load); on stays on in this browser (localStorage) while the
 * permission holds. A notification names the customer and opens the conversation when clicked.
 */
import { h } from './dom';

const STORAGE_KEY = 'desk.notifications';

export interface QueueNotifications {
  button: HTMLButtonElement;
  /** Notifies of a new message in `conversationId` when they are on and the tab is hidden. */
  newMessage(conversationId: string, person: string, integration: string): void;
}

export function queueNotifications(): QueueNotifications {
  const supported = typeof Notification !== 'undefined';
  const on = (): boolean => supported && Notification.permission === 'granted' && localStorage.getItem(STORAGE_KEY) === 'on';
  const button = h('button', { type: 'button', class: 'secondary', id: 'notifications-toggle', hidden: !supported, 'aria-pressed': 'false' });
  const render = (): void => {
    const denied = supported && Notification.permission === 'denied';
    button.textContent = on() ? 'Notifications on' : denied ? 'Notifications blocked' : 'Notify me of new messages';
    button.setAttribute('aria-pressed', on() ? 'true' : 'false');
    button.disabled = denied;
    button.title = denied ? 'The browser blocks notifications for this site: allow them in its site settings.' : '';
  };
  button.addEventListener('click', () => {
    if (on()) {
      localStorage.setItem(STORAGE_KEY, 'off');
      render();
      return;
    }
    void Notification.requestPermission().then((permission) => {
      if (permission === 'granted') localStorage.setItem(STORAGE_KEY, 'on');
      render();
    });
  });
  render();
  return {
    button,
    newMessage(conversationId, person, integration) {
      if (!on() || !document.hidden) return;
      let notification: Notification;
      try {
        notification = new Notification(`New message from ${person}`, { body: `on ${integration}`, tag: conversationId });
      } catch {
        return; // a browser that allows notifications only from a service worker: the title's count still says it
      }
      notification.onclick = () => {
        window.focus();
        location.hash = `#/conversations/${encodeURIComponent(conversationId)}`;
        notification.close();
      };
    },
  };
}
