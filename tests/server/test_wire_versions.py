"""Wire version 2 end to end: the survey served with wide integers as strings, reports read in either version."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

import deniable as dn
from deniable.client import Client, survey_fingerprint
from deniable.server._runner import BackgroundServer
from deniable.server._surveys import load_survey
from deniable.wire._codecs import MAX_SAFE_INTEGER

ADMIN = "admin-token-for-tests-7f3a"
AUTH = {"Authorization": f"Bearer {ADMIN}"}
CATS = [f"c{i}" for i in range(10)]
# 64 Bloom bits: a report's bits are wide
RAPPOR = dn.RAPPOR(["a", "b", "c"], num_bits=64, num_cohorts=4, epsilon=2).to_config()


def _survey(survey_id: str) -> dict[str, Any]:
    return {
        "id": survey_id,
        "title": "Wide integers",
        "budget": 100,
        "questions": [
            # e^40 > 2**53: the configuration's truth_numerator is wide
            {"id": "grr", "text": "?", "type": "categorical", "categories": ["a", "b", "c"],
             "mechanism": "grr", "epsilon": 40},
            {"id": "olh", "text": "?", "type": "categorical", "categories": CATS, "mechanism": "olh", "epsilon": 1},
            {"id": "rappor", "text": "?", "type": "categorical", "categories": ["a", "b", "c"], "mechanism": RAPPOR},
            {"id": "mirror", "text": "?", "type": "yes-no", "design": {"model": "FR", "p": ["1/6", "1/6"]}},
            {"id": "age", "text": "?", "type": "integer", "randomized": False, "min": 18, "max": 99},
        ],
    }


@pytest.fixture(scope="module")
def server(module_db_url: str) -> Iterator[BackgroundServer]:
    with BackgroundServer([_survey(sid) for sid in ("v1", "v2", "mixed", "client")], db_url=module_db_url,
                          admin_token=ADMIN) as running:
        yield running


@pytest.fixture(scope="module")
def http(server: BackgroundServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=60) as client:
        yield client


def _aggregates(server: BackgroundServer, survey_id: str) -> dict[str, Any]:
    return {qid: a.to_json() for qid, a in server.storage.aggregates(survey_id).items()}


def test_version_2_serves_wide_config_integers_as_strings_and_version_1_is_unchanged(http: httpx.Client) -> None:
    plain = http.get("/surveys/v1")
    assert plain.status_code == 200
    assert http.get("/surveys/v1?wire_version=1").content == plain.content  # byte for byte
    v1 = plain.json()
    v2 = http.get("/surveys/v1", params={"wire_version": 2}).json()
    wide = v1["questions"][0]["mechanism"]["params"]["truth_numerator"]
    assert type(wide) is int and wide > MAX_SAFE_INTEGER
    assert v2["questions"][0]["mechanism"]["params"]["truth_numerator"] == str(wide)
    for q1, q2 in zip(v1["questions"], v2["questions"], strict=True):
        if q1.get("mechanism") is not None:
            assert q1["mechanism"]["version"] == 1 and q2["mechanism"]["version"] == 2
            assert dn.from_config(q2["mechanism"]) == dn.from_config(q1["mechanism"])
        for c1, c2 in zip(q1.get("channels") or [], q2.get("channels") or [], strict=True):
            assert c2 == {**c1, "version": 2}  # a channel's integers are all narrow
    # nothing of version 2 needs more than JSON.parse: every integer is a safe one
    assert all(abs(n) <= MAX_SAFE_INTEGER for n in _integers(v2))
    assert {k: v for k, v in v2.items() if k != "questions"} == {k: v for k, v in v1.items() if k != "questions"}


def _integers(value: Any) -> list[int]:
    if isinstance(value, dict):
        return [n for v in value.values() for n in _integers(v)]
    if isinstance(value, list):
        return [n for v in value for n in _integers(v)]
    return [value] if type(value) is int else []


@pytest.mark.parametrize("query", ["3", "0", "two", "1.5"])
def test_another_version_of_the_survey_is_refused(http: httpx.Client, query: str) -> None:
    r = http.get(f"/surveys/v1?wire_version={query}")
    assert r.status_code == 422 and r.json()["detail"]["field"] == "wire_version"


def _reports(n: int) -> list[dict[str, Any]]:
    """n respondents' reports in version 1, from the survey's own mechanisms."""
    survey = load_survey(_survey("v1"))
    rng = np.random.default_rng(7)
    grr, olh, rappor, mirror = (q.randomizer for q in survey.questions[:4])
    columns = {
        "grr": grr.reports_to_json(grr.privatize_many(["a", "b", "c"] * (n // 3) + ["a"] * (n % 3), rng=rng)),
        "olh": olh.reports_to_json(olh.privatize_many([CATS[i % 10] for i in range(n)], rng=rng)),
        "rappor": rappor.reports_to_json(rappor.privatize_many(["a", "b", "c", "a"] * (n // 4) + ["b"] * (n % 4),
                                                               rng=rng)),
        "mirror": mirror.reports_to_json(mirror.privatize_many([i % 2 == 0 for i in range(n)], rng=rng)),
        "age": [18 + i % 50 for i in range(n)],
    }
    return [{qid: col[i] for qid, col in columns.items()} for i in range(n)]


def _in_version_2(reports: dict[str, Any]) -> dict[str, Any]:
    return {**reports, "olh": {**reports["olh"], "seed": str(reports["olh"]["seed"])},
            "rappor": {**reports["rappor"], "bits": str(reports["rappor"]["bits"])}}


def test_version_2_posts_store_what_version_1_posts_of_the_same_reports_store(
    server: BackgroundServer, http: httpx.Client
) -> None:
    reports = _reports(60)
    assert any(r["rappor"]["bits"] > MAX_SAFE_INTEGER for r in reports)  # wide bits travel
    for i, r in enumerate(reports[:3]):  # single responses
        one = http.post("/surveys/v1/responses", json={"idempotency_key": f"single-{i:04d}", "reports": r})
        two = http.post("/surveys/v2/responses",
                        json={"idempotency_key": f"single-{i:04d}", "wire_version": 2, "reports": _in_version_2(r)})
        assert one.status_code == two.status_code == 201, (one.text, two.text)
    rest = reports[3:]
    one = http.post("/surveys/v1/responses/batch", headers=AUTH, json={"responses": [
        {"idempotency_key": f"batch-{i:04d}", "reports": r} for i, r in enumerate(rest)]})
    two = http.post("/surveys/v2/responses/batch", headers=AUTH, json={"wire_version": 2, "responses": [
        {"idempotency_key": f"batch-{i:04d}", "reports": _in_version_2(r)} for i, r in enumerate(rest)]})
    assert one.status_code == two.status_code == 201, (one.text, two.text)
    assert one.json() == two.json() == {"accepted": len(rest), "duplicates": 0}
    assert server.storage.count_responses("v1") == server.storage.count_responses("v2") == 60
    assert _aggregates(server, "v1") == _aggregates(server, "v2")
    # stored in version 1: a retry in the other version is the same response, not a conflict
    again = http.post("/surveys/v1/responses", json={
        "idempotency_key": "single-0000", "wire_version": 2, "reports": _in_version_2(reports[0])})
    assert again.status_code == 201 and server.storage.count_responses("v1") == 60


def test_a_batch_mixes_versions_by_response(server: BackgroundServer, http: httpx.Client) -> None:
    a, b = _reports(2)
    r = http.post("/surveys/mixed/responses/batch", headers=AUTH, json={"wire_version": 2, "responses": [
        {"idempotency_key": "mixed-0000", "reports": _in_version_2(a)},
        {"idempotency_key": "mixed-0001", "wire_version": 1, "reports": b}]})
    assert r.status_code == 201, r.text
    assert server.storage.count_responses("mixed") == 2


@pytest.mark.parametrize("body, field", [
    ({"wire_version": 3}, "wire_version"),
    ({"wire_version": "2"}, "wire_version"),
    ({"wire_version": True}, "wire_version"),
    ({"wire_version": 2, "version_2_seed": 5}, "reports.olh"),  # version 2 wants a decimal string
    ({"wire_version": 2, "version_2_seed": "05"}, "reports.olh"),
    ({"wire_version": 1, "version_2_seed": "5"}, "reports.olh"),  # version 1 refuses a string, as before
    ({"version_2_seed": "5"}, "reports.olh"),
])
def test_bad_versions_are_refused_naming_the_field(
    server: BackgroundServer, http: httpx.Client, body: dict[str, Any], field: str
) -> None:
    reports = _reports(1)[0]
    body = dict(body)
    seed = body.pop("version_2_seed", None)
    if seed is not None:
        reports = {**reports, "olh": {**reports["olh"], "seed": seed}}
    before = server.storage.count_responses("mixed")
    r = http.post("/surveys/mixed/responses", json={"idempotency_key": "refused-0001", "reports": reports, **body})
    assert r.status_code == 422, r.text
    assert r.json()["detail"]["field"] == field
    batch = http.post("/surveys/mixed/responses/batch", headers={**AUTH, "content-type": "application/json"},
                      content=json.dumps(
        {"responses": [{"idempotency_key": "refused-0002", "reports": reports}], **body}))
    assert batch.status_code == 422, batch.text
    want = field if field == "wire_version" else f"responses[0].{field}"
    assert batch.json()["detail"]["field"] == want
    assert server.storage.count_responses("mixed") == before


class _Recording(httpx.HTTPTransport):
    """An HTTP transport that keeps every request it sends."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[httpx.Request] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return super().handle_request(request)


def test_the_python_client_speaks_version_2(server: BackgroundServer, http: httpx.Client, tmp_path: Path) -> None:
    answers = {"grr": "a", "olh": "c1", "rappor": "b", "mirror": True, "age": 30}
    transport = _Recording()
    with Client(server.url, transport=transport, token=ADMIN, state=tmp_path / "device.state") as client:
        client.respond("client", answers)
        client.respond_many("client", [answers] * 5, rng=np.random.default_rng(3))
        # a kept state belongs to the survey, whichever version it was fetched in
        assert survey_fingerprint(client.survey("client")) == survey_fingerprint(http.get("/surveys/client").json())
    get, one, batch = transport.requests
    assert get.method == "GET" and get.url.params["wire_version"] == "2"
    single, many = json.loads(one.content), json.loads(batch.content)
    assert single["wire_version"] == 2 and many["wire_version"] == 2
    for reports in [single["reports"]] + [r["reports"] for r in many["responses"]]:
        assert type(reports["rappor"]["bits"]) is str and type(reports["olh"]["seed"]) is str
        assert reports["mirror"] in (True, False) and reports["age"] == 30
    assert server.storage.count_responses("client") == 6
