// Oblivious HTTP (RFC 9458) in the browser: a request encapsulated for the collector's gateway and
// posted to a relay, which sees the device's address but not the request; the gateway sees the
// request but not the address. The same messages as the Python side (deniable/_ohttp/_messages.py):
//
//   hdr = key_id || kem_id || kdf_id || aead_id;  info = "message/bhttp request" || 0x00 || hdr
//   enc, context = SetupBaseS(pkR, info);  encapsulated request = hdr || enc || context.Seal("", request)
//   secret = context.Export("message/bhttp response", 16);  nonce = the response's first 16 bytes
//   key = HKDF(salt = enc || nonce, secret, "key", 16);  iv = HKDF(salt, secret, "nonce", 12)
//   response = AES-128-GCM-Open(key, iv, "", the rest)
//
// HPKE is @hpke/core's (vendor/hpke/, bundled by `npm run vendor`: DHKEM(X25519, HKDF-SHA256),
// HKDF-SHA256, AES-128-GCM on WebCrypto); HKDF and AES-GCM of the response are WebCrypto's.
// The requests are Binary HTTP (RFC 9292), known-length framing, written and read here.
import { Aes128Gcm, CipherSuite, DhkemX25519HkdfSha256, HkdfSha256 } from './vendor/hpke/hpke.js';

export const REQUEST_TYPE = 'message/ohttp-req';
export const RESPONSE_TYPE = 'message/ohttp-res';
export const KEY_PROBLEM = 'https://iana.org/assignments/http-problem-types#ohttp-key';
const KEM_X25519 = 0x0020;
const KDF_SHA256 = 0x0001;
const AEAD_AES128GCM = 0x0001;
const text = new TextEncoder();

function varint(value) {
  if (value < 64) return [value];
  if (value < 16384) return [0x40 | (value >> 8), value & 0xff];
  if (value < 2 ** 30) return [0x80 | (value >>> 24), (value >> 16) & 0xff, (value >> 8) & 0xff, value & 0xff];
  throw new RangeError(`length ${value} is too large for this client`);
}

function concat(parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
}

function chunk(bytes) {
  return concat([Uint8Array.from(varint(bytes.length)), bytes]);
}

/** A known-length Binary HTTP request (RFC 9292): control data, header fields, content; no trailers. */
export function encodeRequest({ method, scheme = 'https', authority = '', path, headers = [], content = new Uint8Array() }) {
  const fields = concat(headers.map(([name, value]) => concat([chunk(text.encode(name.toLowerCase())), chunk(text.encode(value))])));
  return concat([Uint8Array.of(0), ...[method, scheme, authority, path].map((s) => chunk(text.encode(s))),
    chunk(fields), chunk(content), Uint8Array.of(0)]);
}

class Reader {
  constructor(bytes) { this.bytes = bytes; this.at = 0; }
  done() { return this.bytes.subarray(this.at).every((b) => b === 0); }
  varint() {
    if (this.at >= this.bytes.length) throw new Error('the response ends inside a length');
    const size = 1 << (this.bytes[this.at] >> 6);
    if (this.at + size > this.bytes.length) throw new Error('the response ends inside a length');
    let value = this.bytes[this.at] & 0x3f;
    for (let i = 1; i < size; i++) value = value * 256 + this.bytes[this.at + i];
    this.at += size;
    return value;
  }
  chunk() {
    const n = this.varint();
    if (this.at + n > this.bytes.length) throw new Error('a section is longer than the response');
    const out = this.bytes.subarray(this.at, this.at + n);
    this.at += n;
    return out;
  }
  fields() {
    if (this.done()) return [];
    const section = new Reader(this.chunk());
    const out = [];
    const decoder = new TextDecoder();
    while (section.at < section.bytes.length) out.push([decoder.decode(section.chunk()), decoder.decode(section.chunk())]);
    return out;
  }
}

/** The final status, header fields and content of a known-length Binary HTTP response (trailing sections may be left out). */
export function decodeResponse(bytes) {
  const reader = new Reader(bytes);
  if (reader.varint() !== 1) throw new Error('not a known-length Binary HTTP response');
  let status = reader.varint();
  while (status < 200) { reader.fields(); status = reader.varint(); }
  const headers = reader.fields();
  const content = reader.done() ? new Uint8Array() : reader.chunk();
  return { status, headers, content };
}

/** The key configurations of an application/ohttp-keys document (X25519 ones; others skipped). */
export function decodeKeyConfigs(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = [];
  for (let at = 0; at + 2 <= bytes.length;) {
    const length = view.getUint16(at);
    const config = bytes.subarray(at + 2, at + 2 + length);
    at += 2 + length;
    if (config.length < 37 || (config[1] << 8 | config[2]) !== KEM_X25519) continue;
    const pairs = config.subarray(37);
    const suites = [];
    for (let i = 0; i + 4 <= pairs.length; i += 4) suites.push([pairs[i] << 8 | pairs[i + 1], pairs[i + 2] << 8 | pairs[i + 3]]);
    out.push({ keyId: config[0], publicKey: config.slice(3, 35), suites });
  }
  return out;
}

const suite = new CipherSuite({ kem: new DhkemX25519HkdfSha256(), kdf: new HkdfSha256(), aead: new Aes128Gcm() });

