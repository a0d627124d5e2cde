"""Surveys in rounds over real HTTP: one response per device per round, the lifetime budget, results per round.

The server's clock is a setting (``BackgroundServer(clock=...)``); the tests
move a clock of their own forward by whole rounds. Every test runs on SQLite
files and on PostgreSQL (``db_url``) unless it says otherwise.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import secrets
import threading
from typing import Any

import httpx
import numpy as np
import pytest
from sqlalchemy import MetaData, create_engine, select

import deniable as dn
from deniable._accounting import spent
from deniable.client import new_key, privatize_answers
from deniable.server._runner import BackgroundServer
from deniable.server._storage import Storage
from deniable.server._surveys import SurveyError, load_survey

DAY = 86_400
START = 1_796_083_200.0  # 2026-12-01T00:00:00Z
ADMIN = "rounds-admin-token"
PLACES = ["home", "work", "travel"]
SURVEY: dict[str, Any] = {
    "id": "daily", "title": "Where were you today?", "budget": 2, "rate_limit": "off",
    "rounds": {"every": "1d", "lifetime_epsilon": 2.8, "start": "2026-12-01T00:00:00Z"},
    "questions": [
        {"id": "sick", "text": "Were you sick today?", "type": "yes-no", "mechanism": "binary-rr", "epsilon": 0.5},
        {"id": "where", "text": "Where were you?", "type": "categorical", "categories": PLACES,
         "mechanism": "l-grr", "epsilon_perm": 1.0, "epsilon_1": 0.5},
    ],
}


class Clock:
    """The server's clock, moved by the test (seconds since the epoch)."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def device() -> str:
    """A device key as devices draw them: 128 random bits, base64url."""
    return secrets.token_urlsafe(16)


def body(survey: dict[str, Any], key: str, answers: dict[str, Any]) -> dict[str, Any]:
    return {"idempotency_key": new_key(), "device": key, "reports": privatize_answers(survey, answers)}


def detail(response: httpx.Response) -> dict[str, str]:
    return dict(response.json()["detail"])


# --------------------------------------------------------------- definitions
@pytest.mark.parametrize(("rounds", "field", "words"), [
    ("daily", "rounds", "every"),
    ({"lifetime_epsilon": 3}, "rounds.every", "required"),
    ({"every": 60}, "rounds.lifetime_epsilon", "required"),
    ({"every": 0, "lifetime_epsilon": 3}, "rounds.every", "'1d'"),
    ({"every": "1w", "lifetime_epsilon": 3}, "rounds.every", "s, m, h, d"),
    ({"every": True, "lifetime_epsilon": 3}, "rounds.every", "seconds"),
    ({"every": 60, "lifetime_epsilon": 0}, "rounds.lifetime_epsilon", "> 0"),
    ({"every": 60, "lifetime_epsilon": float("inf")}, "rounds.lifetime_epsilon", "finite"),
    ({"every": 60, "lifetime_epsilon": "3"}, "rounds.lifetime_epsilon", "number"),
    ({"every": 60, "lifetime_epsilon": 3, "start": "2026-12-01T00:00:00"}, "rounds.start", "UTC"),
    ({"every": 60, "lifetime_epsilon": 3, "start": "2026-12-01T00:00:00+01:00"}, "rounds.start", "UTC"),
    ({"every": 60, "lifetime_epsilon": 3, "start": "tomorrow"}, "rounds.start", "ISO-8601"),
    ({"every": 60, "lifetime_epsilon": 3, "until": 5}, "rounds.until", "not a field"),
    ({"every": 60, "lifetime_epsilon": 0.9}, "rounds.lifetime_epsilon", "one round already costs"),
])
def test_bad_rounds_are_refused_naming_the_field(rounds: Any, field: str, words: str) -> None:
    with pytest.raises(SurveyError) as caught:
        load_survey({**SURVEY, "rounds": rounds})
    assert caught.value.field == field and words in caught.value.message, caught.value


