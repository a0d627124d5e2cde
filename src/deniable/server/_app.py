"""The collection service: a FastAPI app over :class:`deniable.server._storage.Storage`.

Devices fetch a survey (every question's exact mechanism configuration),
randomize on their side, and post only the privatized reports. The server
validates every report against its question's mechanism before storing
anything, keeps each question's mergeable aggregate up to date in the same
transaction, and answers ``GET /surveys/{id}/results`` from the aggregates.

This module only wires the service: the routes by audience
(:mod:`deniable.server._routes`), the protections
(:mod:`deniable.server._security`), and the refusals
(:mod:`deniable.server._refusals`): JSON ``{"detail": {"field": <JSON path>,
"message": <what was expected and what came>}}`` with a 4xx status. See the
generated OpenAPI document at ``/openapi.json`` (browsable at ``/docs``).

The app never logs report payloads or tokens; the runner's access log omits
query strings and client addresses (:mod:`deniable.server._runner`).

Against flooding (docs/howto/flooding.md): single responses to a survey open
to everyone are rate-limited per client address, a survey's
``max_responses`` is enforced by the storage, and batches to an open survey
need the admin or a relay token (:mod:`deniable.server._security`); the
refusals are counted by kind (:mod:`deniable.server._refusal_counts`). Every
answer carries the security headers. Responses come as JSON from this
server's pages, or from the origins a survey lists in ``embed`` (CORS), never
as a page of another site posts them (:mod:`deniable.server._embed`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp

from deniable.server._bodies import DOCUMENTED
from deniable.server._embed import CrossOrigin
from deniable.server._errors import StorageError
from deniable.server._refusal_counts import RefusalCounter
from deniable.server._refusals import STATUS, error_response, json_path
from deniable.server._routes import admin, analysts, devices, pages
from deniable.server._routes.pages import STATIC_DIR
from deniable.server._routes.service import Service
from deniable.server._security import (
    ADMIN_TOKEN_ENV,
    MAX_BODY_BYTES,
    RELAY_TOKEN_ENV,
    BodyLimit,
    SecurityHeaders,
    parse_networks,
)
from deniable.server._storage import Storage
from deniable.server._surveys import Survey, SurveyError
from deniable.wire.schemas import openapi_components

if TYPE_CHECKING:
    from deniable._ohttp._keys import KeyRing

__all__ = ["create_app", "STATIC_DIR", "MAX_BODY_BYTES", "ADMIN_TOKEN_ENV", "RELAY_TOKEN_ENV"]


class _App(FastAPI):
    """FastAPI with :class:`SecurityHeaders` outside every other layer.

    Starlette's ``ServerErrorMiddleware`` is always the outermost layer of the
    stack it builds, and answers an unexpected exception (500) itself, past
    any middleware added with ``add_middleware``: wrapping the whole stack
    gives that answer the security headers too.
    """

    def build_middleware_stack(self) -> ASGIApp:
        return SecurityHeaders(super().build_middleware_stack())


def create_app(
    storage: Storage | str,
    surveys: Iterable[str | Path | dict[str, Any] | Survey] = (),
    *,
    admin_token: str | None = None,
    max_body_bytes: int = MAX_BODY_BYTES,
    relay_token: str | None = None,
    trusted_proxies: Iterable[str] = (),
    ohttp_keys: KeyRing | None = None,
) -> FastAPI:
    """The collection service over ``storage`` (a Storage or a database URL).

    ``surveys`` (files, dicts or Survey objects) are stored at start-up;
    one already stored must have the same questions (its settings, such as
    the rate limit, are updated). The admin endpoints need
    ``Authorization: Bearer <admin_token>`` (default: environment variable
    ``DENIABLE_ADMIN_TOKEN``); without a token they answer 401. Batches to
    a survey open to everyone need the admin token or ``relay_token``
    (default: ``DENIABLE_RELAY_TOKEN``), which allows nothing else.

    Single responses to open surveys are rate-limited per client address
    (:mod:`deniable.server._security`): the socket peer's, or, when the peer
    is one of ``trusted_proxies`` (addresses or networks), the one its
    ``X-Forwarded-For`` names.

    With ``ohttp_keys`` (a :class:`deniable._ohttp._keys.KeyRing`; needs the
    ``ohttp`` extra) the service is also an Oblivious HTTP gateway
    (:mod:`deniable.server._routes.gateway`).
    """
    store = storage if isinstance(storage, Storage) else Storage(storage)
    for source in surveys:
        store.add_survey(source)
    service = Service(
        store,
        admin_token=admin_token if admin_token is not None else os.environ.get(ADMIN_TOKEN_ENV) or None,
        relay_token=relay_token if relay_token is not None else os.environ.get(RELAY_TOKEN_ENV) or None,
        trusted_proxies=parse_networks(trusted_proxies),
    )
    app = _App(
        title="deniable collection service",
        version="1",
        summary="Surveys out, privatized (locally differentially private) reports in, "
        "estimates with error bars.",
        docs_url=None,  # served by the pages' routes from the package's Swagger UI files, not from a CDN
        redoc_url=None,
    )
    app.state.storage = store
    app.state.admin_token = service.admin_token
    app.state.round_cache = service.rounds  # closed rounds' results (deniable.server._round_window)
    app.add_middleware(BodyLimit, max_bytes=max_body_bytes)
    app.add_middleware(CrossOrigin, origins_of=_origins_of(store))
    app.add_middleware(RefusalCounter, count=store.count_refusal)  # outside the others: it sees each refusal's status
    _handle_refusals(app)
    for audience in (devices, analysts, admin, pages):
        app.include_router(audience.router(service))
    if ohttp_keys is not None:
        from deniable.server._routes import gateway

        app.include_router(gateway.router(service, ohttp_keys))
    pages.mount_static(app)
    _document_schemas(app, *DOCUMENTED)
    return app


def _origins_of(store: Storage) -> Callable[[str], tuple[str, ...]]:
    """A survey's ``embed`` origins by id (none for a survey that is not stored)."""

    def origins(survey_id: str) -> tuple[str, ...]:
        try:
            return store.survey(survey_id).policy.embed_origins
        except StorageError:
            return ()

    return origins


