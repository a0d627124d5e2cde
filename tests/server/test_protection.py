"""Security headers, admin-only results, the offline API docs and the survey settings.

Over real HTTP (uvicorn on loopback): every answer carries ``nosniff``,
``Referrer-Policy: no-referrer`` and a Content-Security-Policy that forbids
framing and inline script; ``/docs`` loads Swagger UI from this server only
(the files of the ``swagger-ui-bundle-v2`` package); ``results: admin`` puts
the results page and JSON behind the admin token (Bearer, or Basic with the
token as password); the settings parse with named errors and may change
between runs while the questions may not. The pages themselves run under the
policy in Chromium: tests/browser.
"""

from __future__ import annotations

import base64
import re
from html.parser import HTMLParser
from typing import Any

import httpx
import pytest
from sqlalchemy import create_engine, text

from deniable.server._errors import Conflict
from deniable.server._policy import DEFAULT_RATE_LIMIT, Policy, RateLimit
from deniable.server._routes.pages import DOCS_ASSETS, swagger_ui_dir
from deniable.server._runner import BackgroundServer
from deniable.server._storage import Storage, normalize_url
from deniable.server._surveys import SurveyError, load_survey

ADMIN = "admin-token-protection-tests"
SURVEY: dict[str, Any] = {
    "id": "guarded", "title": "Guarded", "budget": 1.1, "questions": [
        {"id": "violated", "text": "?", "type": "yes-no", "mechanism": "forced-response",
         "p_truth": 0.5, "p_yes": 0.5}]}
PRIVATE = {**SURVEY, "id": "private", "results": "admin"}


def _csp(response: httpx.Response) -> dict[str, str]:
    policy = response.headers["content-security-policy"]
    return {d.split()[0]: " ".join(d.split()[1:]) for d in policy.split("; ")}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    db = tmp_path_factory.mktemp("protect") / "deniable.db"
    with BackgroundServer([SURVEY, PRIVATE], db_url=f"sqlite:///{db}", admin_token=ADMIN) as running:
        yield running


@pytest.fixture(scope="module")
def http(server: BackgroundServer) -> Any:
    with httpx.Client(base_url=server.url, timeout=60) as client:
        yield client


@pytest.mark.parametrize("path", [
    "/s/guarded", "/s/guarded/results", "/static/survey.js", "/static/style.css", "/surveys/guarded",
    "/surveys/guarded/results", "/openapi.json", "/surveys/nope", "/s/private/results", "/docs",
    "/docs/assets/swagger-ui.css",
])
def test_every_answer_carries_the_security_headers(http: httpx.Client, path: str) -> None:
    _assert_security_headers(http.get(path))


def _assert_security_headers(r: httpx.Response) -> None:
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["referrer-policy"] == "no-referrer"
    assert r.headers["x-frame-options"] == "DENY"
    csp = _csp(r)
    assert csp["frame-ancestors"] == "'none'" and csp["default-src"] == "'none'"
    assert csp["script-src"] == "'self'" and csp["style-src"] == "'self'"
    assert csp["base-uri"] == "'none'" and csp["form-action"] == "'none'"


def test_an_unexpected_error_carries_the_headers_and_leaks_nothing(db_url: str) -> None:
    """A 500 from an exception no handler takes, answered by Starlette's outermost layer.

    The database is sabotaged under the running server (a unique index the
    storage does not expect, as in test_error_logs), so storing a second
    response with the same body raises the driver's IntegrityError, whose
    message quotes the row. The answer carries every security header and
    says nothing of the request, the database or the exception.
    """
    first = {"idempotency_key": "first-key-of-the-500-test", "reports": {"violated": True}}
    key = "SECRET-KEY-of-the-500-test-4f1d"
    with BackgroundServer([SURVEY], db_url=db_url) as server, \
            httpx.Client(base_url=server.url, timeout=60) as http:
        assert http.post("/surveys/guarded/responses", json=first).status_code == 201
        engine = create_engine(normalize_url(db_url))
        try:
            with engine.begin() as conn:
                body_hash = conn.execute(text("SELECT body_hash FROM deniable_responses")).scalar_one()
                conn.execute(text("CREATE UNIQUE INDEX sabotage ON deniable_responses (body_hash)"))
        finally:
            engine.dispose()
        r = http.post("/surveys/guarded/responses", json={**first, "idempotency_key": key})
    assert r.status_code == 500
    _assert_security_headers(r)
    assert r.text == "Internal Server Error"
    for secret in (key, body_hash, "sabotage", "deniable_responses", "Integrity", "Traceback"):
        assert secret not in r.text and secret not in str(r.headers), secret


def test_pages_have_no_inline_script_or_style() -> None:
    """The respondent and results pages load every script and style from /static."""
    from deniable.server._app import STATIC_DIR

    for name in ("survey.html", "results.html", "docs.html"):
        html = (STATIC_DIR / name).read_text()
        assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", html), name
        assert "<style" not in html and " style=" not in html, name
        assert not re.search(r"\son[a-z]+=", html), f"{name}: inline event handler"


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.urls += [v for k, v in attrs if k in ("src", "href") and v]


