"""Layers B and D for the longitudinal mechanisms: samplers, memoization, estimators.

Samplers: each input row's reports are drawn through four code paths
(``batch`` seeded ``privatize_many``, ``secure`` ``privatize_many`` on the OS
CSPRNG, ``single`` ``privatize``, and ``client``: the first report of a fresh
device client, whose permanent part comes from its secret) and compared by a
chi-square test with the exact distribution written out here from the
definitions (the rounds' probabilities for L-GRR / L-OSUE, ``e^eps`` for
dBitFlip and 1BitMean). The output spaces are small enough (k <= 4, d = 2)
for the whole joint distribution, so correlated bits would be caught.

Memoization: one client's many reports of one value follow the fresh round
*given its memoized first round* (not the one-report chain), and the
memoized first rounds of many clients follow the first round's distribution.

Estimators: R = 2000 replicated surveys (exact joint draws of the support
counts for L-GRR / L-OSUE, real reports for dBitFlip and 1BitMean), for both
inference targets: the mean is unbiased (``testing.mean_check``), the
variance matches the formula (``testing.variance_ratio_check``) and the
normal intervals cover (``testing.coverage_check``).

Alpha: each test function spends at most 1e-6, split by Bonferroni over its
assertions. Power: each family is rerun with a sampler or debias at 1.2 x
epsilon, or a non-memoizing reading, and must reject.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest

import deniable as dn
from deniable import testing
from deniable._aggregates import MeanStat, SupportCounts
from deniable.simulate import population_counts

pytestmark = pytest.mark.stat

ALPHA = 1e-6
N_BATCH = 50_000
N_SMALL = 2_000
PATHS = ("batch", "secure", "single", "client")
R = 2000


def grr_matrix(p: float, q: float, k: int) -> np.ndarray:
    return np.full((k, k), q) + np.eye(k) * (p - q)


class Model:
    """Report cells and exact per-row cell probabilities, from the definitions."""

    def __init__(self, m: Any) -> None:
        self.m = m
        if isinstance(m, dn.DBitFlip):
            self.subsets = list(itertools.combinations(range(m.k), m.d))
            self.patterns = list(itertools.product((0, 1), repeat=m.d))

    def cells(self, reports: Any) -> np.ndarray:
        m = self.m
        if isinstance(m, dn.LGRR):
            return m.validate(reports)
        if isinstance(m, dn.LOSUE):
            return m.unpack(reports).astype(np.int64) @ (1 << np.arange(m.k)[::-1])
        if isinstance(m, dn.DBitFlip):
            checked = m.validate(reports)
            index = {s: i for i, s in enumerate(self.subsets)}
            sub = np.array([index[tuple(int(v) for v in row)] for row in checked["buckets"]])
            bits = checked["bits"].astype(np.int64) @ (1 << np.arange(m.d)[::-1])
            return sub * (1 << m.d) + bits
        return np.asarray(reports, dtype=float).astype(np.int64)  # OneBitMean: the bit

    def row(self, x: Any) -> np.ndarray:
        m = self.m
        if isinstance(m, dn.LGRR):
            (p1, q1), (p2, q2) = m.rounds
            chain = grr_matrix(float(p1), float(q1), m.k) @ grr_matrix(float(p2), float(q2), m.k)
            return chain[m.domain_obj.encode_one(x)]
        if isinstance(m, dn.LOSUE):
            (p1, q1), (p2, q2) = (tuple(float(v) for v in r) for r in m.rounds)
            first = np.where(np.arange(m.k) == m.domain_obj.encode_one(x), p1, q1)
            return ue_joint(first * p2 + (1 - first) * q2)
        if isinstance(m, dn.DBitFlip):
            half = math.exp(m.epsilon / min(m.d, 2))
            p = half / (half + 1)
            pos = m.domain_obj.encode_one(x)
            probs = []
            for s in self.subsets:
                one = [p if v == pos else 1 - p for v in s]
                probs += [np.prod([o if b else 1 - o for o, b in zip(one, bits, strict=True)])
                          for bits in self.patterns]
            return np.array(probs) / len(self.subsets)
        e = math.exp(m.epsilon)
        u = min(1.0, max(0.0, (x - m.low) / (m.high - m.low)))
        one = 1 / (e + 1) + u * (e - 1) / (e + 1)
        return np.array([1 - one, one])


def ue_joint(one: np.ndarray) -> np.ndarray:
    """Probabilities of the 2**k bit patterns (first bit most significant) of independent bits."""
    k = one.size
    patterns = np.array(list(itertools.product((0, 1), repeat=k)))
    return np.prod(np.where(patterns == 1, one, 1 - one), axis=1)


def draw(m: Any, value: Any, n: int, path: str, rng: np.random.Generator) -> Any:
    if path == "batch":
        return m.privatize_many([value] * n, rng=rng)
    if path == "secure":
        return m.privatize_many([value] * n)
    if path == "single":
        return [m.privatize(value) for _ in range(n)]
    return [m.client().privatize(value) for _ in range(n)]


CASES = {
    "LGRR-ABCD": lambda: dn.LGRR(["A", "B", "C", "D"], epsilon_perm=3.0, epsilon_1=1.0),
    "LGRR-k2": lambda: dn.LGRR(2, epsilon_perm=2.0, epsilon_1=0.5),
    "LOSUE-k3": lambda: dn.LOSUE(3, epsilon_perm=3.0, epsilon_1=1.0),
    "DBitFlip-k4-d2": lambda: dn.DBitFlip(4, d=2, epsilon=2.0),
    "DBitFlip-k3-d1": lambda: dn.DBitFlip(["x", "y", "z"], d=1, epsilon=1.0),
    "OneBitMean-5pts": lambda: dn.OneBitMean(0.0, 10.0, epsilon=1.0, points=5),
}


def rows_of(m: Any) -> list[Any]:
    if isinstance(m, dn.OneBitMean):
        return [-3.0, 0.0, 3.3, 7.5, 10.0]  # clamped, an end, between points, on a point, the other end
    return list(m.domain)


@pytest.mark.parametrize("name", list(CASES))
def test_sampler_matches_its_distribution(name: str, rng: np.random.Generator) -> None:
    """Chi-square per row and path; alpha 1e-6 over rows x paths."""
    m = CASES[name]()
    model, rows = Model(m), rows_of(m)
    alpha = ALPHA / (len(rows) * len(PATHS))
    failures = []
    for x in rows:
        for path in PATHS:
            n = N_BATCH if path in ("batch", "secure") else N_SMALL
            cells = model.cells(draw(m, x, n, path, rng))
            expected = model.row(x)
            res = testing.chi_square_gof(np.bincount(cells, minlength=expected.size), expected, alpha,
                                         label=f"{name} row {x!r} via {path}")
            if not res.passed:
                failures.append(str(res))
    assert not failures, "\n".join(failures)


STRONGER = {
    "LGRR-ABCD": lambda: dn.LGRR(["A", "B", "C", "D"], epsilon_perm=3.0, epsilon_1=1.2),
    "LOSUE-k3": lambda: dn.LOSUE(3, epsilon_perm=3.0, epsilon_1=1.2),
    "DBitFlip-k4-d2": lambda: dn.DBitFlip(4, d=2, epsilon=2.4),
    "OneBitMean-5pts": lambda: dn.OneBitMean(0.0, 10.0, epsilon=1.2, points=5),
}


@pytest.mark.parametrize("name", list(STRONGER))
def test_sampler_check_has_power(name: str, rng: np.random.Generator) -> None:
    """Power: reports of the same family at 1.2 x epsilon fail the claimed row's check."""
    claimed, liar = CASES[name](), STRONGER[name]()
    x = rows_of(claimed)[0]
    model = Model(claimed)
    cells = model.cells(draw(liar, x, N_BATCH, "batch", rng))
    expected = model.row(x)
    assert not testing.chi_square_gof(np.bincount(cells, minlength=expected.size), expected, ALPHA).passed


