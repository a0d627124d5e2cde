"""Layer A for the longitudinal mechanisms: L-GRR, L-OSUE, 1BitMean, dBitFlip.

Exact checks (no sampling): the realised epsilons from the integers, the
transition matrices' privacy loss, the second-round parameters against the
papers' closed forms (and multi-freq-ldpy's L-GRR formula, whose shortfall
for k > 2 MECHANISMS.md 5.2 documents), the estimators on expected counts,
configurations on the wire, bad parameters, and the clients' memoization.
"""

from __future__ import annotations

import itertools
import math
import re
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

import deniable as dn
from deniable import _randomness as randomness
from deniable import wire
from deniable._aggregates import SupportCounts
from deniable._client_state import MemoryStore, StateError
from deniable.errors import ConfigError
from deniable.mechanisms import registry
from deniable.mechanisms._telemetry import sample_subsets


def max_log_ratio(matrix: np.ndarray) -> float:
    with np.errstate(divide="ignore"):
        logs = np.log(matrix)
    return float(np.max(logs.max(axis=0) - logs.min(axis=0)))


# ------------------------------------------------------------------ epsilons
@pytest.mark.parametrize("k", [2, 3, 10, 50])
@pytest.mark.parametrize(("perm", "one"), [(4.0, 1.0), (2.0, 0.5), (1.0, 0.9), (8.0, 3.0)])
def test_lgrr_realises_both_epsilons(k: int, perm: float, one: float) -> None:
    m = dn.LGRR(k, epsilon_perm=perm, epsilon_1=one)
    (p1, q1), (p2, q2) = m.rounds
    assert p1 + (k - 1) * q1 == 1 and p2 + (k - 1) * q2 == 1
    p_star, q_star = p1 * p2 + (1 - p1) * q2, q1 * p2 + (1 - q1) * q2
    assert m.prob == p_star
    assert perm * 0.99 <= m.epsilon_perm <= perm and one * 0.99 <= m.epsilon <= one
    assert m.epsilon_perm == dn.GRR(k, epsilon=perm).epsilon  # the first round is GRR's own choice
    assert math.isclose(m.epsilon, math.log(p_star / q_star), rel_tol=1e-12)
    assert m.epsilon_irr == pytest.approx(math.log(p2 / q2))
    if k <= 10:
        assert max_log_ratio(m.transition_matrix()[1]) == pytest.approx(m.epsilon, rel=1e-12)


def test_lgrr_second_round_against_the_papers() -> None:
    """k = 2: our exact solution is the paper's (and multi-freq-ldpy's) closed form; for k > 2
    that closed form realises less than epsilon_1 (0.92 of 1 at k = 10, epsilon_perm = 4)."""

    def reference_p2(k: int, perm: float, one: float) -> tuple[float, float]:
        p1 = math.exp(perm) / (math.exp(perm) + k - 1)
        q1 = (1 - p1) / (k - 1)
        e1 = math.exp(one)
        p2 = (q1 - e1 * p1) / (-p1 * e1 + k * q1 * e1 - q1 * e1 - p1 * (k - 1) + q1)
        q2 = (1 - p2) / (k - 1)
        realised = math.log((p1 * p2 + (1 - p1) * q2) / (q1 * p2 + (1 - q1) * q2))
        return p2, realised

    p2, realised = reference_p2(2, 4.0, 1.0)
    ours = dn.LGRR(2, epsilon_perm=4.0, epsilon_1=1.0)
    assert float(ours.rounds[1][0]) == pytest.approx(p2, rel=1e-8) and realised == pytest.approx(1.0)
    _, realised10 = reference_p2(10, 4.0, 1.0)
    assert realised10 == pytest.approx(0.92, abs=0.005)
    assert dn.LGRR(10, epsilon_perm=4.0, epsilon_1=1.0).epsilon == pytest.approx(1.0, abs=1e-8)


@pytest.mark.parametrize("k", [2, 5, 12])
@pytest.mark.parametrize(("perm", "one"), [(4.0, 1.0), (2.0, 0.5), (1.0, 0.9)])
def test_losue_realises_both_epsilons_with_the_paper_closed_form(k: int, perm: float, one: float) -> None:
    m = dn.LOSUE(k, epsilon_perm=perm, epsilon_1=one)
    (p1, q1), (p2, q2) = m.rounds
    assert p1 == Fraction(1, 2) and q2 == 1 - p2
    assert float(q1) == pytest.approx(1 / (math.exp(perm) + 1), rel=1e-6)
    e1, ep = math.exp(one), math.exp(perm)
    assert float(p2) == pytest.approx((1 - e1 * ep) / (e1 - ep - e1 * ep + 1), rel=1e-7)
    assert (m.p, m.q) == (p1 * p2 + (1 - p1) * q2, q1 * p2 + (1 - q1) * q2)
    assert perm * 0.99 <= m.epsilon_perm <= perm and one * 0.99 <= m.epsilon <= one
    assert m.epsilon_perm == dn.OUE(k, epsilon=perm).epsilon
    if k <= 5:
        assert max_log_ratio(m.transition_matrix()[1]) == pytest.approx(m.epsilon, rel=1e-12)


@pytest.mark.parametrize(("k", "d", "eps"), [(2, 1, 1.0), (2, 2, 1.0), (4, 2, 2.0), (5, 1, 0.5), (6, 3, 1.0)])
def test_dbitflip_epsilon_is_the_transition_matrix_loss(k: int, d: int, eps: float) -> None:
    m = dn.DBitFlip(k, d=d, epsilon=eps)
    assert eps * 0.99 <= m.epsilon <= eps
    outputs, matrix = m.transition_matrix()
    assert len(outputs) == math.comb(k, d) * 2**d
    np.testing.assert_allclose(matrix.sum(axis=1), 1.0, rtol=1e-12)
    assert max_log_ratio(matrix) == pytest.approx(m.epsilon, rel=1e-9)


@pytest.mark.parametrize("points", [2, 3, 11])
def test_one_bit_mean_distribution_and_epsilon(points: int) -> None:
    m = dn.OneBitMean(-5.0, 5.0, epsilon=1.5, points=points)
    assert 1.5 * 0.99 <= m.epsilon <= 1.5
    e = math.exp(m.epsilon)
    for value in (-9.0, -5.0, -1.234, 0.0, 2.5, 5.0, 17.0):
        u = min(1.0, max(0.0, (value + 5.0) / 10.0))
        support, probs = m.report_distribution(value)
        assert list(support) == [0.0, 1.0]
        assert probs[1] == pytest.approx(1 / (e + 1) + u * (e - 1) / (e + 1), rel=1e-12)
    ends = [m.report_distribution(v)[1] for v in (-5.0, 5.0)]
    assert max_log_ratio(np.array(ends)) == pytest.approx(m.epsilon, rel=1e-12)
    # the unit variance: Var(t_hat) = pi (1 - pi) / b1^2
    t = np.linspace(-1, 1, 5)
    pi = 0.5 + t * (e - 1) / (2 * (e + 1))
    np.testing.assert_allclose(m._unit_variance(t), pi * (1 - pi) * (2 * (e + 1) / (e - 1)) ** 2, rtol=1e-9)


def test_lifetime_epsilons() -> None:
    lg = dn.LGRR(4, epsilon_perm=3.0, epsilon_1=1.0)
    assert lg.lifetime_epsilon() == lg.epsilon_perm and lg.lifetime_epsilon(3) == 3 * lg.epsilon_perm
    ob = dn.OneBitMean(0, 1, epsilon=1.0, points=3)
    assert ob.lifetime_epsilon() == ob.epsilon and ob.lifetime_epsilon(10) == 3 * ob.epsilon
    db = dn.DBitFlip(10, d=2, epsilon=1.0)
    assert db.lifetime_epsilon(2) == 2 * db.epsilon and db.lifetime_epsilon(99) == 3 * db.epsilon
    for m in (lg, ob, db):
        for bad in (0, -1, 1.5, True):
            with pytest.raises(ValueError, match="distinct"):
                m.lifetime_epsilon(bad)


# ---------------------------------------------------------------- estimators
@pytest.mark.parametrize("make", [lambda: dn.LGRR(5, epsilon_perm=3.0, epsilon_1=1.0),
                                  lambda: dn.LOSUE(5, epsilon_perm=3.0, epsilon_1=1.0)])
