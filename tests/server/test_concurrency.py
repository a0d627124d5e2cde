"""Many writers at once, and a server killed with SIGKILL: no report lost, none duplicated."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from deniable.server._runner import BackgroundServer
from deniable.server._storage import Storage, responses_table

WORKERS = 4
# posts per worker: PostgreSQL pays one fsync'd commit per post (tens of ms on a busy
# small VM), so it gets fewer; the interleavings exercised are the same
POSTS = {"sqlite": 500, "postgres": 125}

# A respondent process: privatizes locally, posts one response per request over a
# keep-alive connection, re-sends every 10th body (a retry), prints the acknowledged keys.
WORKER = r"""
import json, sys
import httpx
from deniable.client import new_key, privatize_answers
url, n = sys.argv[1], int(sys.argv[2])
acked = []
with httpx.Client(base_url=url, timeout=120) as http:
    survey = http.get("/surveys/honor-code").json()
    for i in range(n):
        body = {"idempotency_key": new_key(),
                "reports": privatize_answers(survey, {"violated": i % 3 == 0})}
        first = http.post("/surveys/honor-code/responses", json=body)
        assert first.status_code == 201, first.text
        if i % 10 == 0:
            again = http.post("/surveys/honor-code/responses", json=body)
            assert again.status_code == 201 and again.content == first.content, again.text
        acked.append(body["idempotency_key"])
print(json.dumps(acked))
"""


def _unlimited(examples: Path, tmp_path: Path) -> Path:
    """The honor-code survey without its per-address rate limit: every poster here is one loopback client."""
    path = tmp_path / "honor-code.yaml"
    path.write_text((examples / "honor-code.yaml").read_text() + "\nrate_limit: off\n")
    return path


def _stored_keys(storage: Storage) -> list[str]:
    with storage.engine.connect() as conn:
        return [row[0] for row in conn.execute(select(responses_table.c.idempotency_key))]


def _aggregate_matches_rows(storage: Storage) -> int:
    """The stored aggregate equals the aggregate recomputed from the stored reports."""
    survey = storage.survey("honor-code")
    m = survey.questions[0].mechanism
    reports = [json.loads(text)["violated"] for chunk in storage.iter_responses("honor-code")
               for _, text in chunk]
    assert storage.aggregates("honor-code")["violated"] == m.aggregate(reports)
    return len(reports)


@pytest.mark.slow
def test_concurrent_processes_lose_and_duplicate_nothing(
    db_url: str, examples: Path, server_process: Any, tmp_path: Path
) -> None:
    """4 processes x 500 posts (125 on PostgreSQL), +10% retries, into two servers sharing
    one database: every acknowledged key is stored once and the aggregate matches the rows."""
    survey = _unlimited(examples, tmp_path)
    posts = POSTS["sqlite" if db_url.startswith("sqlite") else "postgres"]
    with BackgroundServer([survey], db_url=db_url) as local:
        other = server_process([survey], db_url, args=("--no-access-log",))
        workers = [
            subprocess.Popen([sys.executable, "-c", WORKER, url, str(posts)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for url in [local.url, other.url] * (WORKERS // 2)
        ]
        acked: list[str] = []
        for w in workers:
            out, err = w.communicate(timeout=300)
            assert w.returncode == 0, err[-2000:]
            acked += json.loads(out)
        stored = _stored_keys(local.storage)
        assert len(acked) == len(set(acked)) == WORKERS * posts
        assert sorted(stored) == sorted(acked)
        assert _aggregate_matches_rows(local.storage) == WORKERS * posts
        results = httpx.get(f"{other.url}/surveys/honor-code/results").json()
        assert results["n_responses"] == WORKERS * posts


def _post_until_failure(url: str, acked: list[dict[str, Any]], stop: threading.Event) -> None:
    from deniable.client import new_key

    with httpx.Client(base_url=url, timeout=10) as http:
        i = 0
        while not stop.is_set():
            body = {"idempotency_key": new_key(), "reports": {"violated": i % 2 == 0}}
            try:
                r = http.post("/surveys/honor-code/responses", json=body)
            except httpx.TransportError:
                return  # the server is gone
            if r.status_code == 201:
                acked.append(body)
            i += 1


@pytest.mark.slow
def test_sigkill_keeps_every_acknowledged_report(
    db_url: str, examples: Path, server_process: Any, tmp_path: Path
) -> None:
    survey = _unlimited(examples, tmp_path)
    server = server_process([survey], db_url, args=("--no-access-log",))
    acked: list[dict[str, Any]] = []
    stop = threading.Event()
    threads = [threading.Thread(target=_post_until_failure, args=(server.url, acked, stop))
               for _ in range(3)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 60
    while len(acked) < 300 and time.monotonic() < deadline:
        time.sleep(0.01)
    server.kill()  # SIGKILL while the posters are mid-flight
    stop.set()
    for t in threads:
        t.join(timeout=60)
    assert len(acked) >= 300

    token = "relay-token-for-the-replay"
    restarted = server_process([survey], db_url, args=("--no-access-log",), env={"DENIABLE_RELAY_TOKEN": token})
    replay = httpx.post(f"{restarted.url}/surveys/honor-code/responses/batch", json={"responses": acked},
                        headers={"Authorization": f"Bearer {token}"}, timeout=120)
    assert replay.status_code == 201
    assert replay.json() == {"accepted": 0, "duplicates": len(acked)}
    storage = Storage(db_url)
    try:
        stored = _aggregate_matches_rows(storage)
        assert stored >= len(acked)  # requests in flight at the kill may also have committed
    finally:
        storage.close()
