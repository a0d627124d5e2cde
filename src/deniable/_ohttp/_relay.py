"""The Oblivious HTTP relay (RFC 9458 Section 5): sees who posts, never what; forwards to the gateway.

``deniable relay --gateway URL`` runs it, as a party other than the
collector. Its routes:

* ``POST /``: an encapsulated request (``message/ohttp-req``), forwarded to
  the gateway (``<gateway>/.well-known/ohttp-gateway``) with the relay token,
  and the gateway's encapsulated response returned as it came. The relay
  forwards the body and its content type only: no header of the client, no
  ``Forwarded``/``X-Forwarded-For``, no address. Each client address may
  post ``rate_limit`` requests (a token bucket, as the collector's own, which
  cannot see addresses behind the relay); behind a TLS proxy of its own, the
  address is the one the proxy's ``X-Forwarded-For`` names when the proxy is
  one of ``trusted_proxies`` (as for the collector). With a shuffler
  (:mod:`deniable._ohttp._shuffler`) the request is instead kept in its
  durable buffer and answered ``202`` with a queued receipt once on disk,
  ``{"status": "queued", "stored": false, "threshold": N, "max_delay": S}``
  (:class:`deniable.server._answers.Queued`: not the collector's receipt, which
  the relay does not have); the shuffler forwards it later, in a shuffled
  batch (and the collector's answer to it never comes back to the device).
* ``GET /ohttp-keys``: the gateway's key configuration, fetched through the
  relay (so the collector sees no device fetch it) and cached a minute, so
  every client of the relay encapsulates for the same keys.

CORS: both routes answer any origin (no credentials), so the survey page of
the collector's origin can post to the relay. The relay logs no request
bodies (it cannot read them either), no headers and no client address: its
access log is the collector's redacted one (:mod:`deniable.server._runner`).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import AsyncIterator, Iterable

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from deniable._ohttp._messages import GATEWAY_PATH, KEYS_TYPE, REQUEST_TYPE
from deniable._ohttp._shuffler import BATCH_TYPE, Shuffler, encode_batch
from deniable.server._answers import Queued
from deniable.server._policy import RateLimit
from deniable.server._security import RateLimiter, client_address, parse_networks, retry_after

__all__ = ["Relay", "relay_app", "KEYS_PATH", "DEFAULT_RATE_LIMIT", "KEYS_TTL"]

KEYS_PATH = "/ohttp-keys"
DEFAULT_RATE_LIMIT = RateLimit(responses=30, seconds=600.0)
"""Requests per client address, as the collector's default for single responses."""
KEYS_TTL = 60.0
"""Seconds the relay keeps the gateway's key configuration."""
MAX_REQUEST_BYTES = 1024 * 1024
_log = logging.getLogger("uvicorn.error")
_CORS = {"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Methods": "GET, POST",
         "Access-Control-Allow-Headers": "Content-Type", "Access-Control-Max-Age": "600"}


def _refusal(status: int, field: str, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"detail": {"field": field, "message": message}}, status, headers={**_CORS, **(headers or {})})


