// Results of free-text questions (kind "discovery"): the values respondents typed that the
// server could discover, most frequent first, with estimated counts and intervals. Values are
// user-typed text: they are only ever set as textContent (never as HTML), and control
// characters are shown as escapes.
import { html, numbersTable, questionCard } from './dom.js';
import {
  countOf, describeAlphabet, fixed, percent, wholeNumber,
} from './format.js';


/** A typed value as shown: control characters escaped (\x1c), a cut text marked "begins with". */
export function shownValue(v) {
  const text = typeof v.value === 'string'
    ? v.value.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`)
    : String(v.value);
  return v.truncated ? `${text}… (begins with)` : text;
}

export function discoverySection(q, level) {
  const [section, meta] = questionCard(q, 'discovery');
  const method = q.method === 'sfp' ? 'sequence fragment puzzle' : 'prefix extending';
  const alphabet = typeof q.alphabet === 'string' ? `, characters ${describeAlphabet(q.alphabet)} only` : '';
  meta.textContent = `${countOf(q.n, 'respondent')}, ε = ${fixed(q.epsilon)} · free text `
    + `(${method}, up to ${q.max_length} bytes kept${alphabet}) · estimates of: population`;
  if (q.n === 0 || q.values.length === 0) {
    section.append(html('p', 'empty', q.n === 0 ? 'No responses yet.'
      : 'No answer was typed by enough respondents to be found yet: rare answers stay hidden, by design.'));
    return section;
  }
  const title = `Answers found, most frequent first (${level} confidence intervals).`;
  const caption = html('p', 'table-note', title);  // above the scroller: it wraps on a narrow screen
  const rows = q.values.map((v) => [shownValue(v), wholeNumber(v.count), percent(v.count / q.n), wholeNumber(v.std_error),
    `${wholeNumber(Math.max(0, v.ci_low))} to ${wholeNumber(v.ci_high)}`]);
  const scroller = numbersTable(['Answer', 'Respondents (estimate)', 'Share', 'Standard error', `${level} interval`],
    rows, { label: title, className: 'numbers discovered', rowClass: 'value-text' });
  const note = html('p', 'table-note', 'Only answers whose count is significantly above zero are listed; an answer '
    + 'typed by few respondents is not found. Intervals below zero are shown from 0.');
  section.append(caption, scroller, note);
  return section;
}