# ------------------------------------------------------------------ memoization
@pytest.mark.parametrize(("name", "n"), [("LGRR-ABCD", 20_000), ("LOSUE-k3", 10_000)])
def test_one_client_repeats_its_memoized_first_round(name: str, n: int, rng: np.random.Generator) -> None:
    """A client's reports of one value follow the fresh round given its memoized first round;
    many clients' first rounds follow the first round's row. Power: the reports fail against
    the one-report chain (what re-drawing the first round each time would give): for L-GRR
    whose first round kept the value (probability 0.87) the noncentrality is 179 at 20,000
    reports against the critical 34 at 3 df, a miss of 2e-15 (at 10,000 reports it was 4e-5);
    for L-OSUE at 10,000 reports it is 2,682 at least. alpha 1e-6 over 2 checks."""
    m = CASES[name]()
    model = Model(m)
    x = m.domain[0]
    client = m.client(secret=rng.bytes(32))
    prr = client.permanent(x)
    reports = [client.privatize(x) for _ in range(n)]
    cells = np.bincount(model.cells(reports), minlength=model.row(x).size)
    (p1, q1), (p2, q2) = (tuple(float(v) for v in r) for r in m.rounds)
    firsts = [m.client(secret=rng.bytes(32)).permanent(x) for _ in range(5000)]
    if isinstance(m, dn.LGRR):
        given = grr_matrix(p2, q2, m.k)[int(prr[0])]
        first_cells = np.bincount(np.concatenate(firsts), minlength=m.k)
        first_row = grr_matrix(p1, q1, m.k)[0]
    else:
        bits = np.unpackbits(prr, axis=1, count=m.k)[0]
        given = ue_joint(np.where(bits == 1, p2, q2))
        first_cells = np.bincount(model.cells(np.concatenate(firsts)), minlength=2**m.k)
        first_row = ue_joint(np.where(np.arange(m.k) == 0, p1, q1))
    a = ALPHA / 2
    res = testing.chi_square_gof(cells, given, a, label=f"{name}: one client's reports given its PRR")
    assert res.passed, str(res)
    res = testing.chi_square_gof(first_cells, first_row, a, label=f"{name}: clients' PRRs")
    assert res.passed, str(res)
    assert not testing.chi_square_gof(cells, model.row(x), a).passed


