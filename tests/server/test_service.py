"""Results, exports, OpenAPI, pages, and the device client's local checks."""

from __future__ import annotations

import copy
import csv
import io
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from sqlalchemy import update

import deniable as dn
from deniable._estimate import SupportCounts
from deniable.client import Client, ClientError, _mechanisms
from deniable.server._app import STATIC_DIR
from deniable.server._bodies import SurveyIn
from deniable.server._results import question_estimates, results_json
from deniable.server._runner import BackgroundServer
from deniable.server._storage import Storage, aggregates_table
from deniable.server._surveys import load_survey

ADMIN = "admin-token-service-tests"
AUTH = {"Authorization": f"Bearer {ADMIN}"}


def _answers(categories: list[str], n: int, rng: np.random.Generator) -> list[dict[str, Any]]:
    apps = rng.integers(0, len(categories), n)
    return [{"app": categories[a], "encrypted": bool(rng.random() < 0.5)} for a in apps]


def test_exports_hold_every_stored_report(
    db_url: str, examples: Path, rng: np.random.Generator
) -> None:
    with BackgroundServer([examples / "messaging.yaml"], db_url=db_url,
                          admin_token=ADMIN) as server, Client(server.url, token=ADMIN) as client:
        categories = client.survey("messaging")["questions"][0]["categories"]
        client.respond_many("messaging", _answers(categories, 300, rng), batch_size=128, rng=rng)
        results = client.results("messaging")
        text = httpx.get(f"{server.url}/admin/surveys/messaging/export?format=csv",
                         headers=AUTH).text
        parquet = httpx.get(f"{server.url}/admin/surveys/messaging/export?format=parquet",
                            headers=AUTH)
        offline = Storage(db_url)
        try:
            survey = offline.survey("messaging")
            assert results_json(survey, question_estimates(survey, offline.aggregates("messaging")),
                                refusals=offline.refusals.counts("messaging")) == results
        finally:
            offline.close()

    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == 300 and list(rows[0]) == ["row", "app", "encrypted"]
    assert len({r["row"] for r in rows}) == 300

    import pyarrow.parquet as pq

    table = pq.read_table(io.BytesIO(parquet.content))
    survey = load_survey(json.loads(table.schema.metadata[b"deniable.survey"]))
    assert table.column("app").to_pylist() == [r["app"] for r in rows]
    assert table.column("row").to_pylist() == [int(r["row"]) for r in rows]
    # re-estimating from the export reproduces the served results (aggregates == rows)
    for q, served in zip(survey.questions, results["questions"], strict=True):
        reports = q.mechanism.reports_from_json([json.loads(r[q.id]) for r in rows])
        est = q.mechanism.estimate(reports)
        np.testing.assert_allclose(est.frequencies, served["estimate"], rtol=1e-12)
        assert served["n"] == 300
        assert served["support_counts"] == q.mechanism.aggregate(reports).to_json()


def test_results_before_any_response_are_null(sqlite_url: str, examples: Path) -> None:
    with BackgroundServer([examples / "honor-code.yaml"], db_url=sqlite_url) as server:
        body = httpx.get(f"{server.url}/surveys/honor-code/results").json()
    (q,) = body["questions"]
    assert body["n_responses"] == q["n"] == 0
    assert q["estimate"] == q["ci_low"] == q["consistent"] == [None, None]
    assert q["categories"] == [False, True] and q["mechanism"] == "BinaryRR"


def test_results_name_their_target(sqlite_url: str, examples: Path, rng: np.random.Generator) -> None:
    """``GET .../results`` is for the population by default and ``?target=respondents`` on
    request: same estimates, the library's standard errors and intervals for each target,
    ``target`` in the body and in every question; any other target is a 422 naming it."""
    with BackgroundServer([examples / "messaging.yaml"], db_url=sqlite_url, admin_token=ADMIN) as server, \
            Client(server.url, token=ADMIN) as client:
        categories = client.survey("messaging")["questions"][0]["categories"]
        client.respond_many("messaging", _answers(categories, 200, rng), rng=rng)
        url = f"{server.url}/surveys/messaging/results"
        served = {t: httpx.get(url, params={"target": t}).json() for t in ("population", "respondents")}
        default = httpx.get(url).json()
        bad = httpx.get(url, params={"target": "everyone"})
        spec = httpx.get(f"{server.url}/openapi.json").json()
    assert default == served["population"]
    assert bad.status_code == 422 and bad.json()["detail"]["field"] == "target"
    assert "'population' or 'respondents'" in bad.json()["detail"]["message"]
    offline = Storage(sqlite_url)
    try:
        survey = offline.survey("messaging")
        aggregates = offline.aggregates("messaging")
        refusals = offline.refusals.counts("messaging")
    finally:
        offline.close()
    for target, body in served.items():
        assert body["target"] == target
        assert body == results_json(survey, question_estimates(survey, aggregates, target), refusals=refusals)
        for q, question in zip(body["questions"], survey.questions, strict=True):
            est = question.mechanism.estimate_from(aggregates[question.id], target=target)
            assert q["target"] == target
            np.testing.assert_allclose(q["std_error"], est.std_errors, rtol=1e-12)
            np.testing.assert_allclose([q["ci_low"], q["ci_high"]], est.ci(0.95), rtol=1e-12)
    for pop, fixed in zip(served["population"]["questions"], served["respondents"]["questions"], strict=True):
        assert pop["estimate"] == fixed["estimate"] and pop["std_error"] != fixed["std_error"]
    (param,) = [p for p in spec["paths"]["/surveys/{survey_id}/results"]["get"]["parameters"]
                if p["name"] == "target"]
    assert param["in"] == "query" and param["schema"]["enum"] == ["population", "respondents"]
    assert spec["components"]["schemas"]["ResultsOut"]["properties"]["target"]["enum"] == [
        "population", "respondents"]


