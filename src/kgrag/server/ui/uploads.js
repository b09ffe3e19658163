// Uploads: files dropped or chosen go to POST /documents/upload (several at once), with
// the upload's progress, then the indexing job's progress until it ends.
// A document is superseded by a new file the same way.

import { call, upload, watchJob } from './api.js';
import { docName, STATUSES } from './doc_rows.js';
import { $, el, notify } from './dom.js';
import { t } from './i18n.js';

let refresh = async () => {};

export function initUploads(onChange) {
  refresh = onChange;
  const zone = $('dropzone');
  const input = $('file-input');
  input.addEventListener('change', () => {
    if (input.files.length) send([...input.files], '/documents/upload');
    input.value = '';
  });
  zone.addEventListener('dragover', (event) => {
    event.preventDefault();
    zone.classList.add('over');
  });
  zone.addEventListener('dragleave', () => zone.classList.remove('over'));
  zone.addEventListener('drop', (event) => {
    event.preventDefault();
    zone.classList.remove('over');
    const files = [...(event.dataTransfer?.files || [])];
    if (files.length) send(files, '/documents/upload');
  });
}

/** One line per upload: names, a progress bar and what is happening. */
function progressLine(files) {
  const bar = el('progress', { max: 1, value: 0 });
  const state = el('span', { class: 'upload-state', text: t('upload.sending', { percent: 0 }) });
  const names = files.map((f) => f.name).join(', ');
  const line = el('li', { class: 'upload' }, el('span', { class: 'upload-names', text: names }), bar, state);
  $('uploads').prepend(line);
  return { line, bar, state };
}

function jobText(job) {
  const p = job.progress || {};
  if (job.status === 'queued') return t('upload.queued');
  if (job.status === 'running') {
    return t('upload.indexing', { done: p.documents_done ?? 0, total: p.documents ?? 0 });
  }
  if (job.status === 'succeeded') return job.result?.message || t('upload.done');
  return t('upload.failed', { error: job.error || job.status });
}

async function send(files, path) {
  const view = progressLine(files);
  try {
    const answer = await upload(path, files, (share) => {
      view.bar.value = share;
      view.line.dataset.progress = String(share);
      view.state.textContent = t('upload.sending', { percent: Math.round(share * 100) });
    });
    view.bar.value = 1;
    await refresh();
    const job = await watchJob(answer.job_id, (seen) => {
      view.state.textContent = jobText(seen);
      refresh();
    });
    view.line.dataset.status = job.status;
    view.state.textContent = jobText(job);
    if (answer.track_id) await showTrack(view.line, answer.track_id);
  } catch (error) {
    view.line.dataset.status = 'failed';
    view.state.textContent = t('upload.failed', { error: error.message });
  }
  await refresh();
}

/** Each file of the upload with its status, and the reason when it failed. */
async function showTrack(line, trackId) {
  const track = await call('GET', `/documents/track_status/${encodeURIComponent(trackId)}`);
  const items = track.documents.map((doc) => {
    const status = STATUSES.includes(doc.status) ? doc.status : 'unknown';
    return el('li', { 'data-status': status },
      `${docName(doc)}: `, el('span', { class: `badge status-${status}`, text: t(`status.${status}`) }),
      doc.error_msg ? ` ${doc.error_msg}` : '');
  });
  line.append(el('ul', { class: 'plain upload-files' }, items));
}

/** Pick a file and send it as the new version of ``doc``. */
export function supersede(doc) {
  const input = $('supersede-input');
  return new Promise((resolve) => {
    input.onchange = async () => {
      const files = [...input.files];
      input.value = '';
      if (files.length) {
        notify(t('docs.superseding', { name: docName(doc) }));
        await send(files, `/documents/${encodeURIComponent(doc.id)}/supersede`);
      }
      resolve();
    };
    input.oncancel = () => resolve();
    input.click();
  });
}
