"""What a refused flood costs the server: CPU seconds per post answered 429.

Runs the real server (``python -m deniable.server``, SQLite file, access log
off) in its own process with a survey that takes one response per hour from
an address, spends that one response, then floods it from one client on one
keep-alive connection with posts the rate limit refuses::

    python benchmarks/bench_flood.py            # 2,000 posts of each body size
    python benchmarks/bench_flood.py --quick    # a few seconds, for CI smoke

Bodies: a made-up response as a flooder sends it (about 60 bytes), and the
same response padded to 64 KiB and to 1 MiB with an array of small numbers
(the most expensive JSON to decode per byte). Figures per body size: the
server process's CPU time per refused post (Linux ``/proc``; user + system),
the wall-clock rate, and that every post was refused and nothing stored. CPU
time is what a flood takes from honest respondents on a busy machine, and,
unlike the wall-clock rate, it hardly depends on the machine's load (the
header shows the load average).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_server import HONOR, Server  # noqa: E402

SIZES = {"60 B": 0, "64 KiB": 64 << 10, "1 MiB": 1 << 20}


def body(i: int, size: int) -> bytes:
    """A made-up response, padded (an array of zeros) to about ``size`` bytes."""
    response = {"idempotency_key": f"flood-{i:010d}", "reports": {"violated": True}}
    if size:
        response["reports"] = {"violated": [0] * (size // 2)}
    return json.dumps(response, separators=(",", ":")).encode()


def flood(server: Server, payloads: list[bytes]) -> dict[str, float | Counter[int]]:
    """Post ``payloads`` one after another on one connection; CPU seconds per post and posts/s."""
    parts = urlsplit(server.url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=120)
    headers = {"content-type": "application/json"}
    codes: Counter[int] = Counter()
    cpu = server.cpu_seconds()
    start = time.perf_counter()
    for payload in payloads:
        conn.request("POST", "/surveys/flood/responses", payload, headers)
        response = conn.getresponse()
        response.read()
        codes[response.status] += 1
    elapsed = time.perf_counter() - start
    spent = server.cpu_seconds()
    conn.close()
    per_post = float("nan") if cpu is None or spent is None else (spent - cpu) / len(payloads)
    return {"cpu_per_post": per_post, "per_s": len(payloads) / elapsed, "codes": codes}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--posts", type=int, default=2000, help="refused posts per body size")
    parser.add_argument("--quick", action="store_true", help="tiny run (CI smoke)")
    args = parser.parse_args(argv)
    if args.quick:
        args.posts = 200

    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    print(f"deniable refused-flood cost ({os.cpu_count()} CPUs, load average "
          f"{load[0]:.1f} {load[1]:.1f} {load[2]:.1f}, SQLite)")
    with tempfile.TemporaryDirectory(prefix="deniable-bench-") as tmp:
        folder = Path(tmp)
        survey = folder / "flood.yaml"  # the honor-code survey, one response per address per hour
        text = HONOR.read_text().replace("id: honor-code", "id: flood")
        survey.write_text(f"rate_limit: {{responses: 1, seconds: 3600}}\n{text}")
        server = Server(f"sqlite:///{folder / 'flood.db'}", [survey], folder / "server.log")
        try:
            first = httpx.post(f"{server.url}/surveys/flood/responses", content=body(-1, 0),
                               headers={"content-type": "application/json"})
            assert first.status_code == 201, first.text  # the bucket is empty from here on
            for label, size in SIZES.items():
                posts = max(20, args.posts // (1 + size // (64 << 10)))  # fewer of the big ones
                got = flood(server, [body(i, size) for i in range(posts)])
                codes = got["codes"]
                assert isinstance(codes, Counter) and set(codes) == {429}, codes
                print(f"refused post {label:>7}: server CPU {float(got['cpu_per_post']) * 1e6:>9,.0f} us each "
                      f"({posts:,} posts, all 429; {float(got['per_s']):,.0f} posts/s)")
            stored = httpx.get(f"{server.url}/surveys/flood/results").json()["n_responses"]
            assert stored == 1, stored
        finally:
            server.stop()
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    print(f"stored: 1 (the first post); load average after: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
