// The results page: fetch /surveys/{id}/results?target=... and draw each question's estimates
// as an accessible SVG bar chart with confidence-interval whiskers. Each value is printed with
// its interval as a range ("20.1%" over "18.0–22.2%"), never as plus-minus, so it cannot be read as
// a standard error; the standard errors are in the table, labelled as such.
import { parseJSON } from './deniable.js';
import { designSection, plainSection } from './survey_results.js';
import { discoverySection } from './free_text_results.js';
import { meanSection } from './number_results.js';
import { refusalsText, roundsSection } from './rounds_results.js';
import { shuffledText } from './shuffled_results.js';
import { slicedSection } from './sliced_results.js';
import { jointSection } from './joint_results.js';
import { itemsSection, rangeSection } from './range_results.js';
import { listSection } from './list_results.js';
import { keyValueSection } from './keyvalue_results.js';
import { html, numbersTable, questionCard, svgEl } from './dom.js';
import {
  countOf, estimateTexts, fixed, grouped, niceStep, percent, scientific, significant,
} from './format.js';

const $ = (id) => document.getElementById(id);
const match = window.location.pathname.match(/\/s\/([^/]+)\/results\/?$/);
const surveyId = match ? decodeURIComponent(match[1]) : null;


// What the estimates are of (the results' "target"), in words.
const TARGETS = {
  population: {
    short: 'population',
    long: 'the population the respondents were sampled from',
  },
  respondents: {
    short: 'these respondents',
    long: 'these respondents only, a census of them',
  },
};
const targetSelect = $('target');
const wanted = new URLSearchParams(window.location.search).get('target');
const slicedBy = new URLSearchParams(window.location.search).get('by'); // a plain question's id: results by its answers
if (wanted in TARGETS) targetSelect.value = wanted;

function categoryLabel(q, c) {
  if (q.type === 'yes-no') return c === true ? 'Yes' : c === false ? 'No' : String(c);
  return String(c);
}

/** Category positions in display order: "Yes" before "No", otherwise the survey's order. */
function order(q) {
  const positions = q.categories.map((_, i) => i);
  return q.type === 'yes-no' ? positions.reverse() : positions;
}

/** Charts are drawn at the card's pixel width (text keeps its size on phones), 280..680 px. */
function chartWidth() {
  const card = $('questions').clientWidth - 2 * parseFloat(getComputedStyle(document.documentElement).fontSize) - 2;
  return Math.round(Math.max(280, Math.min(680, card || 680)));
}

