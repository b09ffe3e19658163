// The Knowledge graph tab: find an entity (GET /graph/label/search), load the subgraph
// around it (GET /graphs) and draw it with cytoscape.js (force layout 'cose').
// Labels are drawn on a canvas, so names never become markup.

import { call } from './api.js';
import { initCuration } from './curation.js';
import { $, busy, clear, el, notify } from './dom.js';
import { showEdge, showNode, showNothing } from './graph_details.js';
import { onLanguage, t } from './i18n.js';

const PALETTE = ['#2f6db5', '#b5542f', '#2f9a6d', '#8a4fb5', '#b58a2f', '#2f98b5', '#b52f6a', '#5f7a2f'];
const view = { cy: null, nodes: new Map(), edges: new Map(), label: '', data: null };
let searchTimer = 0;

export function initGraph() {
  $('graph-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const label = $('graph-label').value.trim();
    if (label) busy(event.submitter, () => loadGraph(label));
  });
  $('graph-all').addEventListener('click', (e) => busy(e.currentTarget, () => loadGraph('*')));
  $('graph-label').addEventListener('input', () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(searchLabels, 200);
  });
  initCuration({ reload: (label) => loadGraph(label || view.label) });
  document.addEventListener('kgrag:tab', (event) => {
    if (event.detail === 'graph' && view.cy) view.cy.resize();
  });
  onLanguage(summarise);
}

async function searchLabels() {
  const q = $('graph-label').value.trim();
  const list = clear($('graph-matches'));
  if (!q) return;
  try {
    const names = await call('GET', '/graph/label/search', { params: { q, limit: 20 } });
    for (const name of names) {
      const pick = el('button', { type: 'button', class: 'chip', text: name });
      pick.addEventListener('click', () => {
        $('graph-label').value = name;
        busy(pick, () => loadGraph(name));
      });
      list.append(el('li', {}, pick));
    }
    if (!names.length) list.append(el('li', { class: 'muted', text: t('graph.no_match') }));
  } catch (error) {
    notify(error.message, true);
  }
}

/** Load and draw the subgraph around ``label`` ('*': the best connected nodes). */
export async function loadGraph(label) {
  const params = { label, max_depth: $('graph-depth').value || 2, max_nodes: $('graph-max').value || 200 };
  view.data = await call('GET', '/graphs', { params });
  view.label = label;
  draw(view.data);
  summarise();
  fillNames();
  const start = [...view.nodes.values()].find((n) => n.id === label);
  if (start) showNode(start, degreeOf(start.id));
  else showNothing();
}

function colour(type) {
  let h = 0;
  for (const ch of String(type || '')) h = (h * 31 + ch.codePointAt(0)) >>> 0;
  return PALETTE[h % PALETTE.length];
}

function elements(data) {
  view.nodes.clear();
  view.edges.clear();
  const ids = new Map();
  const nodes = data.nodes.map((node, i) => {
    const id = `n${i}`;
    ids.set(node.id, id);
    view.nodes.set(id, node);
    return { data: { id, label: node.id, colour: colour(node.properties?.entity_type) } };
  });
  const edges = data.edges.filter((e) => ids.has(e.source) && ids.has(e.target)).map((edge, i) => {
    const id = `e${i}`;
    view.edges.set(id, edge);
    return { data: { id, source: ids.get(edge.source), target: ids.get(edge.target) } };
  });
  return [...nodes, ...edges];
}

const STYLE = [
  { selector: 'node', style: { label: 'data(label)', 'background-color': 'data(colour)', 'font-size': 11, 'text-wrap': 'ellipsis', 'text-max-width': 120, width: 18, height: 18 } },
  { selector: 'edge', style: { width: 1.5, 'line-color': '#9aa5b1', 'curve-style': 'bezier' } },
  { selector: ':selected', style: { 'border-width': 3, 'border-color': '#111', 'line-color': '#111' } },
];

function draw(data) {
  if (view.cy) view.cy.destroy();
  view.cy = window.cytoscape({
    container: $('graph-canvas'),
    elements: elements(data),
    style: STYLE,
    layout: { name: 'cose', animate: false, randomize: false, nodeDimensionsIncludeLabels: true },
  });
  view.cy.on('tap', 'node', (event) => showNode(view.nodes.get(event.target.id()), event.target.degree()));
  view.cy.on('tap', 'edge', (event) => showEdge(view.edges.get(event.target.id())));
  listNodes();
}

function degreeOf(name) {
  return view.data.edges.filter((e) => e.source === name || e.target === name).length;
}

/** The nodes in view as buttons: the keyboard's way to the details. */
function listNodes() {
  const list = clear($('graph-nodes'));
  for (const [id, node] of view.nodes) {
    const open = el('button', { type: 'button', class: 'link', text: node.id });
    open.addEventListener('click', () => {
      view.cy.elements().unselect();
      view.cy.getElementById(id).select();
      showNode(node, degreeOf(node.id));
    });
    list.append(el('li', {}, open));
  }
}

function fillNames() {
  const list = clear($('graph-names'));
  for (const node of view.nodes.values()) list.append(el('option', { value: node.id }));
}

function summarise() {
  if (!view.data) return;
  const text = t('graph.summary', { nodes: view.data.nodes.length, edges: view.data.edges.length });
  $('graph-summary').textContent = view.data.is_truncated ? `${text} ${t('graph.truncated')}` : text;
  $('graph-canvas').setAttribute('aria-label', text);
}
