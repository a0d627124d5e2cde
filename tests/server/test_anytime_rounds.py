"""``rounds: {anytime: true}``: each round's frequency and number questions carry the confidence sequence
of every round so far (``deniable._sequences``), exactly as ``m.confidence_sequence`` gives it from the
rounds' aggregates; memoizing questions (L-GRR, the service's 1BitMean number questions) get none. Real
server on loopback, real SQLite, a moved clock."""

from __future__ import annotations

import secrets
from typing import Any

import httpx
import numpy as np
import pytest

from deniable.client import new_key, privatize_answers
from deniable.server._runner import BackgroundServer
from deniable.server._surveys import SurveyError, load_survey

DAY = 86_400
START = 1_796_083_200.0  # 2026-12-01T00:00:00Z
ADMIN = "anytime-admin-token"
SURVEY: dict[str, Any] = {
    "id": "daily", "title": "Daily check", "budget": 3, "rate_limit": "off",
    "rounds": {"every": "1d", "lifetime_epsilon": 20, "start": "2026-12-01T00:00:00Z", "anytime": True,
               "planned_n": 1000},
    "questions": [
        {"id": "sick", "text": "Were you sick today?", "type": "yes-no", "mechanism": "binary-rr", "epsilon": 1},
        {"id": "where", "text": "Where were you?", "type": "categorical", "categories": ["home", "work"],
         "mechanism": "l-grr", "epsilon_perm": 2.0, "epsilon_1": 1.0},
        {"id": "minutes", "text": "Minutes outside?", "type": "number", "low": 0, "high": 600,
         "mechanism": "one-bit-mean", "epsilon": 1},
    ],
}


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    clock = Clock(START + 60)
    rng = np.random.default_rng(8)
    devices = [secrets.token_urlsafe(16) for _ in range(150)]
    db = tmp_path_factory.mktemp("anytime") / "db.sqlite"
    auth = {"Authorization": f"Bearer {ADMIN}"}
    with BackgroundServer([SURVEY], db_url=f"sqlite:///{db}", admin_token=ADMIN, clock=clock) as server, \
            httpx.Client(base_url=server.url, headers=auth, timeout=60) as http:
        survey = http.get("/surveys/daily").json()
        for _ in range(4):
            batch = [{"idempotency_key": new_key(), "device": key,
                      "reports": privatize_answers(survey, {"sick": bool(rng.random() < 0.2), "where": "home",
                                                            "minutes": float(rng.uniform(0, 120))}, rng=rng)}
                     for key in devices]
            r = http.post("/surveys/daily/responses/batch", json={"responses": batch})
            assert r.status_code == 201, r.text
            clock.now += DAY
        out = http.get("/surveys/daily/results").json()
        out["aggregates"] = server.storage.round_aggregates("daily")
    return out


def test_each_round_carries_the_sequence_of_the_rounds_so_far(results: dict[str, Any]) -> None:
    rounds = results["rounds"]
    assert rounds["anytime"] is True and rounds["planned_n"] == 1000
    survey = load_survey(SURVEY)
    aggregates = list(results["aggregates"].values())
    for qid in ("sick",):
        m = survey.question(qid).mechanism
        cs = m.confidence_sequence([a[qid] for a in aggregates], alpha=0.05, planned_n=1000, target="respondents")
        for k, entry in enumerate(rounds["rounds"]):
            seq = entry["sequences"][qid]
            assert seq["n"] == 150 * (k + 1) and seq["alpha"] == pytest.approx(0.05)
            expected = {"estimate": cs.estimate[k], "ci_low": cs.low[k], "ci_high": cs.high[k]}
            for key, value in expected.items():
                assert seq[key] == pytest.approx(value.tolist(), abs=1e-12)
        # the band's half-width shrinks with n (a clipped end at 0 or 1 moves with the estimate, so
        # the unclipped side is compared; the reports are seeded, so this cannot flake)
        sides = [min(e["sequences"][qid]["ci_high"][1] - e["sequences"][qid]["estimate"][1],
                     e["sequences"][qid]["estimate"][1] - e["sequences"][qid]["ci_low"][1])
                 for e in rounds["rounds"]]
        halves = [max(e["sequences"][qid]["ci_high"][1] - e["sequences"][qid]["estimate"][1],
                      e["sequences"][qid]["estimate"][1] - e["sequences"][qid]["ci_low"][1])
                  for e in rounds["rounds"]]
        assert halves == sorted(halves, reverse=True) and all(s <= h for s, h in zip(sides, halves, strict=True))
    for qid in ("where", "minutes"):  # L-GRR and 1BitMean memoize: a device's reports are not independent
        assert all(e["sequences"][qid] is None for e in rounds["rounds"])


def test_without_anytime_there_is_no_sequence() -> None:
    plain = load_survey({**SURVEY, "rounds": {"every": "1d", "lifetime_epsilon": 20}})
    assert plain.rounds is not None and not plain.rounds.anytime and "anytime" not in plain.rounds.to_json()


@pytest.mark.parametrize(("rounds", "field"), [
    ({"every": 60, "lifetime_epsilon": 20, "anytime": "yes"}, "rounds.anytime"),
    ({"every": 60, "lifetime_epsilon": 20, "planned_n": 100}, "rounds.planned_n"),
    ({"every": 60, "lifetime_epsilon": 20, "anytime": True, "planned_n": 0}, "rounds.planned_n"),
])
def test_bad_anytime_settings_name_the_field(rounds: dict[str, Any], field: str) -> None:
    with pytest.raises(SurveyError, match=field.replace(".", r"\.")):
        load_survey({**SURVEY, "rounds": rounds})