def test_chained_estimate_of_expected_counts_is_the_truth(make: Any) -> None:
    """The paper's estimator ``(C - n q1 (p2 - q2) - n q2) / (n (p1 - q1)(p2 - q2))`` and its
    f -> 0 variance ``sigma (1 - sigma) / (n (p1-q1)^2 (p2-q2)^2)``, ``sigma = q*``."""
    m = make()
    (p1, q1), (p2, q2) = (tuple(float(x) for x in r) for r in m.rounds)
    n, truth = 10_000, np.array([0.4, 0.3, 0.2, 0.1, 0.0])
    expected = n * ((p1 * p2 + (1 - p1) * q2) * truth + (q1 * p2 + (1 - q1) * q2) * (1 - truth))
    paper = (expected - n * q1 * (p2 - q2) - n * q2) / (n * (p1 - q1) * (p2 - q2))
    est = m.estimate_from(SupportCounts(m.fingerprint, expected, n))
    np.testing.assert_allclose(est.frequencies, truth, atol=1e-12)
    np.testing.assert_allclose(paper, truth, atol=1e-12)
    sigma = q1 * p2 + (1 - q1) * q2
    np.testing.assert_allclose(m.variance(n)[0], sigma * (1 - sigma) / (n * (p1 - q1) ** 2 * (p2 - q2) ** 2))


def test_dbitflip_estimate_and_variance_from_expected_counts() -> None:
    """The estimate of the expected counts is the truth; the respondents' variance formula is
    the exact variance of the paper's estimator (computed here from one device's Z)."""
    m = dn.DBitFlip(6, d=2, epsilon=2.0)
    n, truth = 6000, np.array([0.5, 0.2, 0.15, 0.1, 0.05, 0.0])
    r, e = 2 / 6, math.exp(1.0)
    p = e / (e + 1)
    sampled = np.full(6, n * r)
    ones = n * r * (p * truth + (1 - p) * (1 - truth))
    est = m.estimate_from(SupportCounts(m.fingerprint, np.concatenate([ones, sampled]), n), target="respondents")
    np.testing.assert_allclose(est.frequencies, truth, atol=1e-9)
    # Z = S (bit (e+1) - 1)/(e-1): E Z^2 = r (p_bit e^2 + (1 - p_bit)) / (e-1)^2 per device
    for f in (truth, truth * 0):
        holder = r * (p * e**2 + (1 - p)) / (e - 1) ** 2 - r**2
        other = r * ((1 - p) * e**2 + p) / (e - 1) ** 2
        exact = (f * holder + (1 - f) * other) / (n * r**2)
        np.testing.assert_allclose(m.variance(n, f, "respondents"), exact, rtol=1e-9)
        np.testing.assert_allclose(m.variance(n, f, "population"), exact + f * (1 - f) / n, rtol=1e-9)
    # var* = (k/d) e^(eps/2) / (e^(eps/2) - 1)^2 (MECHANISMS.md 1.10)
    assert m.variance(1)[0] == pytest.approx(3 * e / (e - 1) ** 2)


def test_sample_subsets_are_sorted_distinct_and_cover_every_subset() -> None:
    s = sample_subsets(5000, 5, 3, randomness.resolve(1))
    assert s.shape == (5000, 3) and (np.diff(s, axis=1) > 0).all() and s.min() >= 0 and s.max() < 5
    assert len({tuple(row) for row in s}) == math.comb(5, 3)
    full = sample_subsets(10, 4, 4, randomness.resolve(2))
    assert (full == np.arange(4)).all()


# --------------------------------------------------------------------- wire
MECHANISMS = [
    lambda: dn.LGRR(["a", "b", "c"], epsilon_perm=4.0, epsilon_1=1.0),
    lambda: dn.LOSUE(11, epsilon_perm=2.0, epsilon_1=0.7),
    lambda: dn.OneBitMean(0, 86400, epsilon=1.0, points=4),
    lambda: dn.DBitFlip(["x", "y", "z", "w"], d=2, epsilon=1.5),
    lambda: dn.OneBitMean(0, 86400, epsilon=1.0, points=4, gamma=0.1),
    lambda: dn.DBitFlip(["x", "y", "z", "w"], d=2, epsilon=1.5, gamma=0.05),
]


@pytest.mark.parametrize("make", MECHANISMS)
def test_config_round_trip_and_reports_on_the_wire(make: Any) -> None:
    m = make()
    config = m.to_config()
    back = dn.from_config(config)
    assert back == m and back.fingerprint == m.fingerprint and back.epsilon == m.epsilon
    assert dn.from_config(wire.to_json(m)) == m
    values = [0.0, 1.5, 86400.0] if isinstance(m, dn.OneBitMean) else list(m.domain)
    reports = m.privatize_many(values * 20, rng=3)
    items = m.reports_to_json(reports)
    checked = back.reports_from_json(items)
    assert back.aggregate(checked) == m.aggregate(reports)
    stat = m.aggregate(reports[:30]) + m.aggregate(reports[30:])
    assert stat == m.aggregate(reports)
    assert m.aggregate_from_json(stat.to_json()) == stat
    assert m.estimate_from(stat).n == len(reports)
    assert registry.entry_of(m).browser is True  # deniable.js implements it (tests/js)


BAD_CONFIGS = [
    ("l-grr", {"perm_truth_numerator": 5, "perm_other_numerator": 9, "irr_truth_numerator": 3,
               "irr_other_numerator": 1}, "truth_numerator"),
    ("l-grr", {"perm_truth_numerator": 9, "perm_other_numerator": 1, "irr_truth_numerator": 3}, "missing"),
    ("l-grr", {"perm_truth_numerator": "9", "perm_other_numerator": 1, "irr_truth_numerator": 3,
               "irr_other_numerator": 1}, "params"),
    ("l-osue", {"bits": 32, "perm_p_numerator": 1 << 31, "perm_q_numerator": 1 << 30,
                "irr_p_numerator": 1 << 30}, "irr_p_numerator"),
    ("l-osue", {"bits": 16, "perm_p_numerator": 1 << 31, "perm_q_numerator": 1 << 30,
                "irr_p_numerator": 3 << 30}, "bits"),
    ("dbitflip", {"d": 9, "truth_numerator": 3, "other_numerator": 1}, "d must be"),
    ("dbitflip", {"d": 2, "truth_numerator": 1, "other_numerator": 3}, "other_numerator"),
    ("dbitflip", {"d": 2, "truth_numerator": 3, "other_numerator": 1, "extra": 1}, "unknown"),
    ("one-bit-mean", {"high_numerator": 3, "low_numerator": 1, "points": 1}, "points"),
    ("one-bit-mean", {"high_numerator": 1, "low_numerator": 1, "points": 2}, "low_numerator"),
]


@pytest.mark.parametrize(("wire_id", "params", "match"), BAD_CONFIGS, ids=[f"{w}-{m}" for w, _, m in BAD_CONFIGS])
def test_bad_configs_are_refused_naming_the_field(wire_id: str, params: dict[str, Any], match: str) -> None:
    domain = [0, 10] if wire_id == "one-bit-mean" else ["a", "b", "c", "d"]
    config = {"format": "deniable.mechanism", "version": 1, "mechanism": wire_id, "domain": domain,
              "params": params}
    with pytest.raises(ConfigError, match=match):
        dn.from_config(config)


@pytest.mark.parametrize("make", MECHANISMS)
def test_a_config_claiming_another_epsilon_is_refused(make: Any) -> None:
    config = make().to_config()
    config["epsilon"] *= 1.01
    with pytest.raises(ConfigError, match="epsilon"):
        dn.from_config(config)


