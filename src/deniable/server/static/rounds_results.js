// Results of a survey that runs in rounds (results.rounds), drawn by results.js: how much of the
// lifetime budget the devices have spent, and per question each round's estimates as a trend chart
// (an SVG line per answer with its confidence band) and a table; for a survey collected through a
// shuffler, each round's shuffled guarantee (shuffled_results.js). Only DOM/SVG elements and classes:
// the page's Content-Security-Policy forbids inline styles.
import { html, numbersTable, svgEl } from './dom.js';
import { countOf, estimateTexts, fixed, grouped, niceStep, numberText, percent } from './format.js';
import { shuffledRoundsCard } from './shuffled_results.js';

const SERIES = 6; // colours in style.css (.series-0 .. .series-5)

/** "1 day", "12 hours", "30 minutes", "90 seconds": the length of a round. */
export function duration(seconds) {
  const units = [[86400, 'day'], [3600, 'hour'], [60, 'minute'], [1, 'second']];
  const [size, name] = units.find(([s]) => seconds % s === 0);
  const n = seconds / size;
  return `${n} ${name}${n === 1 ? '' : 's'}`;
}

/** An ISO-8601 UTC time as "2026-12-01 00:00" (seconds only when there are any). */
const utc = (iso) => new Date(iso).toISOString().replace('T', ' ').replace(/(:00)?\.\d{3}Z$/, '');

const answerLabel = (q, c) => (q.type === 'yes-no' ? (c === true ? 'Yes' : c === false ? 'No' : String(c)) : String(c));

/** The series a question has per round: one per answer (mechanism questions), the prevalence (designs)
 * or the mean (number questions). */
function seriesOf(q, sequences) {
  if (['plain', 'discovery', 'joint', 'range', 'items', 'keyvalue'].includes(q.kind)) return null; // no fixed answers to follow
  if (sequences) return sequenceSeries(q, sequences[q.id]);
  if (q.kind === 'mean') {
    return [{ label: q.units ? `Mean (${q.units})` : 'Mean', est: q.estimate, low: q.ci_low, high: q.ci_high, se: q.std_error }];
  }
  if (q.kind === 'design') {
    const pi = q.parameters[0];
    return [{ label: 'Prevalence π', est: pi.estimate, low: pi.ci_low, high: pi.ci_high, se: pi.std_error }];
  }
  const order = q.categories.map((_, i) => i);
  if (q.type === 'yes-no') order.reverse(); // "Yes" first
  return order.map((i) => ({
    label: answerLabel(q, q.categories[i]), est: q.estimate[i], low: q.ci_low[i], high: q.ci_high[i],
    se: q.std_error[i],
  }));
}

/** With rounds: {anytime: true}: the estimate from every round so far and its confidence sequence (null: none). */
function sequenceSeries(q, seq) {
  if (!seq) return null;
  if (q.kind === 'mean') {
    return [{ label: q.units ? `Mean (${q.units})` : 'Mean', est: seq.estimate, low: seq.ci_low, high: seq.ci_high, se: (seq.ci_high - seq.ci_low) / 4 }];
  }
  const order = q.categories.map((_, i) => i);
  if (q.type === 'yes-no') order.reverse();
  return order.map((i) => ({
    label: answerLabel(q, q.categories[i]), est: seq.estimate[i], low: seq.ci_low[i], high: seq.ci_high[i], se: (seq.ci_high[i] - seq.ci_low[i]) / 4,
  }));
}

const clamp = (v, [min, max]) => Math.min(max, Math.max(min, v));

/** Each round's estimate per answer as lines over the rounds, with the confidence interval as a band.
 * `kind`: "share" (the axis within [0, 1], from 0) or "number" (within `range`, the question's [low, high]):
 * whatever reaches outside the range is drawn at its edge (the numbers in the table are not cut). */
