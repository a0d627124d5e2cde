"""Discovery with an alphabet (PEM over lowercase text): calibrated recall, at least that without, and error control.

Recall. Population (n = 200,000, lowercase only): five planted strings at
9-12% (one of them empty, one longer than ``max_length``), a quarter of
the devices on a Zipf(1.1) body of 200 lowercase words and a quarter each
typing a random word of 6 letters (:func:`deniable.heavy._quality.zipf_strings`).
Alphabet: the 26 lowercase letters, so a level tests at most
``top_k * 27 = 432`` options (7 levels: 3,024 candidates in all) instead
of ``top_k * 256``. With ``s`` as in ``test_heavy_recall`` (the largest
standard deviation of a prefix's estimate at any level), each candidate is
off by more than ``6.4 s`` with probability ``< 1.6e-10`` (normal
approximation), ``< 5e-7`` over all 3,024 (union bound). Outside that event
a value of share at least ``12.8 s`` beats every candidate of true share 0
at every level; fewer than ``top_k`` = 16 disjoint prefixes of a level have
a larger share (each planted share is above 1/16), so it is kept to the end
and passes ``identify``'s filter (its estimate exceeds ``6.4 s``; the last
level tests at most ``2 top_k`` options, ``z = 2.95``). Alpha ``< 1e-6``.
Without the alphabet the same argument needs ``13.4 s``: the test checks
that the alphabet's bound is the lower one, finds every planted value, and
so recalls at least as many as the same run without an alphabet (whose
result it also computes, on the same reports' randomness).

Power: at epsilon 0.25 the calibrated bound exceeds the planted shares and
some of them are missed.

False discoveries: ``test_heavy_false_discovery``'s 40 runs (lowercase Zipf
workload, PEM over a 16-row CMS, epsilon 6) with the alphabet: the runs that
report a value nobody holds are Binomial(40, r), r <= 0.05, so more than 11
of them has probability < 4e-7 (alpha 1e-6). Power: the same runs without
the collision correction exceed 11.
"""

from __future__ import annotations

import string

import numpy as np
import pytest
from discoveries import runs_with_false_discoveries as count_false_discoveries

import deniable as dn
from deniable.heavy._quality import zipf_strings

pytestmark = pytest.mark.stat

LOWER = string.ascii_lowercase
PLANTED = {"the": 0.12, "hello": 0.11, "zq": 0.10, "": 0.09, "alongword": 0.09}
EXPECTED = {v[:6] for v in PLANTED}  # "alongword" is found cut, as "alongw"


def population(n: int, rng: np.random.Generator) -> list[str]:
    planted = [v for v, f in PLANTED.items() for _ in range(round(f * n))]
    rest = zipf_strings(n - len(planted), rng, words=200, s=1.1, tail=0.5, max_length=6)
    values = planted + rest
    rng.shuffle(values)  # type: ignore[arg-type]
    return values


def found(epsilon: float, alphabet: str | None, seed: int) -> tuple[set[str], float, dn.Discovery]:
    """The discovered values, ``s`` and the result, for one seed (the same workload and draws for both)."""
    rng = np.random.default_rng(seed)
    hh = dn.HeavyHitters(epsilon=epsilon, method="pem", oracle="cms", max_length=6, top_k=16,
                         seed=rng.bytes(32), alphabet=alphabet)
    stat = hh.aggregate(hh.privatize_many(population(200_000, rng), rng=rng))
    s = float(np.sqrt(hh.oracle.variance(min(x.n for x in stat.levels), 0.0, 1.0)))
    discovery = hh.identify(stat)
    return set(discovery.values), s, discovery


def test_calibrated_recall_with_alphabet_and_at_least_without() -> None:
    """Every planted value (above 12.8 s) is found with the alphabet; so recall >= without. Alpha 1e-6."""
    values, s, discovery = found(4.0, LOWER, seed=20261124)
    assert 12.8 * s < min(PLANTED.values())
    assert EXPECTED <= values, (EXPECTED - values, discovery)
    cut = dict(zip(discovery.values, discovery.truncated, strict=True))
    assert cut["alongw"] and not cut["the"]
    without, _, _ = found(4.0, None, seed=20261124)
    assert len(EXPECTED & values) >= len(EXPECTED & without)


def test_recall_with_alphabet_power() -> None:
    """Power: at epsilon 0.25 the calibrated bound exceeds the planted shares and some are missed."""
    values, s, _ = found(0.25, LOWER, seed=20261125)
    assert 12.8 * s > max(PLANTED.values()) and not EXPECTED <= values


RUNS, MOST = 40, 11


def runs_with_false_discoveries(rng: np.random.Generator, corrected: bool = True) -> int:
    return count_false_discoveries(rng, RUNS, corrected, alphabet=LOWER)


def test_false_discoveries_with_alphabet_within_alpha() -> None:
    """At most 11 of 40 runs report a value nobody holds (family-wise error <= 5% per call; alpha 1e-6)."""
    bad = runs_with_false_discoveries(np.random.default_rng(20261126))
    assert bad <= MOST, bad


def test_false_discoveries_with_alphabet_power() -> None:
    """Power: without the collision correction more than 11 of 40 runs report a value nobody holds."""
    bad = runs_with_false_discoveries(np.random.default_rng(20261127), corrected=False)
    assert bad > MOST, bad
