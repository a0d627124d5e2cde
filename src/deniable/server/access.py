"""Who may do what: the admin token, relay tokens, and how a request presents them.

* The admin token (``DENIABLE_ADMIN_TOKEN``) opens the admin API, posts
  batches to any survey, and reads the results of surveys whose results are
  for administrators only (``results: admin``).
* A relay token (``DENIABLE_RELAY_TOKEN``) only posts batches: give it to a
  trusted relay that collects many respondents' reports and forwards them,
  instead of the admin token.

A request presents a token as ``Authorization: Bearer <token>``, or, so a
browser can open an admin-only results page, as HTTP Basic authentication
with the token as the password (any user name): the browser asks for it
once and sends it again with the page's own requests. Tokens are compared in
constant time. Over anything but loopback, serve through HTTPS (a reverse
proxy): both forms send the token in clear.
"""

from __future__ import annotations

import base64
import binascii
import hmac

from starlette.requests import Request

__all__ = ["presented_token", "is_token", "BASIC_REALM"]

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