function trendChart(title, rounds, perRound, level, index, width, kind, range) {
  const labels = perRound.find((s) => s)?.map((s) => s.label) ?? [];
  const shares = kind === 'share'; // shares start at 0; a mean's axis spans its values
  const values = perRound.flatMap((s) => (s ?? []).flatMap((p) => [p.est, p.low, p.high]))
    .filter((v) => Number.isFinite(v)).map((v) => clamp(v, range));
  let lo = shares ? 0 : Math.min(...values);
  let hi = shares ? Math.max(0.1, ...values) : Math.max(...values);
  if (!(hi > lo)) hi = lo + 1;
  const step = niceStep(hi - lo, 5);
  lo = Math.max(range[0], Math.floor(lo / step + 1e-9) * step);
  hi = Math.min(range[1], Math.ceil(hi / step - 1e-9) * step);
  if (!(hi > lo)) [lo, hi] = range;
  const tickText = (t) => {
    const v = Math.abs(t) < step * 1e-6 ? 0 : t; // never "-0"
    return shares ? percent(v, step < 0.01 ? 1 : 0) : numberText(v);
  };
  const texts = (p) => estimateTexts(p, kind);
  const left = 48;
  const right = 16;
  const top = 10;
  const plotH = 200;
  const legendH = 22 * Math.ceil(labels.length / 3);
  const height = top + plotH + 30 + legendH;
  const first = rounds[0];
  const last = rounds[rounds.length - 1];
  const span = Math.max(1, last - first);
  const x = (r) => (rounds.length === 1 ? left + (width - left - right) / 2
    : left + ((r - first) / span) * (width - left - right));
  const y = (v) => top + (1 - (clamp(v, [lo, hi]) - lo) / (hi - lo)) * plotH;

  const titleId = `trend-title-${index}`;
  const descId = `trend-desc-${index}`;
  const svg = svgEl('svg', {
    class: labels.length > 2 ? 'chart trend many' : 'chart trend', viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-labelledby': `${titleId} ${descId}`,
  });
  svg.append(svgEl('title', { id: titleId }, `Estimates per round: ${title}`));
  svg.append(svgEl('desc', { id: descId }, rounds.map((r, k) => `round ${r}: ${(perRound[k] ?? [])
    .map((p) => `${p.label} ${texts(p).est} (${level} interval ${texts(p).interval})`).join(', ')}`)
    .join('; ')));

  for (let t = Math.ceil(lo / step - 1e-9) * step; t <= hi + step / 1e6; t += step) {
    const ty = y(t);
    const g = svgEl('g', { class: 'tick' });
    g.append(svgEl('line', { class: Math.abs(t) < step / 2 ? 'zero' : 'grid', x1: left, x2: width - right, y1: ty, y2: ty }));
    g.append(svgEl('text', { x: left - 6, y: ty + 4, 'text-anchor': 'end' }, tickText(t)));
    svg.append(g);
  }
  const every = Math.max(1, Math.ceil(rounds.length / 10)); // at most ~10 round labels
  rounds.forEach((r, k) => {
    const last = rounds.length - 1;
    // every `every`-th round and the last; a label too near the last one gives way to it
    if (k !== last && (k % every !== 0 || last - k < every)) return;
    svg.append(svgEl('text', { class: 'axis-label', x: x(r), y: top + plotH + 16, 'text-anchor': 'middle' }, String(r)));
  });
  svg.append(svgEl('text', { class: 'axis-label', x: width - right, y: top + plotH + 28, 'text-anchor': 'end' }, 'round'));

  labels.forEach((label, j) => {
    const cls = `series-${j % SERIES}`;
    const points = rounds.map((r, k) => ({ r, p: perRound[k]?.[j] })).filter(({ p }) => p && Number.isFinite(p.est));
    const banded = points.filter(({ p }) => Number.isFinite(p.low) && Number.isFinite(p.high));
    if (banded.length > 1) {
      const upper = banded.map(({ r, p }) => `${x(r)},${y(p.high)}`);
      const lower = banded.map(({ r, p }) => `${x(r)},${y(p.low)}`).reverse();
      svg.append(svgEl('polygon', { class: `band ${cls}`, points: [...upper, ...lower].join(' ') }));
    }
    if (points.length > 1) {
      svg.append(svgEl('polyline', { class: `line ${cls}`, points: points.map(({ r, p }) => `${x(r)},${y(p.est)}`).join(' ') }));
    }
    points.forEach(({ r, p }) => {
      if (banded.length === 1 && Number.isFinite(p.low)) {
        svg.append(svgEl('line', { class: `whisker ${cls}`, x1: x(r), x2: x(r), y1: y(p.low), y2: y(p.high) }));
      }
      const dot = svgEl('circle', { class: `dot ${cls}`, cx: x(r), cy: y(p.est), r: 3.2 });
      dot.append(svgEl('title', {}, `${label}, round ${r}: ${texts(p).est} (${texts(p).interval})`));
      svg.append(dot);
    });
    const lx = left + (j % 3) * ((width - left) / 3);
    const ly = top + plotH + 44 + 22 * Math.floor(j / 3);
    svg.append(svgEl('rect', { class: `key ${cls}`, x: lx, y: ly - 9, width: 14, height: 10, rx: 2 }));
    const room = 22;
    svg.append(svgEl('text', { class: 'label', x: lx + 20, y: ly }, label.length > room ? `${label.slice(0, room - 1)}…` : label));
  });
  return svg;
}

