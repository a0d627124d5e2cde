// A free-text question on the survey page: a text box (an integer box for kind "integer") whose
// answer discovery.js randomizes on this device. The page keeps the answer as typed, except
// that it trims surrounding spaces and normalizes Unicode to NFC (so that the same word typed
// on two devices is the same value); max_length counts bytes of UTF-8, as the server does.
// A question with an alphabet says which characters it allows, flags any other as it is typed,
// and refuses to send an answer with one (problem(): the message the page shows).
import { fromDiscoveryConfig, utf8Length } from './discovery.js';
import { describeAlphabet, fixed, quoteCharacter } from './format.js';


/** The text a respondent's answer is sent as (trimmed, NFC). */
export function normalizeAnswer(text) {
  return String(text).trim().normalize('NFC');
}

/**
 * What the page says of a character outside the alphabet; one whose other case, or whose
 * letter without its accent, is allowed is suggested ("type “v”").
 */
export function foreignText(c, alphabet) {
  const near = [c.toLowerCase(), c.toUpperCase()].flatMap((x) => [x, x.normalize('NFD')[0]])
    .find((x) => x !== c && alphabet.includes(x));
  const hint = near === undefined ? '' : ` (type ${quoteCharacter(near)})`;
  return `has the character ${quoteCharacter(c)}, not in the alphabet${hint}; only these characters are allowed: ${describeAlphabet(alphabet)}`;
}

/**
 * The form part and device of a free-text question: {epsilon, reveals: false, report(), problem()}
 * added to `fieldset` (made by the page), report() being the randomized report, or undefined if
 * empty, and problem() why the answer cannot be sent (a character outside the alphabet), or null.
 */
export function freeTextDevice(question, name, fieldset) {
  const device = fromDiscoveryConfig(question.discovery);
  const integer = device.kind === 'integer';
  const wrap = document.createElement('div');
  wrap.className = 'options free-text';
  const input = document.createElement('input');
  Object.assign(input, { type: integer ? 'number' : 'text', name, id: `${name}-value`, autocomplete: 'off', spellcheck: false });
  if (integer) input.step = 1;
  input.setAttribute('aria-label', question.text);
  const hint = document.createElement('span');
  hint.className = 'hint';
  hint.id = `${name}-hint`;
  input.setAttribute('aria-describedby', hint.id);
  const { alphabet } = device;
  const foreign = () => device.foreign(normalizeAnswer(input.value));
  const update = () => {
    if (integer) {
      hint.textContent = 'A whole number.';
      return;
    }
    const used = utf8Length(normalizeAnswer(input.value));
    const bad = foreign();
    if (bad !== null) hint.textContent = `Your answer ${foreignText(bad, alphabet)}.`;
    else if (alphabet !== null) {
      hint.textContent = used > device.maxLength
        ? `${used} of ${device.maxLength} characters: only the first ${device.maxLength} are kept (the answer counts as “begins with …”).`
        : `${used} of ${device.maxLength} characters; only these are allowed: ${describeAlphabet(alphabet)}.`;
    } else {
      hint.textContent = used > device.maxLength
        ? `${used} of ${device.maxLength} bytes: only the first ${device.maxLength} bytes are kept (the answer counts as “begins with …”).`
        : `${used} of ${device.maxLength} bytes (a letter is 1 byte; accented letters 2, most emoji 4).`;
    }
    hint.classList.toggle('over', used > device.maxLength || bad !== null);
    if (bad !== null) input.setAttribute('aria-invalid', 'true');
    else input.removeAttribute('aria-invalid');
  };
  input.addEventListener('input', update);
  update();
  wrap.append(input, hint);
  const note = document.createElement('p');
  note.className = 'free-text-note';
  note.textContent = 'What is sent is not your text: it is one randomized, hashed piece of it. Answers that many ' +
    'respondents type can be found from all the pieces together; yours cannot be read from what your device sends.';
  fieldset.append(wrap, note);
  return {
    fieldset,
    epsilon: device.epsilon,
    reveals: false,
    problem() {
      const bad = integer ? null : foreign();
      return bad === null ? null : `Your answer to “${question.text}” ${foreignText(bad, alphabet)}.`;
    },
    report() {
      const text = normalizeAnswer(input.value);
      if (text === '') return undefined;
      if (!integer) return device.privatize(text);
      const v = Number(text);
      return Number.isSafeInteger(v) ? device.privatize(v) : undefined;
    },
  };
}

/** The line under a free-text question's title: how it is randomized. */
export function freeTextMeta(question) {
  const method = question.method === 'sfp' ? "Apple's sequence fragment puzzle" : 'prefix extending (PEM)';
  return `Free text, randomized on this device by ${method} over a count-mean sketch, ε = ${fixed(question.epsilon)}`;
}
