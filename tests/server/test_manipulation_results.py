"""The results state what fake responses could do, check each round against the last, and show the defences.

Real HTTP on loopback, SQLite. A GRR question over 8 places in daily rounds:
2,000 honest devices in round 0; in round 1, 2,000 honest devices and 400
fake ones whose reports all say "h". The change test must flag "h" in round
1: its estimate rises by ``(400/2400) (1 - q*)/(p* - q*) = 0.85`` against a
standard error of the difference near 0.063 (13 standard errors against the
test's 3.8 at alpha 1e-3 over 8 places: a miss below 1e-18). Round 0 has no
earlier round. Nothing asserts that honest rounds are not flagged: at the
results' alpha of 1e-3 that would fail one run in a thousand
(the calibrated rates: tests/stat/test_detection_stat.py).
"""

from __future__ import annotations

import secrets
from typing import Any

import httpx
import numpy as np
import pytest

import deniable as dn
from deniable.client import new_key, privatize_answers
from deniable.server._runner import BackgroundServer

DAY = 86_400
START = 1_796_083_200.0  # 2026-12-01T00:00:00Z
PLACES = list("abcdefgh")
SURVEY: dict[str, Any] = {
    "id": "places", "title": "Where?", "budget": 1, "rate_limit": {"responses": 50, "seconds": 60},
    "max_responses": 100_000,
    "rounds": {"every": "1d", "lifetime_epsilon": 10, "start": "2026-12-01T00:00:00Z"},
    "questions": [{"id": "where", "text": "Where?", "type": "categorical", "categories": PLACES,
                   "mechanism": "grr", "epsilon": 1.0}],
}


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _honest(survey: dict[str, Any], rng: np.random.Generator, n: int) -> list[dict[str, Any]]:
    places = rng.choice(PLACES[:6], n)
    return [{"idempotency_key": new_key(), "device": secrets.token_urlsafe(16),
             "reports": privatize_answers(survey, {"where": str(p)}, rng=rng)} for p in places]


def _fake(n: int) -> list[dict[str, Any]]:
    return [{"idempotency_key": new_key(), "device": secrets.token_urlsafe(16), "reports": {"where": "h"}}
            for _ in range(n)]


@pytest.mark.slow  # 4,400 responses over HTTP: a few seconds
def test_results_state_the_bound_flag_the_pushed_round_and_show_the_defences(
    sqlite_url: str, rng: np.random.Generator
) -> None:
    clock = Clock(START + 3600)
    auth = {"Authorization": "Bearer manipulation-admin"}  # batches come from a relay (the admin here)
    with BackgroundServer([SURVEY], db_url=sqlite_url, clock=clock, admin_token="manipulation-admin") as server, \
            httpx.Client(base_url=server.url, timeout=60, headers=auth) as http:
        survey = http.get("/surveys/places").json()

        def post(items: list[dict[str, Any]]) -> None:
            for start in range(0, len(items), 1000):
                r = http.post("/surveys/places/responses/batch", json={"responses": items[start:start + 1000]})
                assert r.status_code == 201, r.text

        post(_honest(survey, rng, 2000))
        clock.now += DAY
        post(_honest(survey, rng, 2000) + _fake(400))
        results = http.get("/surveys/places/results").json()

    m = dn.GRR(PLACES, epsilon=1.0)
    p, q = (float(x[0]) for x in m.support_rates())
    whole = results["questions"][0]["manipulation"]
    assert whole["per_fake_report"] == pytest.approx(1 / (4400 * (p - q)), rel=1e-9)
    assert whole["sensitivity"] == pytest.approx((1 - q) / (p - q), rel=1e-9)
    assert whole["frequency_test"]["alpha"] == 1e-3 and whole["change_from_previous_round"] is None
    first, second = (r["questions"][0]["manipulation"] for r in results["rounds"]["rounds"])
    assert first["change_from_previous_round"] is None
    change = second["change_from_previous_round"]
    assert change["flagged"] and change["items"][0] == "h" and change["test"] == "change"
    assert second["per_fake_report"] == pytest.approx(1 / (2400 * (p - q)), rel=1e-9)
    assert results["defences"] == {"invite_only": False, "rate_limit": {"responses": 50, "seconds": 60.0},
                                   "max_responses": 100_000, "n_responses": 4400, "detection_alpha": 1e-3,
                                   "refusals": {"rate_limited": 0, "conflict": 0, "forbidden": 0, "invalid": 0}}


def test_a_rappor_question_states_its_decode_s_figures(sqlite_url: str, rng: np.random.Generator) -> None:
    """RAPPOR is decoded by least squares (no support counts, no observed shares): its results state the
    mechanism's own figures (deniable.mechanisms._rappor_manipulation) instead of failing."""
    m = dn.RAPPOR(PLACES, epsilon=4.0, num_bits=16, num_hashes=2, num_cohorts=8)
    survey = {"id": "bloom", "title": "Bloom", "budget": 10, "questions": [
        {"id": "where", "text": "Where?", "type": "categorical", "categories": PLACES, "mechanism": m.to_config()}]}
    auth = {"Authorization": "Bearer rappor-admin"}
    with BackgroundServer([survey], db_url=sqlite_url, admin_token="rappor-admin") as server, \
            httpx.Client(base_url=server.url, timeout=60, headers=auth) as http:
        reports = m.reports_to_json(m.privatize_many(rng.choice(PLACES, 400), rng=rng))
        body = {"responses": [{"idempotency_key": new_key(), "reports": {"where": r}} for r in reports]}
        assert http.post("/surveys/bloom/responses/batch", json=body).status_code == 201
        r = http.get("/surveys/bloom/results")
    assert r.status_code == 200, r.text
    question = r.json()["questions"][0]
    figures = m.manipulation()
    assert question["observed"] == [None] * len(PLACES)
    assert question["manipulation"]["sensitivity"] == pytest.approx(float(np.max(figures.output)), rel=1e-9)
    assert question["manipulation"]["per_fake_report"] == pytest.approx(float(np.max(figures.spread)) / 400)
