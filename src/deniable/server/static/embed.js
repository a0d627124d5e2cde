// embed.js -- the embeddable client: deniable's device-side randomization inside a host platform.
//
// The entry module of deniable-embed.js (tools/build_embed.py bundles it with the modules it
// imports, the survey page's own samplers and wire code, into one file: deniable-embed.mjs, an
// ES module, and deniable-embed.js, a classic script that sets the global `Deniable`). Two modes:
//
// Local (no deniable server): `randomize(config, value)` draws one report on this device with
// fromConfig (deniable.js) and returns the text a host platform keeps in its own field,
//
//   {"format":"deniable.report","version":1,"fingerprint":<16 hex digits>,"report":<report>}
//
// the report in wire version 2 (json.js: wide integers such as an OLH seed as decimal strings)
// and the fingerprint of the configuration it was drawn with (fingerprint.js, Python's
// `m.fingerprint`), so `deniable estimate` and `deniable analyze` can check every row of the
// platform's export against the design. `local({config, value, field})` also writes that text
// into the host's field: a CSS selector, an element with a `value`, or a function. The truth
// itself is never written anywhere.
//
// Server: `submit({server, survey, answers})` fetches the survey (GET /surveys/{id}?wire_version=2),
// randomizes every answer with its question's configuration, and POSTs only the reports, with a
// random idempotency key, as the survey page does (the server must list the host's origin).
// A survey whose `transport` is `{kind: ohttp, relay}` gets its reports encapsulated for the
// collector's gateway (Oblivious HTTP, ohttp.js: @hpke/core) and posted to the relay, as the
// survey page does: the relay sees the device's address, not the reports. A shuffling relay
// answers 202 with a queued receipt (the reports are on its disk, not yet at the collector):
// `submit` then returns `queued: true`.
//
// Every report is a one-time report (fromConfig's privatize): a mechanism that memoizes across
// repeated collection (RAPPOR, L-GRR, L-OSUE, dBitFlip, 1BitMean) keeps its permanent response
// only on the survey page; a survey that runs in rounds is refused here.
import { fingerprint } from './fingerprint.js';
import { obliviousFetch, queuedReceipt } from './ohttp.js';
import {
  configFromWire, DeniableError, fromConfig, idempotencyKey, MECHANISMS, parseJSON, reportToWire,
  secureRandomBytes, stringify, surveyFromWire, uniformGroup,
} from './deniable.js';

export { DeniableError, fingerprint, fromConfig, MECHANISMS, parseJSON, stringify, uniformGroup };

/** The `format` of the text local mode writes into a host's field. */
export const REPORT_FORMAT = 'deniable.report';
export const REPORT_VERSION = 1;
const WIRE_VERSION = 2;
const RETRIES = 3; // POST attempts after a network error or a 5xx answer, as the survey page makes
const HEX16 = /^[0-9a-f]{16}$/;

/** A configuration (JSON text, best: it keeps which numbers are floats; or an object) in wire version 1. */
function readConfig(config) {
  const parsed = typeof config === 'string' ? parseJSON(config) : config;
  return configFromWire(parsed);
}

/**
 * Local mode: one report of `value` drawn on this device with `config` (a mechanism or survey
 * design configuration as Python's `to_config()` writes it; JSON text keeps its floats exactly).
 * Returns {report, fingerprint, epsilon, text}: `text` is the field's content (see the header).
 * options.randomBytes replaces the platform CSPRNG (tests only).
 */
export function randomize(config, value, { randomBytes = secureRandomBytes } = {}) {
  const cfg = readConfig(config);
  const mechanism = fromConfig(cfg, { randomBytes });
  const report = reportToWire(mechanism.privatize(value), WIRE_VERSION);
  const print = fingerprint(cfg);
  const text = stringify({ format: REPORT_FORMAT, version: REPORT_VERSION, fingerprint: print, report });
  return { report, fingerprint: print, epsilon: mechanism.epsilon, text };
}

/** Where local mode writes: a function, an element (anything with `value`), or a CSS selector. */
function writer(field) {
  if (typeof field === 'function') return field;
  const element = typeof field === 'string' ? globalThis.document?.querySelector(field) : field;
  if (element === null || typeof element !== 'object' || !('value' in element)) {
    throw new DeniableError('field', `must be a function, an input element or the CSS selector of one; got ${stringify(String(field))}`);
  }
  return (text) => {
    element.value = text;
    if (typeof element.dispatchEvent === 'function') element.dispatchEvent(new Event('change', { bubbles: true }));
  };
}

/**
 * Local mode into a host's field: randomize(config, value) and write its text with `field`
 * (a function called with (text, result), an input element, or a CSS selector). Returns the result.
 */
export function local({ config, value, field, randomBytes = secureRandomBytes }) {
  const write = writer(field);
  const result = randomize(config, value, { randomBytes });
  write(result.text, result);
  return result;
}

