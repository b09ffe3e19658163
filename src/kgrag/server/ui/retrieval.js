// The Retrieval tab: ask with a mode and the main parameters; the answer streams from
// POST /query/stream (NDJSON, read with fetch and a ReadableStream); then the
// references, the conditions coverage and, on request, the trace (POST /query/data).

import { call, ndjson } from './api.js';
import { renderAnswer, renderCoverage, renderReferences } from './answer_view.js';
import { $, clear, notify } from './dom.js';
import { t } from './i18n.js';
import { renderTrace } from './trace.js';

let running = null;

export function initRetrieval() {
  $('query-form').addEventListener('submit', (event) => {
    event.preventDefault();
    ask();
  });
  $('q-stop').addEventListener('click', () => running?.abort());
}

function number(id) {
  const value = $(id).value.trim();
  return value ? Number(value) : undefined;
}

/** The query body from the form: fields left empty keep the index's defaults. */
function queryBody() {
  const body = {
    query: $('q-text').value,
    mode: $('q-mode').value,
    top_k: number('q-topk'),
    chunk_top_k: number('q-chunktopk'),
    max_total_tokens: number('q-tokens'),
    response_type: $('q-rtype').value.trim() || undefined,
    conditions: $('q-conditions').value || undefined,
  };
  return Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));
}

function reset() {
  clear($('q-answer'));
  clear($('q-refs'));
  clear($('q-coverage'));
  clear($('q-trace-out'));
  $('q-meta').textContent = '';
  $('q-trace-section').hidden = true;
}

async function ask() {
  const body = queryBody();
  if (!body.query.trim()) return;
  running?.abort();
  running = new AbortController();
  reset();
  setBusy(true);
  try {
    await stream(body, running.signal);
    if ($('q-trace').checked) await trace(body);
  } catch (error) {
    if (error.name !== 'AbortError') notify(error.message, true);
  } finally {
    setBusy(false);
  }
}

function setBusy(on) {
  $('q-send').disabled = on;
  $('q-stop').disabled = !on;
  $('q-answer').setAttribute('aria-busy', String(on));
}

async function stream(body, signal) {
  const answer = $('q-answer');
  const pieces = [];
  let references = [];
  for await (const line of ndjson('/query/stream', { ...body, include_chunk_content: true }, signal)) {
    if (line.references) renderReferences((references = line.references));
    if (typeof line.response === 'string') {
      pieces.push(line.response);
      answer.append(line.response);
    }
    if (line.error) throw new Error(line.error);
    if (line.done || line.response_time !== undefined) finish(line, pieces.join(''), references);
  }
}

/** The last line: the answer with its citations linked, coverage and what it cost. */
function finish(last, text, references) {
  renderAnswer(text || last.response || '', references);
  if (Array.isArray(last.references)) renderReferences(last.references);
  renderCoverage(last.coverage || []);
  const cost = last.cost || {};
  const meta = [t('query.mode_used', { mode: last.mode ?? '' }), t('query.seconds', { s: last.response_time ?? '' })];
  if (cost.calls !== undefined) {
    meta.push(t('query.cost', { calls: cost.calls, tokens: (cost.prompt_tokens || 0) + (cost.completion_tokens || 0) }));
  }
  if (last.extractive) meta.push(t('query.extractive'));
  if (last.fallback_reason) meta.push(String(last.fallback_reason));
  $('q-meta').textContent = meta.join(' · ');
}

async function trace(body) {
  const data = await call('POST', '/query/data', { body: { ...body, trace: true } });
  $('q-trace-section').hidden = false;
  clear($('q-trace-out')).append(renderTrace(data.metadata?.trace || {}, data));
  if (!$('q-coverage').childElementCount) renderCoverage(data.metadata?.conditions?.coverage || []);
}