def test_results_page_labels_intervals_and_standard_errors() -> None:
    """The page's words: the whiskers and printed ranges are confidence intervals, the
    standard errors are a table column, the target is named, and no "±" is printed."""
    html = (STATIC_DIR / "results.html").read_text()
    script = (STATIC_DIR / "results.js").read_text()
    assert 'id="target"' in html and 'value="respondents"' in html and 'value="population"' in html
    # the legend is written by the script, for the question kinds the survey has
    assert "confidence interval (not a standard error" in script
    assert "'Standard error'" in script and "confidence interval`" in script
    assert "±" not in html and "±" not in script
    assert "target=${encodeURIComponent(targetSelect.value)}" in script


def test_results_read_aggregates_not_rows(sqlite_url: str, examples: Path) -> None:
    """With 10^7 reports counted (and no rows to scan) results answer well under a second."""
    storage = Storage(sqlite_url)
    survey = storage.add_survey(examples / "messaging.yaml")
    n = 10_000_000
    with storage.engine.begin() as conn:
        for q in survey.questions:
            stat = SupportCounts(q.mechanism.fingerprint, np.full(q.mechanism.k, n // 3), n)
            conn.execute(update(aggregates_table)
                         .where(aggregates_table.c.question_id == q.id)
                         .values(stat=stat.to_bytes()))
    storage.close()
    with BackgroundServer([], db_url=sqlite_url) as server:
        httpx.get(f"{server.url}/surveys/messaging/results")  # warm
        start = time.perf_counter()
        body = httpx.get(f"{server.url}/surveys/messaging/results").json()
        elapsed = time.perf_counter() - start
    assert body["n_responses"] == n and elapsed < 1.0


def test_openapi_documents_the_contract(sqlite_url: str) -> None:
    with BackgroundServer([], db_url=sqlite_url) as server:
        spec = httpx.get(f"{server.url}/openapi.json").json()
    paths = spec["paths"]
    for path, method in [
        ("/surveys/{survey_id}", "get"), ("/surveys/{survey_id}/responses", "post"),
        ("/surveys/{survey_id}/responses/batch", "post"), ("/surveys/{survey_id}/results", "get"),
        ("/admin/surveys", "post"), ("/admin/surveys/{survey_id}/close", "post"),
        ("/admin/surveys/{survey_id}/invites", "post"), ("/admin/surveys/{survey_id}/export", "get"),
    ]:
        assert method in paths[path], path
    schemas = spec["components"]["schemas"]
    key = schemas["ResponseIn"]["properties"]["idempotency_key"]
    assert key["pattern"] == "^[A-Za-z0-9_-]{8,128}$"
    assert schemas["BatchIn"]["properties"]["responses"]["maxItems"] == 10_000
    assert set(schemas["ErrorDetail"]["properties"]) == {"field", "message"}
    assert "HTTPBearer" in spec["components"]["securitySchemes"]


def test_survey_definitions_have_a_body_schema(sqlite_url: str, examples: Path) -> None:
    """``POST /admin/surveys`` documents its body (SurveyIn); every example survey conforms to it,
    and a body the schema refuses is refused by the loader too (422 naming the field)."""
    import yaml

    with BackgroundServer([], db_url=sqlite_url, admin_token="admin-token-schema") as server:
        spec = httpx.get(f"{server.url}/openapi.json").json()
        refused = httpx.post(f"{server.url}/admin/surveys", json={"id": "x", "title": "t", "budget": 1,
                                                                   "questions": [], "colour": "red"},
                             headers={"Authorization": "Bearer admin-token-schema"})
    body = spec["paths"]["/admin/surveys"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert body == {"$ref": "#/components/schemas/SurveyIn"}
    assert set(spec["components"]["schemas"]["SurveyIn"]["required"]) == {"id", "title", "budget", "questions"}
    for path in sorted(examples.glob("*.yaml")):
        SurveyIn.model_validate(yaml.safe_load(path.read_text()))
    assert refused.status_code == 422 and refused.json()["detail"]["field"] == "colour"


@pytest.mark.parametrize("route, page", [("/s/honor-code", "survey.html"),
                                         ("/s/honor-code/results", "results.html")])
def test_pages_are_served_from_static(sqlite_url: str, examples: Path, route: str, page: str) -> None:
    with BackgroundServer([examples / "honor-code.yaml"], db_url=sqlite_url) as server:
        r = httpx.get(server.url + route)
        unknown = httpx.get(server.url + route.replace("honor-code", "no-such-survey"))
        static = [p for p in sorted(STATIC_DIR.glob("*")) if p.is_file()]
        served = [httpx.get(f"{server.url}/static/{p.name}") for p in static]
    assert unknown.status_code == 404 and unknown.json()["detail"]["field"] == "id"
    if (STATIC_DIR / page).is_file():
        assert r.status_code == 200 and r.content == (STATIC_DIR / page).read_bytes()
        assert r.headers["content-type"].startswith("text/html")
    else:
        assert r.status_code == 404 and page in r.json()["detail"]["message"]
    for path, response in zip(static, served, strict=True):
        assert response.status_code == 200 and response.content == path.read_bytes()


class Recorder(httpx.HTTPTransport):
    def __init__(self) -> None:
        super().__init__()
        self.bodies: list[bytes] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.bodies.append(request.read())
        return super().handle_request(request)


def test_client_sends_only_reports(sqlite_url: str) -> None:
    categories = ["Aardvark-Answer", "Badger-Answer", "Cheetah-Answer", "Dingo-Answer"]
    survey = {"id": "animals", "title": "t", "budget": 2, "questions": [
        {"id": "pet", "text": "?", "type": "categorical", "categories": categories,
         "mechanism": "oue", "epsilon": 1.0}]}
    with BackgroundServer([survey], db_url=sqlite_url, admin_token=ADMIN) as server:
        recorder = Recorder()
        with Client(server.url, transport=recorder, token=ADMIN) as client:
            client.respond("animals", {"pet": "Cheetah-Answer"})
            client.respond_many("animals", [{"pet": c} for c in categories * 5])
            with pytest.raises(ValueError, match="not in the domain"):
                client.respond("animals", {"pet": "Elephant"})
            with pytest.raises(ValueError, match="missing \\['pet'\\]"):
                client.respond("animals", {})
            with pytest.raises(ValueError, match="unknown \\['extra'\\]"):
                client.respond("animals", {"pet": "Dingo-Answer", "extra": 1})
            assert client.results("animals")["n_responses"] == 21
    posted = b"".join(recorder.bodies)
    assert len(recorder.bodies) == 4  # survey, one response, one batch, results
    assert not any(c.encode() in posted for c in categories)


def test_background_server_cleans_up_its_database() -> None:
    with BackgroundServer([]) as server:
        db_file = Path(server.db_url.removeprefix("sqlite:///"))
        assert db_file.exists()
    assert not db_file.parent.exists()


def test_client_needs_only_its_extra() -> None:
    code = ("import sys; sys.modules['httpx'] = None\n"
            "try:\n    import deniable.client\nexcept ImportError as exc:\n    print(exc)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "pip install 'deniable[client]'" in out.stdout
    assert issubclass(ClientError, dn.DeniableError)
    # a device needs httpx only: none of the server's packages
    server_only = ["fastapi", "starlette", "pydantic", "sqlalchemy", "uvicorn", "yaml", "pyarrow"]
    code = (f"import sys; sys.modules.update(dict.fromkeys({server_only!r}))\n"
            "import deniable.client\n"
            "print(sorted(m for m in sys.modules if m.startswith('deniable.server')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_client_builds_a_survey_mechanisms_once() -> None:
    survey = {"id": "s", "questions": [
        {"id": "q", "mechanism": dn.GRR(["a", "b", "c"], epsilon=1.0).to_config()}]}
    first = _mechanisms(survey)["q"]
    assert _mechanisms(copy.deepcopy(survey))["q"] is first
    survey["questions"][0]["mechanism"] = dn.GRR(["a", "b", "c"], epsilon=2.0).to_config()
    changed = _mechanisms(survey)["q"]
    assert changed is not first and changed.epsilon == pytest.approx(2.0, rel=1e-6)