def test_one_bit_mean_clients_round_and_memoize_as_claimed(rng: np.random.Generator) -> None:
    """Over 20000 clients: the share rounding 3.3 up to point 2 (u s = 1.32) is 0.32; the
    memoized bit of point 1 is 1 w.p. 1/(e+1) + (1/4)(e-1)/(e+1). Each client repeats itself
    exactly. alpha 1e-6 over 2 checks; power: a share of 0.32 / 1.2 is rejected."""
    m = CASES["OneBitMean-5pts"]()
    clients = [m.client(secret=rng.bytes(32)) for _ in range(20_000)]
    up = sum(c.point(3.3) == 2 for c in clients)
    ones = sum(c.bit(1) for c in clients)
    e = math.exp(m.epsilon)
    a = ALPHA / 2
    res = testing.proportion_check(up, len(clients), 0.32, a)
    assert res.passed, str(res)
    assert not testing.proportion_check(up, len(clients), 0.32 / 1.2, a).passed
    res = testing.proportion_check(ones, len(clients), 1 / (e + 1) + 0.25 * (e - 1) / (e + 1), a)
    assert res.passed, str(res)
    assert all(c.privatize(3.3) == c.privatize(3.3) == c.bit(c.point(3.3)) for c in clients[:200])


def test_dbitflip_clients_sample_uniform_bucket_sets(rng: np.random.Generator) -> None:
    """The buckets of 12000 clients are uniform over the C(5, 2) = 10 subsets (chi-square,
    alpha 1e-6); the answers are covered by the 'client' path of the sampler test."""
    m = dn.DBitFlip(5, d=2, epsilon=1.0)
    subsets = {s: i for i, s in enumerate(itertools.combinations(range(5), 2))}
    cells = [subsets[tuple(int(v) for v in m.client(secret=rng.bytes(32)).buckets)] for _ in range(12_000)]
    res = testing.chi_square_gof(np.bincount(cells, minlength=10), np.full(10, 0.1), ALPHA)
    assert res.passed, str(res)


# ------------------------------------------------------------------ estimators
CHAINED = {
    "LGRR-k6": (lambda: dn.LGRR(6, epsilon_perm=4.0, epsilon_1=1.0), (0.3, 0.25, 0.2, 0.1, 0.1, 0.05), 5000),
    "LOSUE-k8": (lambda: dn.LOSUE(8, epsilon_perm=3.0, epsilon_1=1.0), (0.3, 0.2, 0.1, 0.1, 0.1, 0.1, 0.05, 0.05),
                 5000),
}


def chained_replicates(m: Any, truth: np.ndarray, n: int, target: str, rng: np.random.Generator) -> tuple[Any, Any]:
    """R surveys' estimates (one stacked Estimate) and the truth each estimates."""
    fixed = population_counts(truth, n, m.k)
    counts = np.stack([fixed if target == "respondents" else rng.multinomial(n, truth) for _ in range(R)])
    support = np.stack([m.simulate_support_counts(c, rng) for c in counts])
    est = m.estimate_from(SupportCounts(m.fingerprint, support, n), target=target)
    return est, (fixed / n if target == "respondents" else truth)