@pytest.mark.skipif(swagger_ui_dir() is None, reason="swagger-ui-bundle-v2 (server extra) is not installed")
def test_docs_are_served_from_the_package(http: httpx.Client) -> None:
    page = http.get("/docs")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    links = _Links()
    links.feed(page.text)
    assert links.urls and not [u for u in links.urls if re.match(r"^(https?:)?//", u)], links.urls
    assert "cdn" not in page.text.lower()
    for url in links.urls:
        if url.startswith("data:"):
            continue
        asset = http.get(url)
        assert asset.status_code == 200 and len(asset.content) > 100, url
        assert asset.headers["x-content-type-options"] == "nosniff"
    for name in DOCS_ASSETS:
        assert f"/docs/assets/{name}" in links.urls
    bundle = http.get("/docs/assets/swagger-ui-bundle.js")
    assert bundle.headers["content-type"].startswith("text/javascript") and len(bundle.content) > 500_000
    assert http.get("/static/docs.js").text.count("/openapi.json") == 1
    csp = _csp(page)  # the same strict policy as every page (Chromium runs Swagger UI under it)
    assert csp["script-src"] == "'self'" and csp["style-src"] == "'self'" and csp["frame-ancestors"] == "'none'"
    assert http.get("/docs/assets/index.html").status_code == 404  # only the files the page needs
    assert http.get("/redoc").status_code == 404  # FastAPI's ReDoc page loads from a CDN: off


def test_admin_only_results_need_the_admin_token(http: httpx.Client) -> None:
    basic = base64.b64encode(f"anyone:{ADMIN}".encode()).decode()
    wrong = base64.b64encode(b"anyone:guess").decode()
    for path in ("/s/private/results", "/surveys/private/results"):
        for headers in ({}, {"Authorization": "Bearer guess"}, {"Authorization": f"Basic {wrong}"}):
            r = http.get(path, headers=headers)
            assert r.status_code == 401, (path, headers)
            assert r.headers["www-authenticate"] == 'Basic realm="deniable administrators", charset="UTF-8"'
            assert r.json()["detail"]["field"] == "Authorization"
            assert "results: admin" in r.json()["detail"]["message"]
        for headers in ({"Authorization": f"Bearer {ADMIN}"}, {"Authorization": f"Basic {basic}"}):
            assert http.get(path, headers=headers).status_code == 200, (path, headers)
    # the rest of the survey stays public: devices fetch it and post to it
    assert http.get("/surveys/private").status_code == 200
    assert http.get("/s/private").status_code == 200
    assert http.get("/surveys/guarded/results").status_code == 200  # results: public (default)


@pytest.mark.parametrize(("change", "field"), [
    ({"rate_limit": 30}, "rate_limit"),
    ({"rate_limit": {"responses": 30}}, "rate_limit.seconds"),
    ({"rate_limit": {"responses": 0, "seconds": 60}}, "rate_limit.responses"),
    ({"rate_limit": {"responses": 2.5, "seconds": 60}}, "rate_limit.responses"),
    ({"rate_limit": {"responses": 5, "seconds": -1}}, "rate_limit.seconds"),
    ({"rate_limit": {"responses": 5, "seconds": float("inf")}}, "rate_limit.seconds"),
    ({"rate_limit": {"responses": 5, "seconds": 60, "burst": 9}}, "rate_limit.burst"),
    ({"max_responses": 0}, "max_responses"),
    ({"max_responses": "1000"}, "max_responses"),
    ({"max_responses": True}, "max_responses"),
    ({"results": "private"}, "results"),
])
def test_bad_settings_name_the_field(change: dict[str, Any], field: str) -> None:
    with pytest.raises(SurveyError) as refused:
        load_survey({**SURVEY, **change})
    assert refused.value.field == field


def test_settings_parse_and_keep_the_stored_form_of_older_surveys() -> None:
    assert load_survey(SURVEY).policy == Policy(DEFAULT_RATE_LIMIT, None, "public")
    assert "rate_limit" not in load_survey(SURVEY).to_json()  # a survey stored before keeps its form
    survey = load_survey({**SURVEY, "rate_limit": {"responses": 5, "seconds": 60}, "max_responses": 100,
                          "results": "admin"})
    assert survey.policy == Policy(RateLimit(5, 60.0), 100, "admin")
    assert load_survey(survey.to_json()) == survey
    assert load_survey({**SURVEY, "rate_limit": "off"}).policy.rate_limit is None
    assert load_survey({**SURVEY, "rate_limit": False}).policy.rate_limit is None  # YAML's off


def test_settings_may_change_between_runs_but_not_the_questions(tmp_path: Any) -> None:
    storage = Storage(f"sqlite:///{tmp_path / 'deniable.db'}")
    try:
        storage.add_survey(SURVEY)
        storage.add_survey({**SURVEY, "max_responses": 10, "results": "admin"})
        fresh = Storage(f"sqlite:///{tmp_path / 'deniable.db'}")  # another process: reads the stored form
        assert fresh.survey("guarded").policy == Policy(DEFAULT_RATE_LIMIT, 10, "admin")
        fresh.close()
        with pytest.raises(Conflict, match="a different survey with id 'guarded'"):
            storage.add_survey({**SURVEY, "max_responses": 10, "title": "Renamed"})
    finally:
        storage.close()
