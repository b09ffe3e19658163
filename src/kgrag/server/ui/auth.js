// Signing in: with auth on, an API key or an account (POST /login) gives the credential
// every call sends; it lives in sessionStorage, so closing the tab forgets it.

import { ApiError, call, credential, whenUnauthorized } from './api.js';
import { $ } from './dom.js';
import { t } from './i18n.js';

let onReady = () => {};
let started = false;

/** Show the app once the server accepts us; ask for credentials when it does not. */
export async function start(ready) {
  onReady = ready;
  $('key-form').addEventListener('submit', useKey);
  $('account-form').addEventListener('submit', signIn);
  $('logout').addEventListener('click', logOut);
  whenUnauthorized(() => ask(t('auth.expired')));
  const status = await call('GET', '/auth-status');
  if (status.auth_mode === 'disabled') return enter();
  $('logout').hidden = false;
  $('account-form').hidden = !status.auth_configured;
  if (!credential.get()) return ask('');
  return check(credential.get());
}

function enter() {
  $('login').hidden = true;
  $('app').hidden = false;
  $('login-error').textContent = '';
  if (!started) {
    started = true;
    onReady();
  }
}

function ask(message) {
  credential.clear();
  $('app').hidden = true;
  $('login').hidden = false;
  $('login-error').textContent = message;
  $('login-key').focus();
}

/** Keep a credential if a gated call accepts it. */
async function check(given) {
  credential.set(given);
  try {
    await call('GET', '/documents/status_counts');
    enter();
  } catch (error) {
    const refused = error instanceof ApiError && [401, 403].includes(error.status);
    ask(refused ? t('auth.refused') : error.message);
  }
}

async function useKey(event) {
  event.preventDefault();
  const key = $('login-key').value.trim();
  $('login-key').value = '';
  if (key) await check(key);
}

async function signIn(event) {
  event.preventDefault();
  const body = { username: $('login-user').value, password: $('login-password').value };
  $('login-password').value = '';
  try {
    const answer = await call('POST', '/login', { body });
    await check(answer.access_token);
  } catch (error) {
    ask(error.status === 429 ? t('auth.throttled') : t('auth.wrong'));
  }
}

function logOut() {
  ask('');
}