class Relay:
    """The relay's state: the gateway, its token, the limiter, the cached keys, an optional shuffler."""

    def __init__(
        self, gateway: str, token: str | None, *, rate_limit: RateLimit | None = DEFAULT_RATE_LIMIT,
        timeout: float = 30.0, transport: httpx.AsyncBaseTransport | None = None,
        trusted_proxies: Iterable[str] = (), shuffler: Shuffler | None = None,
    ) -> None:
        self.shuffler = shuffler
        self.gateway = gateway.rstrip("/")
        self.trusted_proxies = parse_networks(trusted_proxies)
        self.rate_limit = rate_limit
        self.limiter = RateLimiter()
        headers = {} if token is None else {"Authorization": f"Bearer {token}"}
        self.http = httpx.AsyncClient(timeout=timeout, headers=headers, transport=transport)
        self._keys: tuple[float, bytes] | None = None
        self._lock = threading.Lock()

    async def keys(self) -> bytes:
        """The gateway's ``application/ohttp-keys`` document (cached :data:`KEYS_TTL` seconds)."""
        now = time.monotonic()
        with self._lock:
            cached = self._keys
        if cached is not None and now - cached[0] < KEYS_TTL:
            return cached[1]
        answer = await self.http.get(self.gateway + GATEWAY_PATH)
        answer.raise_for_status()
        with self._lock:
            self._keys = (now, answer.content)
        return answer.content

    async def forward_batch(self, items: list[bytes]) -> bool:
        """POST one shuffled batch to the gateway; whether it took it (logs its size and outcome, nothing else)."""
        try:
            answer = await self.http.post(self.gateway + GATEWAY_PATH + "/batch", content=encode_batch(items),
                                          headers={"Content-Type": BATCH_TYPE})
        except httpx.HTTPError as exc:
            _log.warning("batch of %d not forwarded: %s", len(items), type(exc).__name__)
            return False
        if answer.status_code != 200:
            _log.warning("batch of %d refused by the gateway: %d", len(items), answer.status_code)
            return False
        _log.info("batch of %d forwarded", len(items))
        return True

    async def forward(self, body: bytes) -> httpx.Response:
        """POST one encapsulated request to the gateway, as it came."""
        return await self.http.post(self.gateway + GATEWAY_PATH, content=body,
                                    headers={"Content-Type": REQUEST_TYPE})


def relay_app(relay: Relay) -> Starlette:
    """The relay's ASGI app (see the module docstring)."""

    async def keys(_request: Request) -> Response:
        try:
            document = await relay.keys()
        except httpx.HTTPError:
            return _refusal(502, "gateway", "the gateway's key configuration could not be fetched")
        return Response(document, media_type=KEYS_TYPE, headers={**_CORS, "Cache-Control": "public, max-age=60"})

    async def post(request: Request) -> Response:
        if relay.rate_limit is not None:
            client = client_address(request.client.host if request.client else None,
                                    request.headers.getlist("x-forwarded-for"), relay.trusted_proxies)
            wait = relay.limiter.take("relay", client, relay.rate_limit)
            if wait:
                return _refusal(429, "rate_limit", "too many requests from your address; try again in "
                                f"{retry_after(wait)} s", {"Retry-After": retry_after(wait)})
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind != REQUEST_TYPE:
            return _refusal(415, "Content-Type", f"must be {REQUEST_TYPE}; got {kind or 'none'!r}")
        body = await request.body()
        if not body or len(body) > MAX_REQUEST_BYTES:
            return _refusal(413 if body else 400, "body", f"must be 1..{MAX_REQUEST_BYTES} bytes; got {len(body)}")
        if relay.shuffler is not None:
            await relay.shuffler.put(body)
            receipt = Queued(status="queued", stored=False, threshold=relay.shuffler.threshold,
                             max_delay=relay.shuffler.max_delay)
            return JSONResponse(receipt.model_dump(), 202, headers={**_CORS, "Cache-Control": "no-store"})
        try:
            answer = await relay.forward(body)
        except httpx.HTTPError:
            return _refusal(502, "gateway", "the gateway could not be reached")
        headers = {**_CORS, "Cache-Control": "no-store"}
        return Response(answer.content, answer.status_code, headers=headers,
                        media_type=answer.headers.get("content-type"))

    async def preflight(_request: Request) -> Response:
        return Response(status_code=204, headers=_CORS)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        if relay.shuffler is not None:
            relay.shuffler.start(relay.forward_batch)
        try:
            yield
        finally:
            if relay.shuffler is not None:
                await relay.shuffler.stop()
            await relay.http.aclose()

    return Starlette(
        routes=[Route("/", post, methods=["POST"]), Route("/", preflight, methods=["OPTIONS"]),
                Route(KEYS_PATH, keys, methods=["GET"]), Route(KEYS_PATH, preflight, methods=["OPTIONS"])],
        lifespan=lifespan,
    )
