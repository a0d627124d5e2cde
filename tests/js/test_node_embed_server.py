"""Server mode of deniable-embed.js against a real server on loopback (node: no CORS to pass).

``Deniable.submit`` fetches the survey in wire version 2, randomizes each
answer with its question's configuration (a design question, a categorical
question with OLH's wide seeds, a plain question sent as given) and POSTs only
the reports with a random idempotency key: the server stores the response and
its reports decode in Python. A survey that runs in rounds, an answer to an
unknown question and a missing answer are refused before anything is sent.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from node_env import ROOT, run_node

import deniable as dn

pytestmark = [pytest.mark.browser, pytest.mark.integration, pytest.mark.slow]

runner = pytest.importorskip("deniable.server._runner")
httpx = pytest.importorskip("httpx")

SCRIPT = ROOT / "tests" / "js" / "embed_submit.mjs"
CATS = [f"app{i}" for i in range(12)]
SURVEY = {
    "id": "embedded", "title": "Asked on another platform", "budget": 10, "rate_limit": "off",
    "questions": [
        {"id": "drug", "text": "Ever?", "type": "yes-no", "design": {"model": "FR", "p": ["1/6", "1/6"]}},
        {"id": "app", "text": "Which?", "type": "categorical", "categories": CATS, "mechanism": "olh", "epsilon": 1},
        {"id": "year", "text": "Year?", "type": "categorical", "randomized": False, "categories": ["first", "second"]},
    ],
}
ROUNDS = {"id": "weekly", "title": "Weekly", "budget": 10, "rounds": {"start": "2026-01-01T00:00:00Z", "every": 604800,
          "lifetime_epsilon": 20}, "questions": [SURVEY["questions"][2]]}


def _submit(server: Any, survey: str, answers: dict[str, Any]) -> dict[str, Any]:
    return run_node(SCRIPT, {"server": server.url, "survey": survey, "answers": answers})


def test_submit_posts_only_the_reports(tmp_path: Any) -> None:
    with runner.BackgroundServer([SURVEY], db_url=f"sqlite:///{tmp_path / 'r.db'}") as server:
        results = [_submit(server, "embedded", {"drug": i % 2 == 0, "app": CATS[i], "year": "second"})
                   for i in range(3)]
        stored = server.storage.count_responses("embedded")
        survey = httpx.get(f"{server.url}/surveys/embedded").json()
    assert all(r["ok"] for r in results), results
    assert stored == 3
    bodies = [json.loads(r["body"]) for r in results]
    assert all(set(b) == {"idempotency_key", "wire_version", "reports"} and b["wire_version"] == 2 for b in bodies)
    assert len({b["idempotency_key"] for b in bodies}) == 3
    olh = dn.from_config(survey["questions"][1]["mechanism"])
    assert len(olh.reports_from_json([b["reports"]["app"] for b in bodies], wire_version=2)) == 3
    assert all(type(b["reports"]["app"]["seed"]) is str for b in bodies)
    assert all(b["reports"]["drug"] in (True, False) and b["reports"]["year"] == "second" for b in bodies)


def test_submit_refuses_before_sending(tmp_path: Any) -> None:
    with runner.BackgroundServer([SURVEY, ROUNDS], db_url=f"sqlite:///{tmp_path / 'r.db'}") as server:
        unknown = _submit(server, "embedded", {"drug": True, "app": "app1", "year": "first", "other": 1})
        missing = _submit(server, "embedded", {"drug": True})
        rounds = _submit(server, "weekly", {"year": "first"})
        stored = server.storage.count_responses("embedded")
    assert unknown["field"] == "answers" and "other" in unknown["error"]
    assert missing["field"] == "answers" and "app" in missing["error"]
    assert rounds["field"] == "survey" and "rounds" in rounds["error"]
    assert stored == 0
