// How an answer is shown: its text with [n] citations linked to the references, the
// references (document, page, section, span; open one for its text), the coverage.

import { $, clear, el, table } from './dom.js';
import { t } from './i18n.js';

const CITATION = /\[(\d+)\]/g;

function where(ref) {
  const named = ref.name && ref.kind !== 'chunk' ? `${ref.name} (${ref.kind})` : '';
  const parts = [named, ref.file_path || ref.doc_id || ''];
  if (ref.pages && ref.pages.length) parts.push(t('ref.pages', { pages: [].concat(ref.pages).join('–') }));
  if (ref.section && ref.section.length) parts.push([].concat(ref.section).join(' › '));
  if (ref.start !== undefined && ref.start !== null) parts.push(t('ref.span', { start: ref.start, end: ref.end }));
  return parts.filter(Boolean).join(' · ');
}

function referenceItem(ref) {
  const number = String(ref.reference_id);
  const summary = el('summary', {},
    el('span', { class: 'ref-number', text: `[${number}]` }), ' ', where(ref),
    ref.cited ? [' ', el('span', { class: 'badge', text: t('ref.cited') })] : '');
  const details = el('dl', { class: 'facts' },
    ref.name ? [el('dt', { text: t('ref.kind', { kind: ref.kind || '' }) }), el('dd', { text: ref.name })] : [],
    el('dt', { text: t('ref.document') }), el('dd', { text: ref.doc_id || '' }),
    el('dt', { text: t('ref.chunk') }), el('dd', { text: ref.chunk_id || '' }));
  const text = (ref.content || []).map((c) => el('blockquote', { class: 'ref-text', text: c }));
  return el('li', { id: `ref-${number}` }, el('details', { class: 'ref' }, summary, details, text));
}

export function renderReferences(refs) {
  const list = clear($('q-refs'));
  for (const ref of refs) list.append(referenceItem(ref));
  if (!refs.length) list.append(el('li', { class: 'muted', text: t('query.no_refs') }));
}

function openReference(event, number) {
  const item = document.getElementById(`ref-${number}`);
  if (!item) return;
  event.preventDefault();
  const details = item.querySelector('details');
  details.open = true;
  details.querySelector('summary').focus();
}

/** The answer again, its known citations as links to their references. */
export function renderAnswer(text, refs) {
  const known = new Set(refs.map((r) => String(r.reference_id)));
  const box = clear($('q-answer'));
  let last = 0;
  for (const match of text.matchAll(CITATION)) {
    box.append(text.slice(last, match.index));
    const number = match[1];
    if (known.has(number)) {
      box.append(el('a', { href: `#ref-${number}`, class: 'cite', text: match[0], onclick: (e) => openReference(e, number) }));
    } else {
      box.append(match[0]);
    }
    last = match.index + match[0].length;
  }
  box.append(text.slice(last));
}

/** What the question asked for and whether the retrieved items cover it. */
export function renderCoverage(coverage) {
  const box = clear($('q-coverage'));
  if (!coverage.length) {
    box.append(el('p', { class: 'muted', text: t('coverage.none') }));
    return;
  }
  const rows = coverage.map((c) => [
    `${c.constraint?.value ?? ''} (${c.constraint?.kind ?? ''})`,
    el('span', { class: `badge coverage-${c.status === 'covered' ? 'ok' : 'open'}`, text: t(`coverage.${c.status}`) }),
    String((c.items || []).length),
    (c.conflicting || []).join(', '),
    (c.unknown || []).join(', '),
  ]);
  const heads = ['condition', 'status', 'items', 'conflicting', 'unknown'].map((k) => t(`coverage.col.${k}`));
  box.append(table(null, heads, rows));
}
