// discovery.js -- randomize a free-text answer on the respondent's device (heavy-hitter discovery).
//
// A dependency-free ES module beside deniable.js. Given a discovery configuration as produced
// by the Python library (`HeavyHitters.to_config()`, format "deniable.discovery" version 1),
// `fromDiscoveryConfig(cfg).privatize(value)` returns one report in exactly the JSON form
// `HeavyHitters.reports_from_json` accepts:
//
//   pem  {"level": i, "sketch": S}
//   sfp  {"level": i, "sketch": S, "word": S}
//
// where S is a count-mean sketch report: cms {"row": j, "bits": hex of the m bits, bit b being
// bit b % 8 of byte b / 8}, hcms {"row": j, "index": l, "bit": 0 or 1}.
//
// Alphabet (optional config field, text and PEM only, as deniable.heavy._items): a string of
// distinct single-byte ASCII characters. A value with any other character is refused (a
// DeniableError naming the value, the character and the value, in Python's words) and nothing
// is randomized; the items and reports of the accepted values are those without an alphabet
// (only the server's search for prefixes is narrowed to the alphabet's bytes).
//
// The protocol (deniable.heavy): a text value becomes its item of L = max_length + 1 bytes
// (UTF-8, cut after the last whole character within max_length bytes and marked 0xFE, else
// ended by 0xFF; padded with 0xFF); an integer its 8 bytes big-endian of value + 2^63. The
// device draws its level i uniformly in 1..L. PEM sends a sketch report of the key
// [i] + item[0:i]; SFP computes the 8-bit piece r = BLAKE2b(item, digest 1, key seed, person
// "deniable:sfp") and sends a report of [i, r, item[i-1]] and one of the whole item (each sketch
// at epsilon / 2). A sketch report of key x: fingerprint phi = BLAKE2b(x, digest 8, key seed,
// person "deniable:value") little-endian; row j uniform below rows; bucket bit t = parity of
// R[j, t] & phi with R[j, t] = BLAKE2b(j as 4 bytes LE + [t], digest 8, key seed, person
// "deniable:row"); then CMS flips each of the m one-hot bits with probability
// flip_numerator / 2^32, HCMS draws l uniform below m and keeps (-1)^popcount(l & bucket) with
// probability a / (a + b).
//
// Timing: hashing and sampling run a number of times fixed by the configuration (items have L
// bytes, keys are chosen by the level); only encoding the text as UTF-8, finding where to cut
// it and (with an alphabet) checking its characters take time that grows with the answer's
// length.
//
// Exactness: every draw is sampling.js's integer sampler (rejection sampling of uniform words
// from crypto.getRandomValues); no float meets randomness. BLAKE2b is RFC 7693 with its key
// and personalization parameters (as Python's hashlib.blake2b), from @noble/hashes (vendor/).
import { blake2b as nobleBlake2b } from './vendor/noble-hashes/blake2.js';
import {
  DeniableError, MAX_GETRANDOM, parseJSON, secureRandomBytes, stringify, uniformBelow, uniformBelowSmall, utf8, WordPool,
} from './deniable.js';

export const DISCOVERY_FORMAT = 'deniable.discovery';
export const DISCOVERY_VERSION = 1;
const SHARE = { pem: 1, sfp: 2 };
const END = 0xff;
const CUT = 0xfe;

// ------------------------------------------------------------------ BLAKE2b (RFC 7693)

/** `bytes` zero-padded to `n` bytes, as hashlib.blake2b pads a short salt or personalization. */
function padded(bytes, n) {
  const out = new Uint8Array(n);
  out.set(bytes);
  return out;
}

/**
 * BLAKE2b of `data` (Uint8Array) with hashlib.blake2b's parameters: `digestLength` 1..64 bytes,
 * `key` (0..64 bytes), `salt` and `personal` (0..16 bytes each, zero-padded). A Uint8Array.
 */
export function blake2b(data, { digestLength = 64, key = new Uint8Array(0), salt = new Uint8Array(0), personal = new Uint8Array(0) } = {}) {
  if (!Number.isInteger(digestLength) || digestLength < 1 || digestLength > 64) throw new RangeError('digestLength must be in 1..64');
  if (key.length > 64 || salt.length > 16 || personal.length > 16) throw new RangeError('key <= 64, salt and personal <= 16 bytes');
  return nobleBlake2b(data, {
    dkLen: digestLength, key: key.length ? key : undefined, salt: padded(salt, 16), personalization: padded(personal, 16),
  });
}