def test_rounds_are_read_in_any_unit_and_stored_in_seconds() -> None:
    for every, seconds in [(90, 90), ("90s", 90), ("30m", 1800), ("12h", 43_200), ("1d", DAY)]:
        survey = load_survey({**SURVEY, "rounds": {"every": every, "lifetime_epsilon": 3}})
        assert survey.rounds is not None and survey.rounds.every == seconds and survey.rounds.start is None
    stored = load_survey(SURVEY).to_json()["rounds"]
    assert stored == {"every": DAY, "lifetime_epsilon": 2.8, "start": "2026-12-01T00:00:00Z"}
    # one round (1.0) fits; the sampled allocation costs the largest question's epsilon
    sampled = {**SURVEY, "allocation": "sample", "rounds": {"every": 60, "lifetime_epsilon": 0.6}}
    assert load_survey(sampled).rounds is not None


def test_what_each_kind_of_question_costs_per_round() -> None:
    """A mechanism question costs its epsilon (capped if it memoizes), a design its epsilon, a plain one nothing."""
    questions = [
        *SURVEY["questions"],
        {"id": "late", "text": "Up late?", "type": "yes-no", "design": {"model": "Warner", "p": 0.6}},
        {"id": "age", "text": "Age?", "type": "integer", "randomized": False, "min": 16, "max": 99},
    ]
    survey = load_survey({**SURVEY, "budget": 3, "questions": questions})
    lgrr = survey.question("where").mechanism  # type: ignore[union-attr]
    costs = survey.costs
    assert costs["sick"].lifetime is None and costs["sick"].per_report == pytest.approx(0.5)
    assert (costs["where"].per_report, costs["where"].lifetime) == (lgrr.epsilon, lgrr.epsilon_perm)
    assert costs["late"].lifetime is None and costs["late"].per_report == pytest.approx(math.log(1.5))
    assert costs["age"].per_report == 0 and costs["age"].lifetime is None
    # ten rounds: the design and binary-rr every time, L-GRR at most epsilon_perm
    ten = spent(costs, dict.fromkeys(costs, 10))
    assert ten == pytest.approx(10 * (costs["sick"].per_report + costs["late"].per_report) + lgrr.epsilon_perm)
    # a design whose answer reveals the truth (allowed) makes a single round cost infinity
    reveals = {"id": "copied", "text": "Copied?", "type": "yes-no", "design": {"model": "UQTunknown", "p": [0.7, 0.3]},
               "unrelated_question": "Born in spring?", "allow_infinite_epsilon": True}
    with pytest.raises(SurveyError, match="one round already costs a device inf"):
        load_survey({**SURVEY, "questions": [*SURVEY["questions"], reveals]})


def test_the_start_defaults_to_when_the_survey_was_first_stored(sqlite_url: str) -> None:
    clock = Clock(START + 1234.5)
    without_start = {**SURVEY, "rounds": {"every": "1h", "lifetime_epsilon": 3}}
    storage = Storage(sqlite_url, clock=clock)
    storage.add_survey(without_start)
    assert storage.public("daily")["rounds"]["start"] == "2026-12-01T00:20:34.500Z"
    storage.close()
    clock.now += 3 * 3600
    storage = Storage(sqlite_url, clock=clock)  # a restart: the same file again keeps its start
    assert storage.add_survey(without_start).rounds.start == START + 1234.5  # type: ignore[union-attr]
    assert storage.public("daily")["current_round"] == 3
    with pytest.raises(dn.errors.DeniableError, match="different survey"):
        storage.add_survey({**without_start, "rounds": {"every": "2h", "lifetime_epsilon": 3}})
    storage.close()


