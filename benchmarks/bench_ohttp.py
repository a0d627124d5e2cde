"""Oblivious HTTP: single responses through relay and gateway, and through a shuffling relay, against direct posting.

Runs the collector (``deniable serve --ohttp-keys``, SQLite file, access log
on as deployed), the relay (``deniable relay``) and a shuffling relay
(``deniable relay --shuffle``, its durable buffer a SQLite file synced at
every report) in processes of their own, and respondents in other
processes, each answering the honor-code survey with
:class:`deniable.client.Client` on keep-alive connections::

    python benchmarks/bench_ohttp.py            # 4 respondent processes x 500 responses per path
    python benchmarks/bench_ohttp.py --quick    # a few seconds, for CI smoke

Figures: responses per second on each path (direct ``POST .../responses``;
through the relay, encapsulated for the gateway; through the shuffling
relay, acknowledged ``202`` once on its disk, and then stored at the
collector: from the first post until every response is stored but those
still held under the threshold, batches released at ``--threshold`` with
no delay), the overhead (direct rate /
path's rate), and the cost of the cryptography alone: encapsulating a
response on the device plus opening it and sealing the answer at the
gateway, per response, in this process.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import re
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "bench-relay-token"
SURVEY = """id: {id}
title: Honor code survey
budget: 1.1
rate_limit: off
transport: {{kind: ohttp, relay: '{relay}', shuffler: {shuffler}}}
questions:
  - {{id: violated, text: 'Broken the honor code?', type: yes-no, mechanism: forced-response, p_truth: 0.5, p_yes: 0.5}}
"""
SHUFFLED = "honor-code-shuffled"
"""The survey collected through the shuffling relay (it takes shuffled batches only)."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _start(args: list[str], log: Path, pattern: str) -> tuple[subprocess.Popen[bytes], str]:
    out = open(log, "wb")  # noqa: SIM115 - closed when the process ends
    proc = subprocess.Popen([sys.executable, "-m", "deniable", *args], stdout=out, stderr=subprocess.STDOUT,
                            env={**os.environ, "DENIABLE_RELAY_TOKEN": TOKEN})
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = re.findall(pattern, log.read_text(errors="replace"))
        if found:
            return proc, found[-1]
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError(log.read_text(errors="replace"))


def _respondent(url: str, survey_id: str, n: int, oblivious: bool, start: mp.synchronize.Event,
                out: mp.Queue) -> None:
    from deniable.client import Client

    with Client(url, timeout=60) as client:
        survey = client.survey(survey_id)
        if not oblivious:
            client._surveys[survey_id] = {k: v for k, v in survey.items() if k != "transport"}
        if survey_id != SHUFFLED:  # (a warm-up response there would join the batches; its key is fetched once)
            client.respond(survey_id, {"violated": True})  # connections and keys set up before the clock
        start.wait()
        began = time.perf_counter()
        for i in range(n):
            client.respond(survey_id, {"violated": i % 2 == 0})
        out.put(time.perf_counter() - began)


def _rate(url: str, workers: int, per_worker: int, oblivious: bool, survey_id: str = "honor-code",
          settled: Callable[[], tuple[int, bool]] | None = None) -> tuple[float, float | None]:
    """Responses per second posted by ``workers`` processes; and, with ``settled`` (the responses stored at the
    collector, and whether every other one is held by the shuffler under its threshold), responses stored per
    second from the first post until then (None without)."""
    ctx = mp.get_context("spawn")
    start, out = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=_respondent, args=(url, survey_id, per_worker, oblivious, start, out))
             for _ in range(workers)]
    for p in procs:
        p.start()
    time.sleep(1.0 + 0.2 * workers)  # every respondent is ready (spawned, warmed up)
    began = time.perf_counter()
    start.set()
    for p in procs:
        p.join()
    wall = time.perf_counter() - began
    assert all(p.exitcode == 0 for p in procs)
    posted = workers * per_worker / max(wall, max(out.get() for _ in procs))
    if settled is None:
        return posted, None
    deadline = time.monotonic() + 600
    while not (done := settled())[1]:
        if time.monotonic() > deadline:
            raise RuntimeError(f"only {done[0]} of {workers * per_worker} shuffled responses stored")
        time.sleep(0.02)
    return posted, done[0] / (time.perf_counter() - began)


def _count(db: Path, sql: str, *args: str) -> int:
    with sqlite3.connect(db) as con:
        return int(con.execute(sql, args).fetchone()[0])


def _settled(db: Path, buffer: Path, total: int, threshold: int) -> tuple[int, bool]:
    """The shuffled survey's responses stored at the collector, and whether all the others are held by the
    shuffler under its threshold (it releases no smaller batch: they wait for more reports)."""
    stored = _count(db, "SELECT count(*) FROM deniable_responses WHERE survey_id = ?", SHUFFLED)
    held = _count(buffer, "SELECT count(*) FROM pending")
    return stored, stored + held == total and held < threshold


