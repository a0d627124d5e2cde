"""Embedding (``embed.origins``), CORS and the refusal of other sites' posts, over real HTTP on loopback.

Every combination of the headers that matter: ``Origin`` (none, this
server's, a listed one, another, ``null``), ``Sec-Fetch-Site`` (absent,
``same-origin``, ``none``, ``same-site``, ``cross-site``) and the body's
``Content-Type``, on a survey with ``embed`` and one without; the preflight's
answers; the framing headers of each page. The same in a real browser:
``tests/browser/test_browser_cross_site.py``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from deniable.client import new_key
from deniable.server._embed import PREFLIGHT_MAX_AGE, parse_origin
from deniable.server._errors import SurveyError
from deniable.server._runner import BackgroundServer
from deniable.server._storage import Storage
from deniable.server._surveys import load_survey

LISTED = "https://forms.example.org"
OTHER = "https://evil.example.net"
ADMIN = "embed-tests-admin-token"
QUESTION = {"id": "q", "text": "?", "type": "yes-no", "mechanism": "forced-response", "p_truth": 0.5, "p_yes": 0.5}
PLAIN = {"id": "plain", "title": "Not embedded", "budget": 1.1, "rate_limit": "off", "questions": [QUESTION]}
EMBEDDED = {**PLAIN, "id": "embedded", "title": "Embedded",
            "embed": {"origins": [LISTED, "http://localhost:8080", "https://Survey.Example.org:443/"]}}
JSON_TYPE = {"Content-Type": "application/json"}


@pytest.fixture(scope="module")
def server() -> Iterator[BackgroundServer]:
    with BackgroundServer([PLAIN, EMBEDDED], admin_token=ADMIN) as running:
        yield running


@pytest.fixture
def http(server: BackgroundServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=60) as client:
        yield client


def _body() -> bytes:
    return json.dumps({"idempotency_key": new_key(), "reports": {"q": True}}).encode()


# ------------------------------------------------------------------ the setting
@pytest.mark.parametrize(("given", "expected"), [
    ("https://Example.ORG", "https://example.org"),
    ("https://example.org/", "https://example.org"),
    ("https://example.org:443", "https://example.org"),
    ("https://example.org:8443", "https://example.org:8443"),
    ("http://localhost:8080", "http://localhost:8080"),
    ("http://127.0.0.2:80", "http://127.0.0.2"),
    ("http://[::1]:9000", "http://[::1]:9000"),
    ("https://xn--bcher-kva.example", "https://xn--bcher-kva.example"),
    ("  https://a.b  ", "https://a.b"),
])
def test_origins_are_normalized_as_browsers_write_them(given: str, expected: str) -> None:
    assert parse_origin(given) == expected


@pytest.mark.parametrize(("origins", "field", "words"), [
    (["https://example.org/survey"], "embed.origins[0]", "no path"),
    (["https://example.org?x=1"], "embed.origins[0]", "no path"),
    (["https://example.org#top"], "embed.origins[0]", "no path"),
    (["https://*.qualtrics.com"], "embed.origins[0]", "wildcards"),
    (["*"], "embed.origins[0]", "wildcards"),
    ([LISTED, "http://example.org"], "embed.origins[1]", "https://"),
    (["ftp://example.org"], "embed.origins[0]", "https://host"),
    (["example.org"], "embed.origins[0]", "https://host"),
    (["https://user:pw@example.org"], "embed.origins[0]", "user name"),
    (["https://example.org:99999"], "embed.origins[0]", "port"),
    (["https://exa_mple.org"], "embed.origins[0]", "host name"),
    (["https://bücher.example"], "embed.origins[0]", "punycode"),
    (["null"], "embed.origins[0]", "https://host"),
    ([42], "embed.origins[0]", "https://host"),
    ([], "embed.origins", "1 to 100"),
    ("https://example.org", "embed.origins", "list"),
])
def test_bad_origins_are_refused_naming_the_field(origins: Any, field: str, words: str) -> None:
    with pytest.raises(SurveyError) as caught:
        load_survey({**PLAIN, "embed": {"origins": origins}})
    assert caught.value.field == field and words in caught.value.message, caught.value


def test_embed_takes_only_origins() -> None:
    with pytest.raises(SurveyError) as caught:
        load_survey({**PLAIN, "embed": {"origins": [LISTED], "credentials": True}})
    assert caught.value.field == "embed.credentials"
    with pytest.raises(SurveyError) as caught:
        load_survey({**PLAIN, "embed": [LISTED]})
    assert caught.value.field == "embed"


def test_embed_is_a_setting_that_may_change(tmp_path: Any) -> None:
    storage = Storage(f"sqlite:///{tmp_path / 'e.db'}")
    storage.add_survey(PLAIN)
    changed = storage.add_survey({**PLAIN, "embed": {"origins": [LISTED]}})  # not a new survey: a setting
    assert changed.policy.embed_origins == (LISTED,)
    assert json.loads(changed.canonical())["embed"] == {"origins": [LISTED]}
    storage.close()
    assert load_survey(PLAIN).policy.embed_origins == () and "embed" not in json.loads(load_survey(PLAIN).canonical())


# ------------------------------------------------------------------ preflights
def _preflight(http: httpx.Client, path: str, origin: str, method: str, headers: str | None = "content-type",
               ) -> httpx.Response:
    asked = {"Origin": origin, "Access-Control-Request-Method": method}
    if headers is not None:
        asked["Access-Control-Request-Headers"] = headers
    return http.options(path, headers=asked)


@pytest.mark.parametrize(("path", "method"), [("/surveys/embedded/responses", "POST"), ("/surveys/embedded", "GET")])
@pytest.mark.parametrize("origin", [LISTED, "http://localhost:8080", "https://survey.example.org"])
def test_a_listed_origin_gets_its_preflight(http: httpx.Client, path: str, method: str, origin: str) -> None:
    r = _preflight(http, path, origin, method)
    assert r.status_code == 204 and r.content == b""
    assert r.headers["access-control-allow-origin"] == origin
    assert r.headers["access-control-allow-methods"] == method
    assert r.headers["access-control-allow-headers"] == "Content-Type"
    assert r.headers["access-control-max-age"] == str(PREFLIGHT_MAX_AGE)
    assert "access-control-allow-credentials" not in r.headers
    assert r.headers["vary"] == "Origin, Access-Control-Request-Method, Access-Control-Request-Headers"


@pytest.mark.parametrize(("path", "origin", "method", "headers", "field"), [
    ("/surveys/embedded/responses", OTHER, "POST", "content-type", "Origin"),
    ("/surveys/embedded/responses", "null", "POST", "content-type", "Origin"),
    ("/surveys/embedded/responses", LISTED + ".evil.net", "POST", "content-type", "Origin"),
    ("/surveys/embedded/responses", LISTED + ":444", "POST", "content-type", "Origin"),
    ("/surveys/embedded/responses", "http://forms.example.org", "POST", "content-type", "Origin"),
    ("/surveys/plain/responses", LISTED, "POST", "content-type", "Origin"),
    ("/surveys/missing/responses", LISTED, "POST", "content-type", "Origin"),
    ("/surveys/embedded/responses", LISTED, "PUT", "content-type", "Access-Control-Request-Method"),
    ("/surveys/embedded/responses", LISTED, "GET", None, "Access-Control-Request-Method"),
    ("/surveys/embedded", LISTED, "POST", "content-type", "Access-Control-Request-Method"),
    ("/surveys/embedded/responses", LISTED, "POST", "content-type, authorization", "Access-Control-Request-Headers"),
    ("/surveys/embedded/responses", LISTED, "POST", "x-requested-with", "Access-Control-Request-Headers"),
])
def test_other_preflights_are_refused(
    http: httpx.Client, path: str, origin: str, method: str, headers: str | None, field: str
) -> None:
    r = _preflight(http, path, origin, method, headers)
    assert r.status_code == 403 and r.json()["detail"]["field"] == field, r.text
    assert not any(name.startswith("access-control-") for name in r.headers), r.headers


def test_the_batch_route_and_the_results_answer_no_cors(http: httpx.Client) -> None:
    """Relays post batches from servers, and the results page is the server's own: no CORS for them."""
    for path in ("/surveys/embedded/responses/batch", "/surveys/embedded/results"):
        r = _preflight(http, path, LISTED, "POST" if path.endswith("batch") else "GET")
        assert r.status_code == 405 and "access-control-allow-origin" not in r.headers, (path, r.status_code)
        r = http.get("/surveys/embedded/results", headers={"Origin": LISTED})
        assert "access-control-allow-origin" not in r.headers


