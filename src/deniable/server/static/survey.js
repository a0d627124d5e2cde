// The survey page: fetch the survey, randomize every answer in the page with deniable.js,
// and POST only the randomized reports (with a random idempotency key). A survey with
// `allocation: sample` shows one question, drawn on this device (assignQuestion: an exact
// uniform integer from crypto.getRandomValues), and sends only its report.
//
// Repeated collection. A question whose mechanism memoizes (RAPPOR, L-GRR, L-OSUE, dBitFlip,
// 1BitMean) is answered through its kept client from surveyState (client_state.js), which keeps
// this browser's secret for the survey in IndexedDB (the state format of Python's
// Client(state=...)), so answering again (the next round, after a reload) reuses the permanent
// randomization instead of drawing a fresh one that could be averaged out. A survey that runs in
// rounds (`rounds` in its definition) gets the state's device key with every response.
//
// Wire version 2 (deniable.wire): the page fetches the survey with ?wire_version=2 and posts its
// reports with "wire_version": 2, wide integers (an OLH/BLH seed, RAPPOR's bits) as decimal strings.
import { surveyState } from './client_state.js';
import {
  assignQuestion, fromConfig, idempotencyKey, parseJSON, reportToWire, stringify, surveyFromWire,
} from './deniable.js';
import { fixed, significant } from './format.js';
import { obliviousFetch, queuedReceipt, queuedText } from './ohttp.js';
import { freeTextDevice, freeTextMeta } from './free_text.js';
import { jointDevice } from './joint_question.js';
import { chosenIn, epsilonText, fieldsetFor, NAMES, radios } from './form.js';
import { multipleDevice } from './multiple.js';
import { listDevice } from './list_experiment.js';
import { keyValueDevice } from './keyvalue_question.js';

const $ = (id) => document.getElementById(id);
const match = window.location.pathname.match(/\/s\/([^/]+)\/?$/);
const surveyId = match ? decodeURIComponent(match[1]) : null;
const query = new URLSearchParams(window.location.search);
const invite = query.get('invite');
// kiosk mode (?kiosk=1): one shared device, many respondents in turn; after each submission
// the form can be cleared for the next person (each submission gets a fresh key)
const kiosk = query.get('kiosk') === '1';
const RETRIES = 3;
const WIRE_VERSION = 2;
const surveyUrl = () => `/surveys/${encodeURIComponent(surveyId)}?wire_version=${WIRE_VERSION}`;

let pending = null; // {key, body} of a submission not yet acknowledged: a retry resends it unchanged
let asked = []; // indices of the questions this respondent answers (one, drawn, under allocation: sample)
let loaded = null; // the survey as the server gave it
let state = null; // this browser's state for the survey (surveyState), where it needs one

function status(kind, html) {
  const el = $('status');
  el.className = `status ${kind}`;
  el.innerHTML = html;
}

function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
}

// the most certain a guesser who started at even odds can be after a likelihood ratio of at most f
const sure = (f) => (f / (1 + f) > 0.999 ? 'more than 99.9%' : `${significant(100 * f / (1 + f))}%`);
// what a memoizing mechanism keeps on this device, in the respondent's words
const FIRST = () => 'its first randomization of each answer and reuses it';
const KEPT = {
  'l-grr': FIRST,
  'l-osue': FIRST,
  rappor: FIRST,
  dbitflip: (m) => `which ${m.config.params.d} of the ${m.k} answers it reports on, and its randomized bits for them, and reuses them`,
  'one-bit-mean': (m) => `a random rounding of your number to ${m.config.params.points} points, and one randomized bit per point, and reuses them`,
};

/** What a question with a kept (memoizing) client tells the respondent. */
function memoText(mechanism, kept) {
  const reveal = kept.epsilonPermanent > mechanism.epsilon + 1e-9
    ? `the same answer, however often you give it, reveals at most ε = ${fixed(kept.epsilonPermanent)} in all`
    : `the same answer, however often you give it, reveals no more than one report (ε = ${fixed(mechanism.epsilon)})`;
  const flips = mechanism.config.params.flip_numerator
    ? ` Every report also flips these bits at random (probability ${fixed(Number(mechanism.config.params.flip_numerator) / 2 ** 32)}), so a change of your answer does not show for sure.`
    : '';
  return `This device keeps ${KEPT[mechanism.mechanism](mechanism)} every time: ${reveal}. ` +
    `A changed answer can cost that again, at most ${kept.draws} times in all.${flips}`;
}

