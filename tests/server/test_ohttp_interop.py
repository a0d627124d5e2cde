"""Interoperation with independent implementations, both directions: @hpke/core (HPKE) and bhttp-js (Binary HTTP).

No independent Oblivious HTTP library installs from PyPI or npm for RFC 9458
itself (the PyPI client ``ohttpy`` 0.1a13 speaks only the chunked draft,
``message/ohttp-chunked-req`` posted to a fixed ``/score`` path; ``cohere-tng``
needs a TEE's attestation; npm has no Oblivious HTTP package), so
``tests/js/ohttp_interop.mjs`` takes HPKE and Binary HTTP from those two npm
packages and writes the RFC's few lines of framing itself. It encapsulates a
request that the deniable gateway (over real HTTP) serves and whose response
it opens, and it opens a request of the deniable client and answers it, which
the deniable client opens.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "js"))
from node_env import run_node  # noqa: E402

pytest.importorskip("pyhpke", reason="Oblivious HTTP needs the 'ohttp' extra")

from deniable._ohttp._bhttp import BinaryRequest, decode_response, encode_request  # noqa: E402
from deniable._ohttp._keys import KeyRing  # noqa: E402
from deniable._ohttp._messages import (  # noqa: E402
    GATEWAY_PATH,
    REQUEST_TYPE,
    decapsulate_response,
    decode_key_configs,
    encapsulate_request,
)
from deniable.cli._server import HONOR_CODE_SURVEY  # noqa: E402
from deniable.server import BackgroundServer  # noqa: E402

pytestmark = pytest.mark.integration
SCRIPT = Path(__file__).resolve().parents[1] / "js" / "ohttp_interop.mjs"
ROOT = Path(__file__).resolve().parents[2]
TOKEN = "relay-token-interop"


def test_interop_with_hpke_core_and_bhttp_js() -> None:
    if not (ROOT / "node_modules" / "@hpke" / "core").is_dir() or not (ROOT / "node_modules" / "bhttp-js").is_dir():
        pytest.skip("node_modules lacks @hpke/core or bhttp-js: run npm ci")
    keys = KeyRing()
    with BackgroundServer([HONOR_CODE_SURVEY], relay_token=TOKEN, ohttp_keys=keys) as collector:
        config_doc = httpx.get(collector.url + GATEWAY_PATH).content
        (config,) = decode_key_configs(config_doc)
        body = json.dumps({"idempotency_key": "interop-key-0001", "reports": {"violated": True}})
        ours, our_context = encapsulate_request(config, encode_request(BinaryRequest(
            "POST", "/surveys/honor-code/responses", "https", "collector.example",
            ((b"content-type", b"application/json"),), b'{"from": "python"}')))
        node = run_node(SCRIPT, {"step": "client-and-gateway", "config": config.encode().hex(),
                                 "secret": keys.current().secret.hex(), "request": ours.hex(), "body": body})
        # the independent gateway opened deniable's request, and deniable opens its answer
        assert node["opened"] == {"method": "POST", "url": "https://collector.example/surveys/honor-code/responses",
                                  "type": "application/json", "body": '{"from": "python"}'}
        answer = decode_response(decapsulate_response(our_context, bytes.fromhex(node["response"])))
        assert (answer.status, answer.content, answer.header("content-type")) == (201, b'{"from": "node"}',
                                                                                 "application/json")
        # the independent client's request is served by deniable's gateway; it opens the response
        served = httpx.post(collector.url + GATEWAY_PATH, content=bytes.fromhex(node["request"]),
                            headers={"Content-Type": REQUEST_TYPE, "Authorization": f"Bearer {TOKEN}"})
        assert served.status_code == 200
        opened = run_node(SCRIPT, {"step": "open-response", "context": node["context"],
                                   "response": served.content.hex()})
        assert opened["status"] == 201 and opened["type"] == "application/json"
        assert json.loads(opened["body"])["idempotency_key"] == "interop-key-0001"
        assert collector.storage.count_responses("honor-code") == 1
