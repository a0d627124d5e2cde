"""PCKV (key-value data): the sampler against its exact law, and the estimators against their theory.

* The sampler: 30,000 reports of each of three users (fewer pairs than ``ell``, ``ell`` pairs, more) against
  ``transition_matrix`` (the exact output law, computed from the rates, not from the sampler), chi-square,
  PCKV-UE and PCKV-GRR. With ``tests/unit/test_key_value.py`` (the largest ratio of two users' rows of that
  matrix is ``e^epsilon``, never more), this checks the privacy of what the sampler draws. Power: a sampler
  that skips the padding (a dummy pair drawn as a real key) or draws the opposite value's law fails.
* The estimators, over R = 2000 surveys of n = 20,000 respondents from a population of users (each survey's
  aggregate drawn from its exact law: the outputs multinomial at the population's row of the matrix):
  ``f^`` and the mean's numerator ``s^`` unbiased (Student t), their variances and the delta method's
  variance of ``m^`` equal to ``PCKV.variance`` at the truth (variance-ratio band), and 95% intervals of
  ``f`` and ``m`` covering at the nominal rate (binomial band). Power: a bias of a third of a standard error
  fails the mean check (15 standard errors of the mean), standard errors 30% off fail the variance check.
* The real sampler end to end: 200,000 users through ``privatize_many`` and ``estimate`` land within the
  normal band of the truth for every key.

Alpha: each test function spends at most 1e-6 (Bonferroni over its checks).
"""

from __future__ import annotations

import numpy as np
import pytest

import deniable as dn
from deniable import testing

pytestmark = pytest.mark.stat

ALPHA = 1e-6
KEYS = ["mail", "maps", "chat", "news"]
USERS = [{"mail": 0.8, "chat": -0.5}, {"maps": 0.1}, {"mail": -0.2, "maps": 1.0}, {}, {"news": -0.6, "mail": 0.5}]
SHARES = np.array([0.3, 0.25, 0.2, 0.1, 0.15])
VARIANTS = ["ue", "grr"]


def _ok(result: testing.CheckResult) -> None:
    assert result.passed, result.message


def _truth() -> tuple[np.ndarray, np.ndarray]:
    freq = np.array([sum(s for u, s in zip(USERS, SHARES, strict=True) if k in u) for k in KEYS])
    total = np.array([sum(s * u[k] for u, s in zip(USERS, SHARES, strict=True) if k in u) for k in KEYS])
    return freq, total / freq


def _codes(m: dn.PCKV, reports: np.ndarray) -> np.ndarray:
    """Each report's position among ``transition_matrix``'s outputs."""
    if m.variant == "grr":
        return np.asarray(reports, dtype=np.int64)
    ternary = m.unpack(reports).astype(np.int64) + 1  # itertools.product order over (-1, 0, 1)
    return ternary @ (3 ** np.arange(m.cells)[::-1])


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_sampler_draws_the_exact_law(variant: str) -> None:
    """Alpha 1e-6 over 3 checks; power: the unpadded or sign-keeping sampler misses far beyond the band."""
    m = dn.PCKV(KEYS, epsilon=1.0, max_pairs=3, ell=2, variant=variant)
    users = [{"chat": 0.4}, {"mail": 1.0, "news": -0.6}, {"mail": -1.0, "maps": 0.2, "news": 0.9}]
    _, law = m.transition_matrix(users)
    rng = np.random.default_rng(7)
    for user, row in zip(users, law, strict=True):
        reports = m.privatize_many([user] * 30_000, rng=rng)
        counts = np.bincount(_codes(m, reports), minlength=row.size)
        _ok(testing.chi_square_gof(counts, row, ALPHA / 3, label=f"{variant} {user}"))
        if len(user) == 1:  # power: the law of the opposite value, and of the pair without its padding
            for wrong in ({"chat": -0.4}, {"chat": 0.4, "news": 0.0}):
                assert not testing.chi_square_gof(counts, m.transition_matrix([wrong])[1][0], ALPHA).passed


def _surveys(m: dn.PCKV, replicates: int, n: int, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """``R`` surveys' per-key counts of +1 and -1 reports, drawn from the population's exact output law."""
    outputs, law = m.transition_matrix(USERS)
    population = SHARES @ law
    population /= population.sum()
    tallies = rng.multinomial(n, population, size=replicates)
    d = len(KEYS)
    if m.variant == "grr":
        return tallies[:, 1 : 2 * d : 2], tallies[:, 0 : 2 * d : 2]
    y = np.array(outputs)[:, :d]
    return tallies @ (y == 1), tallies @ (y == -1)


@pytest.mark.parametrize("variant", VARIANTS)
def test_estimators_unbiased_variance_and_coverage(variant: str) -> None:
    """Alpha 1e-6 over 7 checks (each Bonferroni over the 4 keys)."""
    m = dn.PCKV(KEYS, epsilon=2.0, max_pairs=2, variant=variant)
    n, replicates = 20_000, 2000
    plus, minus = _surveys(m, replicates, n, np.random.default_rng(11))
    freq, mean = _truth()
    est = [
        m.estimate_from(dn.SupportCounts(m.fingerprint, np.concatenate([p, q]), n))
        for p, q in zip(plus, minus, strict=True)
    ]
    f = np.array([e.frequencies for e in est])
    s = np.array([e.sums for e in est])
    means = np.array([e.means for e in est])
    theory = m.variance(n, freq, mean)
    a = ALPHA / 7
    _ok(testing.mean_check(f, freq, a, label="f unbiased"))
    _ok(testing.mean_check(s, freq * mean, a, label="s unbiased"))
    _ok(testing.variance_ratio_check(f, theory["frequency"], a, label="Var f"))
    _ok(testing.variance_ratio_check(s, theory["sum"], a, label="Var s"))
    _ok(testing.variance_ratio_check(means, theory["mean"], a, label="Var m (delta method)"))
    sd = np.sqrt(theory["frequency"])
    assert not testing.mean_check(f + sd / 3, freq, a).passed  # power: a third of a standard error
    assert not testing.variance_ratio_check(f, 0.7**2 * theory["frequency"], a).passed  # power: SEs 30% off
    for of, truth in (("frequency", freq), ("mean", mean)):
        hits = np.array([e.confidence_interval(0.95, of=of).contains(truth) for e in est]).sum(axis=0)
        for key, h in zip(KEYS, hits, strict=True):
            _ok(testing.coverage_check(int(h), replicates, 0.95, a / 4, label=f"{of} {key}"))


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_real_sampler_end_to_end(variant: str) -> None:
    """Alpha 1e-6 over 3 checks (each Bonferroni over the 4 keys)."""
    m = dn.PCKV(KEYS, epsilon=2.0, max_pairs=2, variant=variant)
    rng = np.random.default_rng(13)
    users = [USERS[i] for i in rng.choice(len(USERS), size=200_000, p=SHARES)]
    est = m.estimate(m.privatize_many(users, rng=rng))
    freq = np.array([sum(k in u for u in users) for k in KEYS]) / len(users)
    total = np.array([sum(u.get(k, 0.0) for u in users) for k in KEYS]) / len(users)
    _ok(testing.estimate_check(est.frequencies, freq, est.std_errors, ALPHA / 3, label="f"))
    _ok(testing.estimate_check(est.sums, total, est.sum_std_errors, ALPHA / 3, label="s"))
    _ok(testing.estimate_check(est.means, total / freq, est.mean_std_errors, ALPHA / 3, label="m"))