@pytest.mark.parametrize(
    ("build", "error", "match"),
    [
        (lambda: dn.LGRR(4, epsilon_perm=1.0, epsilon_1=1.0), ValueError, "epsilon_1 must be below"),
        (lambda: dn.LGRR(4, epsilon_perm=1.0, epsilon_1=2.0), ValueError, "epsilon_1 must be below"),
        (lambda: dn.LGRR(4, epsilon_perm=float("nan"), epsilon_1=0.5), ValueError, "epsilon_perm"),
        (lambda: dn.LGRR(4, epsilon_perm=2.0, epsilon_1=-1), ValueError, "epsilon_1"),
        (lambda: dn.LGRR(4, epsilon_perm=2.0), TypeError, "epsilon_1"),
        (lambda: dn.LGRR(1, epsilon_perm=2.0, epsilon_1=1.0), ValueError, "k must be >= 2"),
        (lambda: dn.LOSUE(4, epsilon_perm="2", epsilon_1=1.0), TypeError, "epsilon_perm"),
        (lambda: dn.LOSUE(4, epsilon_perm=3.0, epsilon_1=1e-12), ValueError, "too small"),
        (lambda: dn.DBitFlip(4, d=5, epsilon=1.0), ValueError, "d must be an int in 1..4"),
        (lambda: dn.DBitFlip(4, d=0, epsilon=1.0), ValueError, "d must be"),
        (lambda: dn.DBitFlip(4, d=2.0, epsilon=1.0), ValueError, "d must be"),
        (lambda: dn.DBitFlip(4, epsilon=1.0), TypeError, "d"),
        (lambda: dn.OneBitMean(1, 1, epsilon=1.0), ValueError, "low must be < high"),
        (lambda: dn.OneBitMean(0, 1, epsilon=1.0, points=1), ValueError, "points must be"),
        (lambda: dn.OneBitMean(0, 1, epsilon=0), ValueError, "epsilon"),
    ],
)
def test_bad_parameters_are_refused(build: Any, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        build()


def test_bad_reports_are_refused_naming_the_report() -> None:
    m = dn.DBitFlip(4, d=2, epsilon=1.0)
    good = {"buckets": [0, 3], "bits": [1, 0]}
    for bad, why in [({"buckets": [3, 0], "bits": [1, 0]}, "increasing"),
                     ({"buckets": [0, 4], "bits": [1, 0]}, "below"), ({"buckets": [0, 1], "bits": [2, 0]}, "bits"),
                     ({"buckets": [0], "bits": [1]}, "list of 2"),
                     ({"buckets": [0, 1]}, "must be")]:
        with pytest.raises(dn.ReportError, match=why) as info:
            m.reports_from_json([good, bad])
        assert info.value.index == 1
    ob = dn.OneBitMean(0, 10, epsilon=1.0)
    with pytest.raises(dn.ReportError, match="not a possible OneBitMean report"):
        ob.reports_from_json([0, 1, 0.5])
    with pytest.raises(dn.ReportError):
        ob.reports_from_json([True])


# ------------------------------------------------------------------- clients
def test_chained_client_memoizes_the_first_round_per_value() -> None:
    m = dn.LGRR(list("ABCDEFGH"), epsilon_perm=2.0, epsilon_1=1.0)
    c = m.client(secret=b"s" * 32)
    again = m.client(secret=b"s" * 32)
    assert all(c.permanent(v) == again.permanent(v) for v in m.domain)
    firsts = [int(m.client().permanent("A")[0]) for _ in range(200)]
    assert len(set(firsts)) > 1  # fresh secrets give fresh first rounds
    reports = {c.privatize("A") for _ in range(200)}
    assert len(reports) > 1  # the second round is fresh
    assert all(r in m.domain for r in reports)
    o = dn.LOSUE(9, epsilon_perm=2.0, epsilon_1=1.0)
    oc = o.client(secret=b"t" * 32)
    assert np.array_equal(oc.permanent(3), o.client(secret=b"t" * 32).permanent(3))
    assert o.validate(np.array([oc.privatize(3)])).shape == (1, 2)


def test_clients_keep_their_state_in_a_store(tmp_path: Any) -> None:
    for m in (dn.LGRR(4, epsilon_perm=2.0, epsilon_1=1.0), dn.DBitFlip(6, d=2, epsilon=1.0),
              dn.OneBitMean(0, 10, epsilon=1.0, points=3)):
        path = tmp_path / f"{m.wire_id}.state"
        first, second = m.client(state=path), m.client(state=path)
        assert first.secret == second.secret
        store = MemoryStore()
        assert m.client(state=store).secret == m.client(state=store).secret
        with pytest.raises(TypeError, match="either state or secret"):
            m.client(state=path, secret=b"x" * 32)
    other = dn.LGRR(4, epsilon_perm=3.0, epsilon_1=1.0)
    with pytest.raises(StateError, match="fingerprint"):
        other.client(state=tmp_path / "l-grr.state")
    with pytest.raises(ValueError, match="at least 16 bytes"):
        other.client(secret=b"short")


def test_one_bit_mean_client_rounds_once_and_memoizes_a_bit_per_point() -> None:
    m = dn.OneBitMean(0, 100, epsilon=1.0, points=11)
    c = m.client(secret=bytes(range(32)))
    assert c.privatize(37.0) == c.privatize(37.0) and c.point(37.0) in (3, 4)
    # every value in a step maps to the lower point below the device's threshold and the upper above
    points = [c.point(v) for v in np.linspace(30, 40, 101)]
    assert points == sorted(points) and set(points) <= {3, 4}
    assert [c.privatize(v) for v in np.linspace(30, 40, 101)] == [float(c.bit(p)) for p in points]
    assert c.point(-5) == 0 and c.point(1e9) == 10
    assert {m.client().point(35.0) for _ in range(100)} == {3, 4}


def test_dbitflip_client_samples_buckets_once_and_sends_at_most_d_plus_1_reports() -> None:
    m = dn.DBitFlip(10, d=3, epsilon=1.0)
    c = m.client(secret=b"k" * 32)
    assert np.array_equal(c.buckets, m.client(secret=b"k" * 32).buckets)
    reports = {m.report_to_json(c.privatize(v))["bits"].__repr__() for v in range(10) for _ in range(3)}
    assert len(reports) <= 4
    unsampled = [v for v in range(10) if v not in c.buckets]
    assert len({repr(m.report_to_json(c.privatize(v))) for v in unsampled}) == 1
    assert all(c.slot(v) == 3 for v in unsampled)


def test_simulate_runs_every_new_frequency_oracle() -> None:
    for m in (dn.LGRR(5, epsilon_perm=3.0, epsilon_1=1.0), dn.LOSUE(5, epsilon_perm=3.0, epsilon_1=1.0),
              dn.DBitFlip(5, d=2, epsilon=2.0)):
        est = dn.simulate(m, [0.4, 0.3, 0.2, 0.1, 0.0], 200_000, rng=5)
        assert est.n == 200_000 and np.all(np.abs(est.frequencies - est.truth) < 8 * est.std_errors)


# ------------------------------------------------- supports, audit cells, names


def test_dbitflip_supports_and_audit_cells_follow_their_definitions() -> None:
    """Over every report of k=5, d=2: ``supports(v)`` is "v sampled with bit 1"; the audit cell of
    ``(x, x')`` is ``2 [x sampled with bit 1] + [x' sampled with bit 0]``."""
    m = dn.DBitFlip(list("abcde"), d=2, epsilon=1.0)
    outputs, _ = m.transition_matrix()
    items = [{"buckets": list(s), "bits": list(bits)} for s, bits in outputs]
    for v in range(5):
        want = [any(b == v and bit == 1 for b, bit in zip(s, bits, strict=True)) for s, bits in outputs]
        got = m.supports(items, m.domain[v])
        assert got.dtype == bool and got.tolist() == want
    for x in range(5):
        for o in range(5):
            want = [2 * any(b == x and bit == 1 for b, bit in zip(s, bits, strict=True))
                    + any(b == o and bit == 0 for b, bit in zip(s, bits, strict=True)) for s, bits in outputs]
            cells = m.audit_events(items, m.domain[x], m.domain[o])
            assert cells.dtype == np.int64 and cells.tolist() == want


def test_one_bit_mean_audit_cell_is_the_report_bit() -> None:
    cells = dn.OneBitMean(0, 10, epsilon=1.0).audit_events([0.0, 1.0, 1.0, 0.0], 0.0, 10.0)
    assert cells.dtype == np.int64 and cells.tolist() == [0, 1, 1, 0]


def test_dbitflip_recipe_reads_survey_numbers() -> None:
    """The survey recipe: ``d`` defaults to 1, a whole float (as survey files write numbers) is an int,
    ``gamma`` is passed on (default 0); any other ``d`` is refused by the constructor."""
    build = registry.recipe("dbitflip").build
    m = build(list("abcd"), {"epsilon": 1.0, "d": 2.0, "gamma": 0.1})
    assert m == dn.DBitFlip(list("abcd"), d=2, epsilon=1.0, gamma=0.1) and type(m.d) is int
    plain = build(list("abcd"), {"epsilon": 1.0})
    assert plain == dn.DBitFlip(list("abcd"), d=1, epsilon=1.0) and plain.gamma == 0
    assert build(list("abcd"), {"epsilon": 1.0, "d": 3}).d == 3
    with pytest.raises(ValueError, match=r"^d must be an int in 1\.\.4 for DBitFlip; got 2\.5$"):
        build(list("abcd"), {"epsilon": 1.0, "d": 2.5})


def test_reprs_name_the_parameters() -> None:
    assert repr(dn.DBitFlip(list("abcd"), d=2, epsilon=1.0)) == "DBitFlip(k=4, d=2, epsilon=1)"
    perturbed = dn.DBitFlip(4, d=2, epsilon=1.0, gamma=0.1)
    assert repr(perturbed) == f"DBitFlip(k=4, d=2, epsilon={perturbed.epsilon:.6g}, gamma=0.1)"
    assert repr(dn.OneBitMean(0, 10, epsilon=1.0)) == "OneBitMean(low=0, high=10, epsilon=1, points=2)"
    ob = dn.OneBitMean(-1.5, 10, epsilon=1.0, points=3, gamma=0.05)
    assert repr(ob) == f"OneBitMean(low=-1.5, high=10, epsilon={ob.epsilon:.6g}, points=3, gamma=0.05)"


def test_dbitflip_transition_matrix_entries_outputs_and_size_limit() -> None:
    """``P[x, (S, b)] = prod_i P(b_i) / C(k, d)`` with ``P(b_i = 1) = a/(a+b)`` where ``S_i = x`` and
    ``b/(a+b)`` elsewhere; the outputs are every subset with every 0/1 pattern. Offered up to
    ``C(k, d) 2**d = 2**12`` outputs (k = d = 12), refused above (k = 10, d = 9: 5,120)."""
    m = dn.DBitFlip(list("abcd"), d=2, epsilon=1.0)
    outputs, matrix = m.transition_matrix()
    assert outputs == [(s, bits) for s in itertools.combinations(range(4), 2)
                       for bits in itertools.product((0, 1), repeat=2)]
    p = Fraction(m._ra, m._ra + m._rb)
    for x in range(4):
        for j, (s, bits) in enumerate(outputs):
            want = Fraction(1, 6)
            for v, bit in zip(s, bits, strict=True):
                one = p if v == x else 1 - p
                want *= one if bit == 1 else 1 - one
            assert matrix[x, j] == pytest.approx(float(want), rel=1e-12)
    assert dn.DBitFlip(12, d=12, epsilon=1.0).transition_matrix()[1].shape == (12, 1 << 12)
    for k, d in ((10, 9), (13, 12)):
        with pytest.raises(NotImplementedError, match=r"^transition_matrix enumerates C\(k, d\) 2\*\*d outputs; "
                                                      r"too many$"):
            dn.DBitFlip(k, d=d, epsilon=1.0).transition_matrix()


def test_one_bit_mean_distribution_sums_to_one_and_dbitflip_lifetime_defaults_to_one_slot() -> None:
    m = dn.OneBitMean(0, 10, epsilon=1.0, points=3, gamma=0.1)
    for value in (0.0, 3.3, 10.0):
        support, probs = m.report_distribution(value)
        assert support.tolist() == [0.0, 1.0] and probs[0] == 1 - probs[1]
    db = dn.DBitFlip(10, d=2, epsilon=1.0, gamma=0.1)
    assert db.lifetime_epsilon() == db.epsilon_perm > db.epsilon


def _config(wire_id: str, params: dict[str, Any], domain: Any = None) -> dict[str, Any]:
    domain = ([0, 10] if wire_id == "one-bit-mean" else list("abcd")) if domain is None else domain
    return {"format": "deniable.mechanism", "version": 1, "mechanism": wire_id, "domain": domain, "params": params}


def test_telemetry_config_checks_in_whole_messages_and_at_their_bounds() -> None:
    """1BitMean: ``0 < low < high`` and ``(high + low)(points - 1) <= 2**64``; dBitFlip: ``0 < other < truth``
    and ``truth + other <= 2**64``; both: ``flip_numerator`` in ``0..2**31-1``; owners named."""
    ob_order = (r"^OneBitMean params need 0 < low_numerator < high_numerator and \(high \+ low\) \* \(points - 1\) "
                r"<= 2\*\*64; got ")
    accepted = [
        ("one-bit-mean", {"high_numerator": 2, "low_numerator": 1, "points": 2}),
        ("one-bit-mean", {"high_numerator": (1 << 64) - 1, "low_numerator": 1, "points": 2}),
        ("one-bit-mean", {"high_numerator": (1 << 63) - 1, "low_numerator": 1, "points": 3}),
        ("one-bit-mean", {"high_numerator": 3, "low_numerator": 1, "points": 2, "flip_numerator": (1 << 31) - 1}),
        ("dbitflip", {"d": 2, "truth_numerator": 2, "other_numerator": 1}),
        ("dbitflip", {"d": 1, "truth_numerator": (1 << 64) - 1, "other_numerator": 1}),
    ]
    for wire_id, params in accepted:
        assert dn.from_config(_config(wire_id, params)).to_config()["params"] == params
    refused = [
        ("one-bit-mean", {"high_numerator": 3, "low_numerator": 0, "points": 2}, ob_order),
        ("one-bit-mean", {"high_numerator": 3, "low_numerator": 3, "points": 2}, ob_order),
        ("one-bit-mean", {"high_numerator": 3, "low_numerator": 1, "points": 2, "flip_numerator": True},
         r"^OneBitMean params: flip_numerator must be an int in 0\.\.2\*\*31-1; got True$"),
        ("one-bit-mean", {"high_numerator": 1 << 64, "low_numerator": 1, "points": 2}, ob_order),
        ("one-bit-mean", {"high_numerator": 1 << 63, "low_numerator": 1, "points": 3}, ob_order),
        ("one-bit-mean", {"high_numerator": 3, "low_numerator": 1, "points": 1},
         r"^points must be an int in 2\.\.65536 for OneBitMean; got 1$"),
        ("one-bit-mean", {"high_numerator": 3, "low_numerator": 1, "points": 2, "flip_numerator": -1},
         r"^OneBitMean params: flip_numerator must be an int in 0\.\.2\*\*31-1; got -1$"),
        ("dbitflip", {"d": 2, "truth_numerator": 2, "other_numerator": 0},
         r"^DBitFlip params need 0 < other_numerator < truth_numerator and a sum up to 2\*\*64; got "),
        ("dbitflip", {"d": 2, "truth_numerator": 2, "other_numerator": 2},
         r"^DBitFlip params need 0 < other_numerator < truth_numerator and a sum up to 2\*\*64; got "),
        ("dbitflip", {"d": 2, "truth_numerator": 1 << 64, "other_numerator": 1},
         r"^DBitFlip params need 0 < other_numerator < truth_numerator and a sum up to 2\*\*64; got "),
        ("dbitflip", {"d": 2, "truth_numerator": 2, "other_numerator": 1, "flip_numerator": 1 << 31},
         r"^DBitFlip params: flip_numerator must be an int in 0\.\.2\*\*31-1; got 2147483648$"),
        ("dbitflip", {"d": 5, "truth_numerator": 2, "other_numerator": 1}, r"^d must be an int in 1\.\.4 for DBitFlip; "
                                                                            r"got 5$"),
    ]
    for wire_id, params, message in refused:
        with pytest.raises(ConfigError, match=message):
            dn.from_config(_config(wire_id, params))
    with pytest.raises(ConfigError, match=r"^domain for DBitFlip has duplicate category 'a'$"):
        dn.from_config(_config("dbitflip", {"d": 2, "truth_numerator": 2, "other_numerator": 1}, list("abca")))


def test_dbitflip_simulated_counts_are_the_aggregate_of_the_same_draws() -> None:
    """``simulate_support_counts`` draws from the given generator (reproducible): int64 counts equal to
    aggregating ``privatize_many`` of the values in position order with the same seed."""
    m = dn.DBitFlip(6, d=2, epsilon=1.0)
    true = np.array([100, 0, 50, 0, 0, 10])
    counts = m.simulate_support_counts(true, np.random.default_rng(5))
    assert counts is not None and counts.dtype == np.int64
    values = np.repeat(np.arange(6), true)
    expected = m.aggregate(m.privatize_many(values, rng=np.random.default_rng(5))).counts
    assert counts.tolist() == expected.tolist() and counts[6:].sum() == 2 * 160


def test_dbitflip_report_checks_in_whole_messages() -> None:
    """JSON reports: the row named is the first bad one (not row 0), values in ``0..2**32-1`` and ints;
    structured reports: exactly the two fields, one dimension, ``d`` of each, integer buckets; a list
    of ``privatize``'s reports is taken as their array."""
    m = dn.DBitFlip(4, d=2, epsilon=1.0)
    good = {"buckets": [0, 3], "bits": [1, 0]}
    order = r"^DBitFlip report 1: buckets must be 2 increasing positions below k=4 and bits 0 or 1; got "
    for bad in ({"buckets": [1, 1], "bits": [1, 0]}, {"buckets": [0, 4], "bits": [1, 0]},
                {"buckets": [0, 1], "bits": [2, 0]}):
        with pytest.raises(dn.ReportError, match=order):
            m.reports_from_json([good, bad, good])
    for key, value in (("buckets", [0, 1 << 32]), ("buckets", [-1, 1]), ("bits", [1.0, 0]), ("buckets", [0, 2.0])):
        bad = dict(good, **{key: value})
        with pytest.raises(dn.ReportError, match=rf"^DBitFlip report 1: {key} must be a list of 2 non-negative ints$"):
            m.reports_from_json([good, bad, good])
    fields = r"^DBitFlip reports need fields 'buckets' and 'bits'; got "
    shape = r"^DBitFlip reports need d=2 buckets and bits each; got "
    for reports, message in (
        (np.zeros(2, dtype=[("slots", "<u4", (2,)), ("bits", "u1", (2,))]), fields),
        (np.zeros((2, 2), dtype=m.report_dtype), fields),
        (np.zeros(2, dtype=[("buckets", "<u4", (3,)), ("bits", "u1", (3,))]), shape),
        (np.zeros(2, dtype=[("buckets", "<f8", (2,)), ("bits", "u1", (2,))]), shape),
    ):
        with pytest.raises(ValueError, match=message):
            m.validate(reports)
    listed = r"^DBitFlip report 0 must be \{'buckets': \[2 ints\], 'bits': \[2 0/1\]\}; got \[0, 1\]$"
    with pytest.raises(dn.ReportError, match=listed):
        m.reports_from_json([[0, 1], [2, 3]])  # lists, shown as given
    singles = [m.privatize(v, rng=i) for i, v in enumerate([0, 1, 2, 3, 1])]
    assert m.aggregate(singles) == m.aggregate(np.array(singles))


def test_one_bit_mean_reports_1_below_the_threshold_only() -> None:
    """At the range's ends (no rounding: one scripted byte settles it) the bit is 1 exactly when the
    32-bit draw is below ``b`` (low end) or ``a`` (high end) out of ``a + b``."""
    from scripted import Scripted

    m = dn.OneBitMean(0, 10, epsilon=1.0)
    params = m.to_config()["params"]
    a, b = params["high_numerator"], params["low_numerator"]
    assert a + b <= 1 << 32
    for value, threshold in ((0.0, b), (10.0, a)):
        for draw, want in ((threshold - 1, 1.0), (threshold, 0.0)):
            source = Scripted(b"\xff" + np.array([draw], dtype=np.uint32).tobytes())
            assert m.privatize_many([value], rng=source).tolist() == [want] and source.data == b""


def test_dbitflip_simulation_adds_every_chunk() -> None:
    """Above 2**20 reports the simulation works in chunks: every report is counted (``n d`` sampled)."""
    m = dn.DBitFlip(2, d=1, epsilon=1.0)
    n = (1 << 20) + 5
    counts = m.simulate_support_counts(np.array([n - 5, 5]), np.random.default_rng(1))
    assert counts is not None and int(counts[2:].sum()) == n


def test_dbitflip_estimate_from_an_aggregate_is_the_papers_formulas() -> None:
    """From counts ``C_v`` (sampled with bit 1) and ``N_v`` (sampled), ``e`` = ``a'/b'``: ``Z`` sums
    ``((a'+b') C - b' N)/(a'-b')`` and ``(a'^2 C + b'^2 (N - C))/(a'-b')^2``, ``h = sum Z / (n d/k)``;
    population variance ``(mean Z^2 - mean Z^2) / (n (d/k)^2)``, respondents
    ``(k/d) a'b'/((a'-b')^2 n) + clip(h)(k/d - 1)/n``; ``p*, q* = (d/k) a'/(a'+b'), (d/k) b'/(a'+b')``;
    also for a stack of aggregates (2-D counts); no reports: NaN, silently."""
    import warnings

    m = dn.DBitFlip(list("abcd"), d=2, epsilon=1.0, gamma=0.05)
    a, b = m._ra, m._rb
    rate = Fraction(2, 4)
    p_star, q_star = m.support_probabilities()
    assert p_star == [rate * Fraction(a, a + b)] * 4 and q_star == [rate * Fraction(b, a + b)] * 4
    ones, sampled, n = np.array([30, 2, 0, 11]), np.array([40, 20, 25, 15]), 50
    stat = SupportCounts(m.fingerprint, np.concatenate([ones, sampled]), n)
    af, bf = float(a), float(b)
    total = ((af + bf) * ones - bf * sampled) / (af - bf)
    squares = (af * af * ones + bf * bf * (sampled - ones)) / (af - bf) ** 2
    h = total / (n * 0.5)
    assert np.any(h > 1) and np.any(h < 0)  # the clip matters
    population, fixed = m.estimate_from(stat), m.estimate_from(stat, "respondents")
    for est, target in ((population, "population"), (fixed, "respondents")):
        np.testing.assert_allclose(est.frequencies, h, rtol=1e-12)
        assert (est.mechanism, est.epsilon, est.domain, est.n, est.target) == ("DBitFlip", m.epsilon,
                                                                               ("a", "b", "c", "d"), n, target)
        np.testing.assert_allclose(est.observed, ones / n, rtol=1e-15)
        assert est.support_counts.dtype == np.int64 and est.support_counts.tolist() == ones.tolist()
        np.testing.assert_allclose(est.p_star, float(p_star[0]), rtol=1e-15)
        np.testing.assert_allclose(est.q_star, float(q_star[0]), rtol=1e-15)
    var_population = (squares / n - (total / n) ** 2) / (n * 0.25)
    np.testing.assert_allclose(population.std_errors, np.sqrt(np.maximum(var_population, 0)), rtol=1e-12)
    var_fixed = 2 * af * bf / (af - bf) ** 2 / n + np.clip(h, 0, 1) * (2 - 1) / n
    np.testing.assert_allclose(fixed.std_errors, np.sqrt(var_fixed), rtol=1e-12)
    stack = SupportCounts(m.fingerprint, np.stack([stat.counts, stat.counts]), n)
    np.testing.assert_allclose(m.estimate_from(stack).frequencies, [h, h], rtol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for counts in (np.zeros(8, dtype=np.int64), stat.counts):  # no reports (also hand-made with counts)
            empty = m.estimate_from(SupportCounts(m.fingerprint, counts, 0))
            assert all(np.isnan(x).all() and x.dtype == float
                       for x in (empty.frequencies, empty.observed, empty.std_errors))
    with pytest.raises(ValueError, match=r"^aggregate has \(4,\) counts; DBitFlip needs 2k=8$"):
        m.estimate_from(SupportCounts(m.fingerprint, ones, n))
    with pytest.raises(TypeError, match=r"^estimate_from needs a SupportCounts aggregate; got list$"):
        m.estimate_from([1, 2])  # type: ignore[arg-type]


def test_dbitflip_client_answers_from_its_slots_stream_with_the_true_bucket() -> None:
    """``slot(v)`` is the index of ``v``'s bucket among the sampled ones, or ``d``; the report's bits are
    the answers drawn from the stream of that slot with the value's bucket as the truth (none for
    slot ``d``): over 100 secrets, every value of k=3, d=2."""
    m = dn.DBitFlip(3, d=2, epsilon=1.0)
    for i in range(100):
        c = m.client(secret=bytes([i]) * 32)
        for v in range(3):
            where = [j for j, b in enumerate(c.buckets.tolist()) if b == v]
            slot = where[0] if where else 2
            assert c.slot(v) == slot
            truth = np.array([v if where else -1])
            want = m._answers(c.buckets[None, :], truth, c._stream(f"slot {slot}"))[0]
            report = c.privatize(v)
            assert report["buckets"].tolist() == c.buckets.tolist() and report["bits"].tolist() == want.tolist()


def test_one_bit_mean_client_bit_is_the_points_draw_below_its_threshold() -> None:
    """The memoized bit of point ``j``: a draw uniform below ``(a + b)(points - 1)`` from the stream of
    ``point j``, compared with ``b (points - 1) + j (a - b)``; ``point`` names a bad value. Also for
    configured integers where a draw equals a threshold one time in four (``a = 3``, ``b = 1``) and
    where half the 32-bit words are rejected (``a + b = 2**31 + 1``): the draw is the first word kept."""
    from deniable import _randomness as randomness

    configured = [dn.from_config(_config("one-bit-mean", {"high_numerator": a, "low_numerator": b, "points": 2}))
                  for a, b in ((3, 1), (2**30 + 1, 2**30))]
    for m in [dn.OneBitMean(0, 10, epsilon=1.0, points=points) for points in (2, 3, 5)] + configured:
        points = m.points
        params = m.to_config()["params"]
        a, b, s = params["high_numerator"], params["low_numerator"], points - 1
        for i in range(20):
            c = m.client(secret=bytes([i]) * 32)
            for j in range(points):
                r = int(randomness.uniform_below((a + b) * s, 1, c._stream(f"point {j}"))[0])
                assert c.bit(j) == int(r < b * s + j * (a - b))
    with pytest.raises(TypeError, match=r"^value must be a finite real number for OneBitMean; got 'x'$"):
        dn.OneBitMean(0, 10, epsilon=1.0).client(secret=b"s" * 32).point("x")  # type: ignore[arg-type]


def test_one_bit_mean_client_rounds_up_when_its_alpha_is_below_the_threshold() -> None:
    """A value at fraction ``phi`` of its step rounds up when ``alpha < floor(phi 2**53) 2**11``, strictly:
    this device's ``alpha`` (a multiple of ``2**11``) is the threshold of 0.9615075072171332, which rounds
    down, and the next float up rounds up."""
    from deniable import _randomness as randomness

    m = dn.OneBitMean(0, 1, epsilon=1.0)
    c = m.client(secret=(776).to_bytes(4, "big") * 8)
    x = 0.9615075072171332
    assert c._alpha == int(randomness.fixed_point(m._steps(m._unit(np.array([x]))))[0])
    assert c.point(x) == 0 and c.point(float(np.nextafter(x, 2.0))) == 1


def test_realised_epsilon_of_exactly_99_percent_is_accepted() -> None:
    """The realised epsilon may be 1% below the request, the bound included: at 1.4110948103519987e-09
    ``exp_ratio`` gives ``a = b + 3`` (``b = 2**31 - 2``), whose loss is exactly the request times 0.99."""
    epsilon = 1.4110948103519987e-09
    m = dn.OneBitMean(0, 1, epsilon=epsilon)
    params = m.to_config()["params"]
    assert (params["high_numerator"], params["low_numerator"]) == (2**31 + 1, 2**31 - 2)
    assert m.epsilon_perm == epsilon * (1 - 1e-2)


def test_dbitflip_counts_keep_buckets_nobody_sampled() -> None:
    m = dn.DBitFlip(4, d=1, epsilon=1.0)
    counts = m.aggregate([{"buckets": [0], "bits": [1]}, {"buckets": [1], "bits": [0]}]).counts
    assert counts.tolist() == [1, 0, 0, 0, 1, 1, 0, 0]


def test_dbitflip_answers_and_flips_compare_their_draws_below_the_thresholds() -> None:
    """k = d = 2 (both buckets sampled, one 32-bit word), value ``a``: its answer is 1 exactly when the
    draw is below ``a`` (the other's below ``b``) out of ``a + b``, and a bit is flipped exactly when
    its 32-bit flip draw is below ``g``: scripted draws at each threshold and one below it."""
    from scripted import Scripted

    m = dn.DBitFlip(["a", "b"], d=2, epsilon=1.0, gamma=0.1)
    a, b, g = m._a, m._b, m._g
    assert a + b <= 1 << 32
    cases = [((a - 1, b - 1), (g, g), [1, 1]), ((a, b), (g, g), [0, 0]), ((a, b), (g - 1, g), [1, 0])]
    for answers, flips, want in cases:
        words = np.array([0, *answers, *flips], dtype=np.uint32)  # the subset's word, answers, flips
        source = Scripted(words.tobytes())
        report = m.privatize_many(["a"], rng=source)[0]
        assert report["buckets"].tolist() == [0, 1] and report["bits"].tolist() == want and source.data == b""


def test_client_streams_are_named_alpha_and_buckets() -> None:
    """The memoized draws keep their derivation: ``alpha`` is the first 64-bit word of the stream keyed
    by ``HMAC-SHA256(secret, "alpha")``, the buckets one subset drawn from the stream of ``"buckets"``."""
    import hmac

    from deniable import _randomness as randomness
    from deniable._client_state import SecretStream

    secret = b"s" * 32

    def stream(label: bytes) -> SecretStream:
        return SecretStream(hmac.new(secret, label, "sha256").digest())

    c = dn.OneBitMean(0, 10, epsilon=1.0).client(secret=secret)
    assert c._alpha == int(randomness.uniform_words(1, np.uint64, stream(b"alpha"))[0])
    d = dn.DBitFlip(10, d=3, epsilon=1.0).client(secret=secret)
    assert d.buckets.tolist() == sample_subsets(1, 10, 3, stream(b"buckets"))[0].tolist()


def test_telemetry_constructors_name_themselves_and_keep_exp_ratio_integers() -> None:
    """Whole messages naming the mechanism; the integer probabilities are ``exp_ratio(eps, 1)`` (1BitMean)
    and ``exp_ratio(eps / min(d, 2), 1)`` (dBitFlip)."""
    from deniable._privacy import exp_ratio

    cases = [
        (lambda: dn.OneBitMean(0, 1, epsilon=0), r"^epsilon must be a positive finite number for OneBitMean; got 0$"),
        (lambda: dn.OneBitMean(0, 1, epsilon=1.0, gamma=0.5), r"^gamma must be a number in \[0, 0\.5\) for OneBitMean; "
                                                               r"got 0\.5$"),
        (lambda: dn.OneBitMean(0, 1, epsilon=1.0, points=1), r"^points must be an int in 2\.\.65536 for OneBitMean; "
                                                              r"got 1$"),
        (lambda: dn.DBitFlip(["a", "a"], d=1, epsilon=1.0), r"^domain for DBitFlip has duplicate category 'a'$"),
        (lambda: dn.DBitFlip(3, d=1, epsilon=-1.0), r"^epsilon must be a positive finite number for DBitFlip; "
                                                     r"got -1\.0$"),
        (lambda: dn.DBitFlip(3, d=1, epsilon=1.0, gamma=-0.1), r"^gamma must be a number in \[0, 0\.5\) for DBitFlip; "
                                                                r"got -0\.1$"),
    ]
    for build, message in cases:
        with pytest.raises(ValueError, match=message):
            build()
    # tiny requests, once refused (32-bit words gave 0.93 of 1e-9), are met with 63-bit words
    for m in (dn.OneBitMean(0, 1, epsilon=1e-9), dn.DBitFlip(3, d=2, epsilon=1e-9)):
        assert 0.99e-9 <= m.epsilon_perm <= 1e-9
    params = dn.OneBitMean(0, 1, epsilon=1.3).to_config()["params"]
    assert (params["high_numerator"], params["low_numerator"]) == exp_ratio(1.3, 1)
    for d in (1, 2, 3):
        params = dn.DBitFlip(5, d=d, epsilon=1.3).to_config()["params"]
        assert (params["truth_numerator"], params["other_numerator"]) == exp_ratio(1.3 / min(d, 2), 1)
    m = dn.DBitFlip(4, d=2, epsilon=1.0)
    stack = np.zeros((2, 4), dtype=np.int64)
    with pytest.raises(ValueError, match=r"^aggregate has \(4,\) counts; DBitFlip needs 2k=8$"):
        m.estimate_from(SupportCounts(m.fingerprint, stack, 1))


def test_one_bit_mean_refuses_more_points_than_its_draws_hold() -> None:
    """A bit is drawn below ``(a + b)(points - 1)``, at most ``2**64``: at epsilon 12 and 1e-10 (``a + b`` of
    63 bits; ``a - b`` small at 1e-10) 3 points are sampled, 4 are refused in a whole message (they used to
    pass the constructor and fail in ``uniform_below``); at epsilon 11 (32-bit ``a + b``) every number of
    points is sampled."""
    for epsilon in (12.0, 1e-10):
        three = dn.OneBitMean(0, 1, epsilon=epsilon, points=3)
        assert three.privatize_many(np.array([0.25, 0.75]), rng=1).shape == (2,)
        assert three.client(secret=b"s" * 32).privatize(0.5) in (0.0, 1.0)
        a_b = three._a + three._b
        assert 2**64 // 3 < a_b < 2**63
        message = (rf"^points=4 is too many for OneBitMean at epsilon={re.escape(repr(epsilon))}: its draws below "
                   rf"\(a \+ b\) \* \(points - 1\) must fit in 64 bits \(e\^epsilon = a / b, a \+ b = {a_b}\); "
                   rf"at most 3 points$")
        with pytest.raises(ValueError, match=message):
            dn.OneBitMean(0, 1, epsilon=epsilon, points=4)
    most = dn.OneBitMean(0, 1, epsilon=11.0, points=65536)
    assert most.privatize_many(np.array([0.25, 0.75]), rng=1).shape == (2,)


def test_gamma_below_the_smallest_flip_probability_is_refused() -> None:
    """``gamma`` becomes ``floor(gamma 2**32)``: 2**-32 is the smallest accepted, anything positive below it
    is refused (it would silently mean no perturbation)."""
    assert dn.OneBitMean(0, 1, epsilon=1.0, gamma=2.0**-32).to_config()["params"]["flip_numerator"] == 1
    with pytest.raises(ValueError, match=r"^gamma=1e-10 is below 2\*\*-32, the smallest flip probability of DBitFlip$"):
        dn.DBitFlip(3, d=1, epsilon=1.0, gamma=1e-10)


def test_permanent_client_checks_its_secret_and_names_its_mechanism() -> None:
    m = dn.DBitFlip(4, d=2, epsilon=1.0)
    assert m.client(secret=b"s" * 16).secret == b"s" * 16  # 16 bytes are enough
    for secret, kind in ((b"s" * 15, "bytes"), ("s" * 32, "str")):
        with pytest.raises(ValueError, match=rf"^secret for DBitFlip\.client must be at least 16 bytes; got {kind}$"):
            m.client(secret=secret)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^pass either state or secret to OneBitMean\.client, not both$"):
        dn.OneBitMean(0, 1, epsilon=1.0).client(state=MemoryStore(), secret=b"s" * 32)
    assert repr(m.client(secret=b"s" * 32)) == f"DBitFlipClient({m!r})"


# ------------------------------------------- L-GRR / L-OSUE: whole messages, one report, bisection
def test_chained_constructors_and_params_refuse_in_whole_messages() -> None:
    """Each message names its mechanism and the bound it checks, also at the bounds."""
    def refused(build: Any, message: str) -> None:
        with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
            build()

    for cls, name in ((dn.LGRR, "L-GRR"), (dn.LOSUE, "L-OSUE")):
        refused(lambda cls=cls: cls(4, epsilon_perm=1.0, epsilon_1=1.0),
                f"epsilon_1 must be below epsilon_perm for {name} (one report cannot leak more than all of them); "
                "got epsilon_1=1.0, epsilon_perm=1.0")
        refused(lambda cls=cls: cls(4, epsilon_perm=float("nan"), epsilon_1=0.5),
                f"epsilon_perm must be a positive finite number for {name}; got nan")
        refused(lambda cls=cls: cls(4, epsilon_perm=2.0, epsilon_1=-1),
                f"epsilon_1 must be a positive finite number for {name}; got -1")
        refused(lambda cls=cls: cls(1, epsilon_perm=2.0, epsilon_1=1.0),
                f"domain size k must be >= 2 for {name}; got 1")
    refused(lambda: dn.LOSUE(4, epsilon_perm=3.0, epsilon_1=1e-12),
            "epsilon_1=1e-12 is too small for L-OSUE to realise")
    refused(lambda: dn.LGRR(4, epsilon_perm=3.0, epsilon_1=1e-300),
            "epsilon_1=1e-300 is too close to epsilon_perm=3.0 (or too small) for L-GRR to realise with integer "
            "probabilities")
    assert 0.99e-9 <= dn.LGRR(4, epsilon_perm=3.0, epsilon_1=1e-9).epsilon <= 1e-9  # 63-bit words (was refused)

    from deniable.mechanisms._chained import LGRR, LOSUE

    domain = ["a", "b", "c", "d"]
    two64 = 1 << 64
    grr_rounds = [(5, 5, 3, 1), (3, 1, 1, 1), (3, 0, 3, 1), (3, 1, 3, 0), (two64 - 2, 1, 3, 1), (3, 1, two64 - 2, 1)]
    for a1, b1, a2, b2 in grr_rounds:
        params = {"perm_truth_numerator": a1, "perm_other_numerator": b1,
                  "irr_truth_numerator": a2, "irr_other_numerator": b2}
        why = ("need 0 < other_numerator < truth_numerator in each round" if max(a1, a2) < 10
               else "give a round denominator above 2**64")
        refused(lambda params=params: LGRR._from_params(domain, params), f"L-GRR params {why}; got {params!r}")
    edge = LGRR._from_params(domain, {"perm_truth_numerator": two64 - 3, "perm_other_numerator": 1,
                                      "irr_truth_numerator": 3, "irr_other_numerator": 1})
    assert edge._rounds == (two64 - 3, 1, 3, 1)  # a denominator of exactly 2**64 is accepted
    one = {"perm_truth_numerator": 3, "perm_other_numerator": 1, "irr_truth_numerator": 3, "irr_other_numerator": 1}
    refused(lambda: LGRR._from_params(["a"], one), "domain for L-GRR needs at least 2 categories; got ['a']")

    top = (1 << 32) - 1
    refused(lambda: LOSUE._from_params(domain, {"bits": 16, "perm_p_numerator": 1 << 31, "perm_q_numerator": 1,
                                                "irr_p_numerator": 3 << 30}),
            "L-OSUE params: bits must be 32; got 16")
    for p1, q1, p2 in [(1 << 31, 0, 3 << 30), (1 << 31, 1 << 31, 3 << 30), (1 << 32, 1, 3 << 30),
                       (top, 1, 1 << 31), (top, 1, 1 << 32)]:
        params = {"bits": 32, "perm_p_numerator": p1, "perm_q_numerator": q1, "irr_p_numerator": p2}
        refused(lambda params=params: LOSUE._from_params(domain, params),
                "L-OSUE params need 0 < perm_q_numerator < perm_p_numerator < 2**32 and "
                f"2**31 < irr_p_numerator < 2**32; got {params!r}")
    widest = {"bits": 32, "perm_p_numerator": top, "perm_q_numerator": 1, "irr_p_numerator": top}
    assert LOSUE._from_params(domain, widest)._params() == widest  # every bound is strict, and no tighter
    narrow = {"bits": 32, "perm_p_numerator": 2, "perm_q_numerator": 1, "irr_p_numerator": (1 << 31) + 1}
    assert LOSUE._from_params(domain, narrow)._params() == narrow
    refused(lambda: LOSUE._from_params(["a"], narrow), "domain for L-OSUE needs at least 2 categories; got ['a']")


def test_lgrr_one_report_is_both_rounds_of_scripted_draws() -> None:
    """``privatize`` of one value: a 32-bit draw below ``d1 = a1 + 2 b1`` for the first round, then one below
    ``d2`` for the second; a draw ``r < a`` keeps its input, else it is the ``((r - a) // b)``-th other."""
    from scripted import Scripted

    m = dn.LGRR(["a", "b", "c"], epsilon_perm=4.0, epsilon_1=1.0)
    a1, b1, a2, b2 = m._rounds
    assert a1 + 2 * b1 <= 1 << 32 and a2 + 2 * b2 <= 1 << 32  # 32-bit words; none below d is rejected
    cases = [((a1 - 1, a2 - 1), "b"), ((a1 - 1, a2), "a"), ((a1, a2 - 1), "a"), ((a1 + b1, a2), "a"),
             ((a1 + b1, a2 + b2), "b"), ((a1, a2 + b2), "c")]
    for draws, want in cases:
        source = Scripted(np.array(draws, dtype=np.uint32).tobytes())
        assert m.privatize("b", rng=source) == want and source.data == b""


def test_lgrr_near_epsilon_perm_finds_the_largest_second_round_quickly() -> None:
    """Regression: the largest ``a2`` whose chain stays within ``epsilon_1`` is found by bisection. Close to
    ``epsilon_perm`` the second round's integers are near 2**63, and stepping ``a2`` down by one did not end."""
    import time

    from deniable import _privacy as privacy

    start = time.process_time()
    m = dn.LGRR(4, epsilon_perm=2.0, epsilon_1=1.9999999)
    assert time.process_time() - start < 5
    a1, b1, a2, b2 = m._rounds
    assert a2 > 1 << 62 and m.epsilon <= 1.9999999
    (p1, q1), _ = m.rounds
    one_more = Fraction(a2 + 1, a2 + 1 + 3 * b2), Fraction(b2, a2 + 1 + 3 * b2)  # (p2, q2) with a2 + 1
    chain = (p1 * one_more[0] + (1 - p1) * one_more[1]) / (q1 * one_more[0] + (1 - q1) * one_more[1])
    assert privacy.ln_up(chain) > 1.9999999


def test_losue_second_round_flips_every_category_bit_at_its_rate_and_no_padding() -> None:
    """k = 20 (three bytes, four padding bits): from an all-zero first round every category's bit is 1
    at rate ``1 - p2`` (within 6 standard deviations over 4,000 reports) and no padding bit ever is."""
    m = dn.LOSUE(20, epsilon_perm=2.0, epsilon_1=1.0)
    n, flip = 4000, float(1 - m.rounds[1][0])
    out = m._instantaneous(np.zeros((n, 3), dtype=np.uint8), randomness.resolve(11))
    rates = np.sort(np.unpackbits(out, axis=1).mean(axis=0))
    assert (rates[:4] == 0).all()
    assert np.all(np.abs(rates[4:] - flip) < 6 * math.sqrt(flip * (1 - flip) / n))
    assert m.validate(out).shape == (n, 3)


@pytest.mark.parametrize(("perm", "one"), [(4.0, 1.0), (2.0, 0.5), (1.0, 0.9)])
def test_losue_second_round_is_the_largest_within_epsilon_1_and_its_epsilon_is_sue(perm: float, one: float) -> None:
    """``p2`` (over 2**32) is the largest whose chained report stays within ``epsilon_1``: one more
    exceeds it; the second round alone is SUE's ``ln((p2 / q2)^2)``, rounded up."""
    from deniable import _privacy as privacy

    m = dn.LOSUE(5, epsilon_perm=perm, epsilon_1=one)
    (p1, q1), (p2, q2) = m.rounds
    assert m.epsilon_irr == privacy.ln_up((p2 / q2) ** 2) and m.epsilon_irr >= 2 * math.log(p2 / q2)
    up = p2 + Fraction(1, 1 << 32)
    p_star, q_star = p1 * up + (1 - p1) * (1 - up), q1 * up + (1 - q1) * (1 - up)
    assert privacy.ln_up(p_star * (1 - q_star) / ((1 - p_star) * q_star)) > one


def test_chained_realised_epsilon_exactly_one_percent_below_the_request_is_accepted() -> None:
    """The 1% tolerance is inclusive: L-OSUE's first round at ``q1 = 2**-32`` (any ``epsilon_perm`` from
    about 22.2) realises ``ln(2**32 - 1)``; the request whose 99% is exactly that float is accepted, the next
    float up refused."""
    from deniable import _privacy as privacy

    realised = privacy.ln_up(Fraction((1 << 32) - 1))
    request = 22.404757351197397
    assert request * 0.99 == realised
    m = dn.LOSUE(4, epsilon_perm=request, epsilon_1=1.0)
    assert m.epsilon_perm == realised
    above = math.nextafter(request, math.inf)
    with pytest.raises(ValueError, match="^" + re.escape(
        f"epsilon_perm={above!r} cannot be realised by L-OSUE with its integer probabilities (it would give "
        f"{realised:.4g}); choose epsilon_1 further from epsilon_perm"
    ) + "$"):
        dn.LOSUE(4, epsilon_perm=above, epsilon_1=1.0)


def test_chained_refusals_of_realised_epsilons_name_the_mechanism_and_the_epsilon() -> None:
    """Tiny epsilons realised more than 1% short by the integer probabilities, and an ``epsilon_1`` no second
    round above the identity fits, are refused in whole messages."""
    def refused(build: Any, message: str) -> None:
        with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
            build()

    advice = "; choose epsilon_1 further from epsilon_perm"
    # once refused (32-bit words gave 2.375e-8 of 2.4e-8), now met with 63-bit words
    tiny = dn.LGRR(2, epsilon_perm=2.4e-8, epsilon_1=1.2e-8)
    assert 0.99 * 2.4e-8 <= tiny.epsilon_perm <= 2.4e-8 and 0.99 * 1.2e-8 <= tiny.epsilon <= 1.2e-8
    refused(lambda: dn.LOSUE(4, epsilon_perm=1.0, epsilon_1=1e-8),
            "epsilon_1=1e-08 cannot be realised by L-OSUE with its integer probabilities (it would give 9.899e-09)"
            + advice)
    # the largest second round, p2 = 1 - 2**-32, after a first round at q1 = 2**-32 (epsilon_perm 22.18)
    refused(lambda: dn.LOSUE(4, epsilon_perm=22.4, epsilon_1=22.3),
            "epsilon_1=22.3 cannot be realised by L-OSUE with its integer probabilities (it would give 21.49)"
            + advice)
    # the float ratio rounds just above 1: exp_ratio gives a2 > b2, but no a2 > b2 keeps the chain within 1e-20
    refused(lambda: dn.LGRR(2, epsilon_perm=0.5, epsilon_1=1e-20), "epsilon_1=1e-20 is too small for L-GRR to realise")


def test_chained_params_are_known_integers_and_losue_is_found_again_from_its_epsilon() -> None:
    """The integers a configuration records (its fingerprint) for given epsilons never change; L-OSUE asked
    for its own realised ``epsilon_1`` finds the same largest ``p2`` (a ``p2`` exactly at ``epsilon_1``
    qualifies)."""
    assert dn.LGRR(4, epsilon_perm=4.0, epsilon_1=1.0)._params() == {
        "perm_truth_numerator": 4071263877, "perm_other_numerator": 74567799,
        "irr_truth_numerator": 2113922305, "irr_other_numerator": 727014996,
    }
    assert dn.LOSUE(4, epsilon_perm=4.0, epsilon_1=1.0)._params() == {
        "bits": 32, "perm_p_numerator": 1 << 31, "perm_q_numerator": 77250184, "irr_p_numerator": 3176903406,
    }
    for k, perm, one in [(4, 4.0, 1.0), (10, 2.0, 0.5), (3, 1.0, 0.9)]:
        m = dn.LOSUE(k, epsilon_perm=perm, epsilon_1=one)
        assert dn.LOSUE(k, epsilon_perm=perm, epsilon_1=m.epsilon)._params() == m._params()
