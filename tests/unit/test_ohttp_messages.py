"""Oblivious HTTP messages: RFC 9458 Appendix A byte for byte, Binary HTTP (RFC 9292), refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("pyhpke", reason="Oblivious HTTP needs the 'ohttp' extra")

from deniable._ohttp._bhttp import (  # noqa: E402
    BHTTPError,
    BinaryRequest,
    BinaryResponse,
    decode_request,
    decode_response,
    encode_request,
    encode_response,
    encode_varint,
)
from deniable._ohttp._messages import (  # noqa: E402
    AEAD_AES128GCM,
    AEAD_AES256GCM,
    AEAD_CHACHA20,
    KDF_SHA256,
    KeyConfig,
    OHTTPError,
    UnknownKey,
    decapsulate_request,
    decapsulate_response,
    decode_key_configs,
    encapsulate_request,
    encapsulate_response,
    encode_key_configs,
    public_key,
)

VECTOR = {k: v if k == "about" else bytes.fromhex(v) for k, v in
          json.loads((Path(__file__).parents[1] / "vectors" / "ohttp_rfc9458.json").read_text()).items()}


# ------------------------------------------------------------------ RFC 9458 Appendix A
def test_gateway_decapsulates_the_rfc_request_byte_for_byte() -> None:
    config = KeyConfig.decode(VECTOR["key_config"])
    assert config.encode() == VECTOR["key_config"]
    assert (config.key_id, config.suites) == (1, ((KDF_SHA256, AEAD_AES128GCM), (KDF_SHA256, AEAD_CHACHA20)))
    assert public_key(VECTOR["gateway_secret_key"]) == config.public_key
    request, context = decapsulate_request(VECTOR["encapsulated_request"], {1: VECTOR["gateway_secret_key"]})
    assert request == VECTOR["request"]
    assert context.enc == VECTOR["client_ephemeral_public_key"]
    assert context.secret == VECTOR["exported_secret"]
    assert decode_request(request) == BinaryRequest("GET", "/", "https", "example.com")


def test_gateway_encapsulates_the_rfc_response_byte_for_byte() -> None:
    _, context = decapsulate_request(VECTOR["encapsulated_request"], {1: VECTOR["gateway_secret_key"]})
    response = encode_response(BinaryResponse(200))
    assert response == VECTOR["response"]
    sealed = encapsulate_response(context, response, response_nonce=VECTOR["response_nonce"])
    assert sealed == VECTOR["encapsulated_response"]
    assert context.enc + VECTOR["response_nonce"] == VECTOR["salt"]


def test_client_encapsulates_the_rfc_request_and_opens_the_response() -> None:
    config = KeyConfig.decode(VECTOR["key_config"])
    sealed, context = encapsulate_request(config, encode_request(BinaryRequest("GET", "/", "https", "example.com")),
                                          ephemeral_secret=VECTOR["client_ephemeral_secret_key"])
    assert sealed == VECTOR["encapsulated_request"]
    assert VECTOR["info"] == b"message/bhttp request\x00" + sealed[:7]
    assert decode_response(decapsulate_response(context, VECTOR["encapsulated_response"])) == BinaryResponse(200)


# ------------------------------------------------------------------ round trips and refusals
@pytest.mark.parametrize("aead", [AEAD_AES128GCM, AEAD_AES256GCM, AEAD_CHACHA20])
def test_every_suite_round_trips(aead: int) -> None:
    secret = bytes(range(32))
    config = KeyConfig(7, public_key(secret), ((KDF_SHA256, aead),))
    message = encode_request(BinaryRequest("POST", "/surveys/s/responses", "https", "collector",
                                           ((b"content-type", b"application/json"),), b'{"a": 1}'))
    sealed, client = encapsulate_request(config, message)
    assert sealed[:7] == bytes([7, 0, 0x20, 0, 1, 0, aead])
    opened, server = decapsulate_request(sealed, {7: secret})
    assert opened == message and server == client
    answer = encode_response(BinaryResponse(201, ((b"content-type", b"application/json"),), b"{}"))
    assert decapsulate_response(client, encapsulate_response(server, answer)) == answer


def test_a_fresh_ephemeral_key_per_request() -> None:
    config = KeyConfig.decode(VECTOR["key_config"])
    a, _ = encapsulate_request(config, VECTOR["request"])
    b, _ = encapsulate_request(config, VECTOR["request"])
    assert a[7:39] != b[7:39]


def test_refusals_name_the_problem() -> None:
    sealed = VECTOR["encapsulated_request"]
    keys = {1: VECTOR["gateway_secret_key"]}
    with pytest.raises(UnknownKey, match="key 2"):
        decapsulate_request(bytes([2]) + sealed[1:], {2 - 1: keys[1]})
    with pytest.raises(UnknownKey, match="not supported"):
        decapsulate_request(sealed[:6] + b"\x09" + sealed[7:], keys)
    tampered = sealed[:-1] + bytes([sealed[-1] ^ 1])
    with pytest.raises(OHTTPError, match="could not be decrypted"):
        decapsulate_request(tampered, keys)
    with pytest.raises(OHTTPError, match="at least"):
        decapsulate_request(sealed[:20], keys)
    _, context = decapsulate_request(sealed, keys)
    bad = VECTOR["encapsulated_response"][:-1] + b"\x00"
    with pytest.raises(OHTTPError, match="could not be decrypted"):
        decapsulate_response(context, bad)


def test_key_configuration_document() -> None:
    a = KeyConfig.decode(VECTOR["key_config"])
    b = KeyConfig(9, public_key(bytes(32)))
    document = encode_key_configs([a, b])
    assert document[:2] == len(VECTOR["key_config"]).to_bytes(2, "big")
    assert decode_key_configs(document) == [a, b]
    p256 = bytes([3, 0, 0x10]) + bytes(65) + b"\x00\x04\x00\x01\x00\x01"  # another KEM: skipped
    assert decode_key_configs(len(p256).to_bytes(2, "big") + p256 + document) == [a, b]
    with pytest.raises(OHTTPError):
        decode_key_configs(document[:-1])
    with pytest.raises(UnknownKey, match="no suite"):
        KeyConfig(1, bytes(32), ((KDF_SHA256, 0x0009),)).choose()


# ------------------------------------------------------------------ Binary HTTP
@pytest.mark.parametrize(("value", "encoded"), [
    (0, "00"), (37, "25"), (63, "3f"), (64, "4040"), (200, "40c8"), (15293, "7bbd"),
    (494878333, "9d7f3e7d"), (151288809941952652, "c2197c5eff14e88c"),  # RFC 9000 Appendix A.1's examples
])
def test_varints(value: int, encoded: str) -> None:
    assert encode_varint(value).hex() == encoded


def test_binary_http_round_trips_and_truncation() -> None:
    request = BinaryRequest("POST", "/a?b=c", "https", "host:1",
                            ((b"content-type", b"application/json"), (b"accept", b"*/*")), b"x" * 300)
    raw = encode_request(request)
    assert decode_request(raw) == request and decode_request(raw + bytes(10)) == request  # zero padding
    assert request.header("Content-Type") == "application/json" and request.header("x") is None
    assert encode_request(BinaryRequest("GET", "/")).hex() == "000347455405" + b"https".hex() + "00012f"
    response = BinaryResponse(404, ((b"content-type", b"text/plain"),), b"gone", ((103, ((b"link", b"</a>"),)),))
    assert decode_response(encode_response(response)) == response
    assert decode_response(bytes.fromhex("0140c8") + bytes(5)) == BinaryResponse(200)


_GET = "00" "03474554" "056874747073" "00" "012f"  # GET https:///, the sections left out


@pytest.mark.parametrize(("raw", "message"), [
    ("01", "expected 0"), ("02", "expected 0"), ("0003474554", "ends inside"), ("000347455405", "longer than"),
    (_GET + "0101", "longer than"), (_GET + "00000001", "padding"), (_GET + "04" + "0141" + "0142", "lower-case"),
])
def test_malformed_requests_are_refused(raw: str, message: str) -> None:
    with pytest.raises(BHTTPError, match=message):
        decode_request(bytes.fromhex(raw))


def test_malformed_responses_are_refused() -> None:
    with pytest.raises(BHTTPError, match="expected 1"):
        decode_response(b"\x00")
    with pytest.raises(BHTTPError, match="not in 100..599"):
        decode_response(bytes.fromhex("014258"))
    with pytest.raises(BHTTPError, match="outside"):
        encode_varint(-1)
