"""The pages: a survey's page and its results page, the API documentation at ``/docs``, the static files.

The pages run under the Content-Security-Policy of
:mod:`deniable.server._security`; the page of a survey with ``embed`` may be
framed by its origins (:mod:`deniable.server._embed`). The API documentation is Swagger UI, whose
files are served from the ``swagger-ui-bundle-v2`` package, never from a CDN,
and whose start-up script is a file (``static/docs.js``); Swagger UI sets its
styles through the DOM, which the policy allows (the browser test opens an
operation and its "Try it out" form and finds no violation).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import FileResponse, Response
from fastapi.staticfiles import StaticFiles

from deniable.server._embed import page_csp
from deniable.server._refusals import error_response
from deniable.server._routes.service import Service
from deniable.server._security import results_access

__all__ = ["router", "mount_static", "STATIC_DIR", "DOCS_ASSETS", "EMBED_FILES", "swagger_ui_dir"]

STATIC_DIR = Path(__file__).parent.parent / "static"
"""The pages and their scripts and styles (served at ``/static``)."""

DOCS_ASSETS = ("swagger-ui-bundle.js", "swagger-ui.css")
"""The Swagger UI files ``/docs`` loads (from ``/docs/assets/``)."""

EMBED_FILES = {"deniable-embed.js": "text/javascript", "deniable-embed.mjs": "text/javascript",
               "deniable-embed.json": "application/json"}
"""The embeddable client's files (tools/build_embed.py writes them in ``static/dist/``), served at
``/static/<name>`` to any origin."""

_EMBED_HEADERS = {
    # a public file with no credentials: any page may load it, with <script integrity=... crossorigin>
    "Access-Control-Allow-Origin": "*",
    "Cross-Origin-Resource-Policy": "cross-origin",
    "Cache-Control": "public, max-age=3600",
}


def swagger_ui_dir() -> Path | None:
    """The folder of Swagger UI's files (package ``swagger-ui-bundle-v2``), or None if not installed."""
    try:
        from swagger_ui_bundle import swagger_ui_path
    except ImportError:
        return None
    path = Path(str(swagger_ui_path))
    return path if all((path / name).is_file() for name in DOCS_ASSETS) else None


def _page(name: str, csp: str | None = None) -> Response:
    path = STATIC_DIR / name
    if not path.is_file():
        return error_response(404, "path", f"the page {name} is not installed with this server")
    return FileResponse(path, media_type="text/html", headers=None if csp is None else {"Content-Security-Policy": csp})


def _origin(url: str) -> str:
    """The origin (scheme://host[:port]) of an http(s) URL."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _embed_file(name: str, media: str) -> Callable[[], Response]:
    def embed_file() -> Response:
        path = STATIC_DIR / "dist" / name
        if not path.is_file():
            return error_response(404, "path", f"{name} is not installed with this server")
        return FileResponse(path, media_type=media, headers=_EMBED_HEADERS)

    return embed_file


def router(service: Service) -> APIRouter:
    """``/s/{id}``, ``/s/{id}/results``, ``/docs`` and ``/docs/assets/{name}`` (none in the OpenAPI document)."""
    store = service.store
    api = APIRouter(include_in_schema=False)

    @api.get("/s/{survey_id}")
    def survey_page(survey_id: str) -> Response:
        """The survey's page: the questions, answered and randomized in the respondent's browser
        (404 if no such survey)."""
        policy = store.survey(survey_id).policy
        relay = policy.transport.relay
        # framed by the embed origins only; posted through a relay (Oblivious HTTP): may connect to it
        if policy.embed_origins or relay is not None:
            return _page("survey.html", page_csp(policy.embed_origins, () if relay is None else (_origin(relay),)))
        return _page("survey.html")

    @api.get("/s/{survey_id}/results")
    def results_page(survey_id: str, request: Request) -> Response:
        """The results page: each question's estimates with intervals, as charts and tables (admin only if the
        survey's results are admin)."""
        results_access(request, store.survey(survey_id))
        return _page("results.html")

    assets = swagger_ui_dir()

    @api.get("/docs")
    def docs_page() -> Response:
        """The API explorer (Swagger UI, served from the package) over ``/openapi.json``."""
        if assets is None:
            return error_response(404, "path", "the API documentation needs the server extra's Swagger UI: "
                                  "pip install 'deniable[server]'")
        return _page("docs.html")

    @api.get("/docs/assets/{name}")
    def docs_asset(name: str) -> Response:
        """One of the API explorer's script and style files."""
        if assets is None or name not in DOCS_ASSETS:
            return error_response(404, "path", f"no such file; the documentation's files are {list(DOCS_ASSETS)}")
        media = "text/css" if name.endswith(".css") else "text/javascript"
        return FileResponse(assets / name, media_type=media, headers={"Cache-Control": "public, max-age=86400"})

    for name, media in EMBED_FILES.items():
        # ahead of the static mount: the embed's files, with the headers a cross-origin <script> needs
        what = "manifest (version, sha384 integrity of each file)" if name.endswith(".json") else "bundle"
        api.add_api_route(f"/static/{name}", _embed_file(name, media), methods=["GET"], description=(
            f"deniable-embed's {what} for survey platforms, to any origin (Access-Control-Allow-Origin: *)"))

    return api


def mount_static(app: FastAPI) -> None:
    """Serve :data:`STATIC_DIR` at ``/static`` (if installed)."""
    if STATIC_DIR.is_dir():
        app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
