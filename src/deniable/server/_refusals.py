"""Refusals over HTTP: the error body, the status of each kind of refusal, and JSON bodies.

Every refusal is JSON ``{"detail": {"field": <JSON path>, "message": <what was
expected and what came>}}`` with a 4xx status (:class:`ErrorOut`). The storage
and the survey loader raise :mod:`deniable.server._errors` without HTTP in
mind; :data:`STATUS` says what each answers. :func:`errors` lists a route's
refusals for the OpenAPI document, and :func:`json_body` decodes a body read
by hand with the same refusals as FastAPI's own decoding.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from fastapi import HTTPException
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from deniable.server._errors import Conflict, Forbidden, Invalid, NotFound, StorageError

__all__ = ["ErrorDetail", "ErrorOut", "STATUS", "BODY", "errors", "error_response", "json_path", "json_body"]


class ErrorDetail(BaseModel):
    field: str = Field(description="JSON path of the offending field")
    message: str


class ErrorOut(BaseModel):
    detail: ErrorDetail


_MEANING = {
    400: "the body is not decodable JSON (bad UTF-8, nested too deep, a number too long)",
    401: "missing or wrong token: the admin token (admin API, results: admin), or the admin or a "
         "relay token (batches to a survey open to everyone)",
    403: "an invite-only survey without a valid, unused invite token; a report that would take a "
         "device over the survey's lifetime_epsilon (field device); or a browser's request from another "
         "site whose origin the survey does not list in embed.origins (field Origin)",
    404: "no survey with this id",
    409: "a conflict with what is stored (a reused key, a closed or full survey, another survey's id, "
         "a second response of a device in one round)",
    413: "the request body is too large",
    415: "the body is not declared Content-Type: application/json",
    422: "a malformed request; the field and the expected value are named",
    429: "the survey's rate limit for one client address (rate_limit); Retry-After says when to try again",
}

BODY = (400, 413, 422)
"""The refusals of a route that reads a JSON body."""

STATUS: dict[type[StorageError], int] = {
    NotFound: 404, Conflict: 409, Forbidden: 403, Invalid: 422, StorageError: 400,
}
"""HTTP status of each kind of refusal of the storage (a subclass answers as its base)."""


def errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` of a route's refusals: every status it can answer besides its success."""
    return {code: {"model": ErrorOut, "description": _MEANING[code]} for code in codes}


def error_response(status: int, field: str, message: str) -> JSONResponse:
    """The refusal ``{"detail": {"field", "message"}}`` with ``status``."""
    return JSONResponse({"detail": {"field": field, "message": message}}, status_code=status)


def json_path(loc: Iterable[Any]) -> str:
    """A pydantic error location as a JSON path (``responses[3].reports``); ``body`` if empty."""
    parts = list(loc)
    if parts and parts[0] in ("body", "query", "path", "header"):
        parts = parts[1:]
    path = ""
    for p in parts:
        path += f"[{p}]" if isinstance(p, int) else (f".{p}" if path else str(p))
    return path or "body"


def json_body(raw: bytes) -> Any:
    """A request body decoded as JSON: 422 naming the body if it is not JSON, 400 if undecodable."""
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise Invalid("body", f"is not valid JSON: {exc.msg}") from None
    except (ValueError, RecursionError):  # bad UTF-8, nested too deep, an integer too long
        raise HTTPException(400, {"field": "body", "message": "cannot be decoded as JSON (UTF-8, "
                                  "nesting depth and integer length are limited)"}) from None