def _handle_refusals(app: FastAPI) -> None:
    """Answer every refusal as ``{"detail": {"field", "message"}}`` (:mod:`deniable.server._refusals`)."""

    @app.exception_handler(StorageError)
    async def _storage_error(_request: Request, exc: StorageError) -> JSONResponse:
        status = next(STATUS[cls] for cls in type(exc).__mro__ if cls in STATUS)
        return error_response(status, exc.field, exc.message)

    @app.exception_handler(SurveyError)
    async def _survey_error(_request: Request, exc: SurveyError) -> JSONResponse:
        return error_response(422, exc.field, exc.message)

    @app.exception_handler(RequestValidationError)
    async def _validation_error(_request: Request, exc: RequestValidationError) -> JSONResponse:
        err = exc.errors()[0]
        field = json_path(err.get("loc", ()))
        if err.get("type") == "json_invalid":
            ctx = err.get("ctx") or {}
            return error_response(422, "body", f"is not valid JSON: {ctx.get('error', err.get('msg'))}")
        message = str(err.get("msg", "invalid"))
        if err.get("type") != "missing":
            message += f"; got {err.get('input')!r:.100}"
        return error_response(422, field, message)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if isinstance(exc.detail, dict):
            return JSONResponse({"detail": exc.detail}, exc.status_code, headers=exc.headers)
        field = "body" if exc.status_code == 400 else "path"  # 400: FastAPI could not decode the body
        return JSONResponse(
            {"detail": {"field": field, "message": str(exc.detail)}}, exc.status_code,
            headers=exc.headers,
        )


def _document_schemas(app: FastAPI, *models: type[BaseModel]) -> None:
    """Add to the OpenAPI components the models that document bodies FastAPI does not validate, and the
    wire format's schemas (``deniable.config``, ``deniable.report.<kind>``)."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            document = generate()
            schemas = document["components"]["schemas"]
            for model in models:
                schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
                schemas.update(schema.pop("$defs", {}))
                schemas[model.__name__] = schema
            schemas.update(openapi_components())  # the wire format: configurations and reports
            for operations in document["paths"].values():
                for operation in operations.values():
                    body = operation.get("requestBody", {}).get("content", {}).get("application/json", {})
                    if "$ref" in body.get("schema", {}):  # a documented model, not the dict FastAPI decodes
                        body["schema"] = {"$ref": body["schema"]["$ref"]}
        return generate()  # the cached document, now with the models

    app.openapi = openapi  # type: ignore[method-assign]