/** `span`: values the axis must also show (the slices of a question share one axis). */
function chart(q, index, level, span = []) {
  const rows = order(q).map((i) => ({
    label: categoryLabel(q, q.categories[i]),
    est: q.estimate[i],
    low: q.ci_low[i],
    high: q.ci_high[i],
    se: q.std_error[i],
  })).map((r) => ({ ...r, text: estimateTexts(r) }));
  const values = [...rows.flatMap((r) => [r.est, r.low, r.high]), ...span].filter((v) => Number.isFinite(v));
  let lo = Math.min(0, ...values);
  let hi = Math.max(0.1, ...values);
  const width = chartWidth();
  const narrow = width < 520;
  const step = niceStep(hi - lo, narrow ? 3 : 5); // a phone's axis has room for fewer labels
  lo = Math.floor(lo / step + 1e-9) * step;
  hi = Math.ceil(hi / step - 1e-9) * step;

  const labelW = narrow ? 104 : 160;
  const valueW = narrow ? 92 : 120;
  const rowH = 30;
  const top = 8;
  const axisH = 26;
  const plotW = width - labelW - valueW;
  const height = top + rows.length * rowH + axisH;
  const x = (v) => labelW + ((v - lo) / (hi - lo)) * plotW;

  const titleId = `chart-title-${index}`;
  const descId = `chart-desc-${index}`;
  const svg = svgEl('svg', {
    class: 'chart', viewBox: `0 0 ${width} ${height}`, role: 'img',
    'aria-labelledby': `${titleId} ${descId}`,
  });
  svg.append(svgEl('title', { id: titleId }, `Estimated share of respondents per answer: ${q.text}`));
  svg.append(svgEl('desc', { id: descId }, rows.map((r) => (Number.isFinite(r.est)
    ? `${r.label}: ${r.text.est} (${level} interval ${r.text.interval})`
    : `${r.label}: no estimate`)).join('; ')));

  const bottom = top + rows.length * rowH;
  for (let t = lo; t <= hi + step / 2; t += step) {
    const tx = x(t);
    const g = svgEl('g', { class: 'tick' });
    g.append(svgEl('line', { class: Math.abs(t) < step / 2 ? 'zero' : 'grid', x1: tx, x2: tx, y1: top - 4, y2: bottom }));
    g.append(svgEl('text', { x: tx, y: bottom + 16, 'text-anchor': 'middle' }, percent(Math.abs(t) < 1e-12 ? 0 : t, step < 0.01 ? 1 : 0)));
    svg.append(g);
  }

  rows.forEach((r, i) => {
    const cy = top + i * rowH + rowH / 2;
    const g = svgEl('g', { class: 'row' });
    const room = narrow ? 12 : 20;
    const name = r.label.length > room ? `${r.label.slice(0, room - 1)}…` : r.label;
    g.append(svgEl('text', { class: 'label', x: labelW - 10, y: cy + 4, 'text-anchor': 'end' }, name));
    if (Number.isFinite(r.est)) {
      const x0 = x(0);
      const x1 = x(r.est);
      g.append(svgEl('rect', {
        class: r.est < 0 ? 'bar negative' : 'bar', x: Math.min(x0, x1), y: cy - 9,
        width: Math.max(1, Math.abs(x1 - x0)), height: 18, rx: 2,
      }));
      if (Number.isFinite(r.low) && Number.isFinite(r.high)) {
        const a = x(r.low);
        const b = x(r.high);
        g.append(svgEl('line', { class: 'whisker', x1: a, x2: b, y1: cy, y2: cy }));
        g.append(svgEl('line', { class: 'whisker', x1: a, x2: a, y1: cy - 6, y2: cy + 6 }));
        g.append(svgEl('line', { class: 'whisker', x1: b, x2: b, y1: cy - 6, y2: cy + 6 }));
      }
      const ranged = Number.isFinite(r.low) && Number.isFinite(r.high);
      g.append(svgEl('text', { class: 'value', x: labelW + plotW + 10, y: ranged ? cy - 1 : cy + 4 }, r.text.est));
      if (ranged) {
        // the interval as a range, not plus-minus: a reader cannot take it for a standard error
        g.append(svgEl('text', { class: 'value-interval', x: labelW + plotW + 10, y: cy + 11 }, r.text.range));
      }
    } else {
      g.append(svgEl('text', { class: 'value', x: labelW + 4, y: cy + 4 }, 'no estimate yet'));
    }
    svg.append(g);
  });
  return svg;
}

function table(q, level) {
  const head = ['Answer', 'Estimate', 'Standard error', `${level} confidence interval`, 'Adjusted (sums to 100%)', 'Raw report share'];
  return numbersTable(head, order(q).map((i) => {
    const text = estimateTexts({ est: q.estimate[i], low: q.ci_low[i], high: q.ci_high[i], se: q.std_error[i] });
    return [
      categoryLabel(q, q.categories[i]),
      text.est,
      text.se,
      text.interval,
      Number.isFinite(q.consistent?.[i]) ? percent(q.consistent[i]) : '–',
      Number.isFinite(q.observed?.[i]) ? percent(q.observed[i]) : '–',
    ];
  }));
}

/** The shuffled guarantee of a survey without rounds (shuffled_results.js; per round in the rounds section). */
function shuffledLine(results) {
  const line = $('shuffled');
  const text = results.rounds ? null : shuffledText(results.n_responses, results.shuffled, results.shuffler);
  line.hidden = !text;
  line.textContent = text ?? '';
}

/** What bounds the number of fake responses (results.defences), in one line. */
function defencesLine(defences) {
  const line = $('defences');
  line.hidden = !defences;
  if (!defences) return;
  const parts = [defences.invite_only ? 'invitations only' : 'open to everyone'];
  const limit = defences.rate_limit;
  if (!defences.invite_only) {
    parts.push(limit ? `at most ${grouped(limit.responses)} responses per ${significant(limit.seconds)} s per address`
      : 'no rate limit');
  }
  parts.push(defences.max_responses === null ? 'no cap on responses'
    : `a cap of ${grouped(defences.max_responses)} responses (${grouped(defences.n_responses)} stored)`);
  const refused = defences.refusals ? refusalsText(defences.refusals) : '';
  const refusals = !defences.refusals ? '' : refused ? ` Refused so far: ${refused}.` : ' No post has been refused.';
  line.textContent = `Flood defences: ${parts.join(' · ')}.${refusals} The checks for fake responses below run at a `
    + `${significant(100 * defences.detection_alpha)}% false-alarm rate.`;
}

