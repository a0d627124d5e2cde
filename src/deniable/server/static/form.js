// The survey form's building blocks: a question's fieldset (its text and what the device does with the
// answer), a set of options (radio buttons or checkboxes), the chosen option, and the mechanisms' names and
// epsilon as the page says them (shared by the page and its question types).
import { fixed } from './format.js';

/** The mechanisms' names, in the respondent's words. */
export const NAMES = {
  'binary-rr': 'randomized response',
  grr: 'k-ary randomized response',
  sue: 'symmetric unary encoding',
  oue: 'optimized unary encoding',
  blh: 'binary local hashing',
  olh: 'optimized local hashing',
  hadamard: 'Hadamard response',
  subset: 'subset selection',
  'l-grr': 'longitudinal k-ary randomized response (L-GRR)',
  'l-osue': 'longitudinal unary encoding (L-OSUE)',
  dbitflip: 'dBitFlip',
  'one-bit-mean': '1BitMean',
  'haar-hrr': 'Haar-wavelet randomized response',
  'hierarchical-histogram': 'a hierarchical histogram',
};

function label(question, value, i) {
  if (question.type === 'yes-no') return value ? 'Yes' : 'No';
  const c = Array.isArray(question.categories) ? question.categories[i] : value;
  return String(c);
}

/** One option of a question: a `type` input ("radio" or "checkbox") named `name`, valued `i`, in its label. */
export function option(type, name, i, text) {
  const id = `${name}-o${i}`;
  const wrap = document.createElement('label');
  wrap.className = 'option';
  wrap.htmlFor = id;
  const input = Object.assign(document.createElement('input'), { type, name, id, value: String(i) });
  const span = document.createElement('span');
  span.textContent = text;
  wrap.append(input, span);
  return [wrap, input];
}

export function radios(question, domain, name) {
  const options = document.createElement('div');
  options.className = 'options';
  // yes-no questions show "Yes" first; categorical ones keep the survey's order
  const order = domain.map((_, i) => i);
  if (question.type === 'yes-no') order.reverse();
  for (const i of order) options.append(option('radio', name, i, label(question, domain[i], i))[0]);
  return options;
}

export function fieldsetFor(question, metaText) {
  const fieldset = document.createElement('fieldset');
  fieldset.className = 'question';
  fieldset.dataset.question = question.id;
  const legend = document.createElement('legend');
  legend.textContent = question.text;
  const meta = document.createElement('p');
  meta.className = 'meta';
  meta.textContent = metaText;
  fieldset.append(legend, meta);
  return fieldset;
}

export const chosenIn = (el, name) => {
  const input = el.querySelector(`input[name="${name}"]:checked`);
  return input ? Number(input.value) : undefined;
};

export const epsilonText = (epsilon) => (epsilon === null || epsilon === undefined || !Number.isFinite(epsilon)
  ? 'ε = ∞: an answer can reveal the truth' : `ε = ${fixed(epsilon)}`);
