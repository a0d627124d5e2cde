"""Collection-service throughput: batched ingest, single posts, results latency.

Runs the real server (``python -m deniable.server``, SQLite file, access log
off) in its own process and real HTTP clients in other processes::

    python benchmarks/bench_server.py            # full run (loads 10^7 reports)
    python benchmarks/bench_server.py --quick    # a few seconds, for CI smoke
    python benchmarks/bench_server.py --only single --clients 2 --posts 3000   # single posts alone

Figures (targets in brackets):

* batched ingest: reports stored per second through ``POST .../responses/batch``
  with 10,000 responses per request, bodies privatized beforehand [>= 50k/s];
* single posts: responses per second through ``POST .../responses`` from
  several client processes, each on one keep-alive connection [>= 1k/s];
* results latency: ``GET .../results`` with 10^7 stored reports (loaded with
  a bulk SQL path, then the aggregate set to their counts) [< 1 s];
* a flood from one address against the default rate limit (30 per 600 s):
  how many are stored and how fast the rest are refused (429).

The throughput figures use copies of the example surveys with the rate limit
off (every benchmark client is one loopback address).

On Linux each throughput line also shows the server process's CPU time per
item and the rate one idle core would sustain at that cost: on a shared or
overloaded machine (see the load average in the header) wall-clock rates
understate the server.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing as mp
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
HONOR = ROOT / "examples" / "honor-code.yaml"
MESSAGING = ROOT / "examples" / "messaging.yaml"


PARTS = ("batches", "single", "flood", "results")
"""The parts of the run (``--only``)."""

RELAY_TOKEN = "benchmark-relay-token"
"""Batches to an open survey come from a trusted relay: the benchmark's client is one."""


def unlimited(survey: Path, folder: Path) -> Path:
    """A copy of ``survey`` without the per-address rate limit (every benchmark client is one address)."""
    path = folder / survey.name
    path.write_text(survey.read_text() + "\nrate_limit: off\n")
    return path


class Server:
    """The service in a subprocess on a free port."""

    def __init__(self, db_url: str, surveys: list[Path], log: Path) -> None:
        self._log = open(log, "wb")  # noqa: SIM115 - closed in stop()
        self.log = log
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "deniable.server", *map(str, surveys), "--db", db_url,
             "--port", "0", "--no-access-log", "--log-level", "warning"],
            stdout=self._log, stderr=subprocess.STDOUT, env={**os.environ, "DENIABLE_RELAY_TOKEN": RELAY_TOKEN},
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            found = re.findall(r"serving on (http://\S+)", log.read_text(errors="replace"))
            if found:
                self.url = found[-1]
                break
            if self.proc.poll() is not None:
                raise RuntimeError(log.read_text(errors="replace"))
            time.sleep(0.05)
        else:
            raise RuntimeError("server did not start")
        for _ in range(500):
            try:
                httpx.get(self.url + "/openapi.json")
                return
            except httpx.TransportError:
                time.sleep(0.02)

    def cpu_seconds(self) -> float | None:
        """CPU time the server process has used so far (Linux /proc; None elsewhere)."""
        try:
            fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return None
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=60)
        self._log.close()


def _bodies(survey: dict[str, Any], n: int, seed: int) -> list[dict[str, Any]]:
    """n responses privatized with a seeded generator (simulation), fresh keys."""
    from deniable.client import new_key, privatize_answers_many

    rng = np.random.default_rng(seed)
    answers = []
    for _ in range(n):
        answer: dict[str, Any] = {}
        for q in survey["questions"]:
            cats = q["categories"]
            answer[q["id"]] = cats[int(rng.integers(len(cats)))]
        answers.append(answer)
    reports = privatize_answers_many(survey, answers, rng=rng)
    return [{"idempotency_key": new_key(), "reports": r} for r in reports]


def _per_core(server: Server, before: float | None, items: int) -> str:
    after = server.cpu_seconds()
    if before is None or after is None or after <= before:
        return ""
    per_item = (after - before) / items
    return f"; server CPU {per_item * 1e6:.0f} us each = {1 / per_item:,.0f}/s per server core"