/**
 * A field's text as local mode wrote it: {fingerprint, report} (the report in wire version 2).
 * Refuses anything else, naming what is wrong.
 */
export function readField(text) {
  let data;
  try {
    data = JSON.parse(text);
  } catch {
    throw new DeniableError('field', `must be the JSON text deniable-embed wrote; got ${stringify(String(text).slice(0, 40))}`);
  }
  if (data === null || typeof data !== 'object' || data.format !== REPORT_FORMAT || data.version !== REPORT_VERSION) {
    throw new DeniableError('field', `must have format ${stringify(REPORT_FORMAT)} and version ${REPORT_VERSION}`);
  }
  if (typeof data.fingerprint !== 'string' || !HEX16.test(data.fingerprint) || !('report' in data)) {
    throw new DeniableError('field', 'must hold a 16-hex-digit fingerprint and a report');
  }
  return { fingerprint: data.fingerprint, report: data.report };
}

// ------------------------------------------------------------------ server mode

/** The report (wire version 2) of one question's answer, as the survey page makes it. */
function questionReport(question, value, randomBytes) {
  if (question.randomized === false) return value;
  if (question.type === 'free-text') {
    throw new DeniableError(`answers.${question.id}`, 'a free-text question is answered on the survey page, not through the embed');
  }
  // a design question: its rr-design configuration (the server sends it as `mechanism`)
  return reportToWire(fromConfig(question.mechanism, { randomBytes }).privatize(value), WIRE_VERSION);
}

/**
 * Server mode: randomize `answers` ({question id: the respondent's answer}, one for every
 * question) with the survey's own configurations and POST the reports to
 * `${server}/surveys/${survey}/responses` (through the survey's relay, encapsulated, when its
 * `transport` is ohttp). Returns {ok, status, body, response, queued}: `body` is the JSON text
 * sent (after a network error or a 5xx answer it is sent again unchanged, up to 3 times in all),
 * `response` the server's parsed JSON (or null), `queued` whether a shuffling relay answered 202
 * with its queued receipt (`response`: the reports wait on the relay's disk, not yet stored).
 * options.inviteToken for an invitation-only survey.
 */
export async function submit({
  server, survey, answers, inviteToken = null, fetch = globalThis.fetch, randomBytes = secureRandomBytes,
}) {
  if (typeof server !== 'string' || !/^https?:\/\//.test(server)) {
    throw new DeniableError('server', `must be the server's address (https://...); got ${stringify(server)}`);
  }
  const base = server.replace(/\/+$/, '');
  const id = encodeURIComponent(survey);
  const got = await fetch(`${base}/surveys/${id}?wire_version=${WIRE_VERSION}`, { headers: { Accept: 'application/json' } });
  const text = await got.text();
  if (!got.ok) throw new DeniableError('survey', `the server answered ${got.status} for survey ${stringify(survey)}: ${text.slice(0, 200)}`);
  const definition = surveyFromWire(parseJSON(text));
  if (definition.rounds) throw new DeniableError('survey', 'a survey that runs in rounds keeps a device key: answer it on its own page');
  if (definition.allocation === 'sample') throw new DeniableError('survey', 'a survey with allocation: sample draws its question on its own page');
  const ids = definition.questions.map((q) => q.id);
  const unknown = Object.keys(answers).filter((k) => !ids.includes(k));
  const missing = ids.filter((k) => !Object.hasOwn(answers, k));
  if (unknown.length || missing.length) {
    throw new DeniableError('answers', `must answer exactly the survey's questions ${stringify(ids)}; unknown ${stringify(unknown)}, missing ${stringify(missing)}`);
  }
  const reports = {};
  for (const q of definition.questions) reports[q.id] = questionReport(q, answers[q.id], randomBytes);
  const payload = { idempotency_key: idempotencyKey(randomBytes), wire_version: WIRE_VERSION, reports };
  if (inviteToken !== null) payload.invite_token = inviteToken;
  // the reports are fixed from here on: a retry resends this very body (and key), since fresh
  // randomization of the same answers would reveal more about them
  const body = stringify(payload);
  const { transport } = definition;
  const post = transport?.kind === 'ohttp' ? (url, init) => obliviousFetch(transport.relay, url, init, fetch) : fetch;
  let posted = null;
  for (let attempt = 0; attempt < RETRIES && (posted === null || posted.status >= 500); attempt++) {
    if (attempt) await new Promise((resolve) => { setTimeout(resolve, 400 * 2 ** attempt); });
    try {
      posted = await post(`${base}/surveys/${id}/responses`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
        body,
      });
    } catch (error) {
      if (attempt === RETRIES - 1) throw error; // the network failed every time
    }
  }
  let response = null;
  try {
    response = JSON.parse(await posted.text());
  } catch {
    response = null;
  }
  return { ok: posted.ok, status: posted.status, body, response, queued: queuedReceipt(posted, response) !== null };
}