// ------------------------------------------------------------------ count-mean sketches

const PERSON_VALUE = utf8('deniable:value');
const PERSON_ROW = utf8('deniable:row');
const PERSON_SFP = utf8('deniable:sfp');

/** The first 8 bytes as a little-endian 64-bit BigInt. */
function littleEndian64(bytes) {
  return new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true);
}

function parity64(x) {
  // popcount(x) mod 2 of a 64-bit BigInt, by folding (the same steps for every x)
  let y = x ^ (x >> 32n);
  y ^= y >> 16n;
  y ^= y >> 8n;
  y ^= y >> 4n;
  y ^= y >> 2n;
  y ^= y >> 1n;
  return Number(y & 1n);
}

function integerField(params, name, field, min, max) {
  const raw = params[name];
  const v = typeof raw === 'bigint' ? raw : (typeof raw === 'number' && Number.isSafeInteger(raw) ? BigInt(raw) : null);
  if (v === null || v < BigInt(min) || v > BigInt(max)) {
    throw new DeniableError(`${field}.${name}`, `must be an integer in ${min}..${max}; got ${stringify(raw)}`);
  }
  return v;
}

/**
 * A count-mean sketch (cms or hcms) from its mechanism config:
 * {name, epsilon, seed, bucket(row, keyBytes), report(pool, keyBytes)} (optional last argument:
 * a Map memo of fingerprints, for a batch).
 */
export function sketchFromConfig(config, field = 'sketch') {
  if (config === null || typeof config !== 'object' || config.format !== 'deniable.mechanism' || config.version !== 1) {
    throw new DeniableError(field, 'must be a deniable.mechanism version 1 config');
  }
  const name = config.mechanism;
  if (name !== 'cms' && name !== 'hcms') throw new DeniableError(`${field}.mechanism`, `must be cms or hcms; got ${stringify(name)}`);
  const params = config.params;
  if (params === null || typeof params !== 'object') throw new DeniableError(`${field}.params`, 'must be an object');
  const where = `${field}.params`;
  if (params.hash !== 'blake2b-gf2') throw new DeniableError(`${where}.hash`, `must be "blake2b-gf2"; got ${stringify(params.hash)}`);
  const rows = Number(integerField(params, 'rows', where, 1, 65536));
  const width = Number(integerField(params, 'width', where, 8, 1 << 20));
  if (width & (width - 1)) throw new DeniableError(`${where}.width`, `must be a power of two; got ${width}`);
  const bits = Math.log2(width);
  if (typeof params.seed !== 'string' || !/^[0-9a-f]{64}$/.test(params.seed)) {
    throw new DeniableError(`${where}.seed`, 'must be 64 lowercase hex digits');
  }
  const seed = Uint8Array.from(params.seed.match(/../g), (h) => parseInt(h, 16));
  const masks = new Map(); // row -> its `bits` 64-bit masks, computed when first needed
  const rowMasks = (j) => {
    if (!masks.has(j)) {
      masks.set(j, Array.from({ length: bits }, (_, t) => {
        const input = new Uint8Array([j & 0xff, (j >>> 8) & 0xff, (j >>> 16) & 0xff, (j >>> 24) & 0xff, t]);
        return littleEndian64(blake2b(input, { digestLength: 8, key: seed, personal: PERSON_ROW }));
      }));
    }
    return masks.get(j);
  };
  const fingerprint = (key) => littleEndian64(blake2b(key, { digestLength: 8, key: seed, personal: PERSON_VALUE }));
  // memo: a batch (privatizeMany) hashes each distinct key once, as the Python library does
  const bucket = (j, key, memo = null) => {
    let phi;
    if (memo === null) phi = fingerprint(key);
    else {
      const id = key.join(',');
      phi = memo.get(id);
      if (phi === undefined) memo.set(id, (phi = fingerprint(key)));
    }
    let b = 0;
    rowMasks(j).forEach((mask, t) => { b |= parity64(mask & phi) << t; });
    return b;
  };
  if (name === 'cms') {
    const t = Number(integerField(params, 'flip_numerator', where, 1, 2 ** 31 - 1));
    const epsilon = 2 * Math.log((2 ** 32 - t) / t);
    return {
      name, epsilon, seed, bucket, words: width + 2,
      report(pool, key, memo = null) {
        const j = uniformBelowSmall(pool, rows);
        const b = bucket(j, key, memo);
        const packed = new Uint8Array(width / 8);
        for (let i = 0; i < width; i++) {
          const bit = (pool.u32() < t ? 1 : 0) ^ (i === b ? 1 : 0);
          packed[i >> 3] |= bit << (i & 7);
        }
        return { row: j, bits: Array.from(packed, (x) => x.toString(16).padStart(2, '0')).join('') };
      },
    };
  }
  const a = integerField(params, 'keep_numerator', where, 1, 2n ** 64n - 1n);
  const other = integerField(params, 'other_numerator', where, 1, 2n ** 64n - 1n);
  if (!(other < a) || a + other > 2n ** 64n) throw new DeniableError(where, 'hcms needs 0 < other_numerator < keep_numerator, sum <= 2^64');
  const epsilon = Math.log(Number(a) / Number(other));
  return {
    name, epsilon, seed, bucket, words: 8,
    report(pool, key, memo = null) {
      const j = uniformBelowSmall(pool, rows);
      const b = bucket(j, key, memo);
      const l = uniformBelowSmall(pool, width);
      const keep = uniformBelow(pool, a + other) < a;
      return { row: j, index: l, bit: parity64(BigInt(l & b)) ^ (keep ? 0 : 1) };
    },
  };
}

