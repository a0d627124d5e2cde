"""Marginal release (CALM) for d = 3 and d = 5 questions: the consistent marginals are unbiased, their
variance matches ``M L Sigma L^T M^T`` at the truth, and their intervals cover.

Each replicate draws the views' group sizes (multinomial, 1/m each: the device's uniform draw), each
group's cells from the view's true marginal (multinomial) and the oracle's support counts exactly
(``simulate_support_counts``: the law of the reports' counts, no reports made), then estimates.

The variance is conditional on the group sizes (the consistency weights depend on them), and the
estimate is unbiased given them, so its variance is the mean over replicates of the formula at each
replicate's sizes (the formula with every view's covariance at the true shares).

Alpha: each test spends at most 1e-6 (Bonferroni over its checks); the power statements are at each test.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import deniable as dn
from deniable import testing
from deniable._aggregates import SupportCounts
from deniable._marginals import summing_matrix

pytestmark = pytest.mark.stat

ALPHA = 1e-6
R = 1000


def _true_block(oracle: dn.FrequencyOracle, f: np.ndarray, n: int) -> np.ndarray:
    """The true covariance of an oracle's debiased cells at shares ``f`` from ``n`` reports (population)."""
    p, q = oracle.support_rates()
    rate = q + (p - q) * f
    if oracle.name == "GRR":
        support = np.diag(rate) - np.outer(rate, rate)
    else:
        support = -np.outer((p - q) * f, (p - q) * f)
        np.fill_diagonal(support, rate * (1 - rate))
    return support / (n * np.outer(p - q, p - q))


def _replicates(r: dn.MarginalRelease, truth: np.ndarray, n: int, seed: int, count: int = R) -> list[tuple]:  # type: ignore[type-arg]
    """(estimate, the same estimate with every view's covariance at the truth) per replicate."""
    rng = np.random.default_rng(seed)
    margins = [summing_matrix(r.shape, view) @ truth for view in r.views]
    out = []
    for _ in range(count):
        groups = rng.multinomial(n, np.full(len(r.views), 1 / len(r.views)))
        parts = []
        for oracle, f, n_j in zip(r.oracles, margins, groups, strict=True):
            parts += [oracle.simulate_support_counts(rng.multinomial(n_j, f), rng), [n_j]]
        est = r.estimate_from(SupportCounts(r.fingerprint, np.concatenate(parts).astype(np.int64), n))
        true = tuple(_true_block(o, f, int(n_j)) for o, f, n_j in zip(r.oracles, margins, groups, strict=True))
        out.append((est, replace(est, blocks=true)))
    return out


CASES = {
    # d = 3: every pair of (2, 3, 2) answers, GRR; asked: a view, a one-way marginal, a view's margin
    "d3": (dict(epsilon=2.0, mechanism="grr"), (2, 3, 2), [(0, 2), (1,), (0, 1)], 4000),
    # d = 5 yes/no questions, every pair (10 views), OUE; a one-way marginal is read off 4 views
    "d5": (dict(epsilon=1.5, mechanism="oue"), (2, 2, 2, 2, 2), [(1, 3), (4,), (0, 2)], 8000),
}


@pytest.mark.parametrize("case", list(CASES))
def test_marginals_unbiased_with_their_variance_and_coverage(case: str) -> None:
    """Per marginal: the cells' means (t band), their variances against the formula (chi-square band,
    widened for kurtosis) and the 95% coverage of its first cell (binomial band): 3 checks per marginal at
    1e-6 / 9. Power: a missing debias (the observed support shares, which sum to 4 q* + p* - q* != 1 over
    a view's 4 cells at d = 5, so one cell is off by at least 0.011) misses by some 18 standard errors of
    the mean (about 0.0006); for the one-way marginal the variance of one view's raw estimate (no
    consistency step) is about 2 times the truth at d = 3 (two views hold question 1) and 7.5 times at
    d = 5 (four views, and the known total), far outside the band of about 0.77 to 1.27 (asserted below:
    the observed ratios are near 0.47 and 0.13)."""
    kwargs, shape, margins, n = CASES[case]
    r = dn.MarginalRelease(*shape, **kwargs)  # type: ignore[arg-type]
    truth = np.random.default_rng(7).dirichlet(np.full(int(np.prod(shape)), 2.0))
    reps = _replicates(r, truth, n, seed=91 if case == "d3" else 92)
    a = ALPHA / (3 * len(margins))
    for which in margins:
        single = len(which) == 1
        asked = which[0] if single else which
        expected = summing_matrix(shape, which) @ truth
        got = np.array([e.marginal(asked).frequencies for e, _ in reps])
        r1 = testing.mean_check(got, expected, a, label=f"marginal {which}")
        assert r1.passed, r1.message
        variance = np.mean([t.marginal(asked).std_errors ** 2 for _, t in reps], axis=0)
        r2 = testing.variance_ratio_check(got, variance, a, label=f"marginal {which}")
        assert r2.passed, r2.message
        if single:  # power: one view's raw variance, without the consistency step
            j = next(i for i, v in enumerate(r.views) if which[0] in v)
            raw = []
            for _, t in reps:
                block = t.blocks[j]
                keep = summing_matrix([shape[q] for q in r.views[j]], [r.views[j].index(which[0])])
                raw.append(np.diag(keep @ block @ keep.T))
            naive = np.mean(raw, axis=0)
            assert np.min(naive / variance) > 1.9 and not testing.variance_ratio_check(got, naive, a).passed
        hits = sum(bool(lo[0] <= expected[0] <= hi[0]) for lo, hi in (e.marginal(asked).ci(0.95) for e, _ in reps))
        r3 = testing.coverage_check(hits, R, 0.95, a, label=f"marginal {which}, first cell")
        assert r3.passed, r3.message


@pytest.mark.deterministic
def test_release_beats_the_full_joint_for_many_questions() -> None:
    """The reason for a release: 8 yes/no questions (256 cells), n = 20,000, epsilon = 1. A two-way
    marginal from views of 2 questions has a smaller standard error than the same marginal summed from
    Joint's 256 cells (formulas at uniform shares; deterministic)."""
    shape = (2,) * 8
    release = dn.MarginalRelease(*shape, epsilon=1.0, views=[(0, 1), (2, 3), (4, 5), (6, 7), (0, 2), (1, 3)])
    joint = dn.Joint(*shape, epsilon=1.0)
    truth = np.full(256, 1 / 256)
    n = 20_000
    est = _replicates(release, truth, n, seed=3, count=1)[0][1]
    cov = _true_block(joint.mechanism, truth, n)
    keep = summing_matrix(shape, (0, 1))
    joint_se = np.sqrt(np.diag(keep @ cov @ keep.T))
    assert np.all(est.marginal((0, 1)).std_errors < 0.8 * joint_se)
