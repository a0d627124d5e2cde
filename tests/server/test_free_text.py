"""Free-text questions (``type: free-text``) in the collection service: heavy-hitter discovery.

Definitions are checked when loaded (422 naming the field); devices get the
exact ``deniable.discovery`` config; reports are checked through
``HeavyHitters.reports_from_json`` naming the field (``reports.q``,
``reports.q.level``, ``reports.q.sketch``) with nothing of a refused request
stored; aggregates are stored and merged like every question's; results list
the discovered values, most frequent first, with counts, standard errors and
intervals, equal to ``identify`` on the aggregate of the same reports. SQLite
and PostgreSQL, real HTTP on loopback.

Statistical assertion: the three frequent values among 6,000 simulated
respondents (epsilon 6) are found; the least of them stands about 8
standard errors above 0, where the selection needs about 3 (a correct
implementation misses it with probability far below 1e-6).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import numpy as np
import pytest

from deniable.heavy import HeavyHitters
from deniable.server._runner import BackgroundServer
from deniable.server._surveys import SurveyError, load_survey

ADMIN = "admin-token-for-free-text-tests"
QUESTION = {"id": "tool", "text": "Which editor do you use?", "type": "free-text", "max_length": 6, "epsilon": 6}
SURVEY = {
    "id": "editors",
    "title": "Editors",
    "budget": 7,
    "rate_limit": "off",
    "questions": [
        QUESTION,
        {"id": "daily", "text": "Daily?", "type": "yes-no", "mechanism": "binary-rr", "epsilon": 1},
    ],
}
PAYLOAD = "<img src=x onerror=alert(1)>"
LETTERS = "abcdefghijklmnopqrstuvwxyz"
LETTERED = {
    "id": "lettered-editors",
    "title": "Editors, in lowercase letters",
    "budget": 7,
    "rate_limit": "off",
    "questions": [{**QUESTION, "alphabet": LETTERS}],
}


def _survey(*questions: dict[str, Any], budget: float = 10) -> dict[str, Any]:
    return {"id": "s", "title": "S", "budget": budget, "questions": list(questions)}


def _q(**fields: Any) -> dict[str, Any]:
    return {**QUESTION, "id": "q", **fields}


# ---------------------------------------------------------------- definitions
def test_the_example_survey_loads(examples: Any) -> None:
    survey = load_survey(examples / "editors.yaml")
    editor, daily = survey.questions
    assert (editor.type, editor.max_length, editor.hitters.method) == ("free-text", 12, "pem")
    assert survey.epsilon_total == pytest.approx(7, rel=1e-8) and survey.epsilon_total <= survey.budget


def test_a_definition_loads_and_its_stored_form_is_the_same_survey() -> None:
    survey = load_survey(SURVEY)
    q = survey.questions[0]
    assert q.type == "free-text" and q.max_length == 6 and q.hitters.method == "pem"
    assert q.epsilon == pytest.approx(6) and survey.epsilon_total == pytest.approx(q.epsilon + 1, rel=1e-9)
    stored = survey.to_json()
    assert stored["questions"][0]["discovery"]["format"] == "deniable.discovery"
    assert load_survey(stored).canonical() == survey.canonical()
    # the seed derives from the definition: the same YAML loads as the same survey (a restart)
    assert load_survey(SURVEY).canonical() == survey.canonical()
    other = load_survey({**SURVEY, "questions": [{**QUESTION, "text": "Other?"}, SURVEY["questions"][1]]})
    assert other.questions[0].hitters.oracle.seed != q.hitters.oracle.seed
    sfp = load_survey(_survey(_q(method="sfp", oracle="hcms", seed="ab" * 32, kind="text")))
    assert sfp.questions[0].hitters.method == "sfp" and sfp.questions[0].hitters.oracle.seed == bytes([0xAB]) * 32
    integers = load_survey(_survey({k: v for k, v in _q(kind="integer").items() if k != "max_length"}))
    assert integers.questions[0].hitters.kind == "integer"


@pytest.mark.parametrize(
    ("question", "field", "words"),
    [
        ({k: v for k, v in _q().items() if k != "max_length"}, "questions[0].max_length", "required"),
        (_q(max_length=0), "questions[0].max_length", "1..63"),
        (_q(max_length="8"), "questions[0].max_length", "integer"),
        ({k: v for k, v in _q().items() if k != "epsilon"}, "questions[0].epsilon", "required"),
        (_q(epsilon=-1), "questions[0].epsilon", "epsilon"),
        (_q(epsilon="big"), "questions[0].epsilon", "number"),
        (_q(method="treehist"), "questions[0].method", "pem"),
        (_q(kind="string"), "questions[0].kind", "text"),
        (_q(kind="integer"), "questions[0].max_length", "kind: text only"),
        (_q(oracle="olh"), "questions[0].oracle", "cms"),
        (_q(width=100), "questions[0].width", "power of two"),
        (_q(max_length=63, rows=1024, width=4096), "questions[0].rows", "above"),
        (_q(seed="xyz"), "questions[0].seed", "64 hex"),
        (_q(categories=["a", "b"]), "questions[0].categories", "not a field"),
        (_q(randomized=False), "questions[0].randomized", "always randomized"),
        ({"id": "q", "text": "?", "type": "free-text", "discovery": {"format": "deniable.discovery"}},
         "questions[0].discovery", "fields"),
        ({**_q(), "discovery": {}}, "questions[0].epsilon", "not a field of a free-text question with a discovery"),
        (_q(alphabet="abca"), "questions[0].alphabet", "'a' occurs more than once"),
        (_q(alphabet="aé"), "questions[0].alphabet", "single-byte ASCII characters (code points 0..127)"),
        (_q(alphabet="ab\t"), "questions[0].alphabet", "printable ASCII characters (space to '~'"),
        (_q(alphabet="ab\x7f"), "questions[0].alphabet", "got '\\x7f'"),
        (_q(alphabet=""), "questions[0].alphabet", "non-empty string"),
        (_q(alphabet=None), "questions[0].alphabet", "(or absent); got None"),
        (_q(alphabet=["a", "b"]), "questions[0].alphabet", "non-empty string"),
        (_q(alphabet="ab", method="sfp"), "questions[0].alphabet", "method 'pem' only"),
        ({**{k: v for k, v in _q().items() if k != "max_length"}, "kind": "integer", "alphabet": "0123456789"},
         "questions[0].alphabet", "kind 'text' only"),
        ({"id": "q", "text": "?", "type": "free-text",
          "discovery": HeavyHitters(epsilon=4, max_length=6, rows=4, width=8, alphabet="ab\n").to_config()},
         "questions[0].discovery.alphabet", "printable ASCII"),
        ({"id": "q", "text": "?", "type": "free-text",
          "discovery": {**HeavyHitters(epsilon=4, max_length=6, rows=4, width=8).to_config(), "alphabet": "aa"}},
         "questions[0].discovery.alphabet", "distinct"),
        ({"id": "q", "text": "?", "type": "free-text",
          "discovery": {**HeavyHitters(epsilon=4, method="sfp", max_length=6, rows=4, width=8).to_config(),
                        "alphabet": "ab"}},
         "questions[0].discovery.alphabet", "method 'pem' only"),
    ],
)
def test_bad_definitions_name_the_field(question: dict[str, Any], field: str, words: str) -> None:
    with pytest.raises(SurveyError) as err:
        load_survey(_survey(question))
    assert err.value.field == field and words in err.value.message


def test_an_alphabet_loads_into_the_config_devices_get() -> None:
    survey = load_survey(_survey(_q(alphabet=LETTERS)))
    q = survey.questions[0]
    assert q.hitters.alphabet == LETTERS and q.hitters.method == "pem"
    assert q.hitters.fingerprint.endswith(f":alphabet={LETTERS.encode().hex()}")
    public = q.public_json()
    assert public["alphabet"] == public["discovery"]["alphabet"] == LETTERS
    assert HeavyHitters.from_config(public["discovery"]).alphabet == LETTERS
    # the stored form is the same survey; without an alphabet the config has no such field
    assert load_survey(survey.to_json()).canonical() == survey.canonical()
    plain = load_survey(_survey(_q())).questions[0]
    assert "alphabet" not in plain.public_json() and "alphabet" not in plain.to_json()["discovery"]
    # the derived seed depends on the alphabet: another alphabet is another survey
    other = load_survey(_survey(_q(alphabet=LETTERS[:-1]))).questions[0]
    assert other.hitters.oracle.seed != q.hitters.oracle.seed


def test_the_budget_counts_the_free_text_epsilon_and_sampling_refuses_it() -> None:
    with pytest.raises(SurveyError) as err:
        load_survey(_survey(_q(), budget=5))
    assert err.value.field == "budget" and "6 (q)" in err.value.message
    with pytest.raises(SurveyError) as err:
        load_survey({**_survey(_q()), "allocation": "sample"})
    assert err.value.field == "questions[0]" and "a free-text question" in err.value.message


# -------------------------------------------------------------------- service
@pytest.fixture(scope="module")
def server(module_db_url: str) -> Iterator[BackgroundServer]:
    with BackgroundServer([SURVEY, LETTERED], db_url=module_db_url, admin_token=ADMIN) as running:
        yield running


@pytest.fixture
def http(server: BackgroundServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=60) as client:
        yield client


def _hitters(http: httpx.Client) -> HeavyHitters:
    q = http.get("/surveys/editors").json()["questions"][0]
    return HeavyHitters.from_config(q["discovery"])


def test_devices_get_the_exact_discovery_config(http: httpx.Client, server: BackgroundServer) -> None:
    body = http.get("/surveys/editors").json()
    q = body["questions"][0]
    shown = (q["type"], q["max_length"], q["kind"], q["method"], q["randomized"])
    assert shown == ("free-text", 6, "text", "pem", True)
    assert q["discovery"] == load_survey(SURVEY).questions[0].hitters.to_config()
    assert body["epsilon_total"] == pytest.approx(q["epsilon"] + 1, rel=1e-9)


@pytest.mark.parametrize(
    ("fields", "words"),
    [({"alphabet": "abc", "method": "sfp"}, "method 'pem' only"), ({"alphabet": "abb"}, "'b' occurs more than once"),
     ({"alphabet": "ab\u00e9"}, "single-byte ASCII"), ({"alphabet": "ab\r"}, "printable ASCII")],
)
def test_the_admin_api_refuses_a_bad_alphabet_naming_the_field(
    http: httpx.Client, fields: dict[str, Any], words: str
) -> None:
    bad = {**_survey(_q(**fields)), "id": "badly-lettered"}
    answer = http.post("/admin/surveys", json=bad, headers={"Authorization": f"Bearer {ADMIN}"})
    assert answer.status_code == 422, answer.text
    detail = answer.json()["detail"]
    assert detail["field"] == "questions[0].alphabet" and words in detail["message"], detail
    assert http.get("/surveys/badly-lettered").status_code == 404


def test_the_admin_api_takes_an_alphabet_and_devices_get_it(http: httpx.Client) -> None:
    good = {**_survey(_q(alphabet="abc-")), "id": "admin-lettered"}
    answer = http.post("/admin/surveys", json=good, headers={"Authorization": f"Bearer {ADMIN}"})
    assert answer.status_code == 201, answer.text
    q = http.get("/surveys/admin-lettered").json()["questions"][0]
    assert q["alphabet"] == q["discovery"]["alphabet"] == "abc-"
    assert q["discovery"] == load_survey(good).questions[0].hitters.to_config()


@pytest.mark.parametrize(
    ("report", "field", "words"),
    [
        ("vim", "reports.tool", "object"),
        ({"level": 1}, "reports.tool", "fields"),
        ({"level": 0, "sketch": {"row": 0, "bits": "00" * 32}}, "reports.tool.level", "1..7"),
        ({"level": True, "sketch": {"row": 0, "bits": "00" * 32}}, "reports.tool.level", "integer"),
        ({"level": 2, "sketch": {"row": 10**6, "bits": "00" * 32}}, "reports.tool.sketch", "row"),
        ({"level": 2, "sketch": {"row": 0, "bits": "zz"}}, "reports.tool.sketch", "bits"),
        ({"level": 2, "sketch": {"row": 0, "bits": "00" * 32}, "word": {}}, "reports.tool", "fields"),
    ],
)
def test_bad_reports_are_refused_naming_the_field_and_nothing_is_stored(
    http: httpx.Client, server: BackgroundServer, report: Any, field: str, words: str
) -> None:
    h = _hitters(http)
    good = h.reports_to_json(h.privatize_many(["vim"]))[0]
    before = http.get("/surveys/editors/results").json()["n_responses"]
    # a batch whose second response is bad: the first is not stored either
    bodies = [{"idempotency_key": f"good-{field}-{words}"[:60].replace(".", "-").replace(" ", "-"),
               "reports": {"tool": good, "daily": True}},
              {"idempotency_key": "bad-response-0001", "reports": {"tool": report, "daily": True}}]
    r = http.post("/surveys/editors/responses/batch", content=json.dumps({"responses": bodies}),
                  headers={"Authorization": f"Bearer {ADMIN}", "Content-Type": "application/json"})
    assert r.status_code == 422, r.text
    detail = r.json()["detail"]
    assert detail["field"] == f"responses[1].{field}" and words in detail["message"], detail
    assert http.get("/surveys/editors/results").json()["n_responses"] == before


def test_results_list_the_discovered_values_as_identify_finds_them(
    http: httpx.Client, server: BackgroundServer
) -> None:
    h = _hitters(http)
    rng = np.random.default_rng(20261124)
    values = ["vim"] * 2000 + ["emacs"] * 1200 + [PAYLOAD[:6]] * 800 + [f"u{i:04d}" for i in range(2000)]
    reports = h.reports_to_json(h.privatize_many(values, rng=rng))
    already = http.get("/surveys/editors/results").json()["n_responses"]
    assert already == 0
    for start in range(0, len(reports), 2000):
        bodies = [{"idempotency_key": f"resp-{start + i:06d}", "reports": {"tool": rep, "daily": bool(i % 2)}}
                  for i, rep in enumerate(reports[start : start + 2000])]
        r = http.post("/surveys/editors/responses/batch", content=json.dumps({"responses": bodies}),
                      headers={"Authorization": f"Bearer {ADMIN}", "Content-Type": "application/json"})
        assert r.status_code == 201, r.text
    results = http.get("/surveys/editors/results").json()
    q = results["questions"][0]
    assert (q["kind"], q["n"], q["method"], q["max_length"]) == ("discovery", len(values), "pem", 6)
    assert results["n_responses"] == len(values)
    found = [v["value"] for v in q["values"]]
    assert found[:3] == ["vim", "emacs", PAYLOAD[:6]], found
    least = q["values"][2]
    assert least["count"] > 6 * least["std_error"]
    # the same as identify on the aggregate of the very reports
    expected = h.identify(h.aggregate(h.reports_from_json(reports)))
    assert found == list(expected.values)
    np.testing.assert_allclose([v["count"] for v in q["values"]], expected.counts, rtol=1e-12)
    np.testing.assert_allclose([v["ci_low"] for v in q["values"]], expected.ci_low, rtol=1e-12)
    np.testing.assert_allclose([v["std_error"] for v in q["values"]], expected.std_errors, rtol=1e-12)
    for v in q["values"]:
        assert v["ci_low"] <= v["count"] <= v["ci_high"] and v["truncated"] is False
    # the other question is estimated as before
    assert results["questions"][1]["n"] == len(values)
    # cached: the same aggregate answers the same
    assert http.get("/surveys/editors/results").json()["questions"][0] == q


def test_results_with_an_alphabet_list_the_values_as_identify_finds_them(http: httpx.Client) -> None:
    """A question with an alphabet: the stored aggregate is decoded with the alphabet's narrower
    search; the results are identify's on the aggregate of the same reports, and name the alphabet."""
    q = http.get("/surveys/lettered-editors").json()["questions"][0]
    assert q["alphabet"] == LETTERS
    h = HeavyHitters.from_config(q["discovery"])
    assert h.alphabet == LETTERS
    rng = np.random.default_rng(20261125)
    tail = ["".join(rng.choice(list(LETTERS), 6)) for _ in range(2000)]
    values = ["vim"] * 2000 + ["emacs"] * 1200 + ["nano"] * 800 + tail
    reports = h.reports_to_json(h.privatize_many(values, rng=rng))
    bodies = [{"idempotency_key": f"lettered-{i:06d}", "reports": {"tool": rep}} for i, rep in enumerate(reports)]
    r = http.post("/surveys/lettered-editors/responses/batch", content=json.dumps({"responses": bodies}),
                  headers={"Authorization": f"Bearer {ADMIN}", "Content-Type": "application/json"})
    assert r.status_code == 201, r.text
    result = http.get("/surveys/lettered-editors/results").json()["questions"][0]
    assert (result["kind"], result["n"], result["alphabet"]) == ("discovery", len(values), LETTERS)
    found = [v["value"] for v in result["values"]]
    assert found[:3] == ["vim", "emacs", "nano"], found
    assert result["values"][2]["count"] > 6 * result["values"][2]["std_error"]
    expected = h.identify(h.aggregate(h.reports_from_json(reports)))
    assert found == list(expected.values)
    np.testing.assert_allclose([v["count"] for v in result["values"]], expected.counts, rtol=1e-12)
    # a question without an alphabet says so in its results by having none
    assert http.get("/surveys/editors/results").json()["questions"][0].get("alphabet") is None


