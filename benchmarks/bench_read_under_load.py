"""Results latency while the service ingests batches: reads must not wait for writes.

Runs the real server (``python -m deniable.server``, access log off) in its
own process, writer processes posting 10,000-response batches of the
honor-code survey (one report each) at a set total rate, and a reader
process asking ``GET /surveys/honor-code/results`` every ``--interval``
seconds on one keep-alive connection::

    python benchmarks/bench_read_under_load.py                 # 50k reports/s for 20 s, SQLite
    python benchmarks/bench_read_under_load.py --rate 0        # writers as fast as they can
    python benchmarks/bench_read_under_load.py --db postgresql+psycopg://user@host/db
    python benchmarks/bench_read_under_load.py --quick         # a few seconds, for CI smoke

Figures: the ingest rate reached (reports stored per second, every batch
acknowledged with 201 and every report counted by the results afterwards),
and the results latency under that load (median, p99, max) [target: p99 <
100 ms at 50,000 reports/s], with the latency of the same reads with no
writer for comparison. The header shows the machine's load average: on a
shared machine the figures include other people's work.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing as mp
import os
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_server import HONOR, RELAY_TOKEN, Server, _bodies  # noqa: E402

BATCH = 10_000


def _connect(url: str) -> http.client.HTTPConnection:
    parts = urlsplit(url)
    return http.client.HTTPConnection(parts.hostname, parts.port, timeout=300)


def _writer(url: str, survey: dict[str, Any], rate: float, seconds: float, seed: int, run: str,
            barrier: Any, out: Any) -> None:
    """Post batches (fresh keys each) at ``rate`` reports/s (0: back to back) for ``seconds``."""
    reports = [b["reports"] for b in _bodies(survey, BATCH, seed)]
    conn = _connect(url)
    headers = {"content-type": "application/json", "authorization": f"Bearer {RELAY_TOKEN}"}
    # bodies built beforehand (fresh keys each), so the writers' CPU goes to the server during the run
    batches = int(seconds * (rate or 100_000) / BATCH) + 1
    payloads = [json.dumps({"responses": [
        {"idempotency_key": f"{run}-w{seed}-{b:06d}-{i:05d}", "reports": r} for i, r in enumerate(reports)
    ]}).encode() for b in range(batches)]
    barrier.wait()
    start = time.perf_counter()
    sent = 0
    for b, payload in enumerate(payloads):
        if rate:
            time.sleep(max(0.0, start + b * BATCH / rate - time.perf_counter()))
        elif time.perf_counter() - start > seconds:
            break
        conn.request("POST", "/surveys/honor-code/responses/batch", payload, headers)
        response = conn.getresponse()
        body = response.read()
        assert response.status == 201, body[:300]
        assert json.loads(body)["accepted"] == BATCH, body[:300]
        sent += BATCH
    out.put((start, time.perf_counter(), sent))
    conn.close()


def _reader(url: str, interval: float, stop: Any, out: Any) -> None:
    """GET the results every ``interval`` s until ``stop`` is set (at least 10 times); the latencies (s)."""
    conn = _connect(url)
    times: list[float] = []
    while not stop.is_set() or len(times) < 10:
        start = time.perf_counter()
        conn.request("GET", "/surveys/honor-code/results")
        response = conn.getresponse()
        response.read()
        assert response.status == 200, response.status
        times.append(time.perf_counter() - start)
        time.sleep(max(0.0, interval - times[-1]))
    out.put(times)
    conn.close()


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _latency(times: list[float]) -> str:
    return (f"median {statistics.median(times) * 1e3:.1f} ms, p99 {_percentile(times, 0.99) * 1e3:.1f} ms, "
            f"max {max(times) * 1e3:.1f} ms ({len(times)} reads)")


def run(url: str, rate: float, writers: int, seconds: float, interval: float) -> dict[str, Any]:
    ctx = mp.get_context("spawn")
    survey = httpx.get(f"{url}/surveys/honor-code").json()
    before = httpx.get(f"{url}/surveys/honor-code/results").json()["n_responses"]

    stop, out = ctx.Event(), ctx.Queue()
    idle = ctx.Process(target=_reader, args=(url, interval, stop, out))
    idle.start()
    time.sleep(min(3.0, seconds / 4))
    stop.set()
    idle_times = out.get(timeout=60)
    idle.join()

    stop, barrier, done = ctx.Event(), ctx.Barrier(writers + 1), ctx.Queue()
    run_id = secrets.token_hex(4)  # keys new to the database even when it is reused
    procs = [ctx.Process(target=_writer, args=(url, survey, rate / writers, seconds, 1000 + w, run_id, barrier, done))
             for w in range(writers)]
    for p in procs:
        p.start()
    reader = ctx.Process(target=_reader, args=(url, interval, stop, out))
    barrier.wait()  # the writers have built their reports
    reader.start()
    spans = [done.get(timeout=seconds * 10 + 600) for _ in procs]
    stop.set()
    load_times = out.get(timeout=60)
    for p in [*procs, reader]:
        p.join()
    sent = sum(n for _, _, n in spans)
    elapsed = max(e for _, e, _ in spans) - min(s for s, _, _ in spans)
    after = httpx.get(f"{url}/surveys/honor-code/results").json()["n_responses"]
    assert after - before == sent, (after - before, sent)  # every acknowledged report counted once
    return {"reports_per_s": sent / elapsed, "sent": sent, "idle": idle_times, "load": load_times}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", default=None, help="database URL (default: a SQLite file in a temporary folder)")
    parser.add_argument("--rate", type=float, default=50_000, help="total reports/s to post (0: as fast as possible)")
    parser.add_argument("--writers", type=int, default=2, help="writer processes")
    parser.add_argument("--seconds", type=float, default=20, help="how long the writers post")
    parser.add_argument("--interval", type=float, default=0.02, help="seconds between reads")
    parser.add_argument("--quick", action="store_true", help="tiny run (CI smoke)")
    args = parser.parse_args(argv)
    if args.quick:
        args.rate, args.seconds, args.writers = 20_000, 1.0, 1

    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    with tempfile.TemporaryDirectory(prefix="deniable-bench-") as tmp:
        db_url = args.db or f"sqlite:///{Path(tmp) / 'load.db'}"
        backend = db_url.split(":", 1)[0].split("+", 1)[0]
        print(f"deniable results latency under ingest ({os.cpu_count()} CPUs, load average "
              f"{load[0]:.1f} {load[1]:.1f} {load[2]:.1f}, {backend})")
        server = Server(db_url, [HONOR], Path(tmp) / "server.log")
        try:
            got = run(server.url, args.rate, args.writers, args.seconds, args.interval)
        finally:
            server.stop()
    wanted = f"{args.rate:,.0f} reports/s asked" if args.rate else "as fast as possible"
    print(f"ingest          {got['reports_per_s']:>10,.0f} reports/s ({wanted}; {got['sent']:,} reports "
          f"in 10,000-response batches by {args.writers} writer(s), all counted once)")
    print(f"results, idle   {_latency(got['idle'])}")
    print(f"results, ingest {_latency(got['load'])} (target p99 < 100 ms)")
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    print(f"load average after: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