/** How far fake responses could move a frequency question's shares, and its check (q.manipulation). */
function manipulationNote(m) {
  const test = m.frequency_test;
  const check = test.flagged
    ? `Check: flagged — shares significantly below 0, which honest responses cannot give: ${test.items.join(', ')} `
      + `(p = ${scientific(test.p_value)}).`
    : 'Check: no share is significantly below 0.';
  const note = html('p', test.flagged ? 'manipulation flagged' : 'manipulation',
    `Fake responses: each could move a share by at most ${percent(m.per_fake_report, 2)} `
    + `(a chosen report raises a share by up to ${significant(m.sensitivity)}/n, an honest answer by 1/n). ${check}`);
  return note;
}

/** The top legend's paragraphs: what the page shows for the kinds of questions present, and how numbers are printed. */
function legend(questions, level, target) {
  const kinds = new Set(questions.map((q) => q.kind ?? 'shares'));
  const parts = [];
  if (['shares', 'design', 'joint', 'items', 'keyvalue'].some((k) => kinds.has(k))) {
    parts.push(`Bars: estimated share per answer of ${target.long} (debiased from the randomized reports). `
      + `Whiskers, and the range printed under each value: ${level} confidence interval (not a standard error; the `
      + 'standard errors are in the table under “Show the numbers”). Estimates can fall slightly outside 0–100% '
      + 'because of the randomization noise.');
  }
  if (kinds.has('mean')) {
    parts.push(`${kinds.size > 1 ? 'Number questions: a' : 'A'} dot for the estimated mean of the answers of `
      + `${target.long} (debiased from the randomized reports), whiskers for its ${level} confidence interval `
      + '(not a standard error; that is in the table under “Show the numbers”), drawn on the question’s range.');
  }
  if (kinds.has('range')) {
    parts.push(`${kinds.size > 1 ? 'Number questions asked for ranges: the' : 'The'} estimated share of answers `
      + `below each value (a line) with its ${level} pointwise confidence band (shaded), and quantiles such as the `
      + 'median with their confidence intervals (whiskers).');
  }
  if (kinds.has('items')) {
    parts.push('Choose-several questions: the estimated share of respondents who chose each option; the shares '
      + 'need not add up to 100%.');
  }
  if (kinds.has('keyvalue')) {
    parts.push('Key-value questions: the estimated share of respondents holding each key (bars), and the mean of '
      + `the values they gave for it, each with its ${level} confidence interval.`);
  }
  if (kinds.has('discovery')) {
    parts.push(`${kinds.size > 1 ? 'Free-text questions: the' : 'The'} answers respondents typed that were found, `
      + `most frequent first, with the estimated number of respondents of the population who typed each and its ${level} `
      + 'confidence interval; answers typed by few respondents stay hidden.');
  }
  if (kinds.has('plain')) parts.push('Questions answered as given (not randomized): how many gave each answer.');
  if (kinds.has('joint')) {
    parts.push('Questions answered together (randomized as one): each question’s estimated shares, and how '
      + 'strongly each pair of answers goes together.');
  }
  if (['shares', 'design', 'mean', 'joint', 'range', 'items', 'keyvalue'].some((k) => kinds.has(k))) {
    parts.push('Each estimate, its interval and its standard error are printed with the same decimals, '
      + 'set by the standard error (two significant digits of it).');
  }
  return parts;
}

let shown = null; // the results on screen, redrawn when the window width changes

/**
 * The results kinds with a section of their own, by `q.kind`: each draws the question's card from (q, index,
 * level). A kind not here (the frequency questions) gets the bar chart and its table (render() below).
 */
const SECTIONS = {
  discovery: (q, _i, level) => discoverySection(q, level),
  mean: (q, _i, level) => meanSection(q, level, chartWidth()),
  joint: (q, _i, level) => jointSection(q, level, chart),
  'list-experiment': (q, _i, level) => listSection(q, level, chartWidth()),
  range: (q, _i, level) => rangeSection(q, level, chartWidth()),
  items: (q, i, level) => itemsSection(q, i, level, chart),
  keyvalue: (q, i, level) => keyValueSection(q, i, level, chart),
  design: (q, _i, level) => designSection(q, level, chartWidth()),
  plain: (q) => plainSection(q),
};