def test_the_python_client_refuses_an_answer_outside_the_alphabet(http: httpx.Client) -> None:
    from deniable.client import privatize_answers

    survey = http.get("/surveys/lettered-editors").json()
    assert set(privatize_answers(survey, {"tool": "vim"})["tool"]) == {"level", "sketch"}
    with pytest.raises(ValueError, match="has the character 'V', not in the alphabet"):
        privatize_answers(survey, {"tool": "Vim"})


def test_python_devices_answer_free_text_through_the_client(http: httpx.Client, server: BackgroundServer) -> None:
    """``deniable.client`` randomizes a free-text answer with the question's exact config."""
    from deniable.client import Client, privatize_answers

    survey = http.get("/surveys/editors").json()
    report = privatize_answers(survey, {"tool": "vim", "daily": True})
    assert set(report["tool"]) == {"level", "sketch"}
    before = http.get("/surveys/editors/results").json()["n_responses"]
    with Client(server.url, token=ADMIN) as client:
        answered = client.respond_many("editors", [{"tool": "emacs", "daily": False}] * 300)
    assert answered == {"accepted": 300, "duplicates": 0}
    after = http.get("/surveys/editors/results").json()
    assert after["n_responses"] == before + 300 and after["questions"][0]["n"] == before + 300


def test_a_free_text_question_in_rounds(sqlite_url: str) -> None:
    """In a survey with rounds the free-text question costs its epsilon per round and each
    round's results list what that round's devices typed."""
    rounds_survey = {**SURVEY, "id": "weekly-editors", "rounds": {"every": "7d", "lifetime_epsilon": 21}}
    loaded = load_survey(rounds_survey)
    assert loaded.costs["tool"].per_report == pytest.approx(loaded.questions[0].epsilon)
    h = loaded.questions[0].hitters
    values = ["vim"] * 1500 + ["emacs"] * 1000 + [f"u{i:04d}" for i in range(500)]
    reports = h.reports_to_json(h.privatize_many(values, rng=np.random.default_rng(7)))
    bodies = [{"idempotency_key": f"round0-{i:06d}", "device": f"device-{i:06d}-abcdefghijklmnop",
               "reports": {"tool": r, "daily": True}} for i, r in enumerate(reports)]
    with BackgroundServer([rounds_survey], db_url=sqlite_url, admin_token=ADMIN) as server, \
            httpx.Client(base_url=server.url, timeout=60) as http:
        r = http.post("/surveys/weekly-editors/responses/batch", content=json.dumps({"responses": bodies}),
                      headers={"Authorization": f"Bearer {ADMIN}", "Content-Type": "application/json"})
        assert r.status_code == 201, r.text
        results = http.get("/surveys/weekly-editors/results")
    assert results.status_code == 200, results.text
    body = results.json()
    (round0,) = body["rounds"]["rounds"]
    per_round, pooled = round0["questions"][0], body["questions"][0]
    assert per_round["kind"] == pooled["kind"] == "discovery" and per_round["n"] == len(values)
    assert [v["value"] for v in per_round["values"]][:2] == ["vim", "emacs"]