# --------------------------------------------------------------- the protocol
def test_device_keys_are_required_with_rounds_and_refused_without(db_url: str) -> None:
    plain = {**SURVEY, "id": "once"}
    del plain["rounds"]
    with BackgroundServer([SURVEY, plain], db_url=db_url, admin_token=ADMIN, clock=Clock(START)) as server, \
            httpx.Client(base_url=server.url) as http:
        survey = http.get("/surveys/daily").json()
        assert survey["rounds"] == SURVEY["rounds"] | {"every": DAY} and survey["current_round"] == 0
        once = http.get("/surveys/once").json()
        assert once["rounds"] is None and once["current_round"] is None
        answers = {"sick": False, "where": "home"}

        missing = body(survey, device(), answers)
        del missing["device"]
        r = http.post("/surveys/daily/responses", json=missing)
        assert r.status_code == 422 and detail(r)["field"] == "device" and "rounds" in detail(r)["message"]
        for bad in ["short", "x" * 129, "has space in it 0123456789", 12345678901234567890123]:
            r = http.post("/surveys/daily/responses", json={**missing, "device": bad})
            assert r.status_code == 422 and detail(r)["field"] == "device", r.text
            assert str(bad) not in detail(r)["message"]  # a key is never echoed
        r = http.post("/surveys/once/responses", json=body(once, device(), answers))
        assert r.status_code == 422 and detail(r)["field"] == "device"
        assert "only for surveys with rounds" in detail(r)["message"]
        batch = {"responses": [body(survey, device(), answers), missing]}
        r = http.post("/surveys/daily/responses/batch", json=batch, headers={"Authorization": f"Bearer {ADMIN}"})
        assert r.status_code == 422 and detail(r)["field"] == "responses[1].device"
        assert server.storage.count_responses("daily") == 0


