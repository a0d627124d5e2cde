"""A database error (a 500) logs no report, key, token or body hash, on SQLite and PostgreSQL.

The real server runs in a subprocess and its whole log is read. The database
is sabotaged under it (a unique index the storage does not expect, a dropped
table), so that the driver's errors quote the refused row (PostgreSQL's
``DETAIL: Key (body_hash)=(...)``) and SQLAlchemy would print the SQL
parameters; the log must show the failure without any of them.
"""

from __future__ import annotations

from typing import Any

import httpx
from sqlalchemy import create_engine, text

from deniable.server._storage import normalize_url
from deniable.server._submissions import token_hash

ADMIN = "ADMIN-TOKEN-5e0c77d1b2"
PAYLOAD = "c0ffee00d3adb33f"  # an OUE report over 64 categories
CATS = [f"c{i}" for i in range(64)]


def _survey(sid: str, invite_only: bool) -> dict[str, Any]:
    return {"id": sid, "title": "Errors", "budget": 3, "invite_only": invite_only,
            "questions": [{"id": "q", "text": "?", "type": "categorical", "categories": CATS,
                           "mechanism": "oue", "epsilon": 1}]}


def test_database_errors_log_no_request_data(server_process: Any, db_url: str) -> None:
    server = server_process([], db_url, env={"DENIABLE_ADMIN_TOKEN": ADMIN})
    auth = {"Authorization": f"Bearer {ADMIN}"}
    keys = [f"SECRET-KEY-{i}-8f2a6c" for i in range(4)]
    engine = create_engine(normalize_url(db_url))
    try:
        # no keep-alive: the server closes a connection after a 500
        with httpx.Client(base_url=server.url, timeout=60, limits=httpx.Limits(max_keepalive_connections=0)) as http:
            for sid, invite_only in (("open", False), ("invited", True)):
                assert http.post("/admin/surveys", json=_survey(sid, invite_only), headers=auth).status_code == 201
            invites = http.post("/admin/surveys/invited/invites", json={"count": 2}, headers=auth).json()["tokens"]
            first = {"idempotency_key": keys[0], "reports": {"q": PAYLOAD}}
            assert http.post("/surveys/open/responses", json=first).status_code == 201
            with engine.begin() as conn:
                (body_hash,) = conn.execute(text("SELECT body_hash FROM deniable_responses")).one()
                # the same body under a new key now breaks a unique index the storage does not know
                conn.execute(text("CREATE UNIQUE INDEX sabotage ON deniable_responses (body_hash)"))
            r = http.post("/surveys/open/responses", json={**first, "idempotency_key": keys[1]})
            assert r.status_code == 500
            r = http.post("/surveys/open/responses/batch", headers=auth,
                          json={"responses": [{**first, "idempotency_key": keys[2]}]})
            assert r.status_code == 500
            with engine.begin() as conn:
                conn.execute(text("DROP TABLE deniable_aggregates"))
            invited = {"idempotency_key": keys[3], "invite_token": invites[0], "reports": {"q": PAYLOAD}}
            assert http.post("/surveys/invited/responses", json=invited).status_code == 500
    finally:
        engine.dispose()
    server.stop()
    log = server.log_path.read_text()

    # the failures are logged (types and code lines), so the check below reads real error output
    assert log.count("Exception in ASGI application") == 3, log
    assert "IntegrityError" in log and ("OperationalError" in log or "ProgrammingError" in log), log
    secrets = [PAYLOAD, body_hash, *keys, *invites, *map(token_hash, invites), ADMIN]
    for secret in secrets:
        assert secret not in log, (secret, log)