def test_an_options_request_that_is_no_preflight_is_not_answered_as_one(http: httpx.Client) -> None:
    r = http.options("/surveys/embedded/responses", headers={"Origin": LISTED})
    assert r.status_code == 405 and "access-control-allow-methods" not in r.headers


# --------------------------------------------------------- the requests' CORS
@pytest.mark.parametrize(("survey", "origin", "allowed"), [
    ("embedded", LISTED, True), ("embedded", "http://localhost:8080", True), ("embedded", OTHER, False),
    ("embedded", None, False), ("plain", LISTED, False), ("plain", None, False),
])
def test_reading_a_survey_answers_cors_for_listed_origins_only(
    http: httpx.Client, survey: str, origin: str | None, allowed: bool
) -> None:
    r = http.get(f"/surveys/{survey}", headers={} if origin is None else {"Origin": origin})
    assert r.status_code == 200
    assert r.headers.get("access-control-allow-origin") == (origin if allowed else None)
    assert "access-control-allow-credentials" not in r.headers
    assert r.headers["vary"] == "Origin"  # with or without one: a cache keeps one answer per origin


# ------------------------------------------------------ posts: Content-Type
@pytest.mark.parametrize(("content_type", "status"), [
    ("application/json", 201),
    ("application/json; charset=utf-8", 201),
    ("Application/JSON; charset=UTF-8", 201),
    ('application/json;charset="utf-8"', 201),
    (None, 415),
    ("text/plain", 415),
    ("text/plain;charset=UTF-8", 415),
    ("application/x-www-form-urlencoded", 415),
    ("multipart/form-data; boundary=x", 415),
    ("application/json; charset=latin-1", 415),
    ("application/jsonx", 415),
    ("application/problem+json", 415),
    ("text/json", 415),
])
@pytest.mark.parametrize("route", ["responses", "responses/batch"])
def test_responses_must_be_declared_json(
    http: httpx.Client, server: BackgroundServer, content_type: str | None, status: int, route: str
) -> None:
    before = server.storage.count_responses("plain")
    body = _body() if route == "responses" else b'{"responses": [' + _body() + b"]}"
    headers = {"Authorization": f"Bearer {ADMIN}"} if route.endswith("batch") else {}
    if content_type is not None:
        headers["Content-Type"] = content_type
    r = http.post(f"/surveys/plain/{route}", content=body, headers=headers)
    assert r.status_code == status, r.text
    assert server.storage.count_responses("plain") == before + (status == 201)
    if status == 415:
        assert r.json()["detail"]["field"] == "Content-Type" and "application/json" in r.json()["detail"]["message"]