def bench_batches(server: Server, survey_id: str, batches: int, size: int) -> dict[str, Any]:
    url = server.url
    with httpx.Client(base_url=url, timeout=600) as http:
        survey = http.get(f"/surveys/{survey_id}").json()
        payloads = [json.dumps({"responses": _bodies(survey, size, seed)}).encode()
                    for seed in range(batches)]
        cpu = server.cpu_seconds()
        start = time.perf_counter()
        for payload in payloads:
            r = http.post(f"/surveys/{survey_id}/responses/batch", content=payload,
                          headers={"content-type": "application/json",
                                   "authorization": f"Bearer {RELAY_TOKEN}"})
            assert r.status_code == 201 and r.json()["accepted"] == size, r.text
        elapsed = time.perf_counter() - start
    responses = batches * size
    reports = responses * len(survey["questions"])
    return {"responses_per_s": responses / elapsed, "reports_per_s": reports / elapsed,
            "cpu": _per_core(server, cpu, reports)}


def _poster(url: str, bodies: list[dict[str, Any]], barrier: Any, out: Any) -> None:
    """One keep-alive connection; the stdlib client, so the 2 cores go to the server."""
    import http.client
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    payloads = [json.dumps(body).encode() for body in bodies]
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=120)
    headers = {"content-type": "application/json"}
    barrier.wait()
    start = time.perf_counter()
    for payload in payloads:
        conn.request("POST", "/surveys/honor-code/responses", payload, headers)
        response = conn.getresponse()
        response.read()
        assert response.status == 201, response.status
    out.put((start, time.perf_counter()))
    conn.close()


def bench_single(server: Server, clients: int, posts: int) -> dict[str, Any]:
    url = server.url
    survey = httpx.get(f"{url}/surveys/honor-code").json()
    cpu = server.cpu_seconds()
    ctx = mp.get_context("spawn")
    barrier, out = ctx.Barrier(clients), ctx.Queue()
    procs = [ctx.Process(target=_poster, args=(url, _bodies(survey, posts, 100 + i), barrier, out))
             for i in range(clients)]
    for p in procs:
        p.start()
    spans = [out.get(timeout=600) for _ in procs]
    for p in procs:
        p.join()
    elapsed = max(e for _, e in spans) - min(s for s, _ in spans)
    return {"posts_per_s": clients * posts / elapsed,
            "cpu": _per_core(server, cpu, clients * posts)}


def bench_flood(server: Server, posts: int) -> dict[str, Any]:
    """One client posting ``posts`` made-up responses as fast as it can to the rate-limited survey."""
    import http.client
    from collections import Counter
    from urllib.parse import urlsplit

    parts = urlsplit(server.url)
    payloads = [json.dumps({"idempotency_key": f"flood-{i:08d}", "reports": {"violated": True}}).encode()
                for i in range(posts)]
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=120)
    codes: Counter[int] = Counter()
    cpu = server.cpu_seconds()
    start = time.perf_counter()
    for payload in payloads:
        conn.request("POST", "/surveys/flood/responses", payload, {"content-type": "application/json"})
        response = conn.getresponse()
        response.read()
        codes[response.status] += 1
    elapsed = time.perf_counter() - start
    conn.close()
    stored = httpx.get(f"{server.url}/surveys/flood/results").json()["n_responses"]
    return {"codes": codes, "stored": stored, "per_s": posts / elapsed, "seconds": elapsed,
            "cpu": _per_core(server, cpu, posts)}


def bulk_load(db_path: Path, n: int, seed: int) -> int:
    """n honor-code responses straight into SQLite (benchmark set-up only); returns the yes count."""
    from deniable.server._storage import Storage, aggregates_table

    storage = Storage(f"sqlite:///{db_path}")
    survey = storage.add_survey(HONOR)
    storage.close()
    m = survey.questions[0].mechanism
    texts = {v: json.dumps({"violated": v}, separators=(",", ":")) for v in (False, True)}
    hashes = {v: hashlib.sha256(f"{t}\n".encode()).hexdigest() for v, t in texts.items()}
    yes = np.random.default_rng(seed).random(n) < 0.4
    conn = sqlite3.connect(db_path)
    conn.execute("PRAGMA synchronous=OFF")
    chunk = 1_000_000
    for start in range(0, n, chunk):
        part = yes[start : start + chunk].tolist()
        conn.executemany(
            "INSERT INTO deniable_responses (survey_id, idempotency_key, body_hash, reports) "
            "VALUES ('honor-code', ?, ?, ?)",
            ((f"bulk-{start + i:012d}", hashes[v], texts[v]) for i, v in enumerate(part)),
        )
    n_yes = int(yes.sum())
    stat = m.aggregate(np.concatenate([np.zeros(n - n_yes, bool), np.ones(n_yes, bool)]))
    conn.execute(f"UPDATE {aggregates_table.name} SET stat = ? WHERE survey_id = 'honor-code'",
                 (stat.to_bytes(),))  # the stored form: the aggregate's bytes
    conn.commit()
    conn.close()
    return n_yes


