// The side panel of the graph: a node's or an edge's fields and sources, and the
// description editor (POST /graph/entity/edit).

import { call } from './api.js';
import { $, busy, clear, el, notify } from './dom.js';
import { t } from './i18n.js';

const SEP = '<SEP>';

function field(term, value) {
  if (value === undefined || value === null || value === '') return [];
  return [el('dt', { text: term }), el('dd', { text: String(value) })];
}

function listOf(values) {
  const items = (values || []).filter(Boolean);
  if (!items.length) return el('p', { class: 'muted', text: t('graph.no_sources') });
  return el('ul', { class: 'plain sources' }, items.map((v) => el('li', { text: String(v) })));
}

function split(value) {
  if (Array.isArray(value)) return value;
  return value ? String(value).split(SEP) : [];
}

/** The sources of a node or edge: the files, then the chunks. */
function sources(props) {
  return el('section', { class: 'sources-box' },
    el('h4', { text: t('graph.files') }), listOf(props.file_paths || split(props.file_path)),
    el('h4', { text: t('graph.chunks') }), listOf(props.source_ids || split(props.source_id)),
  );
}

export function showNothing() {
  clear($('graph-details')).append(el('p', { class: 'muted', text: t('graph.pick') }));
}

/** A node: name, type, description, degree, sources, and the editor. */
export function showNode(node, degree) {
  const props = node.properties || {};
  const facts = el('dl', { class: 'facts' },
    field(t('graph.type'), props.entity_type),
    field(t('graph.degree'), degree),
    field(t('graph.description'), props.description),
  );
  const panel = clear($('graph-details'));
  panel.append(el('h3', { class: 'entity-name', text: node.id }), facts, sources(props), editor(node, degree));
  panel.append(el('button', { type: 'button', text: t('merge.this'), onclick: () => mergeFrom(node.id) }));
}

function editor(node, degree) {
  const box = el('textarea', { id: 'edit-description', rows: 4 });
  box.value = node.properties?.description || '';
  const save = el('button', { type: 'submit', text: t('graph.save') });
  const form = el('form', { class: 'stack edit-form' },
    el('label', { for: 'edit-description', text: t('graph.edit_description') }), box, save);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    busy(save, () => saveDescription(node, degree, box.value));
  });
  return form;
}

async function saveDescription(node, degree, description) {
  const body = { entity_name: node.id, updated_data: { description } };
  const answer = await call('POST', '/graph/entity/edit', { body });
  node.properties = { ...node.properties, ...(answer.data || {}) };
  notify(t('graph.saved', { name: node.id }));
  showNode(node, degree);
}

function mergeFrom(name) {
  $('merge-from').value = name;
  $('merge-into').focus();
}

/** An edge: its ends, description, keywords, weight and sources. */
export function showEdge(edge) {
  const props = edge.properties || {};
  const facts = el('dl', { class: 'facts' },
    field(t('graph.description'), props.description),
    field(t('graph.keywords'), props.keywords),
    field(t('graph.weight'), props.weight),
  );
  const title = el('h3', { class: 'entity-name', text: `${edge.source} — ${edge.target}` });
  clear($('graph-details')).append(title, facts, sources(props));
}