def check_estimates(m: Any, est: Any, want: np.ndarray, variance: np.ndarray, label: str, unit: str) -> None:
    """Mean, variance against ``variance`` and two-sided 95% coverage over the R surveys; alpha 1e-6 over 3 checks
    (the coverage's split over the k categories)."""
    a = ALPHA / 3
    res = testing.mean_check(est.frequencies, want, a, label=label)
    assert res.passed, str(res)
    res = testing.variance_ratio_check(est.frequencies, variance, a, label=label)
    assert res.passed, str(res)
    low, high = est.ci(0.95)
    hits = ((low <= want) & (want <= high)).sum(axis=0)
    for v in range(m.k):
        res = testing.coverage_check(int(hits[v]), R, 0.95, a / m.k, label=f"{label} {unit} {v}")
        assert res.passed, str(res)


@pytest.mark.parametrize("target", ["respondents", "population"])
@pytest.mark.parametrize("name", list(CHAINED))
def test_chained_estimator_is_unbiased_with_formula_variance_and_covers(
    name: str, target: str, rng: np.random.Generator
) -> None:
    """Mean, variance (formula (A), plus f(1-f)/n for the population) and 95% normal-interval
    coverage over R = 2000 surveys; alpha 1e-6 over 3 checks (each split over k)."""
    make, truth, n = CHAINED[name]
    m = make()
    est, want = chained_replicates(m, np.array(truth), n, target, rng)
    check_estimates(m, est, want, m.variance(n, np.array(truth), target), f"{name} {target}", "category")


@pytest.mark.parametrize("name", list(CHAINED))
def test_chained_estimator_checks_have_power(name: str, rng: np.random.Generator) -> None:
    """Power: debiasing with the p*, q* of epsilon_1 x 1.2 is caught as biased."""
    make, truth, n = CHAINED[name]
    m = make()
    est, want = chained_replicates(m, np.array(truth), n, "respondents", rng)
    wrong = type(m)(m.k, epsilon_perm=m.epsilon_perm, epsilon_1=m.epsilon * 1.2)
    p, q = wrong.support_rates()
    assert not testing.mean_check((est.observed - q) / (p - q), want, ALPHA).passed


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CHAINED))
def test_chained_estimator_through_real_reports(name: str, rng: np.random.Generator) -> None:
    """The joint draw models the real sampler: 500 surveys of real privatize_many reports,
    unbiased with the formula variance; alpha 1e-6 over 2 checks."""
    make, truth, n = CHAINED[name]
    m = make()
    counts = population_counts(np.array(truth), n, m.k)
    values = np.repeat(np.arange(m.k), counts)
    reports = m.privatize_many(np.tile(values, 500), rng=rng)
    freqs = np.stack([m.estimate(reports[i * n:(i + 1) * n], target="respondents").frequencies for i in range(500)])
    want = counts / n
    res = testing.mean_check(freqs, want, ALPHA / 2)
    assert res.passed, str(res)
    res = testing.variance_ratio_check(freqs, m.variance(n, want, "respondents"), ALPHA / 2)
    assert res.passed, str(res)


DBF_CELLS = {
    "k6-d2": (lambda: dn.DBitFlip(6, d=2, epsilon=2.0), (0.35, 0.25, 0.2, 0.1, 0.1, 0.0)),
    "k5-d1": (lambda: dn.DBitFlip(5, d=1, epsilon=1.0), (0.4, 0.3, 0.2, 0.1, 0.0)),
}
DBF_N = 2000


def dbitflip_replicates(m: Any, truth: np.ndarray, target: str, rng: np.random.Generator,
                        reps: int = R) -> tuple[Any, np.ndarray, np.ndarray]:
    """``reps`` surveys of ``DBF_N`` real reports each: their estimates (stacked), truths and aggregate counts."""
    fixed = np.repeat(np.arange(m.k), population_counts(truth, DBF_N, m.k))
    values = np.stack([fixed if target == "respondents" else rng.choice(m.k, DBF_N, p=truth) for _ in range(reps)])
    reports = m.privatize_many(values.ravel(), rng=rng)
    stats = [m.aggregate(reports[i * DBF_N:(i + 1) * DBF_N]) for i in range(reps)]
    counts = np.stack([s.counts for s in stats])
    est = m.estimate_from(SupportCounts(m.fingerprint, counts, DBF_N), target=target)
    want = np.bincount(fixed, minlength=m.k) / DBF_N if target == "respondents" else truth
    return est, want, counts


