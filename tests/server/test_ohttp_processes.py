"""``deniable serve --ohttp-keys`` and ``deniable relay`` as separate processes: who learns what.

A device on its own loopback address (127.0.0.2) answers through the relay
(127.0.0.1) to the collector (127.0.0.3). Afterwards the collector's
database and log hold neither the device's address nor a per-report time,
and the relay's log holds nothing of the reports.
"""

from __future__ import annotations

import os
import re
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

pytest.importorskip("pyhpke", reason="Oblivious HTTP needs the 'ohttp' extra")

from deniable.client import Client  # noqa: E402

pytestmark = pytest.mark.integration

TOKEN = "relay-token-e2e-71c3"
DEVICE = "127.0.0.2"


def _start(args: list[str], log: Path, pattern: str, env: dict[str, str]) -> tuple[subprocess.Popen[bytes], str]:
    out = open(log, "wb")  # noqa: SIM115 - the process holds it; closed with the process's end
    proc = subprocess.Popen([sys.executable, "-m", "deniable", *args], stdout=out, stderr=subprocess.STDOUT,
                            env={**os.environ, **env})
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = re.findall(pattern, log.read_text(errors="replace"))
        if found:
            return proc, found[-1]
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"{args[0]} did not start:\n{log.read_text(errors='replace')}")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=30)


def _free_port(host: str) -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def test_the_collector_never_learns_the_address_nor_the_relay_the_reports(tmp_path: Path) -> None:
    relay_port = _free_port("127.0.0.1")
    survey = tmp_path / "survey.yaml"
    survey.write_text(
        "id: honor-code\ntitle: Honor code survey\nbudget: 1.1\n"
        f"transport: {{kind: ohttp, relay: 'http://127.0.0.1:{relay_port}/'}}\n"
        "questions:\n  - {id: violated, text: 'Broken the honor code?', type: yes-no, mechanism: forced-response,"
        " p_truth: 0.5, p_yes: 0.5}\n"
    )
    env = {"DENIABLE_RELAY_TOKEN": TOKEN}
    db = tmp_path / "collector.db"
    started = []
    try:
        collector, url = _start(
            ["serve", str(survey), "--db", f"sqlite:///{db}", "--host", "127.0.0.3", "--port", "0",
             "--ohttp-keys", str(tmp_path / "keys.json")],
            tmp_path / "collector.log", r"serving on (http://\S+)", env,
        )
        started.append(collector)
        started.append(_start(["relay", "--gateway", url, "--port", str(relay_port)], tmp_path / "relay.log",
                              r"relaying on (http://\S+)", env)[0])
        keys = []
        with Client(url, relay_transport=httpx.HTTPTransport(local_address=DEVICE)) as device:
            for i in range(12):
                keys.append(device.respond("honor-code", {"violated": i % 3 == 0})["idempotency_key"])
            assert device.results("honor-code")["questions"][0]["n"] == 12
    finally:
        for proc in reversed(started):
            _stop(proc)
    collector_log = (tmp_path / "collector.log").read_text()
    relay_log = (tmp_path / "relay.log").read_text()
    assert collector_log.count("POST /.well-known/ohttp-gateway") == 12  # the log is really captured
    assert DEVICE not in collector_log and "127.0.0.1" not in collector_log  # nor the relay's address
    assert not re.search(r"\d\d:\d\d:\d\d", collector_log)  # no time of any request
    with sqlite3.connect(db) as con:
        dump = "\n".join(con.iterdump())
        tables = [row[0] for row in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        columns = {f"{t}.{row[1]}" for t in tables for row in con.execute(f"PRAGMA table_info({t})")}
    assert "deniable_responses.reports" in columns
    assert not [c for c in columns if re.search(r"time|date|_at$|addr|\bip|client|host|peer", c.split(".")[1])]
    assert DEVICE not in dump  # the relay's address is there only as the survey's relay URL
    assert "127.0.0.1" not in dump.replace(f"http://127.0.0.1:{relay_port}/", "")
    for key in keys:  # the reports reached the collector, and only the collector
        assert key in dump and key not in relay_log
    assert relay_log.count("POST / ") == 12 and "reports" not in relay_log and "violated" not in relay_log
