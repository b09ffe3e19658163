// Curation in the graph tab: merge two entities (POST /graph/entities/merge) and review
// the duplicate report (GET /graph/dedupe): accept a group (POST /graph/dedupe/apply)
// or reject it (hidden from this review; nothing is written).

import { call } from './api.js';
import { $, busy, clear, confirmAction, el, notify } from './dom.js';
import { t } from './i18n.js';

let graph = { reload: async () => {} };

export function initCuration(hooks) {
  graph = hooks;
  $('merge-form').addEventListener('submit', (event) => {
    event.preventDefault();
    busy(event.submitter, merge);
  });
  $('dedupe-form').addEventListener('submit', (event) => {
    event.preventDefault();
    busy(event.submitter, review);
  });
}

async function merge() {
  const from = $('merge-from').value.trim();
  const into = $('merge-into').value.trim();
  if (!from || !into) return;
  if (!(await confirmAction(t('merge.confirm', { from, into })))) return;
  const body = { entities_to_change: [from], entity_to_change_into: into };
  const answer = await call('POST', '/graph/entities/merge', { body });
  notify(t('merge.done', { from, into, id: answer.data?.merge_id ?? '' }));
  $('merge-from').value = '';
  await graph.reload(into);
}

async function review() {
  const score = $('dedupe-score').value;
  const report = await call('GET', '/graph/dedupe', { params: score ? { min_score: score } : {} });
  const list = clear($('dedupe-groups'));
  for (const group of report.groups) list.append(groupItem(group));
  if (!report.groups.length) list.append(el('li', { class: 'muted', text: t('dedupe.none') }));
}

function evidence(group) {
  const lines = (group.links || []).map((link) => {
    const why = [...(link.for || []).map((x) => `+ ${x}`), ...(link.against || []).map((x) => `− ${x}`)];
    return el('li', {}, `${link.a} ~ ${link.b} (${link.score})`,
      why.length ? el('ul', { class: 'plain' }, why.map((w) => el('li', { text: w }))) : '');
  });
  return el('details', {}, el('summary', { text: t('dedupe.evidence') }), el('ul', { class: 'plain' }, lines));
}

/** One group: target ⇐ members, its score and evidence, Accept and Reject. */
function groupItem(group) {
  const item = el('li', { class: 'group' });
  const title = el('p', {}, el('strong', { text: group.target }), ` ⇐ ${group.members.join(', ')}`,
    el('span', { class: 'muted', text: ` · ${t('dedupe.score', { score: group.score })}` }));
  const accept = el('button', { type: 'button', text: t('dedupe.accept') });
  const reject = el('button', { type: 'button', text: t('dedupe.reject') });
  const state = el('span', { class: 'group-state', role: 'status' });
  accept.addEventListener('click', () => busy(accept, async () => {
    const body = { groups: [{ target: group.target, members: group.members }] };
    const answer = await call('POST', '/graph/dedupe/apply', { body });
    settle(item, state, t('dedupe.merged', { id: (answer.merges || []).join(', ') }));
    await graph.reload(group.target);
  }));
  reject.addEventListener('click', () => settle(item, state, t('dedupe.rejected')));
  item.append(title, evidence(group), el('div', { class: 'row-actions' }, accept, reject, state));
  return item;
}

function settle(item, state, message) {
  for (const button of item.querySelectorAll('button')) button.remove();
  item.classList.add('settled');
  state.textContent = message;
  item.querySelector('.row-actions').append(state);
}
