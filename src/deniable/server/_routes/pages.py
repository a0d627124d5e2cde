"""The pages: a survey's page and its results page, the API documentation at ``/docs``, the static files.

The pages run under the Content-Security-Policy of
:mod:`deniable.server._security`. The API documentation is Swagger UI, whose
files are served from the ``swagger-ui-bundle-v2`` package, never from a CDN,
and whose start-up script is a file (``static/docs.js``); Swagger UI sets its
styles through the DOM, which the policy allows (the browser test opens an
operation and its "Try it out" form and finds no violation).
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import FileResponse, Response
from fastapi.staticfiles import StaticFiles

from deniable.server._refusals import error_response
from deniable.server._routes.service import Service
from deniable.server._security import results_access

__all__ = ["router", "mount_static", "STATIC_DIR", "DOCS_ASSETS", "swagger_ui_dir"]

STATIC_DIR = Path(__file__).parent.parent / "static"
"""The pages and their scripts and styles (served at ``/static``)."""

DOCS_ASSETS = ("swagger-ui-bundle.js", "swagger-ui.css")
"""The Swagger UI files ``/docs`` loads (from ``/docs/assets/``)."""


def swagger_ui_dir() -> Path | None:
    """The folder of Swagger UI's files (package ``swagger-ui-bundle-v2``), or None if not installed."""
    try:
        from swagger_ui_bundle import swagger_ui_path
    except ImportError:
        return None
    path = Path(str(swagger_ui_path))
    return path if all((path / name).is_file() for name in DOCS_ASSETS) else None


def _page(name: str) -> Response:
    path = STATIC_DIR / name
    if not path.is_file():
        return error_response(404, "path", f"the page {name} is not installed with this server")
    return FileResponse(path, media_type="text/html")


def router(service: Service) -> APIRouter:
    """``/s/{id}``, ``/s/{id}/results``, ``/docs`` and ``/docs/assets/{name}`` (none in the OpenAPI document)."""
    store = service.store
    api = APIRouter(include_in_schema=False)

    @api.get("/s/{survey_id}")
    def survey_page(survey_id: str) -> Response:
        """The survey's page: the questions, answered and randomized in the respondent's browser
        (404 if no such survey)."""
        store.survey(survey_id)
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

    return api


def mount_static(app: FastAPI) -> None:
    """Serve :data:`STATIC_DIR` at ``/static`` (if installed)."""
    if STATIC_DIR.is_dir():
        app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