// ------------------------------------------------------------------ items

/**
 * The alphabet of a discovery config (a string), or null without one; DeniableError naming
 * `alphabet` unless it is distinct single-byte ASCII characters for text under PEM (as Python).
 */
function checkedAlphabet(config) {
  if (!Object.prototype.hasOwnProperty.call(config, 'alphabet')) return null;
  const { alphabet, kind, method } = config;
  if (kind !== 'text') throw new DeniableError('alphabet', `applies to kind 'text' only; got kind ${stringify(kind)}`);
  if (typeof alphabet !== 'string' || alphabet === '') {
    throw new DeniableError('alphabet', `must be a non-empty string of distinct ASCII characters; got ${stringify(alphabet)}`);
  }
  const chars = [...alphabet];
  const wide = chars.find((c) => c.codePointAt(0) > 127);
  if (wide !== undefined) throw new DeniableError('alphabet', `must hold single-byte ASCII characters (code points 0..127); got ${stringify(wide)}`);
  const twice = chars.find((c, i) => chars.indexOf(c) < i);
  if (twice !== undefined) throw new DeniableError('alphabet', `must hold distinct characters; ${stringify(twice)} occurs more than once`);
  if (method !== 'pem') {
    throw new DeniableError('alphabet', "applies to method 'pem' only (SFP's one-byte fragments range over every byte)");
  }
  return alphabet;
}

/** The first character (code point) of `text` outside `alphabet`, or null (also without an alphabet). */
export function foreignCharacter(text, alphabet) {
  if (alphabet === null) return null;
  for (const c of String(text)) if (!alphabet.includes(c)) return c;
  return null;
}

/** The item of a text value: L = maxLength + 1 bytes (see the header); `field` names it in errors. */
function textItem(value, maxLength, alphabet, field) {
  if (typeof value !== 'string') throw new DeniableError(field, `must be a string; got ${stringify(value)}`);
  const foreign = foreignCharacter(value, alphabet);
  if (foreign !== null) {
    throw new DeniableError(field, `has the character ${stringify(foreign)}, not in the alphabet; got ${stringify(value.slice(0, 60))}`);
  }
  const data = utf8(value);
  const item = new Uint8Array(maxLength + 1).fill(END);
  if (data.length <= maxLength) {
    item.set(data);
    return item;
  }
  let end = maxLength;
  while (end > 0 && (data[end] & 0xc0) === 0x80) end--; // data[end] continues the character before it
  item.set(data.subarray(0, end));
  item[end] = CUT;
  return item;
}

const OFFSET = 1n << 63n;

/** The item of an integer in -2^63..2^63-1 (a safe integer Number or a BigInt): 8 bytes big-endian of value + 2^63. */
function integerItem(value, field) {
  const v = typeof value === 'bigint' ? value : (Number.isSafeInteger(value) ? BigInt(value) : null);
  if (v === null || v < -OFFSET || v >= OFFSET) throw new DeniableError(field, `must be an integer in -2^63..2^63-1; got ${stringify(value)}`);
  const u = v + OFFSET;
  return Uint8Array.from({ length: 8 }, (_, k) => Number((u >> BigInt(8 * (7 - k))) & 0xffn));
}

