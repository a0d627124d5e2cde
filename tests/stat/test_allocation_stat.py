"""Sampled allocation (SMP): each respondent answers one uniformly drawn question.

Every replicate is a survey of N respondents and d = 3 questions: the
devices' question assignments are drawn with ``assign_questions`` (so each
question's n_j is random), each respondent's answer to the assigned question
goes through the real ``privatize_many``, and each question is estimated from
its own n_j reports with :func:`deniable._allocation.sampled_estimate`.

* population target: the respondents' answers are drawn from shares ``f``
  each replicate; the estimates are unbiased (mean check), the empirical
  variance equals the closed form ``E[1/n_j | n_j >= 1] V_pop`` that
  ``compare_allocations`` uses (chi-square band), and the 95% intervals cover
  (two-sided binomial band);
* respondents target: a fixed set of N respondents; the intervals (with the
  finite-population term) cover their shares, and the mechanism's own
  respondents interval without that term under-covers (power).
* split allocation: the empirical variance of an eps/d question matches
  ``compare_allocations``' split closed form.

Power: an estimator that divides by the total N instead of n_j fails the
mean check; the split formula is rejected for the sampled variance.

Alpha: each test function spends 1e-6 in total (Bonferroni over its checks).
"""

from __future__ import annotations

import numpy as np
import pytest

import deniable as dn
from deniable import testing
from deniable._aggregates import SupportCounts
from deniable._allocation import assign_questions, compare_allocations, inverse_count_mean, sampled_estimate

pytestmark = pytest.mark.stat

ALPHA = 1e-6
R = 2000
N = 1500
D = 3
LEVEL = 0.95


