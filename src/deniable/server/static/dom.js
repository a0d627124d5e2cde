// The DOM pieces the results cards are built from: SVG and HTML elements, a question's card with
// its heading and meta line, and a table of numbers in a scroller. Only elements and classes (the
// pages' Content-Security-Policy forbids inline styles); text is only ever set as textContent,
// never as HTML, so typed answers cannot inject markup.

const SVG = 'http://www.w3.org/2000/svg';

/** An SVG element with attributes and, optionally, text. */
export function svgEl(name, attrs = {}, text) {
  const node = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

/** An HTML element with, optionally, a class and text. */
export function html(name, className, text) {
  const node = document.createElement(name);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/**
 * A question's card: a section of classes "card question-result" (plus `extra`) carrying the
 * question's id (data-question) and its results kind (data-kind, when it has one), with the
 * question's text as heading and an empty meta line after it. Returns [section, meta].
 */
export function questionCard(q, extra = '') {
  const section = html('section', `card question-result${extra ? ` ${extra}` : ''}`);
  section.dataset.question = q.id;
  if (typeof q.kind === 'string') section.dataset.kind = q.kind;
  const meta = html('p', 'meta');
  section.append(html('h2', '', q.text), meta);
  return [section, meta];
}

/**
 * A table of numbers in a scroller (it scrolls sideways on a narrow screen rather than widening
 * the page). With headings its cells carry them (data-label): on a phone the rows stack, each cell
 * under its heading (style.css), so that no column is cut. `head`: the column headings, or null for a table of rows only; `rows`: arrays of
 * texts, the first of each row its heading (a th of scope "row", of class `rowClass` when set).
 * Options: `caption` (a caption element), `label` (aria-label), `className` (the table's classes,
 * "numbers" by default).
 */
export function numbersTable(head, rows, { caption, label, className = 'numbers', rowClass } = {}) {
  const table = html('table', head ? `${className} stack` : className);
  if (caption) table.append(html('caption', '', caption));
  if (label) table.setAttribute('aria-label', label);
  if (head) {
    const tr = html('tr');
    head.forEach((text) => {
      const th = html('th', '', text);
      th.scope = 'col';
      tr.append(th);
    });
    const thead = html('thead');
    thead.append(tr);
    table.append(thead);
  }
  const body = html('tbody');
  rows.forEach((cells) => {
    const tr = html('tr');
    cells.forEach((text, j) => {
      const cell = html(j === 0 ? 'th' : 'td', j === 0 ? rowClass : '', text);
      if (j === 0) cell.scope = 'row';
      else if (head) cell.dataset.label = head[j];
      tr.append(cell);
    });
    body.append(tr);
  });
  table.append(body);
  const scroller = html('div', 'scroll');
  scroller.append(table);
  return scroller;
}
