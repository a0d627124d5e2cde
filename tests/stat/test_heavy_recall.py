"""Discovery (PEM over a sketch): every value above a calibrated frequency is found; the device path is private.

Population (n = 200,000): five planted strings at 9-12% (one of them empty,
one longer than ``max_length``), a Zipf(1.1) body of 200 short words over a
quarter of the devices (the most frequent at about 5%), and a tail of a
quarter of the devices, each typing a string of its own.

Calibration. Let ``s`` bound the standard deviation of a prefix's estimate
at any level: ``s**2 = oracle.variance(n_min, 0, 1)`` (the sketch's variance
is largest at f = 0 and collisions <= 1) with ``n_min`` the fewest reports
of a level. Every candidate (at most ``top_k * 256`` per level, 7 levels) is
off by more than ``6.7 s`` with probability at most ``1e-11`` each (normal
approximation of a sum of ~28,000 independent bits), ``< 1e-6`` in all
(union bound). Outside that event a value whose frequency is at least
``13.4 s`` beats every candidate of true frequency 0 at every level, and
fewer than ``top_k`` candidates have a larger true frequency, so it is kept
to the end and passes ``identify``'s significance filter (its estimate
exceeds ``6.7 s``, more than the filter's ``2.9 SE``). Alpha 1e-6.

Power: the same population at epsilon 0.25 (the calibrated bound is then
above 0.6) misses some of the planted values.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import deniable as dn

pytestmark = pytest.mark.stat

PLANTED = {"the": 0.12, "héllo": 0.11, "😀 ok": 0.10, "": 0.09, "a-long-word-cut": 0.09}


def population(n: int, rng: np.random.Generator) -> list[str]:
    planted = [v for v, f in PLANTED.items() for _ in range(round(f * n))]
    rest = n - len(planted)
    words = 1 / np.arange(1, 201) ** 1.1
    body = [f"w{i}" for i in rng.choice(200, rest // 2, p=words / words.sum())]
    tail = [f"tail-{i}" for i in range(rest - len(body))]
    values = planted + body + tail
    rng.shuffle(values)  # type: ignore[arg-type]
    return values


def found(epsilon: float, oracle: str, rng: np.random.Generator) -> tuple[set[str], float, dn.Discovery]:
    hh = dn.HeavyHitters(epsilon=epsilon, oracle=oracle, max_length=6, top_k=16, seed=rng.bytes(32))
    stat = hh.aggregate(hh.privatize_many(population(200_000, rng), rng=rng))
    n_min = min(s.n for s in stat.levels)
    s = float(np.sqrt(hh.oracle.variance(n_min, 0.0, 1.0)))
    discovery = hh.identify(stat)
    return set(discovery.values), 13.4 * s, discovery


@pytest.mark.parametrize("oracle", ["cms", "hcms"])
def test_calibrated_recall(oracle: str, rng: np.random.Generator) -> None:
    """Every planted value (all above the calibrated 13.4 s) is identified; alpha 1e-6 (see module)."""
    values, bound, discovery = found(4.0, oracle, rng)
    assert bound < min(PLANTED.values())
    # the long one is cut at a character boundary (6 bytes) and flagged, never merged
    expected = {v if len(v.encode()) <= 6 else v.encode()[:6].decode() for v in PLANTED}
    assert expected <= values, (expected - values, discovery)
    cut = dict(zip(discovery.values, discovery.truncated, strict=True))
    assert cut["a-long"] and not cut["the"]
    assert list(discovery.counts) == sorted(discovery.counts, reverse=True)


@pytest.mark.parametrize("oracle", ["cms", "hcms"])
def test_recall_power(oracle: str, rng: np.random.Generator) -> None:
    """Power: at epsilon 0.25 the calibrated bound exceeds the planted frequencies and some are missed."""
    values, bound, _ = found(0.25, oracle, rng)
    assert bound > max(PLANTED.values())
    expected = {v if len(v.encode()) <= 6 else v.encode()[:6].decode() for v in PLANTED}
    assert not expected <= values


def _level_events(hh: dn.HeavyHitters) -> Any:
    """Event code ``4 (level - 1) + 2 [supports x's key] + [supports x''s key]`` of each report."""

    def events(_: Any, reports: np.ndarray, x: str, other: str) -> np.ndarray:
        oracle = hh.oracle
        level = reports["level"].astype(np.int64)
        fields = [f for f in reports.dtype.names or () if f != "level"]
        sketch = reports[fields].astype(oracle.dtype)
        items, _ = hh.items([x, other])
        codes = 4 * (level - 1)
        for weight, item in ((2, items[0]), (1, items[1])):
            keys = [bytes([i]) + item[:i] for i in range(1, hh.levels + 1)]
            fps = oracle.fingerprints(keys)[level - 1]
            buckets = oracle.buckets(sketch["row"].astype(np.int64), fps)
            codes = codes + weight * oracle._supports(sketch, buckets).astype(np.int64)
        return codes

    return events


@pytest.mark.audit
@pytest.mark.parametrize("oracle", ["cms", "hcms"])
def test_device_path_audit(oracle: str, rng: np.random.Generator) -> None:
    """Audit of ``privatize_many`` (10^5 trials per input; events: level x supports x's / x''s key), alpha 1e-6.

    The level draw does not depend on the value, so the loss is the sketch's.
    Power (alpha 1e-6): the same device path at 1.2 x epsilon claiming epsilon fails.
    """
    shape = {"oracle": oracle, "max_length": 2, "rows": 16, "width": 256, "seed": rng.bytes(32)}
    hh = dn.HeavyHitters(epsilon=2.0, **shape)  # type: ignore[arg-type]
    pairs = [("ab", "ac"), ("", "zz")]
    result = dn.audit(hh, trials=100_000, rng=rng, pairs=pairs, events=_level_events(hh), n_events=4 * hh.levels)
    assert result.passed, str(result)
    loud = dn.HeavyHitters(epsilon=2.4, **shape)  # type: ignore[arg-type]
    liar_cls = type("LyingHeavyHitters", (dn.HeavyHitters,), {"epsilon": property(lambda self: hh.epsilon)})
    liar = liar_cls.__new__(liar_cls)
    liar.__dict__.update(loud.__dict__)
    result = dn.audit(liar, trials=100_000, rng=rng, pairs=pairs[:1], events=_level_events(liar),
                      n_events=4 * hh.levels)
    assert not result.passed, str(result)