def test_rounds_budget_and_results_over_several_days(db_url: str) -> None:
    """Three devices over five daily rounds: one response per round, refused over the lifetime budget.

    Per round a device spends ``epsilon`` of the binary-rr question and
    ``epsilon_1`` of the L-GRR question until that reaches ``epsilon_perm``:
    1.0, 2.0, 2.5, then 3.0 > 2.8, refused.
    """
    clock = Clock(START + 3600)
    a, b, c = device(), device(), device()
    with BackgroundServer([SURVEY], db_url=db_url, clock=clock) as server, \
            httpx.Client(base_url=server.url) as http:
        survey = http.get("/surveys/daily").json()
        costs = server.storage.survey("daily").costs
        sent: dict[int, list[dict[str, Any]]] = {}

        def post(key: str, answers: dict[str, Any], expect: int = 201) -> httpx.Response:
            b = body(survey, key, answers)
            r = http.post("/surveys/daily/responses", json=b)
            assert r.status_code == expect, r.text
            if expect == 201:
                sent.setdefault(http.get("/surveys/daily").json()["current_round"], []).append(b)
            return r

        post(a, {"sick": True, "where": "home"})
        post(b, {"sick": False, "where": "work"})
        retry = body(survey, c, {"sick": False, "where": "home"})
        assert http.post("/surveys/daily/responses", json=retry).status_code == 201
        sent[0].append(retry)
        twice = post(a, {"sick": True, "where": "home"}, expect=409).json()["detail"]
        assert twice["field"] == "device" and "already answered round 0" in twice["message"]
        assert "2026-12-02T00:00:00Z" in twice["message"]  # when the next round starts

        clock.now += DAY  # round 1
        assert http.get("/surveys/daily").json()["current_round"] == 1
        again = http.post("/surveys/daily/responses", json=retry)  # a retry of round 0's response
        assert again.status_code == 201  # answered as the duplicate it is: not stored, not charged
        post(a, {"sick": False, "where": "home"})
        post(c, {"sick": False, "where": "travel"})
        clock.now += DAY  # round 2
        post(a, {"sick": False, "where": "home"})
        clock.now += 2 * DAY  # round 4 (nobody answered round 3)
        stored = server.storage.count_responses("daily")
        before = server.storage.round_aggregates("daily")
        refused = post(a, {"sick": True, "where": "home"}, expect=403).json()["detail"]
        assert refused["field"] == "device"
        had = spent(costs, {"sick": 3, "where": 3})
        would = spent(costs, {"sick": 4, "where": 4})
        assert had == pytest.approx(2.5, rel=1e-6) and would == pytest.approx(3.0, rel=1e-6)
        assert refused["message"] == (
            "this report would take the device over the lifetime budget of survey 'daily': lifetime_epsilon "
            f"is 2.8 and this device has spent {had:.6g}; this round's report would cost {would - had:.6g} "
            f"more ({would:.6g} in all)"
        )
        assert server.storage.count_responses("daily") == stored  # nothing of it stored
        assert server.storage.round_aggregates("daily") == before
        post(b, {"sick": True, "where": "work"})  # another device still answers round 4

        results = http.get("/surveys/daily/results", params={"target": "respondents"}).json()
    rounds = results["rounds"]
    assert rounds["current_round"] == 4 and rounds["lifetime_epsilon"] == 2.8
    assert [r["round"] for r in rounds["rounds"]] == [0, 1, 2, 4]
    assert [r["n_responses"] for r in rounds["rounds"]] == [3, 2, 1, 1]
    second = rounds["rounds"][1]
    assert (second["start"], second["end"]) == ("2026-12-02T00:00:00Z", "2026-12-03T00:00:00Z")
    assert results["n_responses"] == 7
    # the shuffled guarantee is per round (one response per device), not for a device's several rounds
    assert results["shuffled"] is None
    assert [r["shuffled"]["n"] for r in rounds["rounds"]] == [3, 2, 1, 1]
    mechanisms = {q["id"]: dn.from_config(q["mechanism"]) for q in survey["questions"]}
    for r in rounds["rounds"]:
        for q in r["questions"]:
            m = mechanisms[q["id"]]
            reports = m.reports_from_json([b["reports"][q["id"]] for b in sent[r["round"]]])
            expected = m.estimate_from(m.aggregate(reports), target="respondents")
            assert q["support_counts"] == m.aggregate(reports).to_json()
            assert q["n"] == len(sent[r["round"]])
            np.testing.assert_allclose(q["estimate"], expected.frequencies, rtol=1e-12)
            np.testing.assert_allclose(q["std_error"], expected.std_errors, rtol=1e-12)
            assert all(lo <= e <= hi for lo, e, hi in zip(q["ci_low"], q["estimate"], q["ci_high"], strict=True))
    devices = rounds["devices"]
    # a spent 2.5 (3 rounds), b 2.0, c 2.0: all at >= 50% (1.4), none at 100% (2.8)
    assert devices["devices"] == 3
    assert devices["max_spent"] == pytest.approx(2.5) and devices["max_spent_fresh"] == pytest.approx(3.0)
    at = {s["share"]: (s["devices"], s["devices_fresh"]) for s in devices["at_least"]}
    assert at == {0.25: (3, 3), 0.5: (3, 3), 0.75: (1, 1), 1.0: (0, 1)}


def test_a_batch_counts_each_device_once_per_round(db_url: str) -> None:
    """Per-item batch semantics: the whole batch is refused, naming the item."""
    clock = Clock(START)
    auth = {"Authorization": f"Bearer {ADMIN}"}
    with BackgroundServer([SURVEY], db_url=db_url, admin_token=ADMIN, clock=clock) as server, \
            httpx.Client(base_url=server.url, headers=auth) as http:
        survey = http.get("/surveys/daily").json()
        a, b = device(), device()
        answers = {"sick": False, "where": "home"}
        three = [body(survey, a, answers), body(survey, b, answers), body(survey, a, answers)]
        r = http.post("/surveys/daily/responses/batch", json={"responses": three})
        assert r.status_code == 409 and detail(r)["field"] == "responses[2].device", r.text
        assert server.storage.count_responses("daily") == 0
        ok = [body(survey, a, answers), body(survey, b, answers)]
        assert http.post("/surveys/daily/responses/batch", json={"responses": ok}).json() == {
            "accepted": 2, "duplicates": 0}
        # the same batch again is all duplicates, also in a later round
        clock.now += DAY
        assert http.post("/surveys/daily/responses/batch", json={"responses": ok}).json() == {
            "accepted": 0, "duplicates": 2}
        for _ in range(2):  # rounds 1 and 2 for a
            assert http.post("/surveys/daily/responses", json=body(survey, a, answers)).status_code == 201
            clock.now += DAY
        r = http.post("/surveys/daily/responses/batch",
                      json={"responses": [body(survey, b, answers), body(survey, a, answers)]})
        assert r.status_code == 403 and detail(r)["field"] == "responses[1].device"
        assert "lifetime_epsilon is 2.8" in detail(r)["message"]
        assert server.storage.count_responses("daily") == 4  # b's response in the refused batch neither


