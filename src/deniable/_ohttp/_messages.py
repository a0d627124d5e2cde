"""Oblivious HTTP messages (RFC 9458, Sections 3 and 4): key configurations, encapsulated requests and responses.

HPKE (RFC 9180) is ``pyhpke``'s; HKDF and the AEADs are ``cryptography``'s.
The KEM is DHKEM(X25519, HKDF-SHA256) and the KDF HKDF-SHA256; the AEAD is
AES-128-GCM (preferred), AES-256-GCM or ChaCha20-Poly1305, as the key
configuration offers.

A request, for key ``key_id`` and the suite ``(kem, kdf, aead)``::

    hdr = key_id (1 byte) || kem_id || kdf_id || aead_id (2 bytes each)
    info = "message/bhttp request" || 0x00 || hdr
    enc, context = SetupBaseS(pkR, info)
    encapsulated request = hdr || enc || context.Seal("", request)

and its response (``Nk``, ``Nn``: the AEAD's key and nonce sizes)::

    secret = context.Export("message/bhttp response", max(Nn, Nk))
    response_nonce = random(max(Nn, Nk))
    prk = HKDF-Extract(salt = enc || response_nonce, secret)
    key = HKDF-Expand(prk, "key", Nk);  nonce = HKDF-Expand(prk, "nonce", Nn)
    encapsulated response = response_nonce || AEAD-Seal(key, nonce, "", response)

A key configuration is ``key_id || kem_id || public key || length ||
(kdf_id || aead_id)...``; the ``application/ohttp-keys`` document is a
sequence of them, each prefixed by its 2-byte length (RFC 9458 Section 3.2).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import struct
from collections.abc import Sequence
from dataclasses import dataclass

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDFExpand
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from pyhpke import AEADId, CipherSuite, KDFId, KEMId, KEMKey, KEMKeyPair
from pyhpke import ContextInterface as HPKEContext

from deniable.errors import DeniableError

__all__ = [
    "KEM_X25519", "KDF_SHA256", "AEAD_AES128GCM", "AEAD_AES256GCM", "AEAD_CHACHA20", "SUITES",
    "REQUEST_TYPE", "RESPONSE_TYPE", "KEYS_TYPE", "KEY_PROBLEM", "GATEWAY_PATH", "OHTTPError", "UnknownKey",
    "KeyConfig",
    "encode_key_configs", "decode_key_configs", "ResponseContext", "public_key", "encapsulate_request",
    "decapsulate_request", "encapsulate_response", "decapsulate_response",
]

KEM_X25519 = 0x0020
KDF_SHA256 = 0x0001
AEAD_AES128GCM, AEAD_AES256GCM, AEAD_CHACHA20 = 0x0001, 0x0002, 0x0003
SUITES: tuple[tuple[int, int], ...] = (
    (KDF_SHA256, AEAD_AES128GCM), (KDF_SHA256, AEAD_AES256GCM), (KDF_SHA256, AEAD_CHACHA20),
)
"""The ``(kdf, aead)`` pairs this implementation speaks, preferred first."""

REQUEST_TYPE = "message/ohttp-req"
RESPONSE_TYPE = "message/ohttp-res"
KEYS_TYPE = "application/ohttp-keys"
GATEWAY_PATH = "/.well-known/ohttp-gateway"
"""Where a collector serves its key configuration (GET) and takes encapsulated requests (POST): RFC 9540's URI."""
KEY_PROBLEM = "https://iana.org/assignments/http-problem-types#ohttp-key"
"""The problem type of a request for a key the gateway does not hold (RFC 9458 Section 5.3)."""
_REQUEST_LABEL = b"message/bhttp request"
_RESPONSE_LABEL = b"message/bhttp response"
_NPK = 32  # X25519 public keys and encapsulated keys
_AEAD: dict[int, tuple[type[AESGCM] | type[ChaCha20Poly1305], int, int]] = {  # id: (class, Nk, Nn)
    AEAD_AES128GCM: (AESGCM, 16, 12), AEAD_AES256GCM: (AESGCM, 32, 12), AEAD_CHACHA20: (ChaCha20Poly1305, 32, 12),
}


class OHTTPError(DeniableError, ValueError):
    """A message that cannot be decapsulated (malformed, or failed authentication)."""


class UnknownKey(OHTTPError):
    """A request for a key identifier or suite the gateway does not hold (the client should fetch the keys again)."""


