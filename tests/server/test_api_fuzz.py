"""Schemathesis against the live service: no request the OpenAPI document allows (or breaks) gets a 5xx.

Every operation of ``/openapi.json`` gets schema-conforming and schema-breaking
requests (Schemathesis' positive and negative generation), each sent without
and with the admin token, to the real server on loopback over SQLite and
PostgreSQL. Half of the generated survey ids are replaced by stored ones (an
open survey with every report format and an invite-only one), so the checks
behind the 404 are reached too. Besides "no 5xx", every answer's status must
be one the operation declares and its body must match the declared schema.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

import pytest

schemathesis = pytest.importorskip("schemathesis", reason="the API fuzz needs schemathesis (the 'test' extra)")
pytest.importorskip("fastapi", reason="the API fuzz needs the 'server' extra")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis.errors import Unsatisfiable  # noqa: E402
from schemathesis.checks import not_a_server_error  # noqa: E402
from schemathesis.generation.modes import GenerationMode  # noqa: E402
from schemathesis.specs.openapi.checks import (  # noqa: E402
    response_schema_conformance,
    status_code_conformance,
)

from deniable.server._runner import BackgroundServer  # noqa: E402

ADMIN = "admin-token-for-the-api-fuzz"
CATS = [f"c{i}" for i in range(10)]
SURVEYS = [
    {"id": "kinds", "title": "Every report format", "budget": 10, "questions": [
        {"id": "yn", "text": "?", "type": "yes-no", "mechanism": "forced-response", "p_truth": 0.5, "p_yes": 0.5},
        {"id": "oue", "text": "?", "type": "categorical", "categories": CATS, "mechanism": "oue", "epsilon": 1},
        {"id": "had", "text": "?", "type": "categorical", "categories": CATS, "mechanism": "hadamard",
         "epsilon": 1},
        {"id": "sub", "text": "?", "type": "categorical", "categories": CATS, "mechanism": "subset",
         "epsilon": 1, "omega": 3},
    ]},
    {"id": "invited", "title": "Invite only", "budget": 2, "invite_only": True, "questions": [
        {"id": "yn", "text": "?", "type": "yes-no", "mechanism": "forced-response", "p_truth": 0.5, "p_yes": 0.5},
    ]},
]
STORED = [s["id"] for s in SURVEYS]


@pytest.fixture(scope="module")
def live(module_db_url: str) -> Iterator[BackgroundServer]:
    with BackgroundServer(SURVEYS, db_url=module_db_url, admin_token=ADMIN) as server:
        yield server


@pytest.mark.slow  # a few seconds per mode: with the rest (the fast suite stays under 4 CPU-minutes)
@pytest.mark.parametrize("mode", list(GenerationMode), ids=str)
def test_no_server_errors(live: BackgroundServer, mode: GenerationMode) -> None:
    """Each operation in turn (Schemathesis' strategies under Hypothesis; its pytest plugin is not used)."""
    schema = schemathesis.openapi.from_url(f"{live.url}/openapi.json")
    checks = [not_a_server_error, status_code_conformance, response_schema_conformance]
    operations = [result.ok() for result in schema.get_all_operations()]
    assert {"POST /surveys/{survey_id}/responses/batch", "POST /admin/surveys"} <= {op.label for op in operations}

    for operation in operations:
        @settings(max_examples=12, deadline=None, derandomize=True, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(case=operation.as_strategy(generation_mode=mode))
        def run(case: Any) -> None:
            path = case.path_parameters or {}
            if "survey_id" in path:
                pick = hashlib.sha256(repr(case.body).encode()).digest()[0]
                if pick % 2:
                    path["survey_id"] = STORED[pick // 2 % len(STORED)]
            for headers in ({}, {"Authorization": f"Bearer {ADMIN}"}):
                case.call_and_validate(base_url=live.url, headers=headers, checks=checks, timeout=60)

        try:
            run()
        except Unsatisfiable:  # negative mode: nothing to break (no input, or any string is valid)
            assert mode is GenerationMode.NEGATIVE and operation.method == "get", operation.label
