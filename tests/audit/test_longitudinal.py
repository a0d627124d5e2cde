"""The averaging attack on repeated RAPPOR reports: memoized state keeps the lifetime bound.

Each of D = 2000 devices holds one of two values (A or B, half each) and reports it
T = 200 times (one report a day). The collector, who knows the configuration and
sees every report with its cohort, guesses each device's value by the likelihood
ratio of treating its T reports as independent one-time reports (per report, the
sum over the Bloom bits of each candidate of ``S log(q*/p*) + (1-S) log((1-q*)/(1-p*))``).

Two configurations: ``p=0, q=1`` (no instantaneous step: the report is the
permanent response itself) with ``epsilon_infinity = 1``, and ``p=0.25, q=0.75``
with ``epsilon_infinity = 2`` (one report: epsilon 0.985).

* State kept (``m.client(state=...)``, the device's client re-created from the
  same store every day): all T reports together are one
  ``epsilon_infinity``-LDP release, so no attacker guesses right with
  probability above ``e^eps/(1+e^eps)`` (0.731 and 0.881). Measured over three
  seeds: 0.57-0.60 and 0.63-0.67.
* State lost (a client re-created without it every day: a new secret and cohort,
  hence a new permanent response each time): the attack averages the
  permanent randomization away. Measured: 0.99-1.00 in both.

Alpha: the number of right guesses among D devices is Binomial(D, a) with a <=
the bound when memoization holds; it must stay below the upper 1e-6/2 quantile
of Binomial(D, bound) (Bonferroni over the two configurations). Power: the
state-lost run (the bug the state fixes) must exceed that same threshold; it
does by more than 10 standard deviations.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from deniable._client_state import MemoryStore
from deniable._randomness import GeneratorSource
from deniable.mechanisms._rappor import RAPPOR

pytestmark = pytest.mark.audit

DEVICES, DAYS = 2000, 200




def _guesses(m: RAPPOR, cohorts: np.ndarray, bits: np.ndarray) -> np.ndarray:
    """Per device (rows of ``DAYS`` reports): True if A is the likelier value."""
    ps, qs = float(m.p_star), float(m.q_star)
    one, zero = math.log(qs / ps), math.log((1 - qs) / (1 - ps))
    score = np.zeros(bits.shape)
    for position, sign in ((0, 1.0), (1, -1.0)):
        bloom = m.bloom[cohorts, position]
        ones = np.bitwise_count(bits & bloom).astype(float)
        score += sign * (ones * one + (m.num_hashes - ones) * zero)
    return score.sum(axis=1) > 0


def _accuracy_kept(m: RAPPOR, truth: np.ndarray, rng: np.random.Generator) -> float:
    cohorts = np.empty(DEVICES, dtype=np.int64)
    prr = np.empty(DEVICES, dtype=np.uint64)
    for d, value in enumerate(np.where(truth, "A", "B")):
        store = MemoryStore()
        first = m.client(state=store)
        again = m.client(state=store)  # the next day's process, same device
        assert (again.cohort, again.permanent(value)) == (first.cohort, first.permanent(value))
        cohorts[d], prr[d] = first.cohort, first.permanent(value)
    days = m._irr(np.repeat(prr, DAYS)[:, None], GeneratorSource(rng))[:, 0]  # the client's fresh IRR
    guesses = _guesses(m, np.repeat(cohorts, DAYS).reshape(DEVICES, DAYS), days.reshape(DEVICES, DAYS))
    return float(np.mean(guesses == truth))


def _accuracy_lost(m: RAPPOR, truth: np.ndarray, rng: np.random.Generator) -> float:
    # a client without kept state each day: new cohort, new PRR, new IRR for every report
    reports = m.privatize_many(np.repeat(np.where(truth, "A", "B"), DAYS), rng=rng)
    cohorts = reports["cohort"].astype(np.int64).reshape(DEVICES, DAYS)
    guesses = _guesses(m, cohorts, reports["bits"].reshape(DEVICES, DAYS))
    return float(np.mean(guesses == truth))


@pytest.mark.parametrize("eps_inf,p,q", [(1.0, 0.0, 1.0), (2.0, 0.25, 0.75)])
def test_kept_state_holds_the_lifetime_bound_and_lost_state_does_not(
    eps_inf: float, p: float, q: float, rng: np.random.Generator
) -> None:
    m = RAPPOR(["A", "B"], epsilon=eps_inf, p=p, q=q, num_bits=16, num_hashes=2, num_cohorts=8)
    assert m.epsilon_infinity == pytest.approx(eps_inf, abs=1e-6)
    bound = math.exp(m.epsilon_infinity) / (1 + math.exp(m.epsilon_infinity))
    limit = stats.binom.isf(1e-6 / 2, DEVICES, bound) / DEVICES
    truth = np.arange(DEVICES) % 2 == 0
    kept, lost = _accuracy_kept(m, truth, rng), _accuracy_lost(m, truth, rng)
    assert kept <= limit, f"state kept: attack accuracy {kept:.3f} above the lifetime bound {bound:.3f}"
    assert lost > limit, f"state lost: attack accuracy {lost:.3f} (power check)"
