"""The test tree has no packages (no __init__.py), so every test module needs a unique basename."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def test_test_module_basenames_are_unique() -> None:
    names = Counter(p.name for p in TESTS.rglob("test_*.py") if "node_modules" not in p.parts)
    clashes = sorted(name for name, count in names.items() if count > 1)
    assert not clashes, f"rename these test modules, pytest cannot import both copies: {clashes}"
