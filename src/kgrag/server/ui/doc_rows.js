// One row of the documents table: name, status, chunks, time, warnings, actions.

import { busy, el } from './dom.js';
import { formatTime, t } from './i18n.js';

export const STATUSES = ['pending', 'processing', 'processed', 'failed'];

function statusBadge(doc) {
  const known = STATUSES.includes(doc.status) ? doc.status : 'unknown';
  const badge = el('span', { class: `badge status-${known}`, text: t(`status.${known}`) });
  return doc.disabled ? [badge, ' ', el('span', { class: 'badge', text: t('docs.disabled') })] : badge;
}

function nameCell(doc) {
  const original = doc.metadata?.original_name;
  return [
    el('span', { class: 'doc-name', text: original || doc.file_path || doc.id }),
    el('small', { class: 'muted block', text: original ? `${doc.file_path} · ${doc.id}` : doc.id }),
  ];
}

/** Warnings and the error, folded in a <details> (empty cell when there are none). */
function warningsCell(doc) {
  const items = [...(doc.warnings || [])];
  if (doc.error_msg) items.unshift(doc.error_msg);
  if (!items.length) return '';
  const summary = el('summary', { text: t('docs.warnings', { count: items.length }) });
  const list = el('ul', { class: 'plain' }, items.map((w) => el('li', { text: String(w) })));
  return el('details', { class: 'warnings' }, summary, list);
}

function actionsCell(doc, actions) {
  const button = (label, action, extra = {}) => el('button', {
    type: 'button', text: label, ...extra,
    onclick: (event) => busy(event.currentTarget, () => action(doc)),
  });
  const cells = [
    button(t('docs.replace'), actions.replace, { 'aria-label': t('docs.replace_named', { name: docName(doc) }) }),
    button(t('docs.delete'), actions.remove, { class: 'danger', 'aria-label': t('docs.delete_named', { name: docName(doc) }) }),
  ];
  if (doc.status === 'failed') cells.unshift(button(t('docs.retry_one'), actions.retry));
  return el('div', { class: 'row-actions' }, cells);
}

export function docName(doc) {
  return doc.metadata?.original_name || doc.file_path || doc.id;
}

/** The table row of one document. */
export function docRow(doc, actions) {
  return el('tr', { 'data-doc-id': doc.id, 'data-status': doc.status },
    el('td', {}, nameCell(doc)),
    el('td', {}, statusBadge(doc)),
    el('td', { text: doc.chunks_count ?? 0 }),
    el('td', { text: formatTime(doc.updated_at) }),
    el('td', {}, warningsCell(doc)),
    el('td', {}, actionsCell(doc, actions)),
  );
}
