"""The service's protections, one place each: tokens, the body limit, security headers, the rate limit.

Tokens
    The admin token (``DENIABLE_ADMIN_TOKEN``) opens the admin API, posts
    batches to any survey, and reads the results of surveys whose results are
    for administrators only (``results: admin``). A relay token
    (``DENIABLE_RELAY_TOKEN``) only posts batches and encapsulated requests (to the
    Oblivious HTTP gateway): give it to a trusted relay
    that collects many respondents' reports and forwards them, instead of the
    admin token. A request presents a token as ``Authorization: Bearer
    <token>``, or, so a browser can open an admin-only results page, as HTTP
    Basic authentication with the token as the password (any user name): the
    browser asks for it once and sends it again with the page's own requests.
    Tokens are compared in constant time. Over anything but loopback, serve
    through HTTPS (a reverse proxy): both forms send the token in clear.

Body limit
    Request bodies above ``max_body_bytes`` (:data:`MAX_BODY_BYTES` by
    default) are refused with 413, declared or streamed (:class:`BodyLimit`).

Security headers
    Every response carries ``X-Content-Type-Options: nosniff``,
    ``Referrer-Policy: no-referrer``, ``X-Frame-Options: DENY`` and the
    Content-Security-Policy :data:`PAGE_CSP`: scripts, styles and requests
    only from this server, no inline script or style, no framing
    (``frame-ancestors 'none'``), no form posts, no plugins. The one
    exception: the page of a survey that lists ``embed`` origins may be
    framed by them (:mod:`deniable.server._embed`). The respondent
    and results pages and the interactive API documentation at ``/docs`` all
    run under it (:mod:`deniable.server._routes.pages` serves Swagger UI's
    files from the ``swagger-ui-bundle-v2`` package, never from a CDN; Swagger
    UI sets its styles through the DOM, which the policy allows).

Rate limit
    Single responses to a survey open to everyone are limited per client
    address. The client is the address of the socket peer. Behind a reverse
    proxy every peer is the proxy, so the server can be told which proxies
    it trusts (``trusted_proxies``, addresses or networks): when the peer is
    one of them, the client is the right-most address of ``X-Forwarded-For``
    that is not a trusted proxy (each proxy appends the peer it saw, so
    entries left of the last untrusted one are whatever the client chose to
    send). Without trusted proxies the header is ignored: anyone can write it.
    IPv6 clients are counted by their /64 network, since one host commonly
    holds a whole /64 and could otherwise take a fresh address for every
    request.

    The limit is a token bucket per (survey, client): ``responses`` tokens at
    most, refilled at ``responses / seconds`` per second. Each request takes a
    token before it is stored, and gets it back if it stored nothing (refused
    as invalid, or the retry of a stored response), so the limit counts the
    responses stored from the address, also under concurrent requests.

    The buckets live in this process's memory, deliberately: a refused
    request costs no database access (a flood of refusals does not queue on
    SQLite's single writer), and a restart forgets them. With several server
    processes behind one address each keeps its own buckets, so a client
    whose requests are spread over ``W`` workers can get up to ``W`` times
    the limit; run one worker, or route each client to the same worker, where
    the limit must hold exactly. At most :data:`MAX_BUCKETS` buckets are kept;
    the least recently used is forgotten first. A response that came through
    an Oblivious HTTP relay (:mod:`deniable.server._routes.gateway`) has no
    address here: the relay, which posts with the relay token, limits it.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import ipaddress
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from typing import Annotated

from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from deniable.server._embed import page_csp
from deniable.server._policy import RateLimit
from deniable.server._refusals import error_response
from deniable.server._surveys import Survey

__all__ = [
    "ADMIN_TOKEN_ENV", "RELAY_TOKEN_ENV", "OHTTP_SCOPE_KEY", "SHUFFLED_SCOPE_KEY", "require_shuffled",
    "BASIC_REALM", "presented_token", "is_token", "bearer",
    "require_admin", "ADMIN", "require_relay", "results_access",
    "MAX_BODY_BYTES", "BodyLimit",
    "PAGE_CSP", "page_csp", "SecurityHeaders",
    "MAX_BUCKETS", "Network", "RateLimiter", "client_address", "parse_networks", "retry_after", "take_token",
]

# ----------------------------------------------------------------------- tokens
ADMIN_TOKEN_ENV = "DENIABLE_ADMIN_TOKEN"
RELAY_TOKEN_ENV = "DENIABLE_RELAY_TOKEN"
OHTTP_SCOPE_KEY = "deniable.ohttp"
"""Set in the ASGI scope of a request served from inside an encapsulated one (the Oblivious HTTP gateway)."""
SHUFFLED_SCOPE_KEY = "deniable.shuffled"
"""Set in the ASGI scope of a request served from a shuffler's batch (the gateway's batch route)."""

BASIC_REALM = "deniable administrators"
"""The HTTP Basic realm of admin-only results (one for the whole server: one admin token)."""


def presented_token(request: Request) -> str | None:
    """The token of ``Authorization: Bearer <token>`` or of Basic (the password); None if neither."""
    scheme, _, value = request.headers.get("authorization", "").partition(" ")
    scheme = scheme.lower()
    if scheme == "bearer":
        return value.strip()
    if scheme == "basic":
        try:
            decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return None
        return decoded.partition(":")[2]
    return None


def is_token(given: str | None, *tokens: str | None) -> bool:
    """Whether ``given`` equals one of the configured ``tokens`` (constant time; None never matches)."""
    if given is None:
        return False
    found = False
    for token in tokens:
        if token is not None:
            found |= hmac.compare_digest(given.encode(), token.encode())
    return found


bearer = HTTPBearer(auto_error=False, description="the admin token given at start-up")
"""The ``Authorization: Bearer`` scheme of the OpenAPI document."""


def require_admin(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
) -> None:
    """401 unless ``Authorization: Bearer <token>`` matches the admin token (constant time)."""
    token: str | None = request.app.state.admin_token
    challenge = {"WWW-Authenticate": "Bearer"}
    if token is None:
        raise HTTPException(
            401, {"field": "Authorization", "message": "the admin API is disabled: start the "
                  f"server with an admin token (or set {ADMIN_TOKEN_ENV})"}, challenge,
        )
    given = "" if credentials is None else credentials.credentials
    if not hmac.compare_digest(given.encode(), token.encode()):
        raise HTTPException(
            401, {"field": "Authorization", "message": "needs 'Bearer <admin token>' with the "
                  "server's admin token"}, challenge,
        )


ADMIN = Depends(require_admin)
"""The dependency of every admin route."""


def require_shuffled(request: Request, survey: Survey) -> None:
    """403 unless a response to a survey collected through a shuffler came in a shuffled batch.

    Such a survey's results state the shuffled guarantee for every response:
    so none may arrive another way.
    """
    if survey.policy.transport.shuffler and not request.scope.get(SHUFFLED_SCOPE_KEY):
        raise HTTPException(403, {"field": "transport", "message": f"survey {survey.id!r} takes responses "
                                  f"through its shuffling relay only ({survey.policy.transport.relay})"})


def require_relay(request: Request, survey: Survey, relay_token: str | None) -> None:
    """401 unless a batch to ``survey`` may come from this request.

    A survey open to everyone takes batches from trusted relays only: the
    admin token or the relay token. On an invite-only survey every response
    needs its own unused invite instead, checked by the storage.
    """
    if not survey.invite_only and not is_token(presented_token(request), request.app.state.admin_token, relay_token):
        raise HTTPException(
            401, {"field": "Authorization", "message": f"survey {survey.id!r} is open to everyone: "
                  "its batches come from trusted relays only and need 'Bearer <token>' with the "
                  "admin or relay token (a respondent posts to /responses)"},
            {"WWW-Authenticate": "Bearer"},
        )


def results_access(request: Request, survey: Survey) -> None:
    """401 unless the survey's results are public or the request presents the admin token.

    The challenge offers Basic too, so a browser asks for the token (as the password) once.
    """
    if survey.policy.results == "public":
        return
    token: str | None = request.app.state.admin_token
    if not is_token(presented_token(request), token):
        raise HTTPException(
            401, {"field": "Authorization", "message": f"the results of survey {survey.id!r} are for "
                  "its administrators (results: admin): send the admin token as 'Bearer <token>' "
                  "(or as the password of HTTP Basic authentication)"},
            {"WWW-Authenticate": f'Basic realm="{BASIC_REALM}", charset="UTF-8"'},
        )


# ------------------------------------------------------------------- body limit
MAX_BODY_BYTES = 16 * 1024 * 1024
"""The default largest request body (a batch of 10,000 responses fits)."""


class BodyLimit:
    """Refuse request bodies above ``max_bytes`` with 413 (declared or streamed)."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        message = f"request body exceeds the limit of {self.max_bytes} bytes"
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = -1
                if declared > self.max_bytes:
                    await error_response(413, "body", message)(scope, receive, send)
                    return
        received = 0

        async def limited() -> Message:
            nonlocal received
            msg = await receive()
            if msg["type"] == "http.request":
                received += len(msg.get("body", b""))
                if received > self.max_bytes:
                    raise HTTPException(413, {"field": "body", "message": message})
            return msg

        await self.app(scope, limited, send)


