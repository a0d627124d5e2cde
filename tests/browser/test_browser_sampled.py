"""End to end in a real headless Chromium: a survey with ``allocation: sample``.

The survey (``examples/campus-life.yaml``): three questions at epsilon 2
each, every respondent answering one, drawn in the page (``assignQuestion``:
an exact uniform integer from ``crypto.getRandomValues``). ``drive.mjs``
answers it 60 times (the first with real input and a screenshot, the rest
in kiosk mode, where "Next respondent" draws a fresh question). Checks:

* every visit shows exactly one question, and its POST carries exactly one
  valid report, for that question (a boolean for the yes/no questions, a
  category for the GRR one), and nothing else;
* all three questions are drawn (probability ``3 (2/3)^60 < 1e-10`` that one
  never is: below alpha = 1e-6);
* the page states epsilon = 2 for the whole survey and why (one question);
* the server's per-question n are the posts per question (plus 20,000
  responses posted beforehand by the Python client, which draws questions
  with the OS CSPRNG); the results page says each response answered one
  question, and states no shuffled guarantee (the responses were posted
  directly, not through a shuffler; the results JSON still says what
  shuffling would give: with 20,060 responses well below epsilon 2);
  screenshots are written for inspection.

Skips when node, playwright-core or Chromium are missing, unless
DENIABLE_REQUIRE_BROWSER=1.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "js"))
from node_env import chromium, playwright_core, run_node  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.integration, pytest.mark.slow]

httpx = pytest.importorskip("httpx")
runner = pytest.importorskip("deniable.server._runner")
yaml = pytest.importorskip("yaml")

DRIVER = Path(__file__).with_name("drive.mjs")
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "campus-life.yaml"
N = 60
BATCH = 20_000
HOUSING = ["on campus", "with family", "shared flat", "alone"]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from deniable.client import Client

    playwright_core()
    tmp = tmp_path_factory.mktemp("browser-sampled")
    rng = np.random.default_rng(20261124)
    answers = [[int(rng.integers(0, 2)), int(rng.integers(0, 2)), int(rng.integers(0, 4))] for _ in range(N)]
    visits: list[dict[str, Any]] = [{"path": "/s/campus-life", "answers": answers[0], "screenshot": "survey"}] + [
        {"path": "/s/campus-life?kiosk=1", "answers": a, "fast": True} for a in answers[1:]
    ]
    # N respondents answer from one browser (one address): no per-address rate limit here;
    # the simulated batch comes from a trusted relay (the admin token)
    survey = {**yaml.safe_load(EXAMPLE.read_text()), "rate_limit": "off"}
    token = "sampled-browser-admin-token"
    with runner.BackgroundServer([survey], db_url=f"sqlite:///{tmp / 'responses.db'}", admin_token=token) as server:
        simulated = [
            {"cheated": bool(c), "drugs": bool(d), "housing": HOUSING[h]}
            for c, d, h in zip(rng.random(BATCH) < 0.2, rng.random(BATCH) < 0.3,
                               rng.choice(4, BATCH, p=[0.4, 0.3, 0.2, 0.1]), strict=True)
        ]
        relay = Client(server.url, token=token)
        assert relay.respond_many("campus-life", simulated, batch_size=5000)["accepted"] == BATCH
        before = {qid: stat.n for qid, stat in server.storage.aggregates("campus-life").items()}
        plan = {"chromium": chromium(), "base_url": server.url, "visits": visits,
                "results_path": "/s/campus-life/results", "screenshot_dir": str(tmp)}
        out = run_node(DRIVER, plan, timeout=240)
        results = httpx.get(f"{server.url}/surveys/campus-life/results").json()
    posts = [json.loads(r["body"]) for r in out["requests"]
             if r["method"] == "POST" and r["url"].endswith("/responses") and r.get("body")]
    return {"out": out, "posts": posts, "results": results, "before": before}


def test_each_visit_shows_one_drawn_question_and_posts_its_report(run: dict[str, Any]) -> None:
    out, posts = run["out"], run["posts"]
    assert out["problems"] == []
    assert [v["state"] for v in out["visits"]] == ["submitted"] * N
    assert all(len(v["metas"]) == 1 for v in out["visits"])
    asked = [v["asked"] for v in out["visits"]]
    assert set(asked) == {"cheated", "drugs", "housing"}  # every question drawn
    first = out["visits"][0]
    assert "ε = 2.00" in first["privacy"] and "drew one of the survey's 3 questions" in first["privacy"]
    assert len(posts) == N
    for body, qid in zip(posts, asked, strict=True):
        assert set(body) == {"idempotency_key", "wire_version", "reports"} and body["wire_version"] == 2
        assert list(body["reports"]) == [qid]
        report = body["reports"][qid]
        assert type(report) is bool if qid != "housing" else report in HOUSING


def test_results_count_each_question_and_state_no_shuffled_guarantee(run: dict[str, Any]) -> None:
    out, results = run["out"], run["results"]
    drawn = Counter(v["asked"] for v in out["visits"])
    counts = {qid: n + drawn[qid] for qid, n in run["before"].items()}
    assert {q["id"]: q["n"] for q in results["questions"]} == counts
    assert sum(run["before"].values()) == BATCH and min(run["before"].values()) > BATCH / 3 - 500
    assert results["allocation"] == "sample" and results["n_responses"] == BATCH + N
    assert "each answered one question, drawn at random" in out["results_summary"]
    shuffled = results["shuffled"]  # what shuffling would give: stated nowhere on the page, none came shuffled
    assert shuffled["n"] == BATCH + N and shuffled["delta"] == 1e-6 and shuffled["epsilon"] < 0.5
    assert results["shuffler"] is None and out["results_shuffled"] is None
    shown = {r["id"]: r for r in out["results"]}
    for qid, n in counts.items():
        assert shown[qid]["meta"].startswith(f"{n:,} respondent"), shown[qid]["meta"]
    for name in ("survey", "results"):
        assert Path(out["screenshots"][name]).stat().st_size > 10_000
    print(f"screenshots: {out['screenshots']}")
