// The page's entry: language, sign-in, tabs, then each tab's module.

import { start } from './auth.js';
import { initDocuments, refreshDocuments } from './documents.js';
import { $ } from './dom.js';
import { initGraph } from './graph.js';
import { initLanguage } from './i18n.js';
import { initRetrieval } from './retrieval.js';

const TABS = ['documents', 'graph', 'retrieval'];

/** Show one tab (WAI-ARIA tabs: the selected tab is the one in the tab order). */
function select(name, focus = false) {
  for (const other of TABS) {
    const tab = $(`tab-${other}`);
    const chosen = other === name;
    tab.setAttribute('aria-selected', String(chosen));
    tab.tabIndex = chosen ? 0 : -1;
    $(`panel-${other}`).hidden = !chosen;
    if (chosen && focus) tab.focus();
  }
  if (name === 'documents') refreshDocuments();
  document.dispatchEvent(new CustomEvent('kgrag:tab', { detail: name }));
}

function initTabs() {
  TABS.forEach((name, i) => {
    const tab = $(`tab-${name}`);
    tab.addEventListener('click', () => select(name));
    tab.addEventListener('keydown', (event) => {
      const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
      if (event.key === 'Home') select(TABS[0], true);
      else if (event.key === 'End') select(TABS[TABS.length - 1], true);
      else if (step) select(TABS[(i + step + TABS.length) % TABS.length], true);
    });
  });
}

function ready() {
  initTabs();
  initDocuments();
  initGraph();
  initRetrieval();
  select('documents');
}

initLanguage();
start(ready);
