"""Embedding a survey in other sites, and refusing what other sites' pages send: CORS, framing, JSON only.

A survey is served to its own pages only, unless its definition lists the
sites that may embed it::

    embed:
      origins:
        - https://example.qualtrics.com
        - https://survey.example.org:8443

Each origin is ``https://host`` with an optional ``:port``: no path (a lone
trailing ``/`` is dropped), no query, no user name, no wildcard (list every
origin; there is no ``*`` form). ``http://`` is taken only for ``localhost``
and loopback addresses, for development. A host is an ASCII DNS name (a
name in another script in its punycode form, ``xn--...``) or an IP address;
scheme and host are lowercased and a default port (443, or 80 for
``http``) is dropped, as browsers write the ``Origin`` header. A bad origin
is a :class:`~deniable.server._errors.SurveyError` naming it
(``embed.origins[2]``).

For a survey with ``embed`` (:class:`CrossOrigin`, :func:`page_csp`):

* ``GET /surveys/{id}`` and ``POST /surveys/{id}/responses`` answer CORS
  for the listed origins only: a preflight (``OPTIONS`` with
  ``Access-Control-Request-Method``) from a listed origin, for the route's
  method, asking for no header but ``Content-Type``, is answered 204 with
  ``Access-Control-Allow-Origin`` echoing that origin,
  ``Access-Control-Allow-Methods`` (the one method),
  ``Access-Control-Allow-Headers: Content-Type`` and
  ``Access-Control-Max-Age``; any other preflight is refused (403, no CORS
  header). The requests themselves get ``Access-Control-Allow-Origin`` (and
  ``Access-Control-Expose-Headers: Retry-After``) when their ``Origin`` is
  listed. Never ``*``, never ``Access-Control-Allow-Credentials``: a survey
  needs no cookie. Every answer of these routes carries ``Vary: Origin``
  (a cache must not give one origin's answer to another).
* the survey's page ``/s/{id}`` may be framed by the listed origins: its
  Content-Security-Policy has ``frame-ancestors`` with them, and it has no
  ``X-Frame-Options`` (which cannot list origins). Every other page keeps
  ``frame-ancestors 'none'`` and ``X-Frame-Options: DENY``.

For every survey, embedded or not, the responses routes
(``/responses`` and ``/responses/batch``) refuse what a page of another
site can send without the server's consent (:func:`require_json`,
:func:`refuse_cross_site`):

* a body that is not ``Content-Type: application/json`` (a ``charset``
  parameter may say ``utf-8``, nothing else) is refused with 415. A
  browser sends ``text/plain``, form and multipart bodies cross-origin
  without asking first (a "simple request"), but must ask the server
  (a preflight) before sending ``application/json`` to another origin, and
  only the listed origins are told yes;
* a request a browser marks as sent by another site is refused with 403:
  ``Sec-Fetch-Site: cross-site`` or ``same-site`` (every current browser
  sends it), or, from a browser that does not, an ``Origin`` whose host and
  port differ from the request's ``Host`` (an ``Origin: null`` too:
  sandboxed frames and local files), unless that ``Origin`` is listed in
  ``embed.origins``. Requests without either header (the Python client,
  ``curl``, relays) are not browsers' and are judged by the other checks.
  Behind a reverse proxy that rewrites ``Host``, only the ``Origin``
  fallback is affected: pass the original ``Host`` on (nginx:
  ``proxy_set_header Host $host``).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from fastapi import HTTPException, Request
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from deniable.server._errors import SurveyError
from deniable.server._refusals import error_response

__all__ = [
    "Embed", "load_embed", "parse_origin", "MAX_ORIGINS", "PREFLIGHT_MAX_AGE", "page_csp", "CrossOrigin",
    "require_json", "refuse_cross_site",
]

MAX_ORIGINS = 100
"""Origins one survey may list."""

PREFLIGHT_MAX_AGE = 600
"""Seconds a browser may keep a preflight's answer (``Access-Control-Max-Age``)."""

_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
_DNS_NAME = re.compile(rf"{_LABEL}(?:\.{_LABEL})*")
_FORM = "must be an origin: https://host or https://host:port (no path, no wildcard)"


@dataclass(frozen=True)
class Embed:
    """The origins that may embed a survey (normalized as browsers write ``Origin``)."""

    origins: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"origins": list(self.origins)}


