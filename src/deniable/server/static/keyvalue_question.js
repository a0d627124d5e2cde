// A key-value question on the survey page (type "keyvalue"): a number box per declared key, filled for the
// keys the respondent has (at most max_pairs), each value in [low, high]. The values are mapped onto [-1, 1]
// (unitValue: the same floating-point operations as Python's client) and the pairs are randomized by the
// question's PCKV configuration (keyvalue.js: padding and sampling, the value's sign and the correlated
// perturbation, every draw exact from the CSPRNG); only the report is sent. Leaving every box empty is an
// answer too (no key).
import { fromConfig } from './deniable.js';
import { epsilonText, fieldsetFor } from './form.js';
import { numberText } from './format.js';

const VARIANTS = { ue: 'unary encoding', grr: 'k-ary randomized response' };

/** A value of [low, high] on PCKV's [-1, 1]: 2 (x - low) / (high - low) - 1, clamped against rounding. */
export const unitValue = (x, low, high) => Math.min(1, Math.max(-1, 2 * (x - low) / (high - low) - 1));

/** The question's {fieldset, epsilon, reveals, memoizes, problem(), report()}. */
export function keyValueDevice(question, name) {
  const mechanism = fromConfig(question.mechanism);
  const { low, high, max_pairs: most } = question;
  const units = question.units ? ` ${question.units}` : '';
  const variant = VARIANTS[mechanism.config.params.variant] ?? mechanism.config.params.variant;
  const fieldset = fieldsetFor(question, `Give a value for each one you have, up to ${most}; leave the others `
    + 'empty. One of your answers, or a blank, is drawn at random on this device and randomized with PCKV '
    + `(${variant}), ${epsilonText(mechanism.epsilon)}`);
  fieldset.classList.add('keyvalue');
  const rows = document.createElement('div');
  rows.className = 'options';
  const inputs = question.keys.map((key, i) => {
    const row = document.createElement('div');
    row.className = 'kv-row';
    const label = document.createElement('label');
    label.textContent = String(key);
    const input = document.createElement('input');
    const id = `${name}-k${i}`;
    Object.assign(input, { type: 'number', name: id, id, min: low, max: high, step: 'any' });
    const hint = document.createElement('span');
    hint.className = 'hint';
    hint.textContent = `${numberText(low)} to ${numberText(high)}${units}`;
    label.htmlFor = id;
    row.append(label, input, hint);
    rows.append(row);
    return input;
  });
  fieldset.append(rows);
  const given = () => inputs.map((input, i) => [question.keys[i], input.value]).filter(([, v]) => v.trim() !== '');
  return {
    fieldset, epsilon: mechanism.epsilon, reveals: false, memoizes: false,
    problem() {
      const pairs = given();
      const bad = pairs.find(([, v]) => !(Number(v) >= low && Number(v) <= high));
      const range = `${numberText(low)} to ${numberText(high)}${units}`;
      if (bad) return `The value for “${bad[0]}” must be a number from ${range}.`;
      if (pairs.length > most) {
        return `Give values for at most ${most} of “${question.text}”; ${pairs.length} are filled.`;
      }
      return null;
    },
    report() {
      if (this.problem() !== null) return undefined;
      return mechanism.privatize(given().map(([key, v]) => [key, unitValue(Number(v), low, high)]));
    },
  };
}
