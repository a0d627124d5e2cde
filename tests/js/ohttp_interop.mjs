// Independent Oblivious HTTP parts for tests/server/test_ohttp_interop.py: HPKE from @hpke/core and
// Binary HTTP from bhttp-js (npm packages of their own, not deniable's code); the RFC 9458 framing
// (header, info, exporter label, response keys) written here from the RFC's text.
//
// Reads JSON on stdin, writes JSON on stdout:
//   {step: "client-and-gateway", config, secret, request}: encapsulates its own request for the
//     gateway's key (`config`: an application/ohttp-keys config, hex) and opens the deniable client's
//     `request` with the gateway's `secret`, answering it; returns both, and its response context.
//   {step: "open-response", context, response}: opens the deniable gateway's response to its request.
import { Aes128Gcm, CipherSuite, DhkemX25519HkdfSha256, HkdfSha256 } from '@hpke/core';
import { BHttpDecoder, BHttpEncoder } from 'bhttp-js';

const hex = (bytes) => Buffer.from(bytes).toString('hex');
const unhex = (text) => new Uint8Array(Buffer.from(text, 'hex'));
const utf8 = new TextEncoder();
const suite = new CipherSuite({ kem: new DhkemX25519HkdfSha256(), kdf: new HkdfSha256(), aead: new Aes128Gcm() });
const label = (text) => utf8.encode(text);
const join = (...parts) => Uint8Array.from(parts.flatMap((p) => [...p]));

async function responseKeys(enc, secret, nonce) {
  const ikm = await crypto.subtle.importKey('raw', secret, 'HKDF', false, ['deriveBits']);
  const derive = async (info, n) => new Uint8Array(await crypto.subtle.deriveBits(
    { name: 'HKDF', hash: 'SHA-256', salt: join(enc, nonce), info: label(info) }, ikm, n * 8));
  const key = await crypto.subtle.importKey('raw', await derive('key', 16), 'AES-GCM', false, ['encrypt', 'decrypt']);
  return { key, iv: await derive('nonce', 12) };
}

let input = '';
for await (const chunk of process.stdin) input += chunk;
const plan = JSON.parse(input);
const out = {};

if (plan.step === 'client-and-gateway') {
  const config = unhex(plan.config);
  const keyId = config[0];
  const hdr = Uint8Array.of(keyId, 0x00, 0x20, 0x00, 0x01, 0x00, 0x01);
  // as a client: a POST encoded by bhttp-js, sealed for the gateway's key
  const request = new Request('https://collector.example/surveys/honor-code/responses', {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: plan.body,
  });
  const sender = await suite.createSenderContext({
    recipientPublicKey: await suite.kem.deserializePublicKey(config.slice(3, 35)),
    info: join(label('message/bhttp request'), [0], hdr),
  });
  const sealed = new Uint8Array(await sender.seal(await new BHttpEncoder().encodeRequest(request)));
  out.request = hex(join(hdr, new Uint8Array(sender.enc), sealed));
  out.context = { enc: hex(sender.enc), secret: hex(await sender.export(label('message/bhttp response'), 16)) };
  // as a gateway: open deniable's request, answer it
  const theirs = unhex(plan.request);
  const recipient = await suite.createRecipientContext({
    recipientKey: await suite.kem.importKey('raw', unhex(plan.secret), false),
    enc: theirs.slice(7, 39), info: join(label('message/bhttp request'), [0], theirs.slice(0, 7)),
  });
  const opened = new BHttpDecoder().decodeRequest(await recipient.open(theirs.slice(39)));
  out.opened = { method: opened.method, url: opened.url, type: opened.headers.get('content-type'), body: await opened.text() };
  const answer = await new BHttpEncoder().encodeResponse(new Response('{"from": "node"}', { status: 201, headers: { 'content-type': 'application/json' } }));
  const secret = new Uint8Array(await recipient.export(label('message/bhttp response'), 16));
  const nonce = crypto.getRandomValues(new Uint8Array(16));
  const { key, iv } = await responseKeys(theirs.slice(7, 39), secret, nonce);
  out.response = hex(join(nonce, new Uint8Array(await crypto.subtle.encrypt({ name: 'AES-GCM', iv }, key, answer))));
} else if (plan.step === 'open-response') {
  const response = unhex(plan.response);
  const { key, iv } = await responseKeys(unhex(plan.context.enc), unhex(plan.context.secret), response.slice(0, 16));
  const opened = new BHttpDecoder().decodeResponse(await crypto.subtle.decrypt({ name: 'AES-GCM', iv }, key, response.slice(16)));
  out.status = opened.status;
  out.type = opened.headers.get('content-type');
  out.body = await opened.text();
}
process.stdout.write(JSON.stringify(out));
