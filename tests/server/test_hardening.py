"""Regressions of issue 13: requests that used to answer 500, on SQLite and PostgreSQL.

Each case got a 500 (or stored half a survey) before: a Hadamard report ``[]``
or ``[[]]``, an empty batch, a lone surrogate (JSON ``"\\ud800"``) in a token,
a report key, a field name or a survey definition, a NUL in a survey id
(PostgreSQL), and bodies FastAPI cannot decode (which named the field ``path``).
Each now gets a 4xx naming the field, and nothing is stored.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from deniable.server._runner import BackgroundServer

ADMIN = "admin-token-for-hardening-tests"
AUTH = {"Authorization": f"Bearer {ADMIN}"}
SURVEY = {
    "id": "hard", "title": "Hardening", "budget": 5,
    "questions": [
        {"id": "had", "text": "?", "type": "categorical", "categories": [f"c{i}" for i in range(10)],
         "mechanism": "hadamard", "epsilon": 1},
        {"id": "yn", "text": "?", "type": "yes-no", "mechanism": "forced-response", "p_truth": 0.5, "p_yes": 0.5},
    ],
}


@pytest.fixture(scope="module")
def server(module_db_url: str) -> Iterator[BackgroundServer]:
    with BackgroundServer([SURVEY], db_url=module_db_url, admin_token=ADMIN) as running:
        yield running


@pytest.fixture(scope="module")
def http(server: BackgroundServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=60) as client:
        yield client


def _body(key: str, had: Any = 3, **extra: Any) -> dict[str, Any]:
    return {"idempotency_key": key, "reports": {"had": had, "yn": True}, **extra}


def _post(http: httpx.Client, path: str, body: Any, headers: dict[str, str] | None = None) -> httpx.Response:
    """POST ``body`` as ASCII JSON, so lone surrogates travel as ``\\ud800`` escapes.

    Batches carry the admin token (batches to an open survey come from trusted relays).
    """
    auth = AUTH if path.endswith("/batch") else {}
    return http.post(path, content=json.dumps(body).encode(),
                     headers={"content-type": "application/json", **auth, **(headers or {})})


def _stored(server: BackgroundServer) -> tuple[int, int]:
    return server.storage.count_responses("hard"), server.storage.aggregates("hard")["had"].n


def _refused(r: httpx.Response, status: int, field: str) -> None:
    assert r.status_code == status, r.text
    assert r.json()["detail"]["field"] == field, r.json()
    assert r.json()["detail"]["message"]


@pytest.mark.parametrize("report", [[], [[]], [3], {}], ids=repr)
def test_hadamard_empty_reports(server: BackgroundServer, http: httpx.Client, report: Any) -> None:
    before = _stored(server)
    _refused(_post(http, "/surveys/hard/responses", _body("had-empty-1", report)), 422, "reports.had")
    batch = {"responses": [_body("had-empty-2"), _body("had-empty-3", report)]}
    _refused(_post(http, "/surveys/hard/responses/batch", batch), 422, "responses[1].reports.had")
    assert _stored(server) == before


def test_empty_batch(server: BackgroundServer, http: httpx.Client) -> None:
    before = _stored(server)
    _refused(_post(http, "/surveys/hard/responses/batch", {"responses": []}), 422, "responses")
    assert _stored(server) == before


@pytest.mark.parametrize("where", ["invite_token", "report key", "field name"])
def test_lone_surrogates_in_responses(server: BackgroundServer, http: httpx.Client, where: str) -> None:
    before = _stored(server)
    body = _body("surrogate-1")
    field = {"invite_token": "invite_token", "report key": "reports.\\ud800", "field name": "\\ud800"}[where]
    if where == "invite_token":
        body["invite_token"] = "tok\ud800"
    elif where == "report key":
        body["reports"]["\ud800"] = 1
    else:
        body["\ud800"] = 1
    _refused(_post(http, "/surveys/hard/responses", body), 422, field)
    batch = {"responses": [_body("surrogate-2"), body]}
    _refused(_post(http, "/surveys/hard/responses/batch", batch), 422, f"responses[1].{field}")
    assert _stored(server) == before


@pytest.mark.parametrize("field", ["title", "questions[0].categories[1]", "questions[0].text"])
def test_lone_surrogates_in_a_new_survey(server: BackgroundServer, http: httpx.Client, field: str) -> None:
    sid = f"surrogate-{len(field)}"
    definition: dict[str, Any] = {
        "id": sid, "title": "T", "budget": 2,
        "questions": [{"id": "q", "text": "?", "type": "categorical", "categories": ["a", "b"],
                       "mechanism": "grr", "epsilon": 1}],
    }
    if field == "title":
        definition["title"] = "T\ud800"
    elif field.endswith("categories[1]"):
        definition["questions"][0]["categories"][1] = "\udfff"
    else:
        definition["questions"][0]["text"] = "\ud83d?"
    _refused(_post(http, "/admin/surveys", definition, AUTH), 422, field)
    _refused(http.get(f"/surveys/{sid}"), 404, "id")  # nothing stored
    definition = json.loads(json.dumps(definition).replace("\\ud800", "").replace("\\udfff", "b2")
                            .replace("\\ud83d", ""))
    assert _post(http, "/admin/surveys", definition, AUTH).status_code == 201  # the id is free
    assert http.get(f"/surveys/{sid}/results").status_code == 200


@pytest.mark.parametrize("survey_id", ["x%00", "hard%00", "%00", "hard%0A", "a%20b"])
def test_survey_ids_that_cannot_exist(http: httpx.Client, survey_id: str) -> None:
    for r in (http.get(f"/surveys/{survey_id}"), http.get(f"/surveys/{survey_id}/results"),
              _post(http, f"/surveys/{survey_id}/responses", _body("nul-id-1")),
              http.post(f"/admin/surveys/{survey_id}/close", headers=AUTH),
              http.get(f"/admin/surveys/{survey_id}/export", headers=AUTH),
              http.get(f"/s/{survey_id}")):
        _refused(r, 404, "id")


@pytest.mark.parametrize("content", [
    b'{"idempotency_key": "\xff\xfe-bad-utf8", "reports": {}}',
    b"[" * 1000 + b"]" * 1000,
    b'{"idempotency_key": "abcdefgh", "reports": {"had": ' + b"9" * 5000 + b', "yn": true}}',
], ids=["bad UTF-8", "nesting 1000 deep", "5000-digit integer"])
def test_undecodable_bodies_name_the_body(server: BackgroundServer, http: httpx.Client, content: bytes) -> None:
    before = _stored(server)
    for path in ("/surveys/hard/responses", "/surveys/hard/responses/batch"):
        r = http.post(path, content=content, headers={"content-type": "application/json", **AUTH})
        assert r.status_code in (400, 422), r.text
        assert r.json()["detail"]["field"] == "body", r.json()
    assert _stored(server) == before


def test_openapi_declares_every_status(http: httpx.Client) -> None:
    paths = http.get("/openapi.json").json()["paths"]
    declared = {(path, method): set(op["responses"]) for path, ops in paths.items() for method, op in ops.items()}
    assert declared[("/surveys/{survey_id}/responses", "post")] >= {"201", "400", "403", "404", "409", "413", "422"}
    assert declared[("/surveys/{survey_id}/responses/batch", "post")] >= {"400", "404", "409", "413", "422"}
    assert declared[("/surveys/{survey_id}/results", "get")] >= {"200", "404", "422"}
    assert declared[("/admin/surveys", "post")] >= {"201", "400", "401", "409", "413", "422"}
    assert declared[("/admin/surveys/{survey_id}/export", "get")] >= {"200", "401", "404", "422"}


def test_root_lists_no_surveys(http: httpx.Client) -> None:
    r = http.get("/")
    assert r.status_code == 200
    assert "hard" not in r.text and "/s/{survey_id}" in r.json()["surveys"]


def test_serve_prints_each_surveys_pages(server_process: Any, sqlite_url: str, examples: Any) -> None:
    server = server_process([examples / "honor-code.yaml", examples / "messaging.yaml"], sqlite_url)
    log = server.log_path.read_text()
    for sid in ("honor-code", "messaging"):
        assert f"survey {server.url}/s/{sid}  results {server.url}/s/{sid}/results" in log, log
        assert httpx.get(f"{server.url}/s/{sid}/results").status_code == 200
