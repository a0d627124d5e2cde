// The survey page: fetch the survey, randomize every answer in the page with deniable.js,
// and POST only the randomized reports (with a random idempotency key).
import { fromConfig, idempotencyKey, parseJSON, stringify } from './deniable.js';

const $ = (id) => document.getElementById(id);
const match = window.location.pathname.match(/\/s\/([^/]+)\/?$/);
const surveyId = match ? decodeURIComponent(match[1]) : null;
const query = new URLSearchParams(window.location.search);
const invite = query.get('invite');
// kiosk mode (?kiosk=1): one shared device, many respondents in turn; after each submission
// the form can be cleared for the next person (each submission gets a fresh key)
const kiosk = query.get('kiosk') === '1';
const RETRIES = 3;

let pending = null; // {key, body} of a submission not yet acknowledged: a retry resends it unchanged

function status(kind, html) {
  const el = $('status');
  el.className = `status ${kind}`;
  el.innerHTML = html;
}

function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
}

const fmt = (x, digits = 2) => Number(x).toFixed(digits);
const NAMES = {
  'binary-rr': 'randomized response',
  grr: 'k-ary randomized response',
  sue: 'symmetric unary encoding',
  oue: 'optimized unary encoding',
  blh: 'binary local hashing',
  olh: 'optimized local hashing',
  hadamard: 'Hadamard response',
  subset: 'subset selection',
};

function label(question, value, i) {
  if (question.type === 'yes-no') return value ? 'Yes' : 'No';
  const c = Array.isArray(question.categories) ? question.categories[i] : value;
  return String(c);
}

function renderQuestion(question, mechanism, index) {
  const fieldset = document.createElement('fieldset');
  fieldset.className = 'question';
  fieldset.dataset.question = question.id;
  const legend = document.createElement('legend');
  legend.textContent = question.text;
  fieldset.append(legend);
  const meta = document.createElement('p');
  meta.className = 'meta';
  meta.textContent = `Randomized with ${NAMES[mechanism.mechanism]}, ε = ${fmt(mechanism.epsilon)}`;
  fieldset.append(meta);
  const options = document.createElement('div');
  options.className = 'options';
  // yes-no questions show "Yes" first; categorical ones keep the survey's order
  const order = mechanism.domain.map((_, i) => i);
  if (question.type === 'yes-no') order.reverse();
  for (const i of order) {
    const id = `q${index}-o${i}`;
    const wrap = document.createElement('label');
    wrap.className = 'option';
    wrap.htmlFor = id;
    const input = document.createElement('input');
    input.type = 'radio';
    input.name = `q${index}`;
    input.id = id;
    input.value = String(i);
    const text = document.createElement('span');
    text.textContent = label(question, mechanism.domain[i], i);
    wrap.append(input, text);
    options.append(wrap);
  }
  fieldset.append(options);
  return fieldset;
}

function explainError(response, payload) {
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
      response = await fetch(`/surveys/${encodeURIComponent(surveyId)}/responses`, {
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
      payload = parseJSON(await response.text());
    } catch {
      payload = null;
    }
    if (response.ok) {
      done();
      return;
    }
    lastError = explainError(response, payload);
    if (response.status < 500) break; // the request itself is wrong: retrying will not help
  }
  status('error', `Your answers were not recorded. ${lastError}`);
  $('retry').hidden = false;
}

function done() {
  $('survey-form').querySelectorAll('input, button').forEach((el) => {
    el.disabled = true;
  });
  $('retry').hidden = true;
  status('success', '<strong>Thank you!</strong> Your randomized answers were recorded.');
  $('sent-body').textContent = pending.body;
  $('sent').hidden = false;
  document.body.dataset.state = 'submitted';
  pending = null;
  $('next').hidden = !kiosk;
  if (kiosk) $('next').disabled = false;
}

function nextRespondent() {
  $('survey-form').querySelectorAll('input').forEach((el) => {
    el.checked = false;
    el.disabled = false;
  });
  $('submit').disabled = false;
  $('next').hidden = true;
  $('sent').hidden = true;
  $('sent-body').textContent = '';
  status('', '');
  document.body.dataset.state = 'ready';
  window.scrollTo(0, 0);
}

async function main() {
  if (!surveyId) {
    status('error', 'This page needs a survey address of the form <code>/s/&lt;survey id&gt;</code>.');
    return;
  }
  let survey;
  try {
    const response = await fetch(`/surveys/${encodeURIComponent(surveyId)}`, { headers: { Accept: 'application/json' } });
    const text = await response.text();
    const payload = (() => { try { return parseJSON(text); } catch { return null; } })();
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

  let mechanisms;
  try {
    mechanisms = survey.questions.map((q) => fromConfig(q.mechanism));
  } catch (err) {
    status('error', `This survey's randomization settings could not be checked, so nothing will be sent. (${escapeHtml(err.message)})`);
    return;
  }
  const total = mechanisms.reduce((s, m) => s + m.epsilon, 0);
  $('privacy-epsilon').innerHTML =
    `Privacy loss for the whole survey: <strong>ε = ${fmt(total)}</strong> ` +
    `(the sum over its ${mechanisms.length} question${mechanisms.length === 1 ? '' : 's'}). Whatever else is known about you, ` +
    `your reports change the odds of any guess about your answers by at most a factor ` +
    `e<sup>ε</sup> = ${Number(Math.exp(total).toPrecision(3))}.`;

  const container = $('questions');
  survey.questions.forEach((q, i) => container.append(renderQuestion(q, mechanisms[i], i)));
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
    const reports = {};
    const missing = [];
    survey.questions.forEach((q, i) => {
      const fieldset = container.children[i];
      const chosen = fieldset.querySelector('input:checked');
      fieldset.classList.toggle('missing', !chosen);
      if (!chosen) missing.push(q.text);
      else reports[q.id] = mechanisms[i].privatize(mechanisms[i].domain[Number(chosen.value)]);
    });
    if (missing.length) {
      status('error', `Please answer every question (${missing.length} left).`);
      container.querySelector('.missing input').focus();
      return;
    }
    const key = idempotencyKey();
    const body = { idempotency_key: key };
    if (invite) body.invite_token = invite;
    body.reports = reports;
    // the answers are fixed from here on: a retry must resend these very reports, since fresh
    // randomization of the same answers would reveal more about them
    pending = { key, body: stringify(body) };
    container.querySelectorAll('input').forEach((el) => { el.disabled = true; });
    send();
  });
  container.addEventListener('change', (event) => {
    // an answered question is no longer flagged; the reminder goes once all are answered
    event.target.closest('fieldset').classList.remove('missing');
    if (!pending && !container.querySelector('.missing')) status('', '');
  });
  $('retry').addEventListener('click', () => pending && send());
  $('next').addEventListener('click', nextRespondent);
  document.body.dataset.state = 'ready';
}

main();
