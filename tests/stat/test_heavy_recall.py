"""Discovery (PEM and SFP over a sketch): every value above a calibrated frequency is found; the device path is private.

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

Integers (PEM): planted integers, a Zipf body and a tail of unique integers;
the items are 8 bytes, so 8 levels and at most ``8 * 256 * 16`` candidates,
each off by more than ``6.7 s`` with probability ``< 3e-11`` (``< 1e-6`` in
all); the same argument applies.

SFP (epsilon 8, so 4 per sketch). Stage 1: at each of the 7 positions the
65,536 ``(piece, byte)`` pairs, each off by more than ``7.2 s`` (``s`` as
above, for the fragment sketch's fewest reports) with probability
``< 7e-13``: ``< 3.2e-7`` over all 458,752. Outside that event a value of
share at least ``14.4 s`` has every fragment estimated above ``7.2 s``,
above any pair of true share 0 and above the stage's filter (``4.8 SE``, SE
at most ``1.5 s`` there), and fewer than ``4 top_k`` pairs of a position
have a larger true share, so each of its fragments is kept; its piece's
partial items rank it first among those made of kept fragments of true
share 0, so it is a candidate. Stage 2: the word sketch (all ``n``
reports, ``s_w``) has at most ``256 * 8 top_k`` candidates, each off by more
than ``7.2 s_w`` w.p. ``< 7e-13``; the value's estimate beats ``7.2 s_w``,
more than the final filter. Alpha ``< 1e-6`` in all.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from liars import claiming

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


PLANTED_INTEGERS = {0: 0.12, -1: 0.11, 2**40: 0.10, -(2**62): 0.09, 7: 0.09}


def integer_population(n: int, rng: np.random.Generator) -> list[int]:
    planted = [v for v, f in PLANTED_INTEGERS.items() for _ in range(round(f * n))]
    rest = n - len(planted)
    words = 1 / np.arange(1, 201) ** 1.1
    body = (1000 + rng.choice(200, rest // 2, p=words / words.sum())).tolist()
    tail = (10**9 + np.arange(rest - len(body)) * 7919).tolist()
    values = planted + body + tail
    rng.shuffle(values)  # type: ignore[arg-type]
    return values


def found(epsilon: float, oracle: str, rng: np.random.Generator, method: str = "pem",
          kind: str = "text") -> tuple[set[Any], float, dn.Discovery]:
    hh = dn.HeavyHitters(epsilon=epsilon, oracle=oracle, method=method, kind=kind, max_length=6, top_k=16,
                         seed=rng.bytes(32))
    values = population(200_000, rng) if kind == "text" else integer_population(200_000, rng)
    stat = hh.aggregate(hh.privatize_many(values, rng=rng))
    n_min = min(s.n for s in stat.levels)
    s = float(np.sqrt(hh.oracle.variance(n_min, 0.0, 1.0)))
    discovery = hh.identify(stat)
    return set(discovery.values), (13.4 if method == "pem" else 14.4) * s, discovery


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


def test_calibrated_recall_of_integers(rng: np.random.Generator) -> None:
    """Every planted integer is identified by PEM over 8-byte items; alpha 1e-6 (see module)."""
    values, bound, discovery = found(4.0, "cms", rng, kind="integer")
    assert bound < min(PLANTED_INTEGERS.values())
    assert set(PLANTED_INTEGERS) <= values, (set(PLANTED_INTEGERS) - values, discovery)
    assert all(type(v) is int for v in discovery.values) and not discovery.truncated.any()


def test_integer_recall_power(rng: np.random.Generator) -> None:
    """Power: at epsilon 0.25 some planted integers are missed."""
    values, bound, _ = found(0.25, "cms", rng, kind="integer")
    assert bound > max(PLANTED_INTEGERS.values()) and not set(PLANTED_INTEGERS) <= values


def test_calibrated_recall_sfp(rng: np.random.Generator) -> None:
    """SFP finds every planted value (all above the calibrated 14.4 s) at epsilon 8; alpha 1e-6 (see module)."""
    values, bound, discovery = found(8.0, "cms", rng, method="sfp")
    assert bound < min(PLANTED.values())
    expected = {v if len(v.encode()) <= 6 else v.encode()[:6].decode() for v in PLANTED}
    assert expected <= values, (expected - values, discovery)
    cut = dict(zip(discovery.values, discovery.truncated, strict=True))
    assert cut["a-long"] and not cut["the"]
    # every device fed the word sketch: counts are within 5 SE of the planted ones (z 5: 6e-7 each)
    for value, share in PLANTED.items():
        key = value if len(value.encode()) <= 6 else value.encode()[:6].decode()
        i = discovery.values.index(key)
        assert abs(discovery.counts[i] - share * 200_000) < 5 * discovery.std_errors[i]


def test_sfp_recall_power(rng: np.random.Generator) -> None:
    """Power: at epsilon 0.5 (0.25 per sketch) SFP's bound exceeds the planted shares and some are missed."""
    values, bound, _ = found(0.5, "cms", rng, method="sfp")
    expected = {v if len(v.encode()) <= 6 else v.encode()[:6].decode() for v in PLANTED}
    assert bound > max(PLANTED.values()) and not expected <= values


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