def test_sampled_rounds_charge_the_answered_question(sqlite_url: str) -> None:
    sampled = {**SURVEY, "id": "sampled", "allocation": "sample",
               "rounds": {"every": 60, "lifetime_epsilon": 1.2, "start": "2026-12-01T00:00:00Z"}}
    clock = Clock(START)
    with BackgroundServer([sampled], db_url=sqlite_url, clock=clock) as server, \
            httpx.Client(base_url=server.url) as http:
        key = device()
        lgrr = dn.from_config(http.get("/surveys/sampled").json()["questions"][1]["mechanism"])
        for _ in range(5):  # L-GRR reports of one value: capped at epsilon_perm = 1.0
            report = lgrr.reports_to_json(lgrr.reports_from_json([lgrr.privatize("home")]))[0]
            r = http.post("/surveys/sampled/responses",
                          json={"idempotency_key": new_key(), "device": key, "reports": {"where": report}})
            assert r.status_code == 201, r.text
            clock.now += 60
        r = http.post("/surveys/sampled/responses",
                      json={"idempotency_key": new_key(), "device": key, "reports": {"sick": True}})
        had = spent(server.storage.survey("sampled").costs, {"where": 5})
        assert had == lgrr.epsilon_perm < 5 * lgrr.epsilon
        assert r.status_code == 403 and f"has spent {had:.6g};" in detail(r)["message"], r.text
        budgets = server.storage.device_budgets("sampled")
    assert budgets["max_spent"] == pytest.approx(1.0) and budgets["max_spent_fresh"] == pytest.approx(2.5)


def test_a_round_before_the_start_is_refused(sqlite_url: str) -> None:
    with BackgroundServer([SURVEY], db_url=sqlite_url, clock=Clock(START - 10)) as server, \
            httpx.Client(base_url=server.url) as http:
        survey = http.get("/surveys/daily").json()
        assert survey["current_round"] is None
        r = http.post("/surveys/daily/responses", json=body(survey, device(), {"sick": True, "where": "home"}))
        assert r.status_code == 409 and "from 2026-12-01T00:00:00Z" in detail(r)["message"]


# --------------------------------------------------------------- concurrency
def test_one_device_posting_at_once_is_stored_once(db_url: str) -> None:
    """8 threads post different responses of one device together, for 6 devices: one each is stored.

    The per-round uniqueness, and with it the budget, hold under concurrent writers.
    """
    clock = Clock(START)
    with BackgroundServer([SURVEY], db_url=db_url, clock=clock) as server:
        survey = server.storage.public("daily")
        for _ in range(6):
            key = device()
            bodies = [body(survey, key, {"sick": i % 2 == 0, "where": "work"}) for i in range(8)]
            barrier = threading.Barrier(len(bodies))
            codes: list[int] = []

            def send(b: dict[str, Any], barrier: threading.Barrier, codes: list[int]) -> None:
                with httpx.Client(base_url=server.url, timeout=60) as http:
                    barrier.wait()
                    codes.append(http.post("/surveys/daily/responses", json=b).status_code)

            threads = [threading.Thread(target=send, args=(b, barrier, codes)) for b in bodies]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert sorted(codes) == [201] + [409] * 7, codes
        assert server.storage.count_responses("daily") == 6
        assert server.storage.device_budgets("daily")["devices"] == 6
        (round0,) = server.storage.round_aggregates("daily").values()
        assert round0["sick"].n == 6 and server.storage.aggregates("daily")["sick"].n == 6