@dataclass(frozen=True)
class KeyConfig:
    """One key configuration: its identifier, X25519 public key and ``(kdf, aead)`` pairs."""

    key_id: int
    public_key: bytes
    suites: tuple[tuple[int, int], ...] = ((KDF_SHA256, AEAD_AES128GCM), (KDF_SHA256, AEAD_CHACHA20))
    kem_id: int = KEM_X25519

    def encode(self) -> bytes:
        """The configuration's bytes (RFC 9458 Section 3.1)."""
        pairs = b"".join(struct.pack(">HH", kdf, aead) for kdf, aead in self.suites)
        return struct.pack(">BH", self.key_id, self.kem_id) + self.public_key + struct.pack(">H", len(pairs)) + pairs

    @classmethod
    def decode(cls, data: bytes) -> KeyConfig:
        """The configuration ``data`` encodes (:class:`OHTTPError` if malformed or not X25519)."""
        if len(data) < 3:
            raise OHTTPError("a key configuration is at least 3 bytes")
        key_id, kem_id = struct.unpack(">BH", data[:3])
        if kem_id != KEM_X25519:
            raise UnknownKey(f"KEM {kem_id:#06x} is not supported (only DHKEM(X25519, HKDF-SHA256), 0x0020)")
        if len(data) < 3 + _NPK + 2:
            raise OHTTPError("the key configuration ends inside its public key")
        public_key = data[3:3 + _NPK]
        (length,) = struct.unpack(">H", data[3 + _NPK:5 + _NPK])
        pairs = data[5 + _NPK:]
        if length != len(pairs) or length == 0 or length % 4:
            raise OHTTPError(f"the algorithms' length {length} does not match the {len(pairs)} bytes that follow")
        suites = tuple(struct.unpack(">HH", pairs[i:i + 4]) for i in range(0, length, 4))
        return cls(key_id, public_key, suites, kem_id)

    def choose(self) -> tuple[int, int]:
        """The first ``(kdf, aead)`` of :data:`SUITES` this configuration offers."""
        for suite in SUITES:
            if suite in self.suites:
                return suite
        raise UnknownKey(f"key {self.key_id} offers no suite this client speaks ({self.suites})")


def encode_key_configs(configs: Sequence[KeyConfig]) -> bytes:
    """The ``application/ohttp-keys`` document: each configuration prefixed by its 2-byte length."""
    return b"".join(struct.pack(">H", len(raw)) + raw for raw in (c.encode() for c in configs))


def decode_key_configs(data: bytes) -> list[KeyConfig]:
    """The configurations of an ``application/ohttp-keys`` document; those of unknown KEMs are skipped."""
    out, at = [], 0
    while at < len(data):
        if at + 2 > len(data):
            raise OHTTPError("the key configurations end inside a length")
        (length,) = struct.unpack(">H", data[at:at + 2])
        raw = data[at + 2:at + 2 + length]
        if len(raw) != length:
            raise OHTTPError("a key configuration is longer than the document")
        at += 2 + length
        try:
            out.append(KeyConfig.decode(raw))
        except UnknownKey:
            continue
    return out


def _suite(kdf: int, aead: int) -> CipherSuite:
    try:
        return CipherSuite.new(KEMId(KEM_X25519), KDFId(kdf), AEADId(aead))
    except ValueError:
        raise UnknownKey(f"suite KDF {kdf:#06x}, AEAD {aead:#06x} is not supported") from None


def _header(key_id: int, kdf: int, aead: int) -> bytes:
    return struct.pack(">BHHH", key_id, KEM_X25519, kdf, aead)


@dataclass(frozen=True)
class ResponseContext:
    """What seals or opens the response to one request: the request's ``enc``, the AEAD, the exported secret."""

    enc: bytes
    aead: int
    secret: bytes


def _response_context(context: HPKEContext, enc: bytes, aead: int) -> ResponseContext:
    _, nk, nn = _AEAD[aead]
    return ResponseContext(enc, aead, context.export(_RESPONSE_LABEL, max(nk, nn)))