def _crypto_cost(repeat: int) -> float:
    """Seconds per response of the cryptography alone: device encapsulation + gateway open and answer."""
    from deniable._ohttp._bhttp import BinaryRequest, BinaryResponse, encode_request, encode_response
    from deniable._ohttp._keys import KeyRing
    from deniable._ohttp._messages import decapsulate_request, encapsulate_request, encapsulate_response

    ring = KeyRing()
    config, accepted = ring.configs()[0], ring.accepted()
    body = b'{"idempotency_key": "0123456789abcdef0123456789abcdef", "wire_version": 2, "reports": {"violated": true}}'
    request = encode_request(BinaryRequest("POST", "/surveys/honor-code/responses", "https", "collector",
                                           ((b"content-type", b"application/json"),), body))
    answer = encode_response(BinaryResponse(201, ((b"content-type", b"application/json"),), b"{" + b"x" * 100 + b"}"))
    times = []
    for _ in range(5):
        began = time.perf_counter()
        for _ in range(repeat):
            sealed, _ = encapsulate_request(config, request)
            _, context = decapsulate_request(sealed, accepted)
            encapsulate_response(context, answer)
        times.append((time.perf_counter() - began) / repeat)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes (CI smoke)")
    parser.add_argument("--workers", type=int, default=4, help="respondent processes")
    parser.add_argument("--responses", type=int, default=500, help="responses per respondent process and path")
    parser.add_argument("--threshold", type=int, default=100, help="the shuffling relay's batch threshold")
    args = parser.parse_args(argv)
    workers, per_worker = (2, 20) if args.quick else (args.workers, args.responses)
    threshold = 10 if args.quick else args.threshold
    print(f"bench_ohttp: {workers} respondent processes x {per_worker} responses per path; "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    print(f"cryptography alone (encapsulate + open + answer): {_crypto_cost(50 if args.quick else 500) * 1e6:.0f} us "
          "per response")
    with tempfile.TemporaryDirectory(prefix="bench-ohttp-") as tmp:
        folder = Path(tmp)
        relay_port, shuffling_port = _free_port(), _free_port()
        surveys = [folder / "survey.yaml", folder / "shuffled.yaml"]
        surveys[0].write_text(SURVEY.format(id="honor-code", relay=f"http://127.0.0.1:{relay_port}/", shuffler="false"))
        surveys[1].write_text(SURVEY.format(id=SHUFFLED, relay=f"http://127.0.0.1:{shuffling_port}/", shuffler="true"))
        db, buffer = folder / "db.sqlite", folder / "buffer.sqlite"
        started = []
        try:
            collector, url = _start(["serve", *map(str, surveys), "--db", f"sqlite:///{db}", "--port", "0",
                                     "--ohttp-keys", str(folder / "keys.json")], folder / "collector.log",
                                    r"serving on (http://\S+)")
            started.append(collector)
            started.append(_start(["relay", "--gateway", url, "--port", str(relay_port), "--rate-limit", "off"],
                                  folder / "relay.log", r"relaying on (http://\S+)")[0])
            started.append(_start(["relay", "--gateway", url, "--port", str(shuffling_port), "--rate-limit", "off",
                                   "--shuffle", "--threshold", str(threshold), "--max-delay", "0",
                                   "--buffer", str(buffer)],
                                  folder / "shuffling-relay.log", r"relaying on (http://\S+)")[0])
            direct, _ = _rate(url, workers, per_worker, oblivious=False)
            relayed, _ = _rate(url, workers, per_worker, oblivious=True)
            queued, shuffled = _rate(url, workers, per_worker, oblivious=True, survey_id=SHUFFLED,
                                     settled=lambda: _settled(db, buffer, workers * per_worker, threshold))
        finally:
            for proc in reversed(started):
                proc.terminate()
                proc.wait(timeout=30)
    assert shuffled is not None
    print(f"direct POST .../responses:        {direct:8.0f} responses/s")
    print(f"through relay and gateway (OHTTP): {relayed:8.0f} responses/s")
    print(f"overhead: {direct / relayed:.2f}x the time per response ({1e3 / relayed - 1e3 / direct:.2f} ms more "
          "per response at these rates)")
    print(f"through a shuffling relay, acknowledged 202 on its disk: {queued:8.0f} responses/s "
          f"({direct / queued:.2f}x direct)")
    print(f"through a shuffling relay, stored at the collector (batches of at least {threshold}, no delay): "
          f"{shuffled:8.0f} responses/s ({direct / shuffled:.2f}x direct; the last under {threshold} stay held)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
