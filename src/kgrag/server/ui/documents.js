// The Documents tab: the status table (POST /documents/paginated) with status filters,
// search and paging; delete, supersede and retry; uploads are in uploads.js.

import { call, watchJob } from './api.js';
import { docName, docRow, STATUSES } from './doc_rows.js';
import { $, busy, clear, confirmAction, el, notify } from './dom.js';
import { onLanguage, t } from './i18n.js';
import { initUploads, supersede } from './uploads.js';

const state = { page: 1, pageSize: 10, statuses: new Set(), search: '', last: null };
let searchTimer = 0;

export function initDocuments() {
  initUploads(refreshDocuments);
  $('docs-refresh').addEventListener('click', (e) => busy(e.currentTarget, refreshDocuments));
  $('docs-retry').addEventListener('click', (e) => busy(e.currentTarget, retryFailed));
  $('docs-prev').addEventListener('click', () => turn(-1));
  $('docs-next').addEventListener('click', () => turn(1));
  $('docs-size').addEventListener('change', (e) => {
    state.pageSize = Number(e.currentTarget.value);
    state.page = 1;
    refreshDocuments();
  });
  $('doc-search').addEventListener('input', (e) => {
    state.search = e.currentTarget.value;
    state.page = 1;
    clearTimeout(searchTimer);
    searchTimer = setTimeout(refreshDocuments, 250);
  });
  onLanguage(render);
}

function turn(step) {
  state.page = Math.max(1, state.page + step);
  refreshDocuments();
}

/** Read the current page again and redraw the table. */
export async function refreshDocuments() {
  const body = {
    page: state.page,
    page_size: state.pageSize,
    status_filters: [...state.statuses],
    search: state.search,
  };
  try {
    state.last = await call('POST', '/documents/paginated', { body });
  } catch (error) {
    notify(error.message, true);
    return;
  }
  if (state.page > state.last.pagination.total_pages) {
    state.page = state.last.pagination.total_pages;
    return refreshDocuments();
  }
  render();
}

function render() {
  if (!state.last) return;
  const { documents, pagination, status_counts: counts } = state.last;
  renderFilters(counts);
  const actions = { remove, replace: supersedeDoc, retry: retryFailed };
  const rows = documents.map((doc) => docRow(doc, actions));
  clear($('docs-rows')).append(...rows);
  if (!rows.length) $('docs-rows').append(emptyRow());
  $('docs-page').textContent = t('docs.page', {
    page: pagination.page, pages: pagination.total_pages, total: pagination.total_count,
  });
  $('docs-prev').disabled = !pagination.has_prev;
  $('docs-next').disabled = !pagination.has_next;
}

function emptyRow() {
  return el('tr', {}, el('td', { colspan: 6, class: 'muted', text: t('docs.none') }));
}

function renderFilters(counts) {
  const box = $('status-filters');
  const legend = box.querySelector('legend');
  clear(box).append(legend);
  for (const status of STATUSES) {
    const input = el('input', { type: 'checkbox', value: status, checked: state.statuses.has(status) });
    input.addEventListener('change', () => {
      if (input.checked) state.statuses.add(status);
      else state.statuses.delete(status);
      state.page = 1;
      refreshDocuments();
    });
    const label = t('docs.filter_item', { status: t(`status.${status}`), count: counts[status] ?? 0 });
    box.append(el('label', { class: 'check' }, input, ' ', label));
  }
}

async function remove(doc) {
  const name = docName(doc);
  if (!(await confirmAction(t('docs.confirm_delete', { name })))) return;
  const answer = await call('DELETE', '/documents/delete_document', { body: { doc_ids: [doc.id] } });
  notify(t('docs.deleting', { name }));
  const job = await watchJob(answer.job_id);
  const ok = job.status === 'succeeded';
  notify(ok ? t('docs.deleted', { name }) : job.error || job.status, !ok);
  await refreshDocuments();
}

async function supersedeDoc(doc) {
  await supersede(doc);
}

async function retryFailed() {
  const answer = await call('POST', '/documents/reprocess_failed');
  notify(t('docs.retrying'));
  const job = await watchJob(answer.job_id, () => refreshDocuments());
  notify(job.result?.message || job.error || job.status, job.status !== 'succeeded');
  await refreshDocuments();
}