# --------------------------------------------------------------- the key, hashed
def test_the_device_key_is_in_no_table_and_no_log_line(server_process: Any, sqlite_url: str) -> None:
    """The server stores HMAC-SHA256(per-survey salt, key) only, and logs no key, even of a refused response."""
    other = {**SURVEY, "id": "other"}
    server = server_process([], sqlite_url, env={"DENIABLE_ADMIN_TOKEN": ADMIN})
    key = device()
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {ADMIN}"}) as http:
        for definition in (SURVEY, other):
            now_start = {**definition, "rounds": {"every": "1d", "lifetime_epsilon": 2.8}}
            assert http.post("/admin/surveys", json=now_start).status_code == 201
        for sid in ("daily", "other"):
            survey = http.get(f"/surveys/{sid}").json()
            assert http.post(f"/surveys/{sid}/responses", json=body(survey, key, {"sick": True, "where": "home"})
                             ).status_code == 201
        r = http.post("/surveys/daily/responses", json=body(survey, key, {"sick": True, "where": "home"}))
        assert r.status_code == 409
        bad = body(survey, key + "!", {"sick": True, "where": "home"})
        assert http.post("/surveys/daily/responses", json=bad).status_code == 422
    server.stop()
    assert "POST /surveys/daily/responses" in server.log_path.read_text()
    assert key not in server.log_path.read_text()

    engine = create_engine(sqlite_url)
    tables = MetaData()
    tables.reflect(engine)
    with engine.connect() as conn:
        cells = [str(cell) for table in tables.sorted_tables for row in conn.execute(select(table)) for cell in row]
        salts = dict(conn.execute(select(tables.tables["deniable_device_salts"])).all())
        devices = conn.execute(select(tables.tables["deniable_devices"].c.survey_id,
                                      tables.tables["deniable_devices"].c.device)).all()
    engine.dispose()
    assert cells and not any(key in cell for cell in cells)
    assert sorted(devices) == sorted(
        (sid, hmac.new(bytes.fromhex(salts[sid]), key.encode(), hashlib.sha256).hexdigest()) for sid in salts
    )
    assert len({d for _, d in devices}) == 2  # one key, two surveys: unrelated hashes
    # nothing stored with a response names its device
    assert not any(d in cell for _, d in devices for cell in cells if cell != d)
    assert all(len(s) == 64 for s in salts.values())


# ------------------------------------------------- bounds (issue 27, the server audit)
@pytest.mark.parametrize(("start", "every", "accepted"), [
    ("2000-01-01T00:00:00Z", 1, True),
    ("1999-12-31T23:59:59Z", "1d", False),
    ("0001-01-01T00:00:00Z", "1d", False),  # round 2**31 would come at once
    ("9999-12-31T23:59:59.999Z", 1, False),  # the last instant of 9999: its first round ends in 10000
    ("9999-12-31T23:59:59.9999Z", 1, False),  # read to the millisecond: 10000-01-01
    ("9999-12-31T23:59:59Z", 1, True),
    ("9999-12-31T00:00:00Z", "1d", True),
    ("9999-12-31T00:00:00Z", "2d", False),
])
def test_the_start_lies_in_years_2000_to_9999_with_the_first_round(start: str, every: Any, accepted: bool) -> None:
    definition = {**SURVEY, "rounds": {"every": every, "lifetime_epsilon": 3, "start": start}}
    if accepted:
        assert load_survey(definition).rounds is not None
        return
    with pytest.raises(SurveyError) as caught:
        load_survey(definition)
    assert caught.value.field == "rounds.start" and "2000-01-01T00:00:00Z" in caught.value.message
    assert "year 9999" in caught.value.message


