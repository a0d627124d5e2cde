"""A device's Oblivious HTTP: an httpx transport that encapsulates each request for the gateway, posted to a relay.

``httpx.Client(base_url=<collector>, transport=ObliviousTransport(relay))``
sends each request as Binary HTTP sealed for the gateway's key
(:mod:`deniable._ohttp._messages`) to the relay, and opens the response. The
key configuration is fetched from the relay (``<relay>/ohttp-keys``), not
from the collector, and fetched again once when the gateway answers that it
no longer holds the key (a rotation). Of the request's headers only
``content-type``, ``accept`` and ``authorization`` travel (inside the
encapsulation); nothing identifying the device (no ``user-agent``).
"""

from __future__ import annotations

import threading

import httpx

from deniable._ohttp._bhttp import BinaryRequest, decode_response, encode_request
from deniable._ohttp._messages import (
    KEY_PROBLEM,
    KEYS_TYPE,
    REQUEST_TYPE,
    RESPONSE_TYPE,
    KeyConfig,
    OHTTPError,
    decapsulate_response,
    decode_key_configs,
    encapsulate_request,
)

__all__ = ["ObliviousTransport"]

_KEPT = (b"content-type", b"accept", b"authorization")


class ObliviousTransport(httpx.BaseTransport):
    """Encapsulate each request for the gateway and post it to ``relay`` (see the module docstring)."""

    def __init__(self, relay: str, *, timeout: float = 30.0, transport: httpx.BaseTransport | None = None) -> None:
        self.relay = relay if relay.endswith("/") else relay + "/"
        self._http = httpx.Client(timeout=timeout, transport=transport)
        self._config: KeyConfig | None = None
        self._lock = threading.Lock()

    def config(self, refresh: bool = False) -> KeyConfig:
        """The gateway's key configuration, as the relay serves it (kept until the gateway refuses it)."""
        with self._lock:
            if self._config is None or refresh:
                answer = self._http.get(self.relay + "ohttp-keys")
                answer.raise_for_status()
                if answer.headers.get("content-type", "").split(";")[0] != KEYS_TYPE:
                    raise OHTTPError(f"the relay's key configuration is not {KEYS_TYPE}")
                configs = decode_key_configs(answer.content)
                if not configs:
                    raise OHTTPError("the gateway offers no key this client can use (X25519)")
                self._config = configs[0]
            return self._config

    def _send(self, request: httpx.Request, message: bytes, refresh: bool) -> httpx.Response | None:
        encapsulated, context = encapsulate_request(self.config(refresh), message)
        answer = self._http.post(self.relay, content=encapsulated, headers={"Content-Type": REQUEST_TYPE})
        kind = answer.headers.get("content-type", "").split(";")[0]
        if answer.status_code == 400 and kind == "application/problem+json" and KEY_PROBLEM in answer.text:
            return None  # the gateway rotated its key: fetch it again
        if answer.status_code != 200 or kind != RESPONSE_TYPE:  # the relay's own answer (429, 502)
            return httpx.Response(answer.status_code, headers=answer.headers, content=answer.content, request=request)
        inner = decode_response(decapsulate_response(context, answer.content))
        return httpx.Response(inner.status, headers=list(inner.headers), content=inner.content, request=request)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        target = url.raw_path.decode("ascii")
        message = encode_request(BinaryRequest(
            request.method, target, url.scheme, url.netloc.decode("ascii"),
            tuple((k.lower(), v) for k, v in request.headers.raw if k.lower() in _KEPT), request.read(),
        ))
        response = self._send(request, message, refresh=False)
        if response is None:
            response = self._send(request, message, refresh=True)
        if response is None:
            raise OHTTPError("the gateway refused the key it advertises")
        return response

    def close(self) -> None:
        self._http.close()
