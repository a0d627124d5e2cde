// fingerprint.js -- what a configuration is called on the wire: Python's `m.fingerprint`.
//
// A leaf module (SHA-256 from the vendored @noble/hashes, canonical JSON from json.js), shared by
// the kept states of client_state.js and the embeddable client (embed.js), which writes a
// configuration's fingerprint beside every report it puts into a host platform's field.
//
// digest(value, digits): SHA-256 of the value's canonical JSON (Python's
// json.dumps(value, sort_keys=True, separators=(",", ":"))), in lowercase hex, cut to `digits`.
import { sha256 } from './vendor/noble-hashes/sha2.js';
import { canonicalJSON } from './json.js';

/** Bytes as lowercase hex. */
export const toHex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');

/** SHA-256 of a value's canonical JSON (Python's json.dumps with sorted keys), in hex, cut to `digits`. */
export const digest = (value, digits) => toHex(sha256(new TextEncoder().encode(canonicalJSON(value)))).slice(0, digits);

/**
 * A configuration's fingerprint, as Python's `m.fingerprint`: 16 hex digits. The configuration
 * is in wire version 1 (json.js's configFromWire) and was read with parseJSON where it has floats.
 */
export const fingerprint = (config) => digest(config, 16);
