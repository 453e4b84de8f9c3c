/**
 * The workspace console: sign-in, then the views Conversations (members), Integrations (read
 * by members, changed by admins) and Privacy (admins only), chosen by the URL hash
 * (#/conversations[/<id>], #/integrations, #/privacy).
 * Everything goes through firestore.rules with the signed-in user's own rights. Conversations has
 * keyboard shortcuts (keyboard.ts), active only while it is the view shown.
 */
import { onAuthStateChanged, type User } from 'firebase/auth';
import { conversationsView } from './conversations';
import { h, notice, replace } from './dom';
import { describeError } from './errors';
import { connect, type Services } from './firebase';
import { integrationsView } from './integrations';
import { keyboardShortcuts, type KeyboardShortcuts } from './keyboard';
import { privacyView } from './privacy';
import { leave, loadMembership, preferredWorkspace, rememberWorkspace, signIn, type Session } from './session';
import type { View } from './view';

const root = document.getElementById('app') as HTMLElement;
let current: { name: string; view: View } | undefined;

function unmount(): void {
  current?.view.destroy();
  current = undefined;
}

function signInForm(services: Services, message?: string): void {
  unmount();
  const error = h('div', { id: 'sign-in-error' });
  if (message) replace(error, notice('error', message));
  const email = h('input', { id: 'email', name: 'email', type: 'email', autocomplete: 'username', required: true });
  const password = h('input', { id: 'password', name: 'password', type: 'password', autocomplete: 'current-password', required: true });
  const workspace = h('input', { id: 'workspace', name: 'workspace', required: true, value: preferredWorkspace(services), autocomplete: 'off', spellcheck: 'false' });
  const submit = h('button', { type: 'submit' }, 'Sign in');
  const form = h(
    'form',
    { class: 'card sign-in', 'aria-labelledby': 'sign-in-title' },
    h('h1', { id: 'sign-in-title' }, 'Support desk console'),
    h('p', { class: 'muted' }, services.local ? 'Local stack: the logins are printed by npm start.' : 'Sign in with your workspace account.'),
    h('label', { for: 'email' }, 'Email'),
    email,
    h('label', { for: 'password' }, 'Password'),
    password,
    h('label', { for: 'workspace' }, 'Workspace'),
    workspace,
    submit,
    error,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    submit.disabled = true;
    replace(error, notice('loading', 'Signing in…'));
    rememberWorkspace(workspace.value.trim());
    signIn(services, email.value.trim(), password.value).catch((err: unknown) => {
      submit.disabled = false;
      replace(error, notice('error', describeError(err, 'sign-in refused')));
    });
  });
  replace(root, h('main', { id: 'main', class: 'center' }, form));
  email.focus();
}

function skipToContent(event: Event): void {
  event.preventDefault();
  document.getElementById('main')?.focus();
}

function shell(session: Session, shortcuts: KeyboardShortcuts): HTMLElement {
  const { services, user, workspaceId, role } = session;
  const outlet = h('div', { id: 'outlet' });
  const link = (hash: string, label: string) => h('a', { href: hash, 'data-nav': hash }, label);
  const signOutButton = h('button', { type: 'button', class: 'secondary', onclick: () => void leave(services) }, 'Sign out');
  replace(
    root,
    // The skip link moves focus to the content and leaves the route alone: following `#main`
    // would replace the hash route (an open thread closed).
    h('a', { class: 'skip', href: '#main', onclick: skipToContent }, 'Skip to content'),
    h(
      'header',
      { class: 'top' },
      h('span', { class: 'brand' }, 'Support desk'),
      // Operators get no Privacy link: every read and write of it is the admins' (firestore.rules).
      h('nav', { 'aria-label': 'Console' }, link('#/conversations', 'Conversations'), link('#/integrations', 'Integrations'), role === 'admin' ? link('#/privacy', 'Privacy') : null),
      h('span', { class: 'who' }, h('span', { class: 'ws', title: 'Workspace' }, workspaceId), ' · ', h('span', { id: 'whoami' }, `${user.email ?? user.uid} (${role})`)),
      shortcuts.button,
      signOutButton,
    ),
    h('main', { id: 'main', tabindex: '-1' }, outlet),
  );
  return outlet;
}

function route(session: Session, outlet: HTMLElement, shortcuts: KeyboardShortcuts): void {
  const parts = location.hash.replace(/^#\/?/, '').split('/').filter((p) => p !== '').map(decodeURIComponent);
  const name = parts[0] === 'integrations' || parts[0] === 'privacy' ? parts[0] : 'conversations';
  shortcuts.setActive(name === 'conversations');
  for (const a of document.querySelectorAll<HTMLAnchorElement>('[data-nav]')) {
    if (a.dataset.nav === `#/${name}`) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  if (current?.name === name) {
    current.view.route?.(parts.slice(1));
    return;
  }
  unmount();
  const view = name === 'integrations' ? integrationsView(session) : name === 'privacy' ? privacyView(session) : conversationsView(session);
  current = { name, view };
  replace(outlet, view.el);
  view.route?.(parts.slice(1));
}

async function start(): Promise<void> {
  replace(root, notice('loading', 'Loading the console…'));
  let services: Services;
  try {
    services = await connect();
  } catch (err) {
    replace(root, notice('error', describeError(err, 'configuration refused')));
    return;
  }
  let onHash: (() => void) | undefined;
  /** The signed-in session's keyboard shortcuts (keyboard.ts), removed at sign-out. */
  let shortcuts: KeyboardShortcuts | undefined;
  // Why the last session ended (not a member), shown on the sign-in form that follows.
  let signedOutBecause: string | undefined;
  onAuthStateChanged(services.auth, (user: User | null) => {
    if (onHash) window.removeEventListener('hashchange', onHash);
    onHash = undefined;
    shortcuts?.destroy();
    shortcuts = undefined;
    if (!user) {
      signInForm(services, signedOutBecause);
      signedOutBecause = undefined;
      return;
    }
    const workspaceId = preferredWorkspace(services).trim();
    replace(root, notice('loading', 'Checking your membership…'));
    void loadMembership(services, user, workspaceId).then((membership) => {
      if (services.auth.currentUser?.uid !== user.uid) return; // signed out meanwhile
      if (!membership.ok) {
        signedOutBecause = membership.reason;
        void leave(services);
        return;
      }
      const session: Session = { services, user, workspaceId, role: membership.role };
      const keys = keyboardShortcuts();
      shortcuts = keys;
      const outlet = shell(session, keys);
      onHash = () => route(session, outlet, keys);
      window.addEventListener('hashchange', onHash);
      route(session, outlet, keys);
    });
  });
}

void start();