# ---------------------------------------------------- posts: who sent them
@pytest.mark.parametrize(("survey", "fetch_site", "origin", "status"), [
    # not a browser: judged by the other checks
    ("plain", None, None, 201),
    # this server's own page
    ("plain", "same-origin", "SELF", 201),
    ("plain", None, "SELF", 201),  # a browser that does not send Sec-Fetch-Site
    ("plain", "none", None, 201),  # typed by the user
    # other sites
    ("plain", "cross-site", OTHER, 403),
    ("plain", "cross-site", None, 403),
    ("plain", "same-site", "http://127.0.0.1:1", 403),  # another port of this host: another origin
    ("plain", None, OTHER, 403),
    ("plain", None, "http://127.0.0.1:1", 403),
    ("plain", None, "null", 403),
    ("plain", "cross-site", LISTED, 403),  # listed by another survey only
    ("plain", "same-origin", OTHER, 201),  # the browser's word wins over a mismatched Origin
    # the survey that lists its embedders
    ("embedded", "cross-site", LISTED, 201),
    ("embedded", None, LISTED, 201),
    ("embedded", "cross-site", "http://localhost:8080", 201),
    ("embedded", "cross-site", OTHER, 403),
    ("embedded", "same-site", "http://127.0.0.1:1", 403),
    ("embedded", "same-origin", "SELF", 201),
])
def test_posts_from_other_sites_are_refused_unless_listed(
    http: httpx.Client, server: BackgroundServer, survey: str, fetch_site: str | None, origin: str | None,
    status: int,
) -> None:
    headers = dict(JSON_TYPE)
    if fetch_site is not None:
        headers["Sec-Fetch-Site"] = fetch_site
    if origin is not None:
        headers["Origin"] = server.url if origin == "SELF" else origin
    before = server.storage.count_responses(survey)
    r = http.post(f"/surveys/{survey}/responses", content=_body(), headers=headers)
    assert r.status_code == status, (headers, r.text)
    assert server.storage.count_responses(survey) == before + (status == 201)
    if status == 403:
        detail = r.json()["detail"]
        assert detail["field"] == "Origin"
        assert "another site" in detail["message"] and "embed.origins" in detail["message"]
        assert "access-control-allow-origin" not in r.headers
    listed = survey == "embedded" and origin is not None and origin.startswith(("https://forms", "http://localhost"))
    assert r.headers.get("access-control-allow-origin") == (origin if listed else None)