def _loopback(host: str) -> bool:
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def parse_origin(value: Any, field: str = "origin") -> str:
    """``value`` as a browser's ``Origin`` header writes it; :class:`SurveyError` naming ``field`` if it is none.

    See the module docstring for the rules: ``https://Example.org:443/`` gives ``https://example.org``.
    """
    if not isinstance(value, str):
        raise SurveyError(field, f"{_FORM}; got {value!r:.80}")
    text = value.strip()
    if "*" in text:
        raise SurveyError(field, f"{_FORM}: wildcards are not supported, list each origin; got {value!r:.80}")
    if not text.isascii():
        raise SurveyError(field, f"{_FORM}, in ASCII (a host name in another script in its punycode "
                          f"form, xn--...); got {value!r:.80}")
    parts = urlsplit(text)
    scheme = parts.scheme.lower()
    if scheme not in ("https", "http") or not parts.netloc:
        raise SurveyError(field, f"{_FORM}; got {value!r:.80}")
    if parts.path not in ("", "/") or parts.query or parts.fragment or "?" in text or "#" in text:
        raise SurveyError(field, f"{_FORM}: an origin has no path, query or fragment; got {value!r:.80}")
    if "@" in parts.netloc:
        raise SurveyError(field, f"{_FORM}: no user name or password; got {value!r:.80}")
    try:
        port = parts.port
    except ValueError:
        raise SurveyError(field, f"{_FORM}: the port must be 1..65535; got {value!r:.80}") from None
    host = (parts.hostname or "").lower()
    try:
        ip = ipaddress.ip_address(host)
        host = f"[{ip.compressed}]" if ip.version == 6 else ip.compressed
    except ValueError:
        if not _DNS_NAME.fullmatch(host) or len(host) > 253:
            raise SurveyError(field, f"{_FORM}: {host!r:.80} is not a host name or IP address") from None
    if scheme == "http" and not _loopback(host):
        raise SurveyError(field, f"must be https:// (http:// only for localhost and loopback addresses, "
                          f"for development); got {value!r:.80}")
    if port == 0:
        raise SurveyError(field, f"{_FORM}: the port must be 1..65535; got {value!r:.80}")
    default = 443 if scheme == "https" else 80
    return f"{scheme}://{host}" + ("" if port in (None, default) else f":{port}")


