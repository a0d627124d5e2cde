"""The results of a survey in rounds at a year of hourly rounds: bytes and server time per request.

Stores 8,760 hourly rounds of a two-question survey (``--devices`` responses
per round, through the storage with its clock moved an hour at a time), then
starts the real server (background thread, SQLite file) in the last round and
asks ``GET /surveys/hourly/results`` over HTTP::

    python benchmarks/bench_round_results.py              # a year of hourly rounds
    python benchmarks/bench_round_results.py --rounds 200  # a quick run

For each query (the default, which lists the latest 52 rounds, and a page of
1,000 rounds), the first request (every closed round computed) and the
median of the next ones (closed rounds kept): wall time, the process's CPU
time per request (server and client share the process; the client only
reads the bytes) and the answer's size. Run from an older checkout, where
the endpoint lists every round and ignores ``rounds``, it gives the figures
before.
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
from deniable.server._storage import Storage

START = 1_796_083_200.0  # 2026-12-01T00:00:00Z
HOUR = 3600
PLACES = ["home", "office", "travelling", "elsewhere"]
SURVEY = {
    "id": "hourly", "title": "Every hour", "budget": 2, "rate_limit": "off",
    "rounds": {"every": "1h", "lifetime_epsilon": 1e9, "start": "2026-12-01T00:00:00Z"},
    "questions": [
        {"id": "sick", "text": "Sick?", "type": "yes-no", "mechanism": "binary-rr", "epsilon": 0.5},
        {"id": "where", "text": "Where?", "type": "categorical", "categories": PLACES, "mechanism": "grr",
         "epsilon": 1.0},
    ],
}


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _fill(db_url: str, rounds: int, devices: int) -> None:
    rng = np.random.default_rng(27)
    keys = [secrets.token_urlsafe(16) for _ in range(devices)]
    clock = Clock(START + 1)
    storage = Storage(db_url, clock=clock)
    storage.add_survey(SURVEY)
    survey = storage.public("hourly")
    for _ in range(rounds):
        answers = [{"sick": bool(s), "where": PLACES[w]}
                   for s, w in zip(rng.random(devices) < 0.2, rng.integers(0, 4, devices), strict=True)]
        reports = privatize_answers_many(survey, answers, rng)
        storage.submit("hourly", [{"idempotency_key": new_key(), "device": k, "reports": r}
                                  for r, k in zip(reports, keys, strict=True)])
        clock.now += HOUR
    storage.close()


def _measure(http: httpx.Client, query: str, repeat: int) -> dict[str, Any]:
    wall, cpu, size = [], [], 0
    for _ in range(1 + repeat):
        w, c = time.perf_counter(), time.process_time()
        r = http.get(f"/surveys/hourly/results{query}")
        assert r.status_code == 200, r.text
        cpu.append(time.process_time() - c)
        wall.append(time.perf_counter() - w)
        size = len(r.content)
    return {"first_wall": wall[0], "first_cpu": cpu[0], "wall": statistics.median(wall[1:]),
            "cpu": statistics.median(cpu[1:]), "bytes": size}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=8760)
    parser.add_argument("--devices", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="smoke run: 60 rounds, 3 responses, 2 repeats")
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.devices, args.repeat = 60, 3, 2
    print(f"bench_round_results: {args.rounds:,} hourly rounds x {args.devices} responses; "
          f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as folder:
        db_url = f"sqlite:///{folder}/rounds.db"
        begin = time.perf_counter()
        _fill(db_url, args.rounds, args.devices)
        print(f"  stored in {time.perf_counter() - begin:.1f} s")
        clock = Clock(START + 1 + (args.rounds - 1) * HOUR)  # in the last round
        with BackgroundServer([], db_url=db_url, clock=clock) as server, \
                httpx.Client(base_url=server.url, timeout=600) as http:
            for query in ("", "?rounds=last:52", "?rounds=0:1000"):
                m = _measure(http, query, args.repeat)
                print(f"  GET results{query or ' (default)':<16} first: {m['first_wall']:.3f} s wall, "
                      f"{m['first_cpu']:.3f} CPU-s; then median {m['wall']:.3f} s wall, {m['cpu']:.3f} CPU-s; "
                      f"{m['bytes'] / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
