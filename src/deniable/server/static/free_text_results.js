// Results of free-text questions (kind "discovery"): the values respondents typed that the
// server could discover, most frequent first, with estimated counts and intervals. Values are
// user-typed text: they are only ever set as textContent (never as HTML), and control
// characters are shown as escapes.
import { countOf, describeAlphabet } from './format.js';

const num = (x) => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : '–');
const pct = (x) => (Number.isFinite(x) ? `${(100 * x).toFixed(1)}%` : '–');

/** A typed value as shown: control characters escaped (\x1c), a cut text marked "begins with". */
export function shownValue(v) {
  const text = typeof v.value === 'string'
    ? v.value.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`)
    : String(v.value);
  return v.truncated ? `${text}… (begins with)` : text;
}

export function discoverySection(q, level) {
  const section = document.createElement('section');
  section.className = 'card question-result discovery';
  section.dataset.question = q.id;
  section.dataset.kind = q.kind;
  const h = document.createElement('h2');
  h.textContent = q.text;
  const meta = document.createElement('p');
  meta.className = 'meta';
  const method = q.method === 'sfp' ? 'sequence fragment puzzle' : 'prefix extending';
  const alphabet = typeof q.alphabet === 'string' ? `, characters ${describeAlphabet(q.alphabet)} only` : '';
  meta.textContent = `${countOf(q.n, 'respondent')}, ε = ${Number(q.epsilon).toFixed(2)} · free text `
    + `(${method}, up to ${q.max_length} bytes kept${alphabet}) · estimates of: population`;
  section.append(h, meta);
  if (q.n === 0 || q.values.length === 0) {
    const p = document.createElement('p');
    p.className = 'empty';
    p.textContent = q.n === 0 ? 'No responses yet.'
      : 'No answer was typed by enough respondents to be found yet: rare answers stay hidden, by design.';
    section.append(p);
    return section;
  }
  const table = document.createElement('table');
  table.className = 'numbers discovered';
  const caption = document.createElement('p');
  caption.className = 'table-note';  // above the scroller: it wraps on a narrow screen
  caption.textContent = `Answers found, most frequent first (${level} confidence intervals).`;
  table.setAttribute('aria-label', caption.textContent);
  const thead = document.createElement('thead');
  const hr = document.createElement('tr');
  ['Answer', 'Respondents (estimate)', 'Share', 'Standard error', `${level} interval`].forEach((t) => {
    const th = document.createElement('th');
    th.scope = 'col';
    th.textContent = t;
    hr.append(th);
  });
  thead.append(hr);
  const body = document.createElement('tbody');
  q.values.forEach((v) => {
    const tr = document.createElement('tr');
    const cells = [shownValue(v), num(v.count), pct(v.count / q.n), num(v.std_error),
      `${num(Math.max(0, v.ci_low))} to ${num(v.ci_high)}`];
    cells.forEach((text, j) => {
      const cell = document.createElement(j === 0 ? 'th' : 'td');
      if (j === 0) {
        cell.scope = 'row';
        cell.className = 'value-text';
      }
      cell.textContent = text;
      tr.append(cell);
    });
    body.append(tr);
  });
  table.append(thead, body);
  const scroller = document.createElement('div');
  scroller.className = 'scroll';
  scroller.append(table);
  const note = document.createElement('p');
  note.className = 'table-note';
  note.textContent = 'Only answers whose count is significantly above zero are listed; an answer typed by few '
    + 'respondents is not found. Intervals below zero are shown from 0.';
  section.append(caption, scroller, note);
  return section;
}
