"""The server's log never shows tokens, report payloads, idempotency keys or query strings."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import httpx

from deniable.server._runner import AccessLogFilter

ADMIN = "ADMIN-TOKEN-9d1c2e7b5a"
PAYLOAD = "d3adb33fc0ffee11"  # an OUE report over 64 categories (16 hex digits)
KEY = "KEY-SECRET-4b8e2f1a90"
QUERY_SECRET = "QUERY-SECRET-77ab"
SURVEY = {
    "id": "logged", "title": "Log test", "budget": 3, "invite_only": True,
    "questions": [{"id": "q", "text": "?", "type": "categorical",
                   "categories": [f"c{i}" for i in range(64)], "mechanism": "oue", "epsilon": 1}],
}


def test_log_shows_requests_but_no_secrets(
    server_process: Any, sqlite_url: str, examples: Path
) -> None:
    server = server_process([examples / "honor-code.yaml"], sqlite_url,
                            env={"DENIABLE_ADMIN_TOKEN": ADMIN})
    auth = {"Authorization": f"Bearer {ADMIN}"}
    with httpx.Client(base_url=server.url) as http:
        assert http.post("/admin/surveys", json=SURVEY, headers=auth).status_code == 201
        (invite,) = http.post("/admin/surveys/logged/invites", json={"count": 1},
                              headers=auth).json()["tokens"]
        body = {"idempotency_key": KEY, "invite_token": invite, "reports": {"q": PAYLOAD}}
        assert http.post("/surveys/logged/responses", json=body).status_code == 201
        bad = {"idempotency_key": KEY + "x", "invite_token": invite, "reports": {"q": PAYLOAD[:-1]}}
        assert http.post("/surveys/logged/responses", json=bad).status_code == 422
        assert http.post("/surveys/honor-code/responses",
                         json={"idempotency_key": KEY + "y", "reports": {"violated": True}}
                         ).status_code == 201
        http.get(f"/s/logged?invite={QUERY_SECRET}")
        http.get(f"/surveys/logged/results?token={QUERY_SECRET}")
        assert http.get("/admin/surveys/logged/export", headers=auth).status_code == 200
        http.get("/admin/surveys/logged/export", headers={"Authorization": "Bearer " + ADMIN[:-1]})
    server.stop()
    log = server.log_path.read_text()

    # the log is really captured: the requests are there, without query strings
    assert "POST /surveys/logged/responses" in log
    assert "GET /s/logged " in log and "GET /surveys/logged/results " in log
    assert " 422" in log and " 401" in log
    for secret in (ADMIN, ADMIN[:-1], invite, PAYLOAD, PAYLOAD[:-1], KEY, QUERY_SECRET):
        assert secret not in log, secret
    access = [line for line in log.splitlines() if line.startswith("INFO access:")]
    assert len(access) >= 8 and not any("127.0.0.1" in line for line in access)


def test_access_filter_drops_query_and_client() -> None:
    record = logging.LogRecord(
        "uvicorn.access", logging.INFO, __file__, 1, '%s - "%s %s HTTP/%s" %d',
        ("10.1.2.3:5555", "GET", "/s/x?invite=abc", "1.1", 200), None,
    )
    assert AccessLogFilter().filter(record)
    assert record.getMessage() == '- - "GET /s/x HTTP/1.1" 200'