function render(results) {
  shown = results;
  document.title = `Results: ${results.title}`;
  $('title').textContent = results.title;
  const n = results.n_responses;
  const level = `${significant((results.level ?? 0.95) * 100)}%`;
  const target = TARGETS[results.target] ?? TARGETS.population;
  $('legend').replaceChildren(...legend(results.questions, level, target).map((text) => {
    const p = document.createElement('p');
    p.textContent = text;
    return p;
  }));
  $('legend').hidden = false;
  targetSelect.value = results.target in TARGETS ? results.target : 'population';
  const sampled = results.allocation === 'sample' ? ' · each answered one question, drawn at random' : '';
  $('summary').textContent = `${countOf(n, 'response')}${sampled} · updated ${new Date().toLocaleTimeString()}`;
  shuffledLine(results);
  defencesLine(results.defences);
  $('rounds').replaceChildren();
  $('pooled').hidden = !results.rounds && !results.by;
  $('pooled').textContent = results.rounds ? 'All rounds together' : 'All respondents together';
  if (results.rounds) $('rounds').append(roundsSection(results.rounds, level, chartWidth()));
  if (results.by) $('rounds').append(slicedSection(results.by, level, chart));
  const container = $('questions');
  container.replaceChildren();
  results.questions.forEach((q, i) => {
    if (Object.hasOwn(SECTIONS, q.kind)) {
      container.append(SECTIONS[q.kind](q, i, level));
      return;
    }
    const [section, meta] = questionCard(q);
    meta.textContent = `${countOf(q.n, 'respondent')}, ε = ${fixed(q.epsilon)} · ${q.mechanism}`
      + ` · estimates of: ${(TARGETS[q.target] ?? TARGETS.population).short}`;
    if (q.n === 0) {
      section.append(html('p', 'empty', 'No responses yet.'));
    } else {
      section.append(chart(q, i, level));
      if (q.manipulation) section.append(manipulationNote(q.manipulation));
      const details = document.createElement('details');
      const summary = document.createElement('summary');
      summary.textContent = 'Show the numbers';
      const scroller = table(q, level);
      const note = document.createElement('p');
      note.className = 'table-note';  // outside the scroller: it wraps on a narrow screen
      note.textContent = `Estimates of ${(TARGETS[q.target] ?? TARGETS.population).long}.`;
      details.append(summary, note, scroller);
      section.append(details);
    }
    container.append(section);
  });
}

async function load() {
  const button = $('refresh');
  button.disabled = true;
  document.body.dataset.state = 'loading';
  try {
    if (!surveyId) throw new Error('this page needs an address of the form /s/<survey id>/results');
    const query = `?target=${encodeURIComponent(targetSelect.value)}${slicedBy ? `&by=${encodeURIComponent(slicedBy)}` : ''}`;
    const response = await fetch(`/surveys/${encodeURIComponent(surveyId)}/results${query}`, { headers: { Accept: 'application/json' } });
    const text = await response.text();
    let payload = null;
    try { payload = parseJSON(text); } catch { payload = null; }
    if (!response.ok) {
      const d = payload && payload.detail;
      throw new Error(d && d.message ? d.message : `the server answered ${response.status}`);
    }
    $('status').className = 'status';
    $('status').textContent = '';
    render(payload);
    document.body.dataset.state = 'loaded';
  } catch (err) {
    $('status').className = 'status error';
    $('status').textContent = `Results could not be loaded: ${err.message}`;
    if ($('title').textContent.startsWith('Loading')) $('title').textContent = 'Results unavailable';
    document.body.dataset.state = 'error';
  } finally {
    button.disabled = false;
  }
}

$('refresh').addEventListener('click', load);
targetSelect.addEventListener('change', () => {
  const url = new URL(window.location.href);
  url.searchParams.set('target', targetSelect.value);
  window.history.replaceState(null, '', url);
  load();
});
let lastWidth = window.innerWidth;
window.addEventListener('resize', () => {
  if (shown && window.innerWidth !== lastWidth) {
    lastWidth = window.innerWidth;
    const sections = 'section.question-result details, section.round-trend details';
    const open = [...document.querySelectorAll(sections)].map((d) => d.open);
    render(shown);
    document.querySelectorAll(sections).forEach((d, i) => { d.open = Boolean(open[i]); });
  }
});
load();