/** What a range mechanism (kind "range") tells the respondent: its bins and how one report is made. */
function rangeMeta(mechanism) {
  const { bins } = mechanism.config.params;
  const how = mechanism.mechanism === 'haar-hrr' ? 'as one randomized bit of a wavelet coefficient'
    : 'at one level of a tree over them';
  return `Randomized on this device with ${NAMES[mechanism.mechanism]}: your number's bin, one of ${bins} equal `
    + `bins, is reported ${how}, ${epsilonText(mechanism.epsilon)}`;
}

/**
 * The question types with a device of their own, by `question.type`: each builds the question's form part
 * and device from (question, name). A type not here is one set of choices (or a number) randomized by the
 * question's mechanism or design, or sent as given when not randomized (device() below).
 */
const QUESTION_TYPES = {
  'free-text': (question, name) => freeTextDevice(question, name, fieldsetFor(question, freeTextMeta(question))),
  joint: jointDevice,
  keyvalue: keyValueDevice,
  'list-experiment': (question, name) => listDevice(question, name, fieldsetFor(question, 'A list experiment: say '
    + 'how many of the items apply to you, not which. Answering none or all of them reveals your answer to each '
    + '(ε = ∞ then).')),
};

/**
 * One question's form part and its device: {fieldset, epsilon, reveals, report()}, where
 * report() is the randomized report of the chosen answer, or undefined if unanswered (a
 * free-text question adds problem(): why its answer cannot be sent, or null).
 */
async function device(question, index) {
  const name = `q${index}`;
  if (Object.hasOwn(QUESTION_TYPES, question.type)) return QUESTION_TYPES[question.type](question, name);
  if (question.randomized === false) {
    const fieldset = fieldsetFor(question, 'Not randomized: your answer is sent and stored exactly as you give it.');
    fieldset.classList.add('plain');
    if (question.type === 'integer') {
      const wrap = document.createElement('div');
      wrap.className = 'options';
      const input = document.createElement('input');
      Object.assign(input, { type: 'number', name, id: `${name}-value`, min: question.min, max: question.max, step: 1 });
      input.setAttribute('aria-label', question.text);
      const hint = document.createElement('span');
      hint.className = 'hint';
      hint.textContent = ` (${question.min} to ${question.max})`;
      wrap.append(input, hint);
      fieldset.append(wrap);
      return {
        fieldset, epsilon: 0, reveals: false,
        report() {
          const v = Number(input.value);
          return input.value !== '' && Number.isInteger(v) && v >= question.min && v <= question.max ? v : undefined;
        },
      };
    }
    fieldset.append(radios(question, question.categories, name));
    return { fieldset, epsilon: 0, reveals: false, report: () => question.categories[chosenIn(fieldset, name)] };
  }
  if (question.design) {
    // the design as a randomizer (designs.js); a server older than that sends its model and p only
    const mechanism = fromConfig(question.mechanism ?? designConfig(question));
    const d = question.design;
    const fieldset = fieldsetFor(
      question,
      `Randomized on this device with the ${d.model} design (p = ${d.p.join(', ')})` +
        `${question.groups > 1 ? ', in a group the device draws' : ''}, ${epsilonText(mechanism.epsilon)}`,
    );
    fieldset.append(radios(question, [false, true], name));
    const unrelated = d.model === 'UQTunknown';
    if (unrelated) {
      const note = document.createElement('p');
      note.className = 'unrelated';
      note.textContent = `Also answer this one; your answer stays on this device and is never sent: ${question.unrelated_question}`;
      fieldset.append(note, radios({ type: 'yes-no' }, [false, true], `${name}u`));
    }
    return {
      fieldset, epsilon: mechanism.epsilon, reveals: !Number.isFinite(mechanism.epsilon),
      report() {
        const truth = chosenIn(fieldset, name);
        const other = unrelated ? chosenIn(fieldset, `${name}u`) : 0;
        if (truth === undefined || other === undefined) return undefined;
        // UQTunknown's unrelated answer goes to the randomizer, never into the report
        return mechanism.privatize(unrelated ? { answer: truth === 1, unrelated: other === 1 } : truth === 1);
      },
    };
  }
  const mechanism = fromConfig(question.mechanism);
  // a memoizing mechanism: this browser's kept client for this survey and question (IndexedDB);
  // not in kiosk mode, where the respondents sharing the device must not share randomizations
  const kept = KEPT[mechanism.mechanism] === undefined || kiosk ? null : await state.client(question);
  const fieldset = fieldsetFor(question, mechanism.kind === 'range' ? rangeMeta(mechanism)
    : `Randomized with ${NAMES[mechanism.mechanism] ?? mechanism.mechanism}, ${epsilonText(mechanism.epsilon)}`);
  if (kept) {
    const memo = document.createElement('p');
    memo.className = 'meta memo';
    memo.textContent = memoText(mechanism, kept);
    fieldset.querySelector('.meta').after(memo);
  }
  const privatize = (value) => (kept ? kept.privatize(value) : mechanism.privatize(value));
  if (mechanism.kind === 'set') {
    const oracle = mechanism.config.params.oracle.mechanism;
    return multipleDevice(question, name, mechanism, NAMES[oracle] ?? oracle);
  }
  if (mechanism.kind === 'numeric' || mechanism.kind === 'range') {
    const [low, high] = mechanism.domain;
    const wrap = document.createElement('div');
    wrap.className = 'options';
    const input = document.createElement('input');
    Object.assign(input, { type: 'number', name, id: `${name}-value`, min: low, max: high, step: 'any' });
    input.setAttribute('aria-label', question.text);
    const hint = document.createElement('span');
    hint.className = 'hint';
    hint.textContent = ` (${low} to ${high}${question.units ? ` ${question.units}` : ''})`;
    wrap.append(input, hint);
    fieldset.append(wrap);
    return {
      fieldset, epsilon: mechanism.epsilon, reveals: false, memoizes: kept !== null,
      report() {
        const v = Number(input.value);
        return input.value !== '' && Number.isFinite(v) && v >= low && v <= high ? privatize(v) : undefined;
      },
    };
  }
  fieldset.append(radios(question, mechanism.domain, name));
  return {
    fieldset, epsilon: mechanism.epsilon, reveals: false, memoizes: kept !== null,
    report() {
      const i = chosenIn(fieldset, name);
      return i === undefined ? undefined : privatize(mechanism.domain[i]);
    },
  };
}

