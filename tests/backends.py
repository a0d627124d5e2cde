"""The two sampler backends side by side, for the tests that compare numpy's output with numba's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from deniable import _accelerate as accelerate

needs_numba = pytest.mark.skipif(not accelerate.numba_available(), reason="numba is not installed")


def both(run: Callable[[], Any]) -> tuple[Any, Any]:
    """``run()`` with the numpy backend, then with numba (forced for every size).

    Use with the ``restore_accelerator`` fixture, which puts the previous choice back.
    """
    accelerate.set_accelerator("numpy")
    first = run()
    accelerate.set_accelerator("numba")
    return first, run()