def load_embed(value: Any) -> Embed | None:
    """The ``embed`` setting of a survey definition, checked (None: not embeddable, the default)."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise SurveyError("embed", f"must be {{origins: [https://...]}}; got {value!r:.80}")
    extra = sorted(set(value) - {"origins"})
    if extra:
        raise SurveyError(f"embed.{extra[0]}", "is not a field of embed (allowed: origins)")
    origins = value.get("origins")
    if not isinstance(origins, list) or not 1 <= len(origins) <= MAX_ORIGINS:
        raise SurveyError("embed.origins", f"must be a list of 1 to {MAX_ORIGINS} origins "
                          f"(https://host[:port]); got {origins!r:.80}")
    parsed = [parse_origin(o, f"embed.origins[{i}]") for i, o in enumerate(origins)]
    return Embed(tuple(dict.fromkeys(parsed)))


# -------------------------------------------------------------------- framing
_PAGE_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'"
)


def page_csp(frame_ancestors: tuple[str, ...] = (), connect: tuple[str, ...] = ()) -> str:
    """The pages' Content-Security-Policy: framed by ``frame_ancestors`` only (none: ``'none'``); its
    ``connect-src`` also allows the origins ``connect`` (a relay's, for a survey posted through one)."""
    policy = _PAGE_POLICY.replace("connect-src 'self'", " ".join(("connect-src 'self'", *connect)))
    return f"{policy}; frame-ancestors {' '.join(frame_ancestors) or chr(39) + 'none' + chr(39)}"


# ----------------------------------------------------------------------- CORS
_ROUTES = re.compile(r"/surveys/([^/]+)(/responses)?")


def _route_method(path: str) -> tuple[str, str] | None:
    """(survey id, the route's method) of a path that answers CORS, or None."""
    match = _ROUTES.fullmatch(path)
    if match is None:
        return None
    return match[1], "POST" if match[2] else "GET"


def _with_vary(headers: list[tuple[bytes, bytes]], *names: str) -> list[tuple[bytes, bytes]]:
    return [*headers, (b"vary", ", ".join(names).encode())]


class CrossOrigin:
    """CORS for the listed origins of a survey's ``GET /surveys/{id}`` and ``POST .../responses``.

    ``origins_of(survey_id)`` gives a survey's listed origins (``()`` for
    a survey without ``embed`` or no survey); it may read the database, so
    it runs in the thread pool, and only for requests with an ``Origin``.
    """

    def __init__(self, app: ASGIApp, origins_of: Callable[[str], tuple[str, ...]]) -> None:
        self.app = app
        self.origins_of = origins_of

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        route = _route_method(scope["path"]) if scope["type"] == "http" else None
        if route is None:
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        origin = headers.get("origin")
        survey_id, method = route
        # only a browser's request has an Origin: the others need no lookup
        listed = origin is not None and origin in await run_in_threadpool(self.origins_of, survey_id)
        if origin is not None and scope["method"] == "OPTIONS" and "access-control-request-method" in headers:
            await self._preflight(headers, origin, listed, method)(scope, receive, send)
            return

        async def send_with_cors(message: Message) -> None:
            if message["type"] == "http.response.start":
                extra = [(b"access-control-allow-origin", str(origin).encode()),
                         (b"access-control-expose-headers", b"Retry-After")] if listed else []
                message["headers"] = _with_vary([*message.get("headers", []), *extra], "Origin")
            await send(message)

        await self.app(scope, receive, send_with_cors)

    @staticmethod
    def _preflight(headers: Headers, origin: str, listed: bool, method: str) -> Response:
        vary = ("Origin", "Access-Control-Request-Method", "Access-Control-Request-Headers")
        asked = {h.strip().lower() for h in headers.get("access-control-request-headers", "").split(",")} - {""}
        refusal: Response
        if not listed:
            refusal = error_response(403, "Origin", f"{origin!r:.100} may not embed this survey: only the "
                                     "origins listed in its embed.origins may")
        elif headers["access-control-request-method"] != method:
            refusal = error_response(403, "Access-Control-Request-Method", f"this route takes {method} only; "
                                     f"got {headers['access-control-request-method']!r:.40}")
        elif asked - {"content-type"}:
            refusal = error_response(403, "Access-Control-Request-Headers", "only Content-Type may be sent; "
                                     f"got {sorted(asked - {'content-type'})!r:.100}")
        else:
            refusal = Response(status_code=204, headers={
                "access-control-allow-origin": origin, "access-control-allow-methods": method,
                "access-control-allow-headers": "Content-Type",
                "access-control-max-age": str(PREFLIGHT_MAX_AGE),
            })
        refusal.headers["vary"] = ", ".join(vary)
        return refusal


# ------------------------------------------------------------ cross-site posts
def require_json(request: Request) -> None:
    """415 unless the body is declared ``application/json`` (``charset`` may be ``utf-8`` only)."""
    declared = request.headers.get("content-type", "")
    media, *params = [part.strip().lower() for part in declared.split(";")]
    charsets = {p.partition("=")[2].strip('"') for p in params if p.partition("=")[0].strip() == "charset"}
    if media != "application/json" or charsets - {"utf-8"}:
        raise HTTPException(415, {"field": "Content-Type", "message": "must be application/json (with "
                                  f"charset=utf-8 or none); got {declared!r:.100}"})


def _host_port(netloc: str, scheme: str) -> str:
    """``host:port`` with the scheme's default port made explicit, lowercased."""
    parts = urlsplit(f"//{netloc}")
    try:
        port = parts.port
    except ValueError:
        port = None
    default = 443 if scheme == "https" else 80
    return f"{(parts.hostname or '').lower()}:{port or default}"


def refuse_cross_site(request: Request, origins: tuple[str, ...]) -> None:
    """403 if a browser says another site sent the request and its ``Origin`` is not one of ``origins``."""
    origin = request.headers.get("origin")
    if origin is not None and origin in origins:
        return
    fetch_site = request.headers.get("sec-fetch-site", "").lower()
    if fetch_site in ("cross-site", "same-site"):
        why = f"Sec-Fetch-Site says {fetch_site}"
    elif fetch_site or origin is None:  # same-origin, none (typed by the user), or no browser's request
        return
    elif origin == "null":
        why = "its Origin is null (a sandboxed frame or a local file)"
    else:
        scheme = urlsplit(origin).scheme.lower()
        if _host_port(urlsplit(origin).netloc, scheme) == _host_port(request.headers.get("host", ""), scheme):
            return
        why = f"its Origin {origin!r:.100} is not this server's"
    raise HTTPException(403, {"field": "Origin", "message": f"refused: a page of another site sent this "
                              f"request ({why}); only this server's own pages, and the origins a survey "
                              "lists in embed.origins, may post responses"})