/** The "rr-design" config of a design question from a server that sent only {model, p} (and channels). */
const designConfig = (question) => ({
  format: 'deniable.mechanism', version: 1, mechanism: 'rr-design', domain: [false, true],
  epsilon: question.epsilon ?? null, params: { model: question.design.model, p: question.design.p },
});

/** A round length in seconds as words: "day", "2 days", "12 hours", "week", ... */
function period(seconds) {
  if (!Number.isInteger(seconds) || seconds < 1) return String(seconds);
  const units = [[604800, 'week'], [86400, 'day'], [3600, 'hour'], [60, 'minute'], [1, 'second']];
  const [size, unit] = units.find(([u]) => seconds % u === 0);
  const n = seconds / size;
  return n === 1 ? unit : `${n} ${unit}s`;
}

const when = (ms) => new Date(ms).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/** {start, end} (ms since the epoch) of the survey's current round, or null before the first. */
function currentRound(survey) {
  const { rounds } = survey;
  const start = Date.parse(rounds.start);
  if (!Number.isInteger(survey.current_round) || !Number.isFinite(start)) return null;
  const every = 1000 * rounds.every;
  return { start: start + survey.current_round * every, end: start + (survey.current_round + 1) * every };
}

/**
 * The page's words for the rate limit (429 on field rate_limit): what a respondent can do, and when.
 * The API's JSON keeps the details (the limit, the survey) for developers.
 */
function rateLimitText(retryAfter) {
  const seconds = Number(retryAfter);
  let when = 'a little later';
  if (Number.isFinite(seconds) && seconds > 0) {
    when = seconds < 90 ? `in about ${Math.ceil(seconds)} seconds` : `in about ${Math.ceil(seconds / 60)} minutes`;
  }
  return 'Many answers to this survey have just come from your network (a school, office or public '
    + `connection is shared by many people), so the server is pausing them. Nothing you chose is lost: please try again ${when} `
    + 'with the button below.';
}

function explainError(response, payload) {
  if (response.status === 429 && payload?.detail?.field === 'rate_limit') {
    return rateLimitText(response.headers.get('Retry-After'));
  }
  const detail = payload && payload.detail;
  if (detail && typeof detail === 'object' && detail.message) {
    return `${escapeHtml(detail.message)}${detail.field ? ` <small>(field <code>${escapeHtml(detail.field)}</code>)</small>` : ''}`;
  }
  return `The server answered ${response.status} ${escapeHtml(response.statusText)}.`;
}