def encapsulate_request(
    config: KeyConfig, request: bytes, *, ephemeral_secret: bytes | None = None
) -> tuple[bytes, ResponseContext]:
    """``request`` sealed for the gateway of ``config``, and the context that opens its response.

    ``ephemeral_secret`` (an X25519 secret key) is for test vectors only; by
    default each request draws a fresh one from the OS CSPRNG.
    """
    kdf, aead = config.choose()
    hdr = _header(config.key_id, kdf, aead)
    ephemeral = None
    if ephemeral_secret is not None:
        secret = X25519PrivateKey.from_private_bytes(ephemeral_secret)
        ephemeral = KEMKeyPair(KEMKey.from_pyca_cryptography_key(secret),
                               KEMKey.from_pyca_cryptography_key(secret.public_key()))
    public = KEMKey.from_pyca_cryptography_key(X25519PublicKey.from_public_bytes(config.public_key))
    enc, context = _suite(kdf, aead).create_sender_context(public, _REQUEST_LABEL + b"\x00" + hdr, eks=ephemeral)
    return hdr + enc + context.seal(request), _response_context(context, enc, aead)


def public_key(secret: bytes) -> bytes:
    """The X25519 public key of ``secret`` (32 bytes each)."""
    return X25519PrivateKey.from_private_bytes(secret).public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


def decapsulate_request(
    encapsulated: bytes, secrets: dict[int, bytes]
) -> tuple[bytes, ResponseContext]:
    """The request inside ``encapsulated``, and the context to seal its response with.

    ``secrets`` maps the key identifiers the gateway accepts to their X25519
    secret keys. Raises :class:`UnknownKey` for a key or suite it does not
    hold, :class:`OHTTPError` for a malformed or unauthentic message.
    """
    if len(encapsulated) < 7 + _NPK:
        raise OHTTPError(f"an encapsulated request is at least {7 + _NPK} bytes; got {len(encapsulated)}")
    key_id, kem, kdf, aead = struct.unpack(">BHHH", encapsulated[:7])
    if kem != KEM_X25519 or (kdf, aead) not in SUITES:
        raise UnknownKey(f"suite KEM {kem:#06x}, KDF {kdf:#06x}, AEAD {aead:#06x} is not supported")
    secret = secrets.get(key_id)
    if secret is None:
        raise UnknownKey(f"key {key_id} is not (or no longer) held by this gateway")
    enc, ct = encapsulated[7:7 + _NPK], encapsulated[7 + _NPK:]
    private = KEMKey.from_pyca_cryptography_key(X25519PrivateKey.from_private_bytes(secret))
    try:
        context = _suite(kdf, aead).create_recipient_context(enc, private, _REQUEST_LABEL + b"\x00" + encapsulated[:7])
        request = context.open(ct)
    except UnknownKey:
        raise
    except Exception:  # noqa: BLE001 - pyhpke raises its own errors and cryptography's; one answer for all
        raise OHTTPError("the request could not be decrypted (wrong key, or altered in transit)") from None
    return request, _response_context(context, enc, aead)


def _response_aead(rc: ResponseContext, response_nonce: bytes) -> tuple[AESGCM | ChaCha20Poly1305, bytes]:
    cls, nk, nn = _AEAD[rc.aead]
    prk = hmac.new(rc.enc + response_nonce, rc.secret, hashlib.sha256).digest()  # HKDF-Extract(salt, IKM)
    key = HKDFExpand(hashes.SHA256(), nk, b"key").derive(prk)
    nonce = HKDFExpand(hashes.SHA256(), nn, b"nonce").derive(prk)
    return cls(key), nonce


def encapsulate_response(rc: ResponseContext, response: bytes, *, response_nonce: bytes | None = None) -> bytes:
    """``response`` sealed for the client of the request ``rc`` came from.

    ``response_nonce`` is for test vectors only; by default it is drawn from the OS CSPRNG.
    """
    _, nk, nn = _AEAD[rc.aead]
    nonce_bytes = os.urandom(max(nk, nn)) if response_nonce is None else response_nonce
    aead, nonce = _response_aead(rc, nonce_bytes)
    return nonce_bytes + aead.encrypt(nonce, response, None)


def decapsulate_response(rc: ResponseContext, encapsulated: bytes) -> bytes:
    """The response inside ``encapsulated`` (:class:`OHTTPError` if it is malformed or unauthentic)."""
    _, nk, nn = _AEAD[rc.aead]
    size = max(nk, nn)
    if len(encapsulated) < size + 16:
        raise OHTTPError(f"an encapsulated response is at least {size + 16} bytes; got {len(encapsulated)}")
    aead, nonce = _response_aead(rc, encapsulated[:size])
    try:
        return aead.decrypt(nonce, encapsulated[size:], None)
    except Exception:  # noqa: BLE001 - cryptography's InvalidTag
        raise OHTTPError("the response could not be decrypted (altered in transit)") from None
