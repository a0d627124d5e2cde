// Results of survey-design questions (prevalence by deniable.survey) and plain questions
// (answers as given, not randomized), drawn by results.js for questions with kind "design" / "plain".
import { numbersTable, questionCard, svgEl } from './dom.js';
import {
  countOf, estimateTexts, fixed, percent, significant,
} from './format.js';


/** A share's estimate, interval and standard error as text (results' fields), decimals set by its s.e. */
const shareTexts = (r) => estimateTexts({ est: r.estimate, low: r.ci_low, high: r.ci_high, se: r.std_error });
const shareCells = (r) => {
  const t = shareTexts(r);
  return [t.est, t.se, t.interval];
};

const PARAMETER_NAMES = {
  pi: 'Prevalence π',
  t: 't (share of carriers answering “yes”)',
  piUQ: 'π_UQ (prevalence of the unrelated question)',
  gamma: 'γ (share of cheaters)',
};

/**
 * Bars of the prevalence (0..100%) with interval whiskers, one row per {label, estimate, ci_low, ci_high,
 * std_error}, drawn at `width` pixels (the container's, so that text keeps its size on a phone); below
 * 520 px the interval goes under the estimate.
 */
function prevalenceChart(rows, title, level, width) {
  const narrow = width < 520;
  const labelW = narrow ? 104 : 150;
  const valueW = narrow ? 92 : 150;
  const rowH = 30;
  const top = 8;
  const plotW = width - labelW - valueW;
  const height = top + rows.length * rowH + 26;
  const x = (v) => labelW + Math.min(1, Math.max(0, v)) * plotW;
  const svg = svgEl('svg', { class: 'chart', viewBox: `0 0 ${width} ${height}`, role: 'img' });
  svg.append(svgEl('title', {}, title));
  svg.append(svgEl('desc', {}, rows.map((r) => (Number.isFinite(r.estimate)
    ? `${r.label}: ${shareTexts(r).est} (${level} interval ${shareTexts(r).interval})`
    : `${r.label}: no estimate`)).join('; ')));
  const bottom = top + rows.length * rowH;
  for (let t = 0; t <= 1.0001; t += 0.25) {
    const g = svgEl('g', { class: 'tick' });
    g.append(svgEl('line', { class: t === 0 ? 'zero' : 'grid', x1: x(t), x2: x(t), y1: top - 4, y2: bottom }));
    g.append(svgEl('text', { x: x(t), y: bottom + 16, 'text-anchor': 'middle' }, percent(t, 0)));
    svg.append(g);
  }
  rows.forEach((r, i) => {
    const cy = top + i * rowH + rowH / 2;
    const g = svgEl('g', { class: 'row' });
    const room = narrow ? 12 : 20;
    const name = r.label.length > room ? `${r.label.slice(0, room - 1)}…` : r.label;
    g.append(svgEl('text', { class: 'label', x: labelW - 10, y: cy + 4, 'text-anchor': 'end' }, name));
    if (Number.isFinite(r.estimate)) {
      g.append(svgEl('rect', { class: 'bar', x: x(0), y: cy - 9, width: Math.max(1, x(r.estimate) - x(0)), height: 18, rx: 2 }));
      if (Number.isFinite(r.ci_low) && Number.isFinite(r.ci_high)) {
        const a = x(r.ci_low);
        const b = x(r.ci_high);
        g.append(svgEl('line', { class: 'whisker', x1: a, x2: b, y1: cy, y2: cy }));
        g.append(svgEl('line', { class: 'whisker', x1: a, x2: a, y1: cy - 6, y2: cy + 6 }));
        g.append(svgEl('line', { class: 'whisker', x1: b, x2: b, y1: cy - 6, y2: cy + 6 }));
      }
      if (narrow) {
        g.append(svgEl('text', { class: 'value', x: labelW + plotW + 10, y: cy - 1 }, shareTexts(r).est));
        g.append(svgEl('text', { class: 'value-interval', x: labelW + plotW + 10, y: cy + 11 }, shareTexts(r).range));
      } else {
        g.append(svgEl('text', { class: 'value', x: labelW + plotW + 10, y: cy + 4 },
          `${shareTexts(r).est} (${shareTexts(r).range})`));
      }
    } else {
      g.append(svgEl('text', { class: 'value', x: labelW + 4, y: cy + 4 }, 'too few answers'));
    }
    svg.append(g);
  });
  return svg;
}

/** A design question: the prevalence (and extra parameter) with standard errors and intervals, by category;
 * its chart `width` pixels wide. */
export function designSection(q, level, width) {
  const [s, meta] = questionCard(q);
  const epsilon = q.reveals_truth ? 'ε infinite: an answer reveals the truth' : `ε = ${fixed(q.epsilon)}`;
  meta.textContent = `${countOf(q.n, 'respondent')}, ${epsilon} · ${q.design.model} design, p = ${q.design.p.join(', ')}`;
  if (q.reveals_truth) s.classList.add('reveals-truth');
  const pi = q.parameters[0];
  const rows = [{ label: 'All respondents', ...pi }];
  for (const by of q.by) {
    by.rows.forEach((r) => rows.push({ ...r, label: `${by.question}: ${r.category}` }));
  }
  s.append(prevalenceChart(rows, `Estimated prevalence: ${q.text}`, level, width));
  const note = document.createElement('p');
  note.className = 'legend';
  note.textContent = `Prevalence estimated by maximum likelihood from the randomized answers (deniable.survey, as RRreg's RRuni). ` +
    `Standard error: for respondents drawn from a population. Interval: ${level} profile-likelihood interval.`;
  s.append(note);
  s.append(numbersTable(
    ['Parameter', 'Estimate', 'Standard error', `${level} interval`],
    q.parameters.map((p) => [PARAMETER_NAMES[p.name] ?? p.name, ...shareCells(p)]),
  ));
  for (const by of q.by) {
    const details = document.createElement('details');
    details.open = true;
    const summary = document.createElement('summary');
    summary.textContent = `By the answer to “${by.text}”`;
    details.append(summary, numbersTable(
      [by.question, 'n', 'Prevalence', 'Standard error', `${level} interval`],
      by.rows.map((r) => [String(r.category), String(r.n), ...shareCells(r)]),
    ));
    const test = document.createElement('p');
    test.className = 'test';
    test.textContent = by.test
      ? `Likelihood-ratio test of ${by.test.null}: G = ${fixed(by.test.statistic)}, df = ${by.test.df}, p = ${significant(by.test.p_value)}`
      : 'Test of equal prevalence: needs at least two categories with answers in every group.';
    details.append(test);
    s.append(details);
  }
  return s;
}

/** A plain question: the answers as given (not randomized). */
export function plainSection(q) {
  const [s, meta] = questionCard(q);
  meta.textContent = `${countOf(q.n, 'respondent')} · not randomized: answers as given`;
  if (q.type === 'categorical') {
    s.append(numbersTable(['Answer', 'Count', 'Share'],
      q.categories.map((c, i) => [String(c), String(q.counts[i]), q.n ? percent(q.counts[i] / q.n) : '–'])));
  } else {
    const p = document.createElement('p');
    p.textContent = q.n ? `Mean ${fixed(q.mean, 1)}, from ${q.min} to ${q.max}.` : 'No answers yet.';
    s.append(p);
  }
  return s;
}
