"""Security headers of every answer, and the API documentation page served offline.

Every response carries ``X-Content-Type-Options: nosniff``,
``Referrer-Policy: no-referrer``, ``X-Frame-Options: DENY`` and the
Content-Security-Policy :data:`PAGE_CSP`: scripts, styles and requests only
from this server, no inline script or style, no framing (``frame-ancestors
'none'``), no form posts, no plugins. The respondent and results pages and
the interactive API documentation at ``/docs`` all run under it: Swagger UI's
files are served from the ``swagger-ui-bundle-v2`` package, never from a CDN,
and its start-up script is a file (``static/docs.js``); Swagger UI sets its
styles through the DOM, which the policy allows (the browser test opens an
operation and its "Try it out" form and finds no violation).
"""

from __future__ import annotations

from pathlib import Path

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["SecurityHeaders", "PAGE_CSP", "DOCS_ASSETS", "swagger_ui_dir"]

PAGE_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
DOCS_ASSETS = ("swagger-ui-bundle.js", "swagger-ui.css")
"""The Swagger UI files ``/docs`` loads (from ``/docs/assets/``)."""

_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"content-security-policy", PAGE_CSP.encode()),
]


def swagger_ui_dir() -> Path | None:
    """The folder of Swagger UI's files (package ``swagger-ui-bundle-v2``), or None if not installed."""
    try:
        from swagger_ui_bundle import swagger_ui_path
    except ImportError:
        return None
    path = Path(str(swagger_ui_path))
    return path if all((path / name).is_file() for name in DOCS_ASSETS) else None


class SecurityHeaders:
    """Add the security headers to every HTTP response (a pure ASGI middleware: no body buffering)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *_HEADERS]
            await send(message)

        await self.app(scope, receive, send_with_headers)
