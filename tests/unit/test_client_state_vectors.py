"""The shared client-state vectors (tests/vectors/client_state.json) are what the Python code gives.

The browser's tests (tests/js/client_state.test.mjs) check the same file, so a state
and its memoized draws are the same in Python and in a browser.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

from deniable._client_state import ClientState

VECTORS = Path(__file__).resolve().parents[1] / "vectors"


def _maker() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_client_state", VECTORS / "make_client_state.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_vectors_are_what_python_gives() -> None:
    """Regenerating the file from the Python implementation changes nothing (else: run the script)."""
    maker = _maker()
    assert (VECTORS / "client_state.json").read_text(encoding="utf-8") == maker.text(), (
        "tests/vectors/client_state.json is out of date: python tests/vectors/make_client_state.py"
    )


def test_vector_states_read_as_client_states() -> None:
    data = json.loads((VECTORS / "client_state.json").read_text(encoding="utf-8"))
    survey = ClientState.from_json(data["survey"]["state"])
    assert survey.mechanism == f"survey {data['survey']['definition']['id']}"
    assert survey.fingerprint == data["survey"]["fingerprint"]
    for case in data["mechanisms"]:
        state = ClientState.from_json(case["state"])
        assert (state.mechanism, state.fingerprint) == (case["config"]["mechanism"], case["fingerprint"])
