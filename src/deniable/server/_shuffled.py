"""The shuffled guarantee the results state: computed once per grid point, off the read path.

The results state Feldman, McMillan & Talwar's central ``(epsilon, delta)``
(:func:`deniable.shuffle_epsilon`) of ``n`` responses for ``n`` rounded down
to two significant digits (:func:`grid_point`), at ``delta = min(1e-6,
n^-1.1)`` of that rounded ``n``: fewer reports give a larger epsilon and
delta, so a statement for fewer responses holds for more. One value costs
about 40 ms of CPU at 10^5 responses, 140 ms at 10^6 and 0.9 s at 10^7,
and while batches arrive the rounded ``n`` changes several times a second.

Each value is computed once per process and kept (the :data:`MAX_KEPT`
most recent; a thread asking for one being computed waits for it):
:func:`bound`. The service states them through an :class:`Ahead`: when
the value for the current count is not ready but the service has stated
one for fewer responses, it states that one again (valid, a little looser)
and computes the new one in a background thread, so that a read under
ingest never waits for the computation (issue 13: results latency while
batches are ingested). A service's first statement for a survey is always
exact.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor

from deniable._shuffle import shuffle_epsilon

__all__ = ["SHUFFLE_DELTA", "MAX_KEPT", "grid_point", "bound", "Ahead"]

SHUFFLE_DELTA = 1e-6
"""The largest delta of the shuffled guarantee the results state (``n^-1.1`` when smaller)."""

MAX_KEPT = 256
"""Values kept per process (one per epsilon and grid point)."""

_lock = threading.Lock()
_values: OrderedDict[tuple[float, int], Future[float]] = OrderedDict()
_ahead = ThreadPoolExecutor(max_workers=1, thread_name_prefix="deniable-shuffle")


def _step(n: int) -> int:
    return 10 ** max(len(str(n)) - 2, 0)


def grid_point(n: int) -> tuple[int, float]:
    """``n`` rounded down to two significant digits, and the delta stated for it: ``min(1e-6, n^-1.1)``."""
    counted = n // _step(n) * _step(n)
    return counted, min(SHUFFLE_DELTA, float(counted) ** -1.1)


def _value(epsilon0: float, counted: int, delta: float) -> float:
    """``shuffle_epsilon(epsilon0, counted, delta)``, computed here unless kept or being computed."""
    key = (epsilon0, counted)
    with _lock:
        future = _values.get(key)
        mine = future is None
        if future is None:
            future = _values[key] = Future()
            while len(_values) > MAX_KEPT:
                _values.popitem(last=False)
        else:
            _values.move_to_end(key)
    if mine:
        try:
            future.set_result(shuffle_epsilon(epsilon0, counted, delta))
        except BaseException as exc:  # not kept: the next caller tries again
            with _lock:
                _values.pop(key, None)
            future.set_exception(exc)
    return future.result()


def bound(epsilon0: float, n: int) -> tuple[float, float]:
    """The central ``(epsilon, delta)`` stated for ``n >= 1`` shuffled responses of an ``epsilon0``-LDP randomizer."""
    counted, delta = grid_point(n)
    return _value(epsilon0, counted, delta), delta


def _ready(epsilon0: float, counted: int) -> float | None:
    with _lock:
        future = _values.get((epsilon0, counted))
    if future is None or not future.done() or future.exception() is not None:
        return None
    return future.result()


class Ahead:
    """A service's statements of the bound: never waiting for a new value once it has stated one.

    ``bound(epsilon0, n)`` is :func:`bound`'s value when it is ready (or
    when this service has stated none for ``epsilon0`` yet: then it is
    computed here); otherwise the largest-``n`` statement this service made
    for ``epsilon0`` before (``(epsilon, delta)`` for fewer responses, valid
    for ``n``), while a background thread computes the new value (one
    computation at a time).
    """

    def __init__(self) -> None:
        self._stated: dict[float, tuple[int, float, float]] = {}
        self._lock = threading.Lock()
        self._running: Future[float] | None = None

    def bound(self, epsilon0: float, n: int) -> tuple[float, float]:
        counted, delta = grid_point(n)
        value = _ready(epsilon0, counted)
        if value is None:
            with self._lock:
                before = self._stated.get(epsilon0)
                if before is not None and before[0] < counted:
                    if self._running is None or self._running.done():
                        self._running = _ahead.submit(_value, epsilon0, counted, delta)
                    return before[1], before[2]
            value = _value(epsilon0, counted, delta)
        with self._lock:
            if counted >= self._stated.get(epsilon0, (0, 0.0, 0.0))[0]:
                self._stated[epsilon0] = (counted, value, delta)
        return value, delta