function budgetCard(info) {
  const { devices } = info;
  const section = html('section', 'card budgets');
  section.append(html('h2', '', 'Devices and their privacy budget'));
  const eps = Number(info.lifetime_epsilon);
  section.append(html('p', 'meta', `${countOf(devices.devices, 'device')} seen · each may spend `
    + `ε = ${fixed(eps)} over all rounds (lifetime_epsilon); the server refuses a report that would go over it`));
  const rows = devices.at_least.map((s) => [
    s.share >= 1 ? 'the whole budget' : `at least ${percent(s.share, 0)}`,
    `${s.devices}`, `${s.devices_fresh}`,
  ]);
  rows.push(['largest spent (ε)', fixed(devices.max_spent), fixed(devices.max_spent_fresh)]);
  section.append(numbersTable(['Devices that spent', 'With the memoization cap (enforced)', 'Every report counted'],
    rows));
  section.append(html('p', 'table-note', 'The memoization cap counts a memoizing question (L-GRR, L-OSUE, dBitFlip, 1BitMean, '
    + 'RAPPOR) at most its lifetime bound. That assumes each device reported the same value every round and kept '
    + 'its memoized state: a value that changes costs up to another lifetime bound per distinct value, which the '
    + 'server cannot see. “Every report counted” adds up each report’s ε, a bound that holds whatever the values.'));
  section.append(refusalsNote(info.rounds));
  return section;
}

/** Refused posts of responses by kind (results.defences.refusals, a round's refusals) in words, or '' for none. */
export function refusalsText(r) {
  if (!r) return '';
  const parts = [
    [r.rate_limited, 'over the rate limit'],
    [r.conflict, 'in conflict with what is stored (a reused key, a closed or full survey, a second response in a round)'],
    [r.forbidden, 'without a valid token or invite, or over a device’s budget'],
    [r.invalid, 'malformed'],
  ].filter(([n]) => n > 0).map(([n, what]) => `${grouped(n)} ${what}`);
  return parts.join(' · ');
}

function refusalsNote(rounds) {
  const refused = rounds.flatMap((r) => {
    const text = refusalsText(r.refusals);
    return text ? [`round ${r.round}: ${text}`] : [];
  });
  return html('p', 'table-note refusals', refused.length
    ? `Posts refused by the flood defences, per round: ${refused.join('; ')}.`
    : 'No post of responses was refused in these rounds.');
}

/** Which rounds' shares moved since the round before by more than sampling allows (the change test of
 * each round's q.manipulation), or null for a question without it. */
function changeNote(rounds, qi) {
  const tests = rounds.map((r) => r.questions[qi].manipulation?.change_from_previous_round ?? null);
  if (!tests.some((t) => t)) return null;
  const flagged = rounds.flatMap((r, k) => (tests[k]?.flagged
    ? [`round ${r.round}: ${tests[k].items.map(String).join(', ')}`] : []));
  const alpha = tests.find((t) => t).alpha;
  return html('p', flagged.length ? 'manipulation flagged' : 'manipulation', flagged.length
    ? `Change check: shares moved since the round before by more than sampling allows (fake responses, or a real `
      + `change) in ${flagged.join('; ')}.`
    : `Change check: no share moved between rounds by more than sampling allows (false-alarm rate `
      + `${100 * alpha}% per round).`);
}

