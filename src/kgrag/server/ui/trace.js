// The retrieval trace (POST /query/data with trace) as tables: the parameters, what
// each route found, what was dropped and why, and the stages' notes.

import { el, table } from './dom.js';
import { t } from './i18n.js';

const TOP = 5;

function score(value) {
  return typeof value === 'number' ? value.toFixed(3) : '';
}

function paramsTable(trace) {
  const params = Object.entries(trace.params || {}).map(([k, v]) => [k, String(v)]);
  const keywords = trace.keywords || {};
  params.push([t('trace.high'), (keywords.high_level || []).join(', ')]);
  params.push([t('trace.low'), (keywords.low_level || []).join(', ')]);
  const final = trace.final || {};
  for (const kind of ['entities', 'relations', 'paths', 'chunks']) {
    if (final[kind] !== undefined) params.push([t(`trace.final.${kind}`), String(final[kind])]);
  }
  return table(t('trace.params'), [t('trace.col.name'), t('trace.col.value')], params);
}

function routesTable(routes) {
  const rows = routes.map((r) => {
    const items = r.items || [];
    const top = items.slice(0, TOP).map((i) => (i.score === null || i.score === undefined ? i.id : `${i.id} (${score(i.score)})`));
    return [r.route, r.kind, r.query || '', String(items.length), top.join('; ')];
  });
  const heads = ['route', 'kind', 'query', 'found', 'top'].map((k) => t(`trace.col.${k}`));
  return table(t('trace.routes'), heads, rows);
}

function droppedTable(dropped) {
  const rows = dropped.map((d) => [d.stage, d.kind, d.id, d.reason, score(d.score)]);
  const heads = ['stage', 'kind', 'item', 'reason', 'score'].map((k) => t(`trace.col.${k}`));
  return table(t('trace.dropped'), heads, rows);
}

/** The whole trace; ``data`` is the /query/data answer (its counts head the section). */
export function renderTrace(trace, data) {
  const info = data.metadata?.processing_info || {};
  const counts = t('trace.counts', {
    entities: info.entities_after_truncation ?? 0,
    relations: info.relations_after_truncation ?? 0,
    chunks: info.final_chunks_count ?? 0,
  });
  const parts = [el('p', { text: counts }), paramsTable(trace), routesTable(trace.routes || [])];
  const dropped = trace.dropped || [];
  parts.push(dropped.length ? droppedTable(dropped) : el('p', { class: 'muted', text: t('trace.none_dropped') }));
  const notes = trace.notes || [];
  if (notes.length) {
    parts.push(el('h3', { text: t('trace.notes') }));
    parts.push(el('ul', { class: 'plain' }, notes.map((n) => el('li', { text: `${n.stage}: ${n.message}` }))));
  }
  return el('div', { class: 'trace' }, parts);
}
