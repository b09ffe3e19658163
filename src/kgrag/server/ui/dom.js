// Building the page from data: text always goes in as textContent (never parsed as HTML).

/** An element: props set attributes ('text' the text, 'class', 'on<event>' listeners). */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'text') node.textContent = String(value);
    else if (key === 'class') node.className = value;
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  return append(node, children);
}

/** Append children: nodes as they are, anything else as text. */
export function append(node, children) {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

export const $ = (id) => document.getElementById(id);

export function clear(node) {
  node.replaceChildren();
  return node;
}

/** A table (caption or null, header cells, rows of cells) inside a scrolling wrapper. */
export function table(caption, headers, rows) {
  const head = el('tr', {}, headers.map((h) => el('th', { scope: 'col', text: h })));
  const body = rows.map((cells) => el('tr', {}, cells.map((c) => el('td', {}, c))));
  const grid = el('table', { class: 'grid' }, caption ? el('caption', { text: caption }) : null);
  append(grid, [el('thead', {}, head), el('tbody', {}, body)]);
  return el('div', { class: 'table-wrap' }, grid);
}

let noticeTimer = 0;

/** A short message in the page's status line (role=status, read out by screen readers). */
export function notify(message, isError = false) {
  const line = $('notice');
  line.textContent = message;
  line.classList.toggle('error', isError);
  clearTimeout(noticeTimer);
  noticeTimer = setTimeout(() => { line.textContent = ''; }, 8000);
}

/** Ask before a change that cannot be taken back; resolves true for OK. */
export function confirmAction(message) {
  const dialog = $('confirm');
  $('confirm-text').textContent = message;
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => resolve(dialog.returnValue === 'ok'), { once: true });
    dialog.returnValue = '';
    dialog.showModal();
    $('confirm-ok').focus();
  });
}

/** Run an async action with its button disabled; errors go to the status line. */
export async function busy(button, action) {
  if (button) button.disabled = true;
  try {
    return await action();
  } catch (error) {
    notify(error.message || String(error), true);
    return undefined;
  } finally {
    if (button) button.disabled = false;
  }
}