def test_an_unquoted_yaml_timestamp_is_read_as_the_docstring_writes_it(tmp_path: Any) -> None:
    """``start: 2026-12-01T00:00:00Z`` unquoted is a datetime to YAML; it was refused as not a string."""
    import yaml

    text = yaml.safe_dump({k: v for k, v in SURVEY.items() if k != "rounds"}, sort_keys=False)
    for written, expected in [("2026-12-01T00:00:00Z", START), ("2026-12-01 00:00:00.250+00:00", START + 0.25),
                              ("'2026-12-01T00:00:00Z'", START)]:
        path = tmp_path / "daily.yaml"
        path.write_text(f"{text}rounds:\n  every: 1d\n  lifetime_epsilon: 2.8\n  start: {written}\n")
        rounds = load_survey(path).rounds
        assert rounds is not None and rounds.start == expected, written
    for written, words in [("2026-12-01 00:00:00", "ending in Z"), ("2026-12-01T00:00:00+01:00", "ending in Z"),
                           ("2026-12-01", "a date and a time"), ("1796083200", "a date and a time")]:
        path.write_text(f"{text}rounds:\n  every: 1d\n  lifetime_epsilon: 2.8\n  start: {written}\n")
        with pytest.raises(SurveyError) as caught:
            load_survey(path)
        assert caught.value.field == "rounds.start" and words in caught.value.message, written


def test_a_start_in_year_10000_is_refused_over_http_not_a_server_error(sqlite_url: str) -> None:
    """``POST /admin/surveys`` with ``rounds.start`` at the last instant of 9999 answered 500."""
    with BackgroundServer([], db_url=sqlite_url, admin_token=ADMIN) as server, \
            httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {ADMIN}"}) as http:
        for start in ("9999-12-31T23:59:59.999Z", "9999-12-31T23:59:59.9999999Z", "0001-01-01T00:00:00Z"):
            late = {**SURVEY, "rounds": {**SURVEY["rounds"], "start": start}}
            r = http.post("/admin/surveys", json=late)
            assert r.status_code == 422 and detail(r)["field"] == "rounds.start", (start, r.text)
        soon = {**SURVEY, "rounds": {**SURVEY["rounds"], "start": "9999-12-30T00:00:00Z"}}
        r = http.post("/admin/surveys", json=soon)
        assert r.status_code == 201, r.text
        assert http.get("/surveys/daily").json()["rounds"]["start"] == "9999-12-30T00:00:00Z"


def test_the_last_round_is_stored_and_none_after_it(db_url: str) -> None:
    """Round ``2**31 - 1`` is the last: stored (on PostgreSQL too, where round ``2**31`` answered 500 to every
    response); a response after it is refused naming ``rounds``, and nothing is stored."""
    from deniable.server._rounds import MAX_ROUND, MIN_START

    every_second = {**SURVEY, "id": "fast", "rounds": {"every": 1, "lifetime_epsilon": 2.8,
                                                       "start": "2000-01-01T00:00:00Z"}}
    clock = Clock(MIN_START + MAX_ROUND + 0.5)
    with BackgroundServer([every_second], db_url=db_url, admin_token=ADMIN, clock=clock) as server, \
            httpx.Client(base_url=server.url) as http:
        survey = http.get("/surveys/fast").json()
        assert survey["current_round"] == MAX_ROUND
        r = http.post("/surveys/fast/responses", json=body(survey, device(), {"sick": True, "where": "work"}))
        assert r.status_code == 201, r.text
        rounds = http.get("/surveys/fast/results").json()["rounds"]["rounds"]
        assert [r["round"] for r in rounds] == [MAX_ROUND] and rounds[0]["start"] == "2068-01-19T03:14:07Z"
        clock.now += 1
        r = http.post("/surveys/fast/responses", json=body(survey, device(), {"sick": True, "where": "work"}))
        assert r.status_code == 409 and detail(r)["field"] == "rounds" and "all its 2147483648 rounds" in r.text
        assert server.storage.count_responses("fast") == 1