@pytest.mark.parametrize("target", ["respondents", "population"])
@pytest.mark.parametrize("name", list(DBF_CELLS))
def test_dbitflip_estimator_is_unbiased_with_formula_variance_and_covers(
    name: str, target: str, rng: np.random.Generator
) -> None:
    """The paper's estimator over R = 2000 surveys of real reports: mean, variance formula,
    95% normal-interval coverage (two-sided); alpha 1e-6 over 3 checks."""
    make, truth = DBF_CELLS[name]
    m = make()
    est, want, _ = dbitflip_replicates(m, np.array(truth), target, rng)
    check_estimates(m, est, want, m.variance(DBF_N, np.array(truth), target), f"{name} {target}", "bucket")


def test_dbitflip_estimator_checks_have_power(rng: np.random.Generator) -> None:
    """Power: the estimator with 1.2 x epsilon's bit probabilities is biased, and the variance
    formula of d + 1 buckets (a wrong sampling rate) is rejected."""
    make, truth = DBF_CELLS["k6-d2"]
    m = make()
    est, want, counts = dbitflip_replicates(m, np.array(truth), "respondents", rng)
    wrong = dn.DBitFlip(6, d=2, epsilon=2.4)
    wrong_est = wrong.estimate_from(SupportCounts(wrong.fingerprint, counts, DBF_N))
    assert not testing.mean_check(wrong_est.frequencies, want, ALPHA / 2).passed
    assert not testing.variance_ratio_check(
        est.frequencies, dn.DBitFlip(6, d=3, epsilon=2.0).variance(DBF_N, np.array(truth), "respondents"), ALPHA / 2
    ).passed


OBM_N = 1000


def one_bit_mean_replicates(m: Any, values: np.ndarray, target: str, rng: np.random.Generator) -> list[Any]:
    reports = m.privatize_many(values.ravel(), rng=rng).reshape(values.shape)
    ones = reports.sum(axis=1)
    return [m.estimate_from(MeanStat(m.fingerprint, OBM_N, float(s), float(s)), target=target) for s in ones]


def test_one_bit_mean_estimator_for_fixed_respondents(rng: np.random.Generator) -> None:
    """Fixed values (some outside the range, clamped): the mean over R = 2000 surveys is the
    respondents' clamped mean, its variance the sum of pi_i (1 - pi_i) ((e+1)/(e-1))^2 (high-low)^2 / n^2,
    and the respondents' intervals cover at least 95% (their SE bounds the variance, by Jensen).
    alpha 1e-6 over 3 checks. Power: debiasing at 1.2 x epsilon is biased."""
    m = CASES["OneBitMean-5pts"]()
    values = np.clip(rng.exponential(3.0, OBM_N) - 0.5, -1, 14)
    clamped = np.clip(values, 0, 10)
    ests = one_bit_mean_replicates(m, np.tile(values, (R, 1)), "respondents", rng)
    means = np.array([e.mean for e in ests])
    e = math.exp(m.epsilon)
    pi = 1 / (e + 1) + clamped / 10 * (e - 1) / (e + 1)
    var = np.sum(pi * (1 - pi)) * ((e + 1) / (e - 1)) ** 2 * 100 / OBM_N**2
    a = ALPHA / 3
    res = testing.mean_check(means, clamped.mean(), a)
    assert res.passed, str(res)
    res = testing.variance_ratio_check(means, var, a)
    assert res.passed, str(res)
    hits = sum(lo <= clamped.mean() <= hi for lo, hi in (est.ci(0.95) for est in ests))
    res = testing.coverage_check(int(hits), R, 0.95, a, conservative=True)
    assert res.passed, str(res)
    b1 = (e**1.2 - 1) / (2 * (e**1.2 + 1))
    wrong = [5.0 + 5.0 * ((est.mean - 5.0) / 5.0 * m._b1 / b1) for est in ests]
    assert not testing.mean_check(np.array(wrong), clamped.mean(), a).passed


def test_one_bit_mean_estimator_for_a_population(rng: np.random.Generator) -> None:
    """Values drawn from min(12 U, 10), mean 70/12: unbiased, and the sample-SE intervals cover
    95% (two-sided); alpha 1e-6 over 2 checks."""
    m = CASES["OneBitMean-5pts"]()
    values = np.minimum(12 * rng.random((R, OBM_N)), 10)
    ests = one_bit_mean_replicates(m, values, "population", rng)
    truth = 70 / 12
    res = testing.mean_check(np.array([e.mean for e in ests]), truth, ALPHA / 2)
    assert res.passed, str(res)
    hits = sum(lo <= truth <= hi for lo, hi in (est.ci(0.95) for est in ests))
    res = testing.coverage_check(int(hits), R, 0.95, ALPHA / 2)
    assert res.passed, str(res)
