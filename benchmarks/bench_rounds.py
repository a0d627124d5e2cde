"""Surveys in rounds: what the per-device accounting costs at ingest, and the results latency.

Runs the real server (in a background thread, SQLite file, its clock moved a
round at a time) and posts 10,000-response batches over HTTP::

    python benchmarks/bench_rounds.py            # 30 rounds of 10,000 devices
    python benchmarks/bench_rounds.py --quick    # a few seconds, for CI smoke

Figures:

* batched ingest, responses per second, of the same two-question survey
  with and without ``rounds`` (with rounds every response also reads and
  writes its device's row and the round's aggregates, and writers take turns
  on the survey's rows);
* results latency: ``GET .../results`` of the survey with rounds (every
  round estimated) after all rounds, and of the survey without.
"""

from __future__ import annotations

import argparse
import os
import secrets
import statistics
import tempfile
import time
from typing import Any

import httpx
import numpy as np

from deniable.client import new_key, privatize_answers_many
from deniable.server._runner import BackgroundServer

TOKEN = "bench-rounds-admin-token"
START = 1_796_083_200.0  # 2026-12-01T00:00:00Z
PLACES = ["home", "office", "travelling", "elsewhere"]
QUESTIONS = [
    {"id": "sick", "text": "Sick?", "type": "yes-no", "mechanism": "binary-rr", "epsilon": 0.1},
    {"id": "where", "text": "Where?", "type": "categorical", "categories": PLACES,
     "mechanism": "l-grr", "epsilon_perm": 1.0, "epsilon_1": 0.5},
]
ROUNDS_SURVEY = {"id": "rounds", "title": "In rounds", "budget": 1, "rate_limit": "off", "questions": QUESTIONS,
                 "rounds": {"every": "1d", "lifetime_epsilon": 100, "start": "2026-12-01T00:00:00Z"}}
PLAIN_SURVEY = {"id": "plain", "title": "Once", "budget": 1, "rate_limit": "off", "questions": QUESTIONS}


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    rounds, devices, batch = (2, 2_000, 1_000) if args.quick else (30, 10_000, 10_000)
    rng = np.random.default_rng(7)
    keys = [secrets.token_urlsafe(16) for _ in range(devices)]
    clock = Clock(START + 60)
    print(f"bench_rounds: {rounds} rounds x {devices} devices, batches of {batch}; "
          f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as folder, \
            BackgroundServer([ROUNDS_SURVEY, PLAIN_SURVEY], db_url=f"sqlite:///{folder}/rounds.db",
                             admin_token=TOKEN, clock=clock) as server, \
            httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=600) as http:
        survey = http.get("/surveys/rounds").json()
        spent: dict[str, list[float]] = {"rounds": [], "plain": []}
        for _ in range(rounds):
            answers = [{"sick": bool(s), "where": PLACES[w]}
                       for s, w in zip(rng.random(devices) < 0.2, rng.integers(0, 4, devices), strict=True)]
            reports = privatize_answers_many(survey, answers, rng)
            for sid in ("rounds", "plain"):
                bodies: list[dict[str, Any]] = [
                    {"idempotency_key": new_key(), "reports": r} | ({"device": k} if sid == "rounds" else {})
                    for r, k in zip(reports, keys, strict=True)
                ]
                begin = time.perf_counter()
                for start in range(0, devices, batch):
                    r = http.post(f"/surveys/{sid}/responses/batch", json={"responses": bodies[start:start + batch]})
                    assert r.status_code == 201, r.text
                spent[sid].append(time.perf_counter() - begin)
            clock.now += 86_400
        clock.now -= 86_400
        for sid, label in (("plain", "without rounds"), ("rounds", "with rounds")):
            rate = devices * rounds / sum(spent[sid])
            print(f"  batched ingest {label:>15}: {rate:>9,.0f} responses/s")
        for sid in ("plain", "rounds"):
            times = []
            for _ in range(3):
                begin = time.perf_counter()
                assert http.get(f"/surveys/{sid}/results").status_code == 200
                times.append(time.perf_counter() - begin)
            print(f"  results latency {sid:>7} ({rounds} rounds, {devices * rounds:,} responses): "
                  f"median {statistics.median(times):.3f} s")


if __name__ == "__main__":
    main()