async function send() {
  const { body } = pending;
  $('submit').disabled = true;
  $('retry').hidden = true;
  status('info', 'Sending your randomized answers…');
  let lastError = '';
  for (let attempt = 0; attempt < RETRIES; attempt++) {
    if (attempt) await new Promise((r) => setTimeout(r, 400 * 2 ** attempt));
    let response;
    try {
      // a survey posted through a relay (Oblivious HTTP): the relay sees this address, not the answers
      const post = loaded?.transport?.kind === 'ohttp' ? (url, init) => obliviousFetch(loaded.transport.relay, url, init) : fetch;
      response = await post(`/surveys/${encodeURIComponent(surveyId)}/responses`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
        body,
      });
    } catch (err) {
      lastError = `Could not reach the server (${escapeHtml(err.message)}).`;
      continue; // network error: retry with the same key and body
    }
    let payload = null;
    try {
      payload = JSON.parse(await response.text());
    } catch {
      payload = null;
    }
    if (response.ok) {
      done(queuedReceipt(response, payload));
      return;
    }
    if (response.status === 409 && loaded?.rounds && payload?.detail?.field === 'device') {
      // the round may have moved on since the page was loaded: say when the current one ends
      try {
        const fresh = await fetch(surveyUrl(), { headers: { Accept: 'application/json' } });
        if (fresh.ok) loaded = { ...loaded, current_round: JSON.parse(await fresh.text()).current_round };
      } catch {
        // keep what the page was loaded with
      }
    }
    const refusal = deviceRefusal(response, payload);
    if (refusal) {
      // nothing to retry: this device may not answer (this round, or ever again)
      $('survey-form').querySelectorAll('input, button').forEach((el) => { el.disabled = true; });
      status('info', refusal);
      document.body.dataset.state = 'refused';
      pending = null;
      return;
    }
    lastError = explainError(response, payload);
    if (response.status < 500) break; // the request itself is wrong: retrying will not help
  }
  status('error', `Your answers were not recorded. ${lastError}`);
  $('retry').hidden = false;
}

/** The friendly message for a rounds survey's refusal of this device (409 / 403 on field device), else null. */
function deviceRefusal(response, payload) {
  const detail = payload && payload.detail;
  if (!loaded?.rounds || !detail || detail.field !== 'device') return null;
  if (response.status === 409) {
    const round = currentRound(loaded);
    const after = round ? `come back after ${escapeHtml(when(round.end))}` : 'come back in the next round';
    return `<strong>You already answered this round</strong>; ${after}. This survey collects once every ${period(loaded.rounds.every)}.`;
  }
  if (response.status === 403) {
    return '<strong>This device has used its privacy budget for this survey</strong> ' +
      `(lifetime ε = ${fixed(loaded.rounds.lifetime_epsilon)}), so it cannot answer again. Thank you for taking part.`;
  }
  return null;
}

/** The form closed after a send: ``queued`` is a shuffling relay's receipt (202), null for the collector's own. */
function done(queued) {
  $('survey-form').querySelectorAll('input, button').forEach((el) => {
    el.disabled = true;
  });
  $('retry').hidden = true;
  status('success', queued ? queuedText(queued) : '<strong>Thank you!</strong> Your randomized answers were recorded.');
  $('sent-body').textContent = pending.body;
  $('sent').hidden = false;
  document.body.dataset.state = 'submitted';
  pending = null;
  $('next').hidden = !kiosk;
  if (kiosk) $('next').disabled = false;
}

function nextRespondent(ask) {
  $('survey-form').querySelectorAll('input').forEach((el) => {
    el.checked = false;
    if (el.type === 'number' || el.type === 'text') el.value = '';
    el.disabled = false;
    if (el.type === 'text') el.dispatchEvent(new Event('input')); // a free-text box's byte counter
  });
  ask(); // (after clearing the shown answers) a sampled survey draws the next respondent's question
  $('submit').disabled = false;
  $('next').hidden = true;
  $('sent').hidden = true;
  $('sent-body').textContent = '';
  status('', '');
  document.body.dataset.state = 'ready';
  window.scrollTo(0, 0);
}

