"""The Oblivious HTTP gateway and relay over real loopback HTTP: a device's responses arrive without its address."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

pytest.importorskip("pyhpke", reason="Oblivious HTTP needs the 'ohttp' extra")

from deniable._ohttp._bhttp import BinaryRequest, decode_response, encode_request  # noqa: E402
from deniable._ohttp._keys import KeyRing  # noqa: E402
from deniable._ohttp._messages import (  # noqa: E402
    GATEWAY_PATH,
    KEY_PROBLEM,
    KEYS_TYPE,
    REQUEST_TYPE,
    RESPONSE_TYPE,
    decapsulate_response,
    decode_key_configs,
    encapsulate_request,
)
from deniable._ohttp._relay import Relay  # noqa: E402
from deniable._ohttp._serve import BackgroundRelay  # noqa: E402
from deniable.cli._server import HONOR_CODE_SURVEY  # noqa: E402
from deniable.client import Client, ClientError  # noqa: E402
from deniable.server import BackgroundServer  # noqa: E402
from deniable.server._policy import RateLimit  # noqa: E402

TOKEN = "relay-token-5f2a"
DEVICE = "127.0.0.2"  # the device's own loopback address: the relay sees it, the collector must not


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def collector(clock: Clock) -> Iterator[BackgroundServer]:
    keys = KeyRing(rotate_every=100, overlap=10, clock=clock)
    with BackgroundServer([], relay_token=TOKEN, ohttp_keys=keys) as server:
        yield server


def _survey(relay: str, **extra: Any) -> dict[str, Any]:
    survey = copy.deepcopy(HONOR_CODE_SURVEY)
    survey.update(transport={"kind": "ohttp", "relay": relay}, **extra)
    return survey


def _device(url: str) -> Client:
    return Client(url, relay_transport=httpx.HTTPTransport(local_address=DEVICE))


def test_keys_are_served_as_ohttp_keys(collector: BackgroundServer) -> None:
    answer = httpx.get(collector.url + GATEWAY_PATH)
    assert answer.status_code == 200 and answer.headers["content-type"] == KEYS_TYPE
    (config,) = decode_key_configs(answer.content)
    assert config.kem_id == 0x20 and (1, 1) in config.suites


def test_responses_through_the_relay(collector: BackgroundServer) -> None:
    with BackgroundRelay(Relay(collector.url, TOKEN)) as relay:
        collector.storage.add_survey(_survey(relay.url))
        survey = httpx.get(collector.url + "/surveys/honor-code").json()
        assert survey["transport"] == {"kind": "ohttp", "relay": relay.url, "shuffler": False}
        with _device(collector.url) as device:
            receipts = [device.respond("honor-code", {"violated": v}) for v in (True, False, True)]
            assert all(r["status"] == "accepted" for r in receipts)
            with pytest.raises(ClientError) as refused:  # the collector's refusal comes back, encapsulated
                device._request("POST", "/surveys/honor-code/responses", {"reports": {}},
                                device._via(device.survey("honor-code")))
            assert refused.value.status == 422
            assert device.results("honor-code")["questions"][0]["n"] == 3


def test_the_relay_limits_each_address(collector: BackgroundServer) -> None:
    limit = RateLimit(responses=2, seconds=600)
    with BackgroundRelay(Relay(collector.url, TOKEN, rate_limit=limit)) as relay:
        collector.storage.add_survey(_survey(relay.url))
        with _device(collector.url) as device:
            device.retries = 0
            for _ in range(2):
                device.respond("honor-code", {"violated": True})
            with pytest.raises(ClientError) as refused:
                device.respond("honor-code", {"violated": True})
            assert refused.value.status == 429 and refused.value.retry_after is not None


def _post(url: str, body: bytes, token: str | None = TOKEN, kind: str = REQUEST_TYPE) -> httpx.Response:
    headers = {"Content-Type": kind, **({"Authorization": f"Bearer {token}"} if token else {})}
    return httpx.post(url + GATEWAY_PATH, content=body, headers=headers)


def test_the_gateway_refuses(collector: BackgroundServer, clock: Clock) -> None:
    (config,) = decode_key_configs(httpx.get(collector.url + GATEWAY_PATH).content)
    sealed, _ = encapsulate_request(config, encode_request(BinaryRequest("GET", "/surveys/x")))
    assert _post(collector.url, sealed, token=None).status_code == 401  # not from the relay
    assert _post(collector.url, sealed, token="wrong").status_code == 401
    assert _post(collector.url, sealed, kind="application/json").status_code == 415
    garbled = _post(collector.url, sealed[:-1] + bytes([sealed[-1] ^ 1]))
    assert garbled.status_code == 400 and garbled.json()["detail"]["field"] == "body"
    unknown = _post(collector.url, bytes([(config.key_id + 1) % 256]) + sealed[1:])
    assert unknown.status_code == 400 and unknown.headers["content-type"] == "application/problem+json"
    assert unknown.json()["type"] == KEY_PROBLEM
    not_bhttp, context = encapsulate_request(config, b"\x07junk")
    assert _post(collector.url, not_bhttp).status_code == 400
    nested, context = encapsulate_request(config, encode_request(BinaryRequest("POST", GATEWAY_PATH)))
    answer = _post(collector.url, nested)
    assert answer.status_code == 200 and answer.headers["content-type"] == RESPONSE_TYPE
    assert decode_response(decapsulate_response(context, answer.content)).status == 400


def test_rotation_within_and_past_the_overlap(collector: BackgroundServer, clock: Clock) -> None:
    with BackgroundRelay(Relay(collector.url, TOKEN)) as relay:
        collector.storage.add_survey(_survey(relay.url))
        with _device(collector.url) as device:
            device.respond("honor-code", {"violated": True})  # fetches the key configuration
            transport = device._via(device.survey("honor-code"))._transport
            old = transport.config()
            clock.now += 100  # rotated: the device's key is still accepted for the overlap
            device.respond("honor-code", {"violated": True})
            assert transport.config() == old
            clock.now += 10  # past the overlap: refused with the ohttp-key problem, fetched again, accepted
            relay.relay._keys = None  # the relay's cached copy expires (a minute) too
            device.respond("honor-code", {"violated": True})
            assert transport.config().key_id != old.key_id
            assert device.results("honor-code")["questions"][0]["n"] == 3


def test_the_relay_counts_the_address_its_trusted_proxy_names(collector: BackgroundServer) -> None:
    limit = RateLimit(responses=1, seconds=600)
    relay_state = Relay(collector.url, TOKEN, rate_limit=limit, trusted_proxies=[DEVICE])
    with BackgroundRelay(relay_state) as relay, \
            httpx.Client(transport=httpx.HTTPTransport(local_address=DEVICE)) as proxy:
        def post(forwarded_for: str) -> int:
            return proxy.post(relay.url, content=b"\x00" * 64, headers={
                "Content-Type": REQUEST_TYPE, "X-Forwarded-For": forwarded_for}).status_code

        assert post("198.51.100.1") == 400  # forwarded (the gateway refuses the junk), not limited
        assert post("198.51.100.2") == 400  # another device behind the same proxy
        assert post("198.51.100.1") == 429


@pytest.mark.integration
def test_python_m_deniable_server_is_a_gateway_too(server_process: Any, sqlite_url: str, tmp_path: Any) -> None:
    server = server_process([], sqlite_url, args=("--ohttp-keys", str(tmp_path / "keys.json")))
    (config,) = decode_key_configs(httpx.get(server.url + GATEWAY_PATH).content)
    assert config.public_key.hex() not in (tmp_path / "keys.json").read_text()  # the file keeps the secret
    assert KeyRing(tmp_path / "keys.json").configs() == [config]
