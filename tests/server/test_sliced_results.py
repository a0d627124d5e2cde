"""``GET /surveys/{id}/results?by=QUESTION``: every frequency and number question estimated per answer of
a plain question, exactly as ``m.estimate`` does on that slice's stored reports. Real server on loopback,
real SQLite."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from typing import Any

import httpx
import numpy as np
import pytest

from deniable.client import Client
from deniable.server._runner import BackgroundServer
from deniable.server._surveys import load_survey

ADMIN = "admin-token-for-sliced-results"
SURVEY: dict[str, Any] = {
    "id": "ab", "title": "A/B", "budget": 6, "rate_limit": "off",
    "questions": [
        {"id": "arm", "text": "Arm?", "type": "categorical", "randomized": False,
         "categories": ["control", "treatment", "unused"]},
        {"id": "app", "text": "App?", "type": "categorical", "categories": ["x", "y", "z"], "mechanism": "grr",
         "epsilon": 2},
        {"id": "hours", "text": "Hours?", "type": "number", "mechanism": "one-bit-mean", "low": 0, "high": 10,
         "epsilon": 1},
        {"id": "day", "text": "Day?", "type": "integer", "randomized": False, "min": 1, "max": 3},
    ],
}
N = 600


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    rng = np.random.default_rng(5)
    answers = [{"arm": ["control", "treatment"][i % 2], "app": "xyz"[int(rng.integers(3))],
                "hours": float(rng.uniform(0, 10)), "day": 1 + int(i < 20)} for i in range(N)]
    db = tmp_path_factory.mktemp("sliced") / "db.sqlite"
    with BackgroundServer([SURVEY], db_url=f"sqlite:///{db}", admin_token=ADMIN) as running:
        with Client(running.url, token=ADMIN) as client:
            client.respond_many("ab", answers)
        yield running.url


def _export(url: str) -> list[dict[str, Any]]:
    r = httpx.get(f"{url}/admin/surveys/ab/export", headers={"Authorization": f"Bearer {ADMIN}"}, timeout=60)
    r.raise_for_status()
    return [{k: json.loads(v) for k, v in row.items() if k != "row"} for row in csv.DictReader(io.StringIO(r.text))]


@pytest.mark.parametrize("target", ["population", "respondents"])
def test_slices_are_the_estimates_of_their_reports(server: str, target: str) -> None:
    r = httpx.get(f"{server}/surveys/ab/results", params={"by": "arm", "target": target}, timeout=60)
    assert r.status_code == 200, r.text
    by = r.json()["by"]
    assert by["question"] == "arm" and by["values"] == ["control", "treatment", "unused"]
    assert [q["id"] for q in by["questions"]] == ["app", "hours"]
    survey = load_survey(SURVEY)
    rows = _export(server)
    for q in by["questions"]:
        m = survey.question(q["id"]).mechanism
        for s in q["slices"][:2]:
            reports = m.reports_from_json([row[q["id"]] for row in rows if row["arm"] == s["value"]])
            data = m.estimate(reports, target=target).to_dict()
            assert s["n"] == N // 2 == data["n"]
            for key in ("estimate", "std_error", "ci_low", "ci_high"):
                assert s[key] == pytest.approx(data[key], abs=1e-12), (q["id"], key)
        unused = q["slices"][2]
        assert unused["n"] == 0 and unused["small"] and unused["estimate"] is None
    assert by["questions"][0]["min_n"] > 30 and by["questions"][0]["categories"] == ["x", "y", "z"]


def test_integer_slices_and_small_ones(server: str) -> None:
    by = httpx.get(f"{server}/surveys/ab/results?by=day", timeout=60).json()["by"]
    assert by["values"] == [1, 2, 3]
    app = by["questions"][0]
    assert [(s["n"], s["small"]) for s in app["slices"]] == [(N - 20, False), (20, True), (0, True)]


@pytest.mark.parametrize("by", ["app", "nope"])
def test_by_must_name_a_plain_question(server: str, by: str) -> None:
    r = httpx.get(f"{server}/surveys/ab/results", params={"by": by}, timeout=60)
    assert r.status_code == 422
    detail = r.json()["detail"]
    assert detail["field"] == "by" and "plain (not randomized) question, one of ['arm', 'day']" in detail["message"]


def test_without_by_nothing_changes(server: str) -> None:
    assert httpx.get(f"{server}/surveys/ab/results", timeout=60).json()["by"] is None