/** The privacy card's paragraph for a survey that runs in rounds. */
function roundsNotice(survey, devices) {
  const { rounds } = survey;
  const round = currentRound(survey);
  const now = round
    ? `This is round ${survey.current_round + 1}; it ends ${escapeHtml(when(round.end))}.`
    : `The first round starts ${escapeHtml(when(Date.parse(rounds.start)))}.`;
  const memo = devices.filter((d) => d.memoizes).length;
  const kept = memo
    ? ` For ${memo === devices.length ? 'every question' : `${memo} of the questions`}, this device keeps its ` +
      'randomization and reuses it every round, so the same answer, given again and again, reveals no more ' +
      'than it did the first time; only a changed answer costs more.'
    : ' Each round\'s answers are randomized afresh, so every round adds its ε.';
  const el = $('privacy-rounds');
  el.innerHTML = `<strong>This survey collects every ${period(rounds.every)}</strong>: you may answer once per round. ${now}${kept} ` +
    `The server counts what this device has revealed over all rounds and stops at <strong>ε = ${fixed(rounds.lifetime_epsilon)}</strong>. ` +
    'To tell rounds apart it gets a random key this browser keeps for the survey (nothing about you or your answers; ' +
    'clearing this site\'s data discards it, and with it the kept randomizations).';
  el.hidden = false;
}

/** What the page does not protect, by the survey's path: direct, through an Oblivious HTTP relay, or also shuffled. */
function separation(transport) {
  if (transport?.kind !== 'ohttp') return ' Not protected: your network address, when you answer, and that you took part.';
  const relay = escapeHtml(new URL(transport.relay).host);
  return ` Your answers travel sealed through a relay (${relay}) run by another party: the relay sees your network `
    + 'address but cannot read the answers, and the people running this survey read the answers without your address'
    + (transport.shuffler
      ? ', after the relay mixed them in a random order with at least a batch of others, so not when you answered.'
      : '. They still see when answers arrive, and both parties together could link them.');
}

