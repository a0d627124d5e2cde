// json.js -- JSON for the browser client: exact big integers, and Python's canonical text.
//
// The survey page speaks wire version 2 (below): wide integers arrive and leave as decimal strings.
// It still reads survey documents with parseJSON, for the floats: the fingerprints of its kept
// states hash a configuration's numbers as Python writes them (0.0, not 0).
//
// JSON numbers above 2^53 lose precision in JSON.parse, so configurations are parsed with
// `parseJSON` (it keeps such integers as BigInt) and reports serialized with `stringify` (it
// writes BigInt as a JSON integer). `canonicalJSON` writes a value byte for byte as Python's
// json.dumps(value, sort_keys=True, separators=(",", ":")) does, which is what the fingerprints
// of configurations and surveys hash (deniable.mechanisms._contract, deniable.client).
//
// Floats. Python keeps 2.0 and 2 apart; JSON.parse does not. parseJSON remembers which numbers
// were written as floats (with a fraction or an exponent) in the objects and arrays it builds, so
// canonicalJSON writes them back as Python does ("2.0", "1e-05"); an integral number of a value
// built in JavaScript is written as an integer.

/** parseJSON's objects and arrays -> the keys (indices) of their numbers written as floats. */
const FLOAT_TOKENS = new WeakMap();

/**
 * JSON.parse that keeps integers outside the safe range (|n| > 2^53 - 1) exact, as BigInt.
 * Everything else is what JSON.parse returns.
 */
export function parseJSON(text) {
  let i = 0;
  let floatToken = false; // whether the value just read was a number written as a float
  const s = String(text);
  const fail = (what) => {
    throw new SyntaxError(`invalid JSON at position ${i}: ${what}`);
  };
  const ws = () => {
    while (i < s.length && (s[i] === ' ' || s[i] === '\n' || s[i] === '\r' || s[i] === '\t')) i++;
  };
  const keep = (container, key) => {
    if (!floatToken) return;
    if (!FLOAT_TOKENS.has(container)) FLOAT_TOKENS.set(container, new Set());
    FLOAT_TOKENS.get(container).add(key);
  };
  const numberRe = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;
  const value = () => {
    ws();
    const c = s[i];
    if (c === '{') {
      i++;
      const obj = {};
      ws();
      if (s[i] === '}') { i++; floatToken = false; return obj; }
      for (;;) {
        ws();
        if (s[i] !== '"') fail('expected a string key');
        const key = string();
        ws();
        if (s[i] !== ':') fail("expected ':'");
        i++;
        // an own property even for "__proto__", as JSON.parse does
        Object.defineProperty(obj, key, { value: value(), enumerable: true, writable: true, configurable: true });
        keep(obj, key);
        ws();
        if (s[i] === ',') { i++; continue; }
        if (s[i] === '}') { i++; floatToken = false; return obj; }
        fail("expected ',' or '}'");
      }
    }
    if (c === '[') {
      i++;
      const arr = [];
      ws();
      if (s[i] === ']') { i++; floatToken = false; return arr; }
      for (;;) {
        arr.push(value());
        keep(arr, arr.length - 1);
        ws();
        if (s[i] === ',') { i++; continue; }
        if (s[i] === ']') { i++; floatToken = false; return arr; }
        fail("expected ',' or ']'");
      }
    }
    floatToken = false;
    if (c === '"') return string();
    for (const [word, v] of [['true', true], ['false', false], ['null', null]]) {
      if (s.startsWith(word, i)) { i += word.length; return v; }
    }
    numberRe.lastIndex = i;
    const m = numberRe.exec(s);
    if (!m) fail('unexpected character');
    i += m[0].length;
    const n = Number(m[0]);
    floatToken = m[1] !== undefined || m[2] !== undefined;
    if (!floatToken && !Number.isSafeInteger(n)) return BigInt(m[0]);
    return n;
  };
  const string = () => {
    const start = i;
    i++;
    while (i < s.length && s[i] !== '"') i += s[i] === '\\' ? 2 : 1;
    if (i >= s.length) fail('unterminated string');
    i++;
    return JSON.parse(s.slice(start, i));
  };
  const out = value();
  ws();
  if (i !== s.length) fail('trailing characters');
  return out;
}

/** JSON.stringify (compact) that writes BigInt values as JSON integers. */
export function stringify(value) {
  if (typeof value === 'bigint') return value.toString();
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) {
    return `[${value.map((v) => (v === undefined ? 'null' : stringify(v))).join(',')}]`;
  }
  const parts = [];
  for (const [k, v] of Object.entries(value)) {
    if (v !== undefined && typeof v !== 'function') parts.push(`${JSON.stringify(k)}:${stringify(v)}`);
  }
  return `{${parts.join(',')}}`;
}