def test_the_origin_fallback_compares_host_and_port() -> None:
    """Without Sec-Fetch-Site, ``Origin`` is compared with ``Host``: a default port is the same origin."""
    from starlette.requests import Request

    from deniable.server._embed import refuse_cross_site

    def request(origin: str, host: str) -> Request:
        return Request({"type": "http", "method": "POST", "path": "/", "headers": [
            (b"origin", origin.encode()), (b"host", host.encode())]})

    refuse_cross_site(request("https://survey.example.org", "survey.example.org"), ())
    refuse_cross_site(request("https://survey.example.org", "Survey.Example.org:443"), ())
    refuse_cross_site(request("http://survey.example.org:8000", "survey.example.org:8000"), ())
    for origin, host in [("https://survey.example.org", "survey.example.org:8443"),
                         ("https://evil.example.net", "survey.example.org"),
                         ("http://survey.example.org", "survey.example.org:443")]:
        with pytest.raises(Exception) as caught:
            refuse_cross_site(request(origin, host), ())
        assert getattr(caught.value, "status_code", None) == 403, (origin, host)


def test_a_refused_post_takes_no_rate_limit_token(tmp_path: Any) -> None:
    """Cross-site and non-JSON posts are refused before the rate limit: they cannot use up a respondent's bucket."""
    limited = {**PLAIN, "id": "limited", "rate_limit": {"responses": 1, "seconds": 3600}}
    with BackgroundServer([limited], db_url=f"sqlite:///{tmp_path / 'l.db'}") as running, \
            httpx.Client(base_url=running.url) as client:
        for _ in range(5):
            assert client.post("/surveys/limited/responses", content=_body(),
                               headers={**JSON_TYPE, "Sec-Fetch-Site": "cross-site"}).status_code == 403
            assert client.post("/surveys/limited/responses", content=_body(),
                               headers={"Content-Type": "text/plain"}).status_code == 415
        assert client.post("/surveys/limited/responses", content=_body(), headers=JSON_TYPE).status_code == 201
        assert client.post("/surveys/limited/responses", content=_body(), headers=JSON_TYPE).status_code == 429


# ------------------------------------------------------------------- framing
def test_only_the_embedded_survey_page_may_be_framed_and_only_by_its_origins(http: httpx.Client) -> None:
    framed = http.get("/s/embedded")
    assert framed.status_code == 200 and "x-frame-options" not in framed.headers
    csp = framed.headers["content-security-policy"]
    assert csp.endswith("frame-ancestors https://forms.example.org http://localhost:8080 https://survey.example.org")
    assert csp.count("frame-ancestors") == 1 and "script-src 'self'" in csp and "*" not in csp
    for path in ("/s/plain", "/s/embedded/results", "/s/plain/results", "/surveys/embedded", "/static/survey.js",
                 "/s/missing"):
        r = http.get(path)
        assert r.headers["x-frame-options"] == "DENY", path
        assert r.headers["content-security-policy"].endswith("frame-ancestors 'none'"), path


def test_the_openapi_document_lists_the_refusals(http: httpx.Client) -> None:
    paths = http.get("/openapi.json").json()["paths"]
    for path in ("/surveys/{survey_id}/responses", "/surveys/{survey_id}/responses/batch"):
        assert {"403", "415"} <= set(paths[path]["post"]["responses"]), path
    assert "embed" in http.get("/openapi.json").json()["components"]["schemas"]["SurveyIn"]["properties"]