async function main() {
  // the privacy card's explanation is open where there is room for it; a phone shows its summary first
  $('privacy-details').open = window.matchMedia('(min-width: 40rem)').matches;
  if (!surveyId) {
    status('error', 'This page needs a survey address of the form <code>/s/&lt;survey id&gt;</code>.');
    return;
  }
  let survey;
  try {
    const response = await fetch(surveyUrl(), { headers: { Accept: 'application/json' } });
    const text = await response.text();
    // parseJSON, not JSON.parse: it keeps which numbers were written as floats, which the kept
    // state's fingerprint hashes as Python writes them; the configurations then in version 1
    const payload = (() => { try { return surveyFromWire(parseJSON(text)); } catch { return null; } })();
    if (!response.ok) {
      status('error', `This survey could not be loaded. ${explainError(response, payload)}`);
      $('title').textContent = 'Survey unavailable';
      return;
    }
    survey = payload;
  } catch (err) {
    status('error', `Could not reach the server (${escapeHtml(err.message)}).`);
    return;
  }
  document.title = survey.title;
  $('title').textContent = survey.title;

  loaded = survey;
  let devices;
  let deviceId = null;
  try {
    const memoizing = !kiosk && survey.questions.some((q) => KEPT[q.mechanism?.mechanism] !== undefined);
    if (survey.rounds || memoizing) state = await surveyState(survey);
    devices = await Promise.all(survey.questions.map((q, i) => device(q, i)));
    if (survey.rounds) deviceId = state.device;
  } catch (err) {
    status('error', `This survey's randomization settings could not be checked, so nothing will be sent. (${escapeHtml(err.message)})`);
    return;
  }
  const sampled = survey.allocation === 'sample';
  const randomized = devices.filter((d, i) => survey.questions[i].randomized !== false);
  const bounded = randomized.filter((d) => !d.reveals);
  const total = sampled ? Math.max(...bounded.map((d) => d.epsilon)) : bounded.reduce((s, d) => s + d.epsilon, 0);
  // a list experiment's count is sent as given too, but its lists hide the answer (it is among `revealing`)
  const plain = survey.questions.filter((q) => q.randomized === false && q.type !== 'list-experiment').length;
  const revealing = survey.questions.filter((q, i) => devices[i].reveals).map((q) => `“${escapeHtml(q.text)}”`);
  const over = sampled
    ? `(this device drew one of the survey's ${devices.length} questions for you at random; only that answer is randomized and sent)`
    : `(the sum over its ${bounded.length} randomized question${bounded.length === 1 ? '' : 's'}${bounded.length < randomized.length ? ' that have one' : ''})`;
  $('privacy-summary').textContent = `How this protects you (ε = ${fixed(total)}${survey.rounds ? ' each round' : ''})`;
  $('privacy-epsilon').innerHTML =
    `Privacy loss for ${survey.rounds ? 'each round' : 'the whole survey'}: <strong>ε = ${fixed(total)}</strong> ${over}. ` +
    `Whatever someone trying to guess your answers already knows about you, what this page sends makes ` +
    `any answer at most e<sup>ε</sup> = ${significant(Math.exp(total))} times more likely, ` +
    `compared with any other, than they thought before: if they thought two answers equally likely, ` +
    `they can be at most ${sure(Math.exp(total))} sure which one is yours afterwards.` +
    (revealing.length ? ` <strong>Except</strong>: ${revealing.join(', ')} uses a design in which some answers reveal the truth (no such bound).` : '') +
    (plain ? ` ${plain} question${plain === 1 ? ' is' : 's are'} <strong>not randomized</strong>: those answers are sent as you give them.` : '') +
    separation(survey.transport);
  if (survey.rounds) roundsNotice(survey, devices);

  const container = $('questions');
  const ask = () => {
    asked = sampled ? [assignQuestion(devices.length)] : devices.map((_, i) => i);
    container.replaceChildren(...asked.map((i) => devices[i].fieldset));
    document.body.dataset.asked = asked.map((i) => survey.questions[i].id).join(' ');
  };
  ask();
  $('survey-form').hidden = false;

  if (survey.status === 'closed') {
    status('info', 'This survey is closed and no longer accepts answers.');
    $('survey-form').querySelectorAll('input, button').forEach((el) => { el.disabled = true; });
    return;
  }
  if (survey.invite_only && !invite) {
    status('info', 'This survey is by invitation only: open it with the personal link you received.');
    $('submit').disabled = true;
    return;
  }

  $('survey-form').addEventListener('submit', (event) => {
    event.preventDefault();
    if (pending) return; // already randomized: only "Try again" resends it
    // an answer the question cannot take (a free-text character outside its alphabet): nothing is randomized
    const problems = asked.map((i) => [i, devices[i].problem ? devices[i].problem() : null]).filter(([, p]) => p !== null);
    if (problems.length) {
      problems.forEach(([i]) => devices[i].fieldset.classList.add('missing'));
      status('error', `${escapeHtml(problems[0][1])} Nothing was sent.`);
      devices[problems[0][0]].fieldset.querySelector('input').focus();
      return;
    }
    const reports = {};
    const missing = [];
    asked.forEach((i) => {
      const q = survey.questions[i];
      const report = devices[i].report();
      devices[i].fieldset.classList.toggle('missing', report === undefined);
      if (report === undefined) missing.push(q.text);
      else reports[q.id] = reportToWire(report, WIRE_VERSION);
    });
    if (missing.length) {
      status('error', `Please answer every question (${missing.length} left).`);
      container.querySelector('.missing input').focus();
      return;
    }
    const key = idempotencyKey();
    const body = { idempotency_key: key };
    if (invite) body.invite_token = invite;
    if (deviceId) body.device = deviceId;
    body.wire_version = WIRE_VERSION;
    body.reports = reports;
    // the answers are fixed from here on: a retry must resend these very reports, since fresh
    // randomization of the same answers would reveal more about them
    pending = { key, body: stringify(body) };
    container.querySelectorAll('input').forEach((el) => { el.disabled = true; });
    send();
  });
  const settle = (event) => {
    // an answered question is no longer flagged (a refused free-text answer once it is fixed:
    // as it is typed, so that the page does not move under the next click); the reminder goes
    // once none is flagged
    const fieldset = event.target.closest('fieldset');
    const owner = devices.find((d) => d.fieldset === fieldset);
    if (owner?.problem && owner.problem() !== null) return;
    fieldset.classList.remove('missing');
    if (!pending && !container.querySelector('.missing')) status('', '');
  };
  container.addEventListener('change', settle);
  container.addEventListener('input', settle);
  $('retry').addEventListener('click', () => pending && send());
  $('next').addEventListener('click', () => nextRespondent(ask));
  document.body.dataset.state = 'ready';
}

main();