// ------------------------------------------------------------------ the device

/**
 * A discovery device from its configuration (an object, or JSON text).
 *
 * options.randomBytes: (n) => Uint8Array of n uniform bytes (default: crypto.getRandomValues).
 * Returns {method, kind, maxLength, alphabet (a string or null), epsilon, config, foreign(text),
 * item(value), privatize(value), privatizeMany(values)}.
 */
export function fromDiscoveryConfig(cfg, { randomBytes = secureRandomBytes } = {}) {
  const config = typeof cfg === 'string' ? parseJSON(cfg) : cfg;
  if (config === null || typeof config !== 'object' || Array.isArray(config)) throw new DeniableError('config', 'must be a JSON object');
  if (config.format !== DISCOVERY_FORMAT) {
    throw new DeniableError('format', `must be ${JSON.stringify(DISCOVERY_FORMAT)}; got ${stringify(config.format)}`);
  }
  if (config.version !== DISCOVERY_VERSION) {
    throw new DeniableError('version', `must be ${DISCOVERY_VERSION} (this reader's version); got ${stringify(config.version)}`);
  }
  const method = config.method;
  if (!Object.prototype.hasOwnProperty.call(SHARE, method)) throw new DeniableError('method', `must be pem or sfp; got ${stringify(method)}`);
  const kind = config.kind;
  if (kind !== 'text' && kind !== 'integer') throw new DeniableError('kind', `must be text or integer; got ${stringify(kind)}`);
  const maxLength = config.max_length;
  if (!Number.isInteger(maxLength) || maxLength < 1 || maxLength > 254) {
    throw new DeniableError('max_length', `must be an integer in 1..254; got ${stringify(maxLength)}`);
  }
  const sketch = sketchFromConfig(config.sketch, 'sketch');
  const epsilon = sketch.epsilon * SHARE[method];
  if (typeof config.epsilon !== 'number' || Math.abs(config.epsilon - epsilon) > 1e-9 * Math.max(1, epsilon)) {
    throw new DeniableError('epsilon', `says ${stringify(config.epsilon)} but the parameters give ${epsilon}`);
  }
  const alphabet = checkedAlphabet(config);
  const L = kind === 'text' ? maxLength + 1 : 8;
  const item = (value, field = 'value') => (kind === 'text' ? textItem(value, maxLength, alphabet, field) : integerItem(value, field));
  const sample = (pool, it, memo = null) => {
    const level = 1 + uniformBelowSmall(pool, L);
    if (method === 'pem') {
      const key = new Uint8Array(level + 1);
      key[0] = level;
      key.set(it.subarray(0, level), 1);
      return { level, sketch: sketch.report(pool, key, memo) };
    }
    let piece = memo === null ? undefined : memo.get(`piece:${it.join(',')}`);
    if (piece === undefined) {
      piece = blake2b(it, { digestLength: 1, key: sketch.seed, personal: PERSON_SFP })[0];
      if (memo !== null) memo.set(`piece:${it.join(',')}`, piece);
    }
    const fragment = new Uint8Array([level, piece, it[level - 1]]);
    return { level, sketch: sketch.report(pool, fragment, memo), word: sketch.report(pool, it, memo) };
  };
  const chunkFor = (count) => Math.min(MAX_GETRANDOM, 4 * (SHARE[method] * sketch.words + 4) * count + 64);
  return Object.freeze({
    method,
    kind,
    maxLength,
    alphabet,
    epsilon: config.epsilon,
    config,
    /** The first character of `text` outside the alphabet (which privatize refuses), or null. */
    foreign: (text) => foreignCharacter(text, alphabet),
    /** The fixed-length item a value is hashed as (for tests and display). */
    item: (value) => item(value),
    /** One report for `value` (a string, or an integer for kind "integer"), as JSON-ready data. */
    privatize(value) {
      return sample(new WordPool(randomBytes, chunkFor(1)), item(value));
    },
    /** Reports for many values (one random pool for the batch: faster, same distribution); errors name values[i]. */
    privatizeMany(values) {
      const items = Array.from(values, (v, i) => item(v, `values[${i}]`));
      const pool = new WordPool(randomBytes, chunkFor(items.length));
      const memo = new Map();
      return items.map((it) => sample(pool, it, memo));
    },
  });
}

/** Whether a value fits without being cut: its UTF-8 length in bytes (what max_length counts). */
export function utf8Length(text) {
  return utf8(String(text)).length;
}