# ------------------------------------------------------------- security headers
PAGE_CSP = page_csp()
"""The pages' policy, framed by no one (a survey's page with ``embed``: :func:`page_csp` of its origins;
posted through a relay: its ``connect-src`` also allows the relay's origin)."""


_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"content-security-policy", PAGE_CSP.encode()),
]


class SecurityHeaders:
    """Add the security headers to every HTTP response (a pure ASGI middleware: no body buffering).

    A response that sets its own ``Content-Security-Policy`` (the page of a
    survey with ``embed``) keeps it and gets no ``X-Frame-Options``: its
    ``frame-ancestors`` says who may frame it.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = message.get("headers", [])
                # a page that sets its own policy (a survey's page with embed origins or a relay) keeps it,
                # and one that others may frame gets no X-Frame-Options
                csp = next((v for k, v in headers if k.lower() == b"content-security-policy"), None)
                framed = csp is not None and b"frame-ancestors 'none'" not in csp
                added = [h for h in _HEADERS if not any(k.lower() == h[0] for k, _ in headers)
                         and not (framed and h[0] == b"x-frame-options")]
                message["headers"] = [*headers, *added]
            await send(message)

        await self.app(scope, receive, send_with_headers)


# ------------------------------------------------------------------- rate limit
MAX_BUCKETS = 200_000
"""Buckets kept in memory (about 200 bytes each)."""

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_networks(values: Iterable[str]) -> tuple[Network, ...]:
    """Addresses or networks (``10.0.0.1``, ``10.0.0.0/8``, ``::1``) as networks.

    Raises ValueError naming the value that is neither.
    """
    out = []
    for value in values:
        try:
            out.append(ipaddress.ip_network(value.strip(), strict=False))
        except ValueError:
            raise ValueError(
                f"trusted proxy {value!r} is not an IP address or network (e.g. 10.0.0.1 or 10.0.0.0/8)"
            ) from None
    return tuple(out)


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        ip = ipaddress.ip_address(text.strip().strip("[]"))
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def _trusted(text: str, networks: Sequence[Network]) -> bool:
    ip = _ip(text)
    return ip is not None and any(ip in n for n in networks)


def _key(text: str) -> str:
    """The bucket of an address: itself (IPv4) or its /64 network (IPv6); other text as is."""
    ip = _ip(text)
    if ip is None:
        return text[:100]
    if isinstance(ip, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


def client_address(
    peer: str | None, forwarded_for: Sequence[str], trusted_proxies: Sequence[Network]
) -> str:
    """The client's bucket key (see the module docstring).

    ``peer`` is the socket peer's address, ``forwarded_for`` the values of
    every ``X-Forwarded-For`` header of the request, in order.
    """
    host = peer or "unknown"
    if not trusted_proxies or not _trusted(host, trusted_proxies):
        return _key(host)
    hops = [h.strip() for value in forwarded_for for h in value.split(",") if h.strip()]
    for hop in reversed(hops):
        if not _trusted(hop, trusted_proxies):
            return _key(hop)
    return _key(hops[0] if hops else host)


class RateLimiter:
    """Token buckets by key, in memory (thread-safe).

    ``take(key, limit)`` returns 0 if a token was taken, or else the seconds
    until one is available.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic, max_buckets: int = MAX_BUCKETS) -> None:
        self._clock = clock
        self._max = max_buckets
        self._buckets: OrderedDict[tuple[str, str], tuple[float, float]] = OrderedDict()
        self._lock = threading.Lock()

    def take(self, scope: str, key: str, limit: RateLimit) -> float:
        """Take one token of ``key``'s bucket within ``scope`` (a survey id); 0 or the wait in seconds."""
        now = self._clock()
        name = (scope, key)
        with self._lock:
            tokens, then = self._buckets.pop(name, (float(limit.responses), now))
            tokens = min(float(limit.responses), tokens + (now - then) * limit.per_second)
            if tokens >= 1.0:
                tokens -= 1.0
                wait = 0.0
            else:
                wait = (1.0 - tokens) / limit.per_second
            self._buckets[name] = (tokens, now)
            while len(self._buckets) > self._max:
                self._buckets.popitem(last=False)
        return wait

    def give_back(self, scope: str, key: str, limit: RateLimit) -> None:
        """Return the token of an attempt that stored nothing (refused, or a retry of a stored response)."""
        name = (scope, key)
        with self._lock:
            if name in self._buckets:
                tokens, then = self._buckets[name]
                self._buckets[name] = (min(float(limit.responses), tokens + 1.0), then)

    def __len__(self) -> int:
        return len(self._buckets)