/** Python's repr of a float (its shortest round-trip digits, as JavaScript's), e.g. 2.0, 1e-05, 1.5e+16. */
function pythonFloat(x) {
  if (!Number.isFinite(x)) throw new RangeError(`${x} has no JSON form`);
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const [mantissa, exponent] = x.toExponential().split('e');
  const e = Number(exponent);
  const sign = x < 0 ? '-' : '';
  const digits = mantissa.replace('-', '').replace('.', '');
  if (e < -4 || e >= 16) {
    const head = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    return `${sign}${head}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
  }
  if (e < 0) return `${sign}0.${'0'.repeat(-e - 1)}${digits}`;
  return `${sign}${digits.slice(0, e + 1).padEnd(e + 1, '0')}.${digits.slice(e + 1) || '0'}`;
}

/** A string as Python's json.dumps writes it (ensure_ascii: every character outside ' '..'~' escaped). */
const asciiString = (text) => JSON.stringify(text).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** Python's order of str keys: by code point (JavaScript's default sort compares UTF-16 units). */
const byCodePoint = (a, b) => {
  const [x, y] = [Array.from(a, (c) => c.codePointAt(0)), Array.from(b, (c) => c.codePointAt(0))];
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
};

/**
 * `value` as Python's json.dumps(value, sort_keys=True, separators=(",", ":")) writes it: keys
 * sorted, non-ASCII escaped, floats in Python's repr (those parseJSON read as floats, and any
 * non-integral number), BigInt as integers. `{python: false}` writes the form the browser kept
 * states of version 1 recorded instead: keys in JavaScript's order, numbers and strings as
 * JSON.stringify writes them.
 */
export function canonicalJSON(value, { python = true } = {}) {
  const write = (v, float) => {
    if (typeof v === 'bigint') return v.toString();
    if (typeof v === 'number' && python) return Number.isInteger(v) && !float ? String(v) : pythonFloat(v);
    if (typeof v === 'string' && python) return asciiString(v);
    if (v === null || typeof v !== 'object') return JSON.stringify(v);
    const floats = FLOAT_TOKENS.get(v);
    if (Array.isArray(v)) return `[${v.map((x, i) => write(x, floats?.has(i))).join(',')}]`;
    const keys = python ? Object.keys(v).sort(byCodePoint) : Object.keys(v).sort();
    return `{${keys.map((k) => `${write(k)}:${write(v[k], floats?.has(k))}`).join(',')}}`;
  };
  return write(value, false);
}

// ------------------------------------------------------------------ wire version 2
// Version 2 of the wire format (deniable.wire) writes the integers that may exceed 2^53 as decimal
// strings, so JSON.parse reads it exactly: a configuration's params beyond 2^53 - 1, and the wide
// report fields (an OLH/BLH seed, RAPPOR's bits) always.

const DECIMAL = /^-?(0|[1-9][0-9]*)$/;
/** Report fields that are decimal strings in wire version 2. */
export const WIDE_FIELDS = Object.freeze(['seed', 'bits']);

/** A wide integer of version 2 (a decimal string beyond 2^53 - 1) as a BigInt; anything else unchanged. */
function wideInteger(value) {
  if (typeof value !== 'string' || value.length > 21 || !DECIMAL.test(value)) return value;
  const n = BigInt(value);
  return n > BigInt(Number.MAX_SAFE_INTEGER) || -n > BigInt(Number.MAX_SAFE_INTEGER) ? n : value;
}

/** `copy`, remembering the numbers `original` (read by parseJSON) had written as floats. */
function keepFloats(original, copy) {
  const floats = FLOAT_TOKENS.get(original);
  if (floats) FLOAT_TOKENS.set(copy, new Set(floats));
  return copy;
}

/** A version-2 configuration's params as version 1 has them (wide integers as BigInt). */
export function paramsFromWire(params, version) {
  if (version !== 2) return params;
  const out = keepFloats(params, {});
  for (const [k, v] of Object.entries(params)) {
    out[k] = Array.isArray(v) ? keepFloats(v, v.map(wideInteger)) : wideInteger(v);
  }
  return out;
}

/**
 * A mechanism configuration of wire version 2 as version 1 has it (wide integers as BigInt, as
 * parseJSON reads version 1); any other value as it is. Fingerprints hash this form.
 */
export function configFromWire(config) {
  if (config === null || typeof config !== 'object' || config.format !== 'deniable.mechanism' || config.version !== 2
      || config.params === null || typeof config.params !== 'object') {
    return config;
  }
  return keepFloats(config, { ...config, version: 1, params: paramsFromWire(config.params, 2) });
}

/**
 * A survey as `GET /surveys/{id}?wire_version=2` gives it (parsed with parseJSON), its questions'
 * mechanism and design channel configurations in version 1: the form the page randomizes with and
 * its kept state's fingerprint hashes (as for a survey fetched in version 1).
 */
export function surveyFromWire(survey) {
  if (survey === null || typeof survey !== 'object' || !Array.isArray(survey.questions)) return survey;
  const question = (q) => {
    if (q === null || typeof q !== 'object') return q;
    const out = keepFloats(q, { ...q });
    if ('mechanism' in q) out.mechanism = configFromWire(q.mechanism);
    if (Array.isArray(q.channels)) out.channels = keepFloats(q.channels, q.channels.map(configFromWire));
    return out;
  };
  return keepFloats(survey, { ...survey, questions: keepFloats(survey.questions, survey.questions.map(question)) });
}

/**
 * One report of wire `version` (1 or 2) as the samplers make it: in version 2 the wide fields
 * (decimal strings) as BigInt. A field of that name holding a list (dBitFlip's bits) is not wide.
 */
export function reportFromWire(report, version = 1) {
  if (version !== 2 || report === null || typeof report !== 'object' || Array.isArray(report)) return report;
  const out = { ...report };
  for (const k of WIDE_FIELDS) {
    if (!(k in out) || Array.isArray(out[k])) continue;
    if (typeof out[k] !== 'string' || !DECIMAL.test(out[k])) {
      throw new TypeError(`${k} must be a decimal string in wire version 2; got ${stringify(out[k])}`);
    }
    out[k] = BigInt(out[k]);
  }
  return out;
}

/** One report in wire `version`: in version 2 the wide integer fields as decimal strings. */
export function reportToWire(report, version = 1) {
  if (version !== 2 || report === null || typeof report !== 'object' || Array.isArray(report)) return report;
  const out = { ...report };
  for (const k of WIDE_FIELDS) {
    if (typeof out[k] === 'bigint' || typeof out[k] === 'number') out[k] = String(out[k]);
  }
  return out;
}