def bench_results(url: str, repeats: int) -> dict[str, float]:
    with httpx.Client(base_url=url, timeout=60) as http:
        http.get("/surveys/honor-code/results")
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            body = http.get("/surveys/honor-code/results").json()
            times.append(time.perf_counter() - start)
    return {"median_s": statistics.median(times), "max_s": max(times),
            "n_responses": body["n_responses"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes (CI smoke)")
    parser.add_argument("--batches", type=int, default=10, help="batches of --batch-size")
    parser.add_argument("--batch-size", type=int, default=10_000)
    parser.add_argument("--clients", type=int, default=4, help="single-post client processes")
    parser.add_argument("--posts", type=int, default=1000, help="posts per client")
    parser.add_argument("--stored", type=int, default=10_000_000, help="reports for results")
    parser.add_argument("--flood", type=int, default=10_000, help="posts of the one-address flood")
    parser.add_argument("--only", nargs="+", choices=PARTS, default=list(PARTS), help="run these parts only")
    args = parser.parse_args(argv)
    if args.quick:
        args.batches, args.batch_size, args.clients, args.posts, args.stored = 2, 1000, 2, 50, 100_000
        args.flood = 200

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"deniable collection-service benchmark ({os.cpu_count()} CPUs, load average "
          f"{load:.1f}, SQLite)")
    with tempfile.TemporaryDirectory(prefix="deniable-bench-") as tmp:
        folder = Path(tmp)
        flood = folder / "flood.yaml"  # the honor-code survey with its default rate limit
        flood.write_text(HONOR.read_text().replace("id: honor-code", "id: flood"))
        surveys = [unlimited(HONOR, folder), unlimited(MESSAGING, folder), flood]
        server = Server(f"sqlite:///{folder / 'ingest.db'}", surveys, folder / "a.log")
        try:
            for survey_id in ("honor-code", "messaging") if "batches" in args.only else ():
                got = bench_batches(server, survey_id, args.batches, args.batch_size)
                print(f"batched ingest  {survey_id:10s} {got['reports_per_s']:>10,.0f} reports/s "
                      f"({got['responses_per_s']:,.0f} responses/s; target >= 50,000 reports/s"
                      f"{got['cpu']})")
            if "single" in args.only:
                got = bench_single(server, args.clients, args.posts)
                print(f"single posts    {args.clients} clients  {got['posts_per_s']:>10,.0f} posts/s "
                      f"(target >= 1,000/s{got['cpu']})")
            if "flood" in args.only:
                got = bench_flood(server, args.flood)
                print(f"one-address flood of {args.flood:,} posts in {got['seconds']:.1f} s: "
                      f"{got['codes'][201]} accepted, {got['codes'][429]:,} refused (429), {got['stored']} "
                      f"stored; {got['per_s']:,.0f} requests/s{got['cpu']}")
        finally:
            server.stop()
        if "results" not in args.only:
            return 0

        start = time.perf_counter()
        bulk_load(folder / "results.db", args.stored, seed=1)
        load_s = time.perf_counter() - start
        server = Server(f"sqlite:///{folder / 'results.db'}", [HONOR], folder / "b.log")
        try:
            got = bench_results(server.url, repeats=20)
            print(f"results latency {got['n_responses']:,} stored reports: median "
                  f"{got['median_s'] * 1e3:.1f} ms, max {got['max_s'] * 1e3:.1f} ms (target < 1 s; "
                  f"bulk load took {load_s:.0f} s)")
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