def _surveys(
    mechanisms: list[dn.GRR], truth: list[np.ndarray], *, fixed: list[np.ndarray] | None, seed: int
) -> list[list[SupportCounts]]:
    """R replicates of a sampled survey: per replicate, each question's aggregate."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(R):
        assigned = assign_questions(D, N, rng=rng)
        stats = []
        for j, m in enumerate(mechanisms):
            who = np.flatnonzero(assigned == j)
            if fixed is None:
                values = rng.choice(m.k, size=who.size, p=truth[j])
            else:
                values = fixed[j][who]
            stats.append(m.aggregate(m.privatize_many(np.asarray(m.domain)[values], rng=rng)))
        out.append(stats)
    return out


def _mechanisms() -> tuple[list[dn.GRR], list[np.ndarray]]:
    mechanisms = [dn.GRR(3, epsilon=2.0), dn.GRR(2, epsilon=2.0), dn.GRR(4, epsilon=2.0)]
    truth = [np.array([0.5, 0.3, 0.2]), np.array([0.7, 0.3]), np.array([0.4, 0.3, 0.2, 0.1])]
    return mechanisms, truth


def test_sampled_population_unbiased_variance_and_coverage() -> None:
    mechanisms, truth = _mechanisms()
    surveys = _surveys(mechanisms, truth, fixed=None, seed=11)
    checks = 4 * D
    a = ALPHA / checks
    for j, m in enumerate(mechanisms):
        ests = [sampled_estimate(m, s[j], N, "population") for s in surveys]
        freqs = np.array([e.frequencies for e in ests])
        ns = np.array([e.n for e in ests])
        assert ns.std() > 5, "the per-question n must vary between replicates"
        assert sum(ns.sum() for ns in [np.array([s[i].n for i in range(D)]) for s in surveys]) == R * N
        r = testing.mean_check(freqs, truth[j], a, label=f"question {j}")
        assert r.passed, r.message
        closed = inverse_count_mean(N, D) * m.variance(1, truth[j], "population")
        r = testing.variance_ratio_check(freqs, closed, a, label=f"question {j}")
        assert r.passed, r.message
        hits = [(lo <= truth[j]) & (truth[j] <= hi) for lo, hi in (e.ci(LEVEL) for e in ests)]
        for v, h in enumerate(np.array(hits).T):
            r = testing.coverage_check(int(h.sum()), R, LEVEL, a / m.k, label=f"question {j}, category {v}")
            assert r.passed, r.message
        # power: the split's variance (all N respondents) is rejected; dividing by N is biased
        wrong = m.variance(N, truth[j], "population")
        assert not testing.variance_ratio_check(freqs, wrong, a).passed
        p, q = m.support_rates()
        by_total = np.array([(s[j].counts / N - q) / (p - q) for s in surveys])
        assert not testing.mean_check(by_total, truth[j], a).passed


def test_sampled_respondents_coverage_needs_the_subsample_term() -> None:
    """The intervals with the finite-population term cover (alpha 1e-6 over the 9 cells' mean and
    coverage checks). Power: without the term they under-cover in some cell. Not in each: their
    coverage is 0.86 to 0.92 by cell, and at 0.92 (question 2, category 3) the count falls in the
    band of 0.95 half of the time; the family misses only if every cell passes, at most 9e-18 (the
    two cells of question 1, coverage 0.86)."""
    mechanisms, truth = _mechanisms()
    rng = np.random.default_rng(5)
    fixed = [rng.choice(m.k, size=N, p=t) for m, t in zip(mechanisms, truth, strict=True)]
    shares = [np.bincount(x, minlength=m.k) / N for x, m in zip(fixed, mechanisms, strict=True)]
    surveys = _surveys(mechanisms, truth, fixed=fixed, seed=12)
    cells = sum(m.k for m in mechanisms)
    a = ALPHA / (2 * cells)
    naive_checks = []
    for j, m in enumerate(mechanisms):
        ests = [sampled_estimate(m, s[j], N, "respondents") for s in surveys]
        naive = [m.estimate_from(s[j], target="respondents") for s in surveys]
        r = testing.mean_check(np.array([e.frequencies for e in ests]), shares[j], a, label=f"question {j}")
        assert r.passed, r.message
        for v in range(m.k):
            hits = sum(bool(e.ci(LEVEL)[0][v] <= shares[j][v] <= e.ci(LEVEL)[1][v]) for e in ests)
            r = testing.coverage_check(hits, R, LEVEL, a, label=f"question {j}, category {v}")
            assert r.passed, r.message
            # power: without the finite-population term the interval under-covers
            missed = sum(bool(e.ci(LEVEL)[0][v] <= shares[j][v] <= e.ci(LEVEL)[1][v]) for e in naive)
            naive_checks.append(testing.coverage_check(missed, R, LEVEL, a, label=f"question {j}, category {v}"))
    assert not testing.family(naive_checks), "no cell under-covers without the finite-population term"


def test_split_variance_matches_the_closed_form() -> None:
    """Every respondent answers all d questions at eps/d: the planner's split variance."""
    f = 0.3
    comparison = compare_allocations([2] * D, 2.0, N, frequency=f)
    m = comparison.split_mechanisms[0]
    assert m.epsilon == pytest.approx(2.0 / D, rel=0.01)
    rng = np.random.default_rng(13)
    values = rng.random((R, N)) < f
    freqs = np.array([m.estimate(m.privatize_many(row.astype(np.int64), rng=rng)).frequencies[1] for row in values])
    r = testing.variance_ratio_check(freqs, comparison.split_variance[0], ALPHA / 3)
    assert r.passed, r.message
    r = testing.mean_check(freqs, f, ALPHA / 3)
    assert r.passed, r.message
    # and the sampled closed form at the same share, against simulation (power: they differ 1.6x)
    big = comparison.sample_mechanisms[0]
    sampled = []
    for _ in range(R):
        n_j = int((assign_questions(D, N, rng=rng) == 0).sum())
        sampled.append(big.estimate(big.privatize_many((rng.random(n_j) < f).astype(np.int64), rng=rng)).frequencies[1])
    r = testing.variance_ratio_check(np.array(sampled), comparison.sample_variance[0], ALPHA / 3)
    assert r.passed, r.message
    assert comparison.ratio[0] > 1.5