def retry_after(wait: float) -> str:
    """``Retry-After`` in whole seconds (rounded up, at least 1)."""
    return str(max(1, math.ceil(wait)))


def take_token(
    limiter: RateLimiter, request: Request, survey: Survey, trusted_proxies: Sequence[Network]
) -> str | None:
    """Take a token of the request's client for a single response to ``survey``.

    Returns the client's bucket key (give the token back with
    :meth:`RateLimiter.give_back` if the request stores nothing), or None
    where the survey has no limit (invite-only, or ``rate_limit: off``).
    Raises 429 with ``Retry-After`` if the bucket is empty; checked before
    the body is read and decoded, so a refused flood costs no parsing.
    """
    limit = None if survey.invite_only else survey.policy.rate_limit
    if limit is None or request.scope.get(OHTTP_SCOPE_KEY):  # came through a relay, which limits per address
        return None
    client = client_address(
        request.client.host if request.client else None, request.headers.getlist("x-forwarded-for"),
        trusted_proxies,
    )
    wait = limiter.take(survey.id, client, limit)
    if wait:
        raise HTTPException(
            429, {"field": "rate_limit", "message": f"too many responses from your address: survey "
                  f"{survey.id!r} takes at most {limit.responses} per {limit.seconds:g} seconds from "
                  f"one address; try again in {retry_after(wait)} s"},
            {"Retry-After": retry_after(wait)},
        )
    return client
