"""``deniable relay --shuffle`` across processes: held under the threshold, nothing lost or doubled under ``kill -9``.

A device answers through a shuffling relay (each answer acknowledged ``202``
with the relay's queued receipt once on the relay's disk). Checks: nothing reaches the collector
while the buffer holds fewer than ``threshold`` reports; after the relay is
killed (SIGKILL) and a batch it had forwarded is sent again (the relay died
between the gateway's answer and its own deletion), the restarted relay
forwards every acknowledged report and the collector stores each exactly
once; a later batch is stored in an order other than the arrival order
(equal with probability 1/12!, about 2e-9, for a correct shuffle); the
results count the batches observed (30 and 12: the repeat stored nothing),
and the survey refuses a response posted directly.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import httpx
import pytest

pytest.importorskip("pyhpke", reason="Oblivious HTTP needs the 'ohttp' extra")

from test_ohttp_processes import DEVICE, TOKEN, _free_port, _start, _stop  # noqa: E402

from deniable._ohttp._shuffler import BATCH_TYPE, Buffer, encode_batch  # noqa: E402
from deniable.client import Client  # noqa: E402

pytestmark = pytest.mark.integration


def _keys_stored(db: Path) -> list[str]:
    with sqlite3.connect(db) as con:
        return [row[0] for row in con.execute("SELECT idempotency_key FROM deniable_responses ORDER BY id")]


def _wait(condition: object, what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def test_kill_9_loses_and_doubles_nothing(tmp_path: Path) -> None:
    relay_port = _free_port("127.0.0.1")
    relay_url = f"http://127.0.0.1:{relay_port}/"
    survey = tmp_path / "survey.yaml"
    survey.write_text(
        "id: honor-code\ntitle: Honor code survey\nbudget: 1.1\nrate_limit: off\n"
        f"transport: {{kind: ohttp, relay: '{relay_url}', shuffler: true}}\n"
        "questions:\n  - {id: violated, text: 'Broken the honor code?', type: yes-no, mechanism: forced-response,"
        " p_truth: 0.5, p_yes: 0.5}\n"
    )
    db, buffer = tmp_path / "collector.db", tmp_path / "relay-buffer.sqlite"
    env = {"DENIABLE_RELAY_TOKEN": TOKEN}
    started = []

    def relay(threshold: int, log: str) -> object:
        proc = _start(["relay", "--gateway", url, "--port", str(relay_port), "--rate-limit", "off", "--shuffle",
                       "--threshold", str(threshold), "--max-delay", "0.5", "--buffer", str(buffer)],
                      tmp_path / log, r"relaying on (http://\S+)", env)[0]
        started.append(proc)
        return proc

    try:
        collector, url = _start(["serve", str(survey), "--db", f"sqlite:///{db}", "--port", "0", "--ohttp-keys",
                                 str(tmp_path / "keys.json")], tmp_path / "collector.log", r"serving on (http://\S+)",
                                env)
        started.append(collector)
        first = relay(1000, "relay-1.log")
        with Client(url, relay_transport=httpx.HTTPTransport(local_address=DEVICE)) as device:
            acked = [device.respond("honor-code", {"violated": i % 2 == 0}) for i in range(30)]
            # the relay's queued receipt, not the collector's: nothing is stored yet
            assert [{k: v for k, v in a.items() if k != "idempotency_key"} for a in acked] == [
                {"status": "queued", "stored": False, "threshold": 1000, "max_delay": 0.5}] * 30
            time.sleep(1.0)
            assert _keys_stored(db) == []  # 30 < threshold: held
            first.kill()  # SIGKILL
            first.wait(timeout=30)
            # the relay had forwarded the batch but died before deleting it: the gateway stores it now
            kept = Buffer(buffer)
            items = [body for _, body in kept.take()]
            kept.close()
            assert len(items) == 30
            answer = httpx.post(url + "/.well-known/ohttp-gateway/batch", content=encode_batch(items),
                                headers={"Content-Type": BATCH_TYPE, "Authorization": f"Bearer {TOKEN}"})
            assert answer.json() == {"served": 30, "refused": 0, "unopened": 0}
            relay(10, "relay-2.log")  # sends the same 30 again: each a duplicate of its stored self
            _wait(lambda: Buffer(buffer).count() == 0, "the restarted relay to empty its buffer")
            later = [device.respond("honor-code", {"violated": True})["idempotency_key"] for _ in range(12)]
            _wait(lambda: len(_keys_stored(db)) == 42, "the second batch")
            # the results state the guarantee for the batches observed (the repeat of the first stored none);
            # the gateway records a batch once it has served all of it, a moment after its last response is stored
            _wait(lambda: device.results("honor-code")["shuffler"]["batches"] == 2, "the second batch's record")
            results = device.results("honor-code")
            assert results["shuffler"]["batches"] == 2 and results["shuffler"]["responses"] == 42
            assert (results["shuffler"]["smallest"], results["shuffler"]["largest"]) == (12, 30)
            # and the survey takes no response another way: posted directly, refused
            direct = httpx.post(url + "/surveys/honor-code/responses",
                                json={"idempotency_key": "direct-0001", "reports": {"violated": True}})
            assert direct.status_code == 403 and direct.json()["detail"]["field"] == "transport"
    finally:
        for proc in reversed(started):
            if proc.poll() is None:  # type: ignore[attr-defined]
                _stop(proc)  # type: ignore[arg-type]
    stored = _keys_stored(db)
    assert sorted(stored) == sorted([a["idempotency_key"] for a in acked] + later)  # none lost, none twice
    assert stored[30:] != later and sorted(stored[30:]) == sorted(later)  # shuffled within its batch
    logs = (tmp_path / "relay-1.log").read_text() + (tmp_path / "relay-2.log").read_text()
    assert "batch of 30 forwarded" in logs and "batch of 12 forwarded" in logs
    assert not any(key in logs for key in stored)