/** The rounds part of the results page: the budget card, then per question a trend chart and a table. */
export function roundsSection(info, level, width) {
  const wrap = html('div', 'rounds');
  const when = `${utc(info.start)} UTC`;
  const current = info.current_round === null ? 'not started' : `now in round ${info.current_round}`;
  const intro = html('p', 'legend rounds-intro', `This survey runs in rounds of ${duration(info.every)} from ${when} `
    + `(${current}); each device answers at most once per round. Below: each round's estimates, then all rounds together.`);
  wrap.append(intro);
  const shown = info.rounds.length;
  if (info.window && info.window.n_rounds > shown) {
    const range = shown ? ` (rounds ${info.rounds[0].round}–${info.rounds[shown - 1].round})` : '';
    wrap.append(html('p', 'legend rounds-window', `Showing ${countOf(shown, 'round')} with responses${range} of `
      + `${info.window.n_rounds}; the results API lists others with its rounds parameter (e.g. rounds=0:52).`));
  }
  wrap.append(budgetCard(info));
  const rounds = info.rounds.map((r) => r.round);
  if (!rounds.length) {
    wrap.append(html('p', 'empty', 'No round has responses yet.'));
    return wrap;
  }
  const shuffled = shuffledRoundsCard(info.rounds);
  if (shuffled) wrap.append(shuffled);
  info.rounds[0].questions.forEach((q0, qi) => {
    // as given, free text, or several answers together: see the pooled results
    if (['plain', 'discovery', 'joint', 'range', 'items', 'keyvalue'].includes(q0.kind)) return;
    const anytime = Boolean(info.anytime);
    const perRound = info.rounds.map((r) => seriesOf(r.questions[qi], anytime ? r.sequences ?? {} : null));
    if (!perRound.some((p) => p)) return; // a memoizing question under anytime: no sequence to draw
    const section = html('section', 'card round-trend');
    section.dataset.question = q0.id;
    section.append(html('h2', '', q0.text));
    const what = { design: 'prevalence', mean: 'estimated mean' }[q0.kind] ?? 'estimated share per answer';
    const kind = q0.kind === 'mean' ? 'number' : 'share';
    const range = kind === 'number' ? [q0.low, q0.high] : [0, 1];
    const cut = kind === 'number' ? `the question’s range, ${numberText(q0.low)} to ${numberText(q0.high)}` : '0% and 100%';
    section.append(html('p', 'meta', anytime
      ? `After each round, from every round so far: ${what}, with its ${level} confidence sequence (the band: it `
        + 'covers the truth at every round at once, so it may be read after each round; the chart cuts it at '
        + `${cut}, the table does not)`
      : `Per round: ${what}, with its ${level} confidence interval (the band; `
        + `the chart cuts it at ${cut}, the table does not)`));
    section.append(trendChart(q0.text, rounds, perRound, level, qi, width, kind, range));
    const changes = changeNote(info.rounds, qi);
    if (changes) section.append(changes);
    const details = html('details');
    details.append(html('summary', '', 'Show each round’s numbers'));
    const labels = perRound.find((s) => s).map((s) => s.label);
    const rows = info.rounds.map((r, k) => [
      `${r.round}`, utc(r.start), `${anytime ? r.sequences?.[q0.id]?.n ?? 0 : r.questions[qi].n}`,
      ...labels.map((_, j) => {
        const p = perRound[k]?.[j];
        const t = p && Number.isFinite(p.est) ? estimateTexts(p, kind) : null;
        return t ? (anytime ? `${t.est} (${t.interval})` : `${t.est} (${t.interval}; s.e. ${t.se})`) : '–';
      }),
    ]);
    details.append(numbersTable(['Round', 'Starts (UTC)', anytime ? 'n so far' : 'n', ...labels], rows,
      { caption: anytime ? `Estimate from every round so far (${level} confidence sequence)`
        : `Estimate (${level} confidence interval; standard error)` }));
    section.append(details);
    wrap.append(section);
  });
  return wrap;
}
