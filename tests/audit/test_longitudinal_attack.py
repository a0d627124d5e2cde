"""The averaging attack on L-GRR, dBitFlip and 1BitMean: memoized clients keep the lifetime bound.

Each of D = 2000 devices holds one of two values (half each) and reports it
T = 200 times. The collector guesses each device's value from all its
reports by the likelihood ratio of treating them as independent one-time
reports (for two values: the majority of the reports that tell them apart).

* State kept (``m.client(state=...)`` re-created from the same store every
  day): all T reports are one release of the memoized part, which is
  ``epsilon_perm``-LDP for L-GRR (its first round) and ``epsilon``-LDP for
  dBitFlip and 1BitMean (the report itself), so no attacker guesses right
  with probability above ``e^eps / (1 + e^eps)``.
* State lost (fresh randomization every day, ``privatize_many``): the
  attack averages the noise away and guesses nearly every device.

Alpha: right guesses are Binomial(D, a) with a <= the bound; they must stay
below the upper 1e-6/3 quantile of Binomial(D, bound) (Bonferroni over the
three mechanisms). Power: the state-lost run must exceed that threshold.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from scipy import stats

import deniable as dn
from deniable._client_state import MemoryStore
from deniable._randomness import GeneratorSource

pytestmark = pytest.mark.audit

DEVICES, DAYS = 2000, 200

CASES = {
    "LGRR": lambda: dn.LGRR(["A", "B"], epsilon_perm=1.0, epsilon_1=0.5),
    "DBitFlip": lambda: dn.DBitFlip(["A", "B"], d=1, epsilon=1.0),
    "OneBitMean": lambda: dn.OneBitMean(0.0, 1.0, epsilon=1.0),
}


def _values(m: Any, truth: np.ndarray) -> list[Any]:
    return [m.high if t else m.low for t in truth] if isinstance(m, dn.OneBitMean) else list(np.where(truth, "A", "B"))


def _votes(m: Any, reports: Any) -> np.ndarray:
    """+1 for a report that favours the first value (A, or high), -1 against, 0 neither."""
    if isinstance(m, dn.LGRR):
        return np.where(m.validate(reports) == 0, 1, -1)
    if isinstance(m, dn.DBitFlip):
        checked = m.validate(reports)
        bucket, bit = checked["buckets"][:, 0].astype(np.int64), checked["bits"][:, 0].astype(np.int64)
        return np.where(bucket == 0, 2 * bit - 1, 1 - 2 * bit)
    return 2 * np.asarray(reports, dtype=float).astype(np.int64) - 1


def _accuracy_kept(m: Any, truth: np.ndarray, rng: np.random.Generator) -> float:
    guesses = np.empty(DEVICES, dtype=bool)
    for d, value in enumerate(_values(m, truth)):
        store = MemoryStore()
        first, again = m.client(state=store), m.client(state=store)  # the next day's process
        if isinstance(m, dn.LGRR):
            prr = first.permanent(value)
            assert np.array_equal(prr, again.permanent(value))
            days = m._public(m._instantaneous(np.repeat(prr, DAYS), GeneratorSource(rng)))  # the fresh round
        else:
            report = first.privatize(value)
            assert m.reports_to_json([report]) == m.reports_to_json([again.privatize(value)])
            days = np.array([report] * DAYS)  # every day's report is the memoized one
        guesses[d] = _votes(m, days).sum() > 0
    return float(np.mean(guesses == truth))


def _accuracy_lost(m: Any, truth: np.ndarray, rng: np.random.Generator) -> float:
    reports = m.privatize_many(np.repeat(_values(m, truth), DAYS), rng=rng)
    guesses = _votes(m, reports).reshape(DEVICES, DAYS).sum(axis=1) > 0
    return float(np.mean(guesses == truth))


@pytest.mark.parametrize("name", list(CASES))
def test_kept_state_holds_the_lifetime_bound_and_lost_state_does_not(name: str, rng: np.random.Generator) -> None:
    m = CASES[name]()
    lifetime = m.lifetime_epsilon(1)
    bound = math.exp(lifetime) / (1 + math.exp(lifetime))
    limit = stats.binom.isf(1e-6 / 3, DEVICES, bound) / DEVICES
    truth = np.arange(DEVICES) % 2 == 0
    kept, lost = _accuracy_kept(m, truth, rng), _accuracy_lost(m, truth, rng)
    assert kept <= limit, f"{name} state kept: attack accuracy {kept:.3f} above the lifetime bound {bound:.3f}"
    assert lost > limit, f"{name} state lost: attack accuracy {lost:.3f} (power check)"