def audit_with_power(hh: dn.HeavyHitters, loud: dn.HeavyHitters, events: Any, n_events: int,
                     rng: np.random.Generator) -> None:
    """``hh`` passes the audit (alpha 1e-6); ``loud`` claiming ``hh``'s epsilon fails it (power)."""
    pairs = [("ab", "ac"), ("", "zz")]
    result = dn.audit(hh, trials=100_000, rng=rng, pairs=pairs, events=events(hh), n_events=n_events)
    assert result.passed, str(result)
    liar = claiming(loud, hh.epsilon)
    result = dn.audit(liar, trials=100_000, rng=rng, pairs=pairs[:1], events=events(liar), n_events=n_events)
    assert not result.passed, str(result)


@pytest.mark.audit
@pytest.mark.parametrize("oracle", ["cms", "hcms"])
def test_device_path_audit(oracle: str, rng: np.random.Generator) -> None:
    """Audit of ``privatize_many`` (10^5 trials per input; events: level x supports x's / x''s key), alpha 1e-6.

    The level draw does not depend on the value, so the loss is the sketch's.
    Power (alpha 1e-6): the same device path at 1.2 x epsilon claiming epsilon fails.
    """
    shape = {"oracle": oracle, "max_length": 2, "rows": 16, "width": 256, "seed": rng.bytes(32)}
    hh = dn.HeavyHitters(epsilon=2.0, **shape)  # type: ignore[arg-type]
    loud = dn.HeavyHitters(epsilon=2.4, **shape)  # type: ignore[arg-type]
    audit_with_power(hh, loud, _level_events, 4 * hh.levels, rng)


def _sfp_events(hh: dn.HeavyHitters) -> Any:
    """Event code: the position, then whether the fragment and the word report support x's and x''s keys."""

    def events(_: Any, reports: np.ndarray, x: str, other: str) -> np.ndarray:
        oracle, protocol = hh.oracle, hh.protocol
        level = reports["level"].astype(np.int64)
        names = list(oracle.dtype.names or ())
        fragment = reports[names].astype(oracle.dtype)
        word = np.empty(reports.size, dtype=oracle.dtype)
        for f in names:
            word[f] = reports[f"word_{f}"]
        items, _ = hh.items([x, other])
        codes = 16 * (level - 1)
        for weight, item in ((8, items[0]), (4, items[1])):
            keys = [bytes([i, protocol.piece(item), item[i - 1]]) for i in range(1, hh.levels + 1)]  # type: ignore[attr-defined]
            fps = oracle.fingerprints(keys)[level - 1]
            supported = oracle._supports(fragment, oracle.buckets(fragment["row"].astype(np.int64), fps))
            word_fp = np.repeat(oracle.fingerprints([item]), reports.size)
            in_word = oracle._supports(word, oracle.buckets(word["row"].astype(np.int64), word_fp))
            codes = codes + weight * supported.astype(np.int64) + weight // 4 * in_word.astype(np.int64)
        return codes

    return events


@pytest.mark.audit
def test_sfp_device_path_audit(rng: np.random.Generator) -> None:
    """Audit of SFP's ``privatize_many`` (both reports; events: position x fragment and word support of x).

    The position draw does not depend on the value; the two reports are
    independent given it, each at epsilon/2. Alpha 1e-6. Power: the device
    path at 1.3 x epsilon claiming epsilon fails.
    """
    shape = {"method": "sfp", "oracle": "cms", "max_length": 2, "rows": 4, "width": 8, "seed": rng.bytes(32)}
    hh = dn.HeavyHitters(epsilon=3.0, **shape)  # type: ignore[arg-type]
    assert hh.epsilon <= 3.0 and hh.oracle.epsilon == pytest.approx(hh.epsilon / 2)
    loud = dn.HeavyHitters(epsilon=3.9, **shape)  # type: ignore[arg-type]
    audit_with_power(hh, loud, _sfp_events, 16 * hh.levels, rng)