/** ``request`` sealed for the gateway of ``config`` (HKDF-SHA256, AES-128-GCM), and what opens its response. */
export async function encapsulate(config, request) {
  if (!config.suites.some(([kdf, aead]) => kdf === KDF_SHA256 && aead === AEAD_AES128GCM)) {
    throw new Error(`key ${config.keyId} does not offer HKDF-SHA256 with AES-128-GCM`);
  }
  const hdr = Uint8Array.of(config.keyId, 0, KEM_X25519, 0, KDF_SHA256, 0, AEAD_AES128GCM);
  const recipientPublicKey = await suite.kem.deserializePublicKey(config.publicKey);
  const sender = await suite.createSenderContext({ recipientPublicKey, info: concat([text.encode('message/bhttp request'), Uint8Array.of(0), hdr]) });
  const sealed = new Uint8Array(await sender.seal(request));
  const enc = new Uint8Array(sender.enc);
  const secret = new Uint8Array(await sender.export(text.encode('message/bhttp response'), 16));
  return { encapsulated: concat([hdr, enc, sealed]), context: { enc, secret } };
}

async function hkdf(secret, salt, info, bytes) {
  const key = await crypto.subtle.importKey('raw', secret, 'HKDF', false, ['deriveBits']);
  return new Uint8Array(await crypto.subtle.deriveBits({ name: 'HKDF', hash: 'SHA-256', salt, info: text.encode(info) }, key, bytes * 8));
}

/** The response inside an encapsulated response (throws if it was altered). */
export async function decapsulateResponse({ enc, secret }, bytes) {
  const nonce = bytes.subarray(0, 16);
  const salt = concat([enc, nonce]);
  const key = await crypto.subtle.importKey('raw', await hkdf(secret, salt, 'key', 16), 'AES-GCM', false, ['decrypt']);
  const iv = await hkdf(secret, salt, 'nonce', 12);
  return new Uint8Array(await crypto.subtle.decrypt({ name: 'AES-GCM', iv }, key, bytes.subarray(16)));
}

const configs = new Map();

/**
 * The gateway's key configuration as ``relay`` serves it, kept for this page (``refresh``: fetched again);
 * ``send``: the fetch function (the page's, or one an embedding page passes).
 */
export async function relayKey(relay, refresh = false, send = globalThis.fetch) {
  if (!configs.has(relay) || refresh) {
    // fetched again: past the browser's cache too, which may hold the refused key's document
    const answer = await send(new URL('ohttp-keys', relay), { headers: { Accept: 'application/ohttp-keys' }, cache: refresh ? 'reload' : 'default' });
    if (!answer.ok) throw new Error(`the relay's key configuration: ${answer.status}`);
    const [config] = decodeKeyConfigs(new Uint8Array(await answer.arrayBuffer()));
    if (!config) throw new Error('the gateway offers no X25519 key');
    configs.set(relay, config);
  }
  return configs.get(relay);
}

/**
 * ``fetch(url, init)`` through the relay: the request (method, path, headers, body) is encapsulated for the
 * collector's gateway; the answer is the collector's response, opened here (a relay's own answer, such as
 * 429 or a shuffling relay's 202 queued receipt, as it came). The gateway's key is fetched from the relay,
 * and again once if the gateway rotated it. ``send``: the fetch function that reaches the relay.
 */
export async function obliviousFetch(relay, url, init = {}, send = globalThis.fetch) {
  const target = new URL(url, globalThis.location?.href);
  const request = encodeRequest({
    method: init.method ?? 'GET', scheme: target.protocol.slice(0, -1), authority: target.host,
    path: target.pathname + target.search, headers: Object.entries(init.headers ?? {}),
    content: typeof init.body === 'string' ? text.encode(init.body) : new Uint8Array(),
  });
  for (const refresh of [false, true]) {
    const { encapsulated, context } = await encapsulate(await relayKey(relay, refresh, send), request);
    const answer = await send(relay, { method: 'POST', headers: { 'Content-Type': REQUEST_TYPE }, body: encapsulated });
    const kind = (answer.headers.get('content-type') ?? '').split(';')[0];
    if (answer.status === 400 && kind === 'application/problem+json') {
      const problem = await answer.clone().json().catch(() => null);
      if (problem?.type === KEY_PROBLEM && !refresh) continue; // rotated: fetch the key again
    }
    if (answer.status !== 200 || kind !== RESPONSE_TYPE) return answer;
    const inner = decodeResponse(await decapsulateResponse(context, new Uint8Array(await answer.arrayBuffer())));
    return new Response(inner.content, { status: inner.status, headers: inner.headers });
  }
  throw new Error('the gateway refused the key it advertises');
}

/** A shuffling relay's queued receipt (202 {status: 'queued', stored: false, threshold, max_delay}), else null. */
export function queuedReceipt(response, payload) {
  return response.status === 202 && payload?.status === 'queued' ? payload : null;
}

/** The survey page's words for a queued receipt: held by the relay, recorded by the collector only later. */
export function queuedText(receipt) {
  const threshold = Number(receipt.threshold);
  const batch = Number.isInteger(threshold) && threshold > 1 ? ` with at least ${threshold - 1} others` : '';
  return '<strong>Thank you!</strong> Your randomized answers are queued at the relay, sealed: it passes them on to '
    + `the survey's server later, in a shuffled batch${batch}, which records them then.`;
}
