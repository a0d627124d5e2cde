"""The count-mean sketches' estimator, computed exactly from the module docstring's formulas.

Each quantity is rebuilt here from its definition, from the reports and the
pinned hash (:meth:`~deniable.mechanisms._sketch.Sketch.hash`), not from the
sketch's own code paths:

* the sketch table (CMS: reports per row with each bit set; HCMS: sums of
  ``(-1)**bit`` per row and Hadamard index) and the reports per row;
* support counts (CMS: bit ``h_j(d)`` of the report's vector; HCMS:
  ``bit == popcount(l & h_j(d)) mod 2``);
* ``p* = p``, ``q* = q_0 + (p - q_0) / m`` from the wire numerators;
* ``f_d = (C_d / n - q*) / (p* - q*)``;
* the collision rate ``pi`` from the rows' pair counts ``Q_j``;
* the standard error ``sqrt(pure_variance(n, p*, q*, clip(f, 0, 1))
  + max(clip(pi, 0, 1) (n - 1) / n - clip(f, 0, 1)**2, 0) / (k_h (m - 1)))``;
* the collision weights and the collision-free estimates of
  :meth:`~deniable.mechanisms._sketch.Sketch.without_collisions`.

Under the numpy and the numba backends, and through the kept bucket matrix
and hashing as it goes. Deterministic: fixed seeds, no assertion depends on
chance (the cases where a clip matters are asserted to be such cases).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

import deniable as dn
from deniable import _privacy as privacy
from deniable._estimate import pure_variance
from deniable.errors import AggregateError
from deniable.mechanisms import _sketch_base as sketch_module

SEED = bytes(range(32))
KINDS = {"cms": dn.CountMeanSketch, "hcms": dn.HadamardCountMeanSketch}
kinds = pytest.mark.parametrize("kind", list(KINDS))
# a frequent value, a second one, a few singletons; estimated: those, and two values nobody holds
POPULATION = ["apple"] * 70 + ["banana"] * 25 + [f"u{i}" for i in range(25)]
ASKED = ["apple", "banana", "u0", "u1", "never", "other"]


def popcount_parity(x: int) -> int:
    return bin(x).count("1") & 1


def rates(m: Any) -> tuple[float, float]:
    """``(p, q_0)`` from the wire numerators (CMS: flip ``t / 2**32``; HCMS: keep ``a / (a + b)``, 1/2)."""
    params = m.to_config()["params"]
    if isinstance(m, dn.CountMeanSketch):
        q0 = params["flip_numerator"] / 2**32
        return 1 - q0, q0
    a, b = params["keep_numerator"], params["other_numerator"]
    return a / (a + b), 0.5


def table_by_definition(m: Any, reports: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    table = np.zeros((m.rows, m.width), dtype=np.int64)
    per_row = np.zeros(m.rows, dtype=np.int64)
    for r in reports:
        j = int(r["row"])
        per_row[j] += 1
        if isinstance(m, dn.CountMeanSketch):
            table[j] += np.unpackbits(r["bits"], bitorder="little")
        else:
            table[j, int(r["index"])] += 1 - 2 * int(r["bit"])
    return table, per_row


def supports_by_definition(m: Any, reports: np.ndarray, value: str) -> int:
    count = 0
    for r in reports:
        b = m.hash(int(r["row"]), value)
        if isinstance(m, dn.CountMeanSketch):
            count += int(np.unpackbits(r["bits"], bitorder="little")[b])
        else:
            count += int(popcount_parity(int(r["index"]) & b) == int(r["bit"]))
    return count


def collision_rate_by_definition(m: Any, table: np.ndarray, per_row: np.ndarray) -> float:
    p, q0 = rates(m)
    n_j = per_row.astype(float)
    width = m.width
    if isinstance(m, dn.CountMeanSketch):
        squares = ((table - n_j[:, None] * q0) ** 2).sum(axis=1)
        noise = n_j * p * (1 - p) + (width - 1) * n_j * q0 * (1 - q0)
        pairs_j = (squares - noise) / (p - q0) ** 2 - n_j
    else:
        pairs_j = width * ((table.astype(float) ** 2).sum(axis=1) - n_j) / (2 * p - 1) ** 2
    pairs = float((n_j * (n_j - 1)).sum())
    if pairs == 0:
        return 0.0
    return (pairs_j.sum() / pairs - 1 / width) / (1 - 1 / width)


def estimate_by_definition(
    m: Any, reports: np.ndarray, values: list[str], target: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, float]:
    """``(C, f, se, p*, q*)`` of ``values`` from the reports."""
    table, per_row = table_by_definition(m, reports)
    n = len(reports)
    p, q0 = rates(m)
    q = q0 + (p - q0) / m.width
    counts = np.array([supports_by_definition(m, reports, v) for v in values])
    f = (counts / n - q) / (p - q)
    plug = np.clip(f, 0, 1)
    pi = min(max(collision_rate_by_definition(m, table, per_row), 0.0), 1.0) * (n - 1) / n
    extra = np.maximum(pi - plug**2, 0.0) / (m.rows * (m.width - 1))
    return counts, f, np.sqrt(pure_variance(n, p, q, plug, target) + extra), p, q


def sketch(kind: str, **kw: Any) -> Any:
    return KINDS[kind](["apple", "banana"], epsilon=kw.pop("epsilon", 1.0), rows=kw.pop("rows", 4),
                       width=kw.pop("width", 16), seed=kw.pop("seed", SEED), **kw)


# ------------------------------------------------------------------ the sketch
@kinds
def test_sketch_table_and_row_counts_are_their_definition(kind: str, accelerator: str) -> None:
    m = sketch(kind)
    reports = m.privatize_many(POPULATION, rng=11)
    stat = m.aggregate(reports)
    table, per_row = table_by_definition(m, reports)
    assert stat.table.dtype == np.int64 and stat.row_counts.dtype == np.int64
    assert np.array_equal(stat.table, table) and np.array_equal(stat.row_counts, per_row)
    assert stat.n == len(POPULATION) and (per_row > 0).all()


@kinds
def test_support_counts_are_their_definition(kind: str, accelerator: str) -> None:
    m = sketch(kind)
    reports = m.privatize_many(POPULATION, rng=12)
    est = m.estimate_values(m.aggregate(reports), ASKED)
    expected = [supports_by_definition(m, reports, v) for v in ASKED]
    assert est.support_counts.tolist() == expected and est.support_counts.dtype == np.int64
    assert [int(m.supports(reports, v).sum()) for v in ASKED] == expected
    assert m.supports(reports, "apple").dtype == bool


# ---------------------------------------------------------------- the estimates
@kinds
@pytest.mark.parametrize("target", ["population", "respondents"])
@pytest.mark.parametrize("path", ["matrix", "hashing"])
def test_estimates_and_standard_errors_are_the_formulas(
    kind: str, target: str, path: str, accelerator: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """f, SE, observed, p*, q* of listed and unlisted values; the hashing path in blocks of 2 keys."""
    if path == "hashing":
        monkeypatch.setattr(sketch_module, "_MATRIX_ENTRIES", 0)
        monkeypatch.setattr(sketch_module, "_CATEGORY_CHUNK", 2)
    m = sketch(kind)
    reports = m.privatize_many(POPULATION, rng=13)
    stat = m.aggregate(reports)
    est = m.estimate_values(stat, ASKED, target=target)
    counts, f, se, p, q = estimate_by_definition(m, reports, ASKED, target)
    n = len(POPULATION)
    assert est.domain == tuple(ASKED) and est.n == n and est.target == target
    assert est.mechanism == m.name and est.epsilon == m.epsilon
    assert est.support_counts.tolist() == counts.tolist()
    np.testing.assert_allclose(est.observed, counts / n, rtol=1e-13)
    assert est.p_star.tolist() == [p] * len(ASKED)
    np.testing.assert_allclose(est.q_star, q, rtol=1e-13)
    np.testing.assert_allclose(est.frequencies, f, rtol=1e-9, atol=1e-13)
    np.testing.assert_allclose(est.std_errors, se, rtol=1e-9)
    assert (f < 0).any() and (f > 0).any()  # the plug-in's clip at 0 matters here
    assert m.support_rates() == pytest.approx((p, q), rel=1e-13)
    # listed values: estimate_from is estimate_values of the domain; hashed keys give the same
    listed = m.estimate_from(stat, target=target)
    assert listed.domain == ("apple", "banana")
    np.testing.assert_allclose(listed.frequencies, f[:2], rtol=1e-9, atol=1e-13)
    keys = m.hashed([v.encode() for v in ASKED])
    inverse = np.array([1, 0, 0], dtype=np.int64)
    again = m.estimate_keys(stat, keys, inverse, ("b", "a", "a"), target)
    assert again.domain == ("b", "a", "a")
    np.testing.assert_allclose(again.frequencies, f[inverse], rtol=1e-9, atol=1e-13)
    np.testing.assert_allclose(again.std_errors, se[inverse], rtol=1e-9)


@kinds
def test_collision_rate_is_the_pair_count_formula(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sketch_module, "_LAST_RATE", None)  # the first answer of a process: none kept yet
    m = sketch(kind)
    reports = m.privatize_many(POPULATION, rng=14)
    stat = m.aggregate(reports)
    table, per_row = table_by_definition(m, reports)
    assert m.collision_rate(stat) == pytest.approx(collision_rate_by_definition(m, table, per_row), rel=1e-9)
    # asked again for the same aggregate (kept), then for another one (not the kept answer)
    assert m.collision_rate(stat) == pytest.approx(collision_rate_by_definition(m, table, per_row), rel=1e-9)
    other = m.aggregate(reports[:40])
    table, per_row = table_by_definition(m, reports[:40])
    assert m.collision_rate(other) == pytest.approx(collision_rate_by_definition(m, table, per_row), rel=1e-9)
    # a sketch of the same shape with another seed has another fingerprint: not the kept answer either
    twin = sketch(kind, seed=bytes(32))
    twin_reports = twin.privatize_many(POPULATION, rng=14)
    table, per_row = table_by_definition(twin, twin_reports)
    assert twin.collision_rate(twin.aggregate(twin_reports)) == pytest.approx(
        collision_rate_by_definition(twin, table, per_row), rel=1e-9
    )
    # another epsilon asked about the same table: its own rate, not the kept one
    looser = sketch(kind, epsilon=2.0)
    assert looser.fingerprint != m.fingerprint
    table, per_row = table_by_definition(m, reports)
    assert m.collision_rate(stat) == pytest.approx(collision_rate_by_definition(m, table, per_row), rel=1e-9)
    assert looser.collision_rate(stat) == pytest.approx(
        collision_rate_by_definition(looser, table, per_row), rel=1e-9
    )
    # one report per row: no pairs, rate 0
    single = m.aggregate(reports[np.unique(reports["row"], return_index=True)[1]])
    assert single.n == m.rows and m.collision_rate(single) == 0.0


@kinds
def test_standard_errors_clip_the_collision_rate_at_both_ends(kind: str) -> None:
    """A population of one value (pi = 1) whose estimated rate is above 1, and singletons (pi = 0)
    whose estimated rate is below 0: the SE uses the clipped rate."""
    m = sketch(kind, epsilon=4.0)
    for population, seed, check in [
        (["same"] * 60, {"cms": 0, "hcms": 3}[kind], lambda rate: rate > 1),
        ([f"v{i}" for i in range(60)], 5, lambda rate: rate < 0),
    ]:
        reports = m.privatize_many(population, rng=seed)
        stat = m.aggregate(reports)
        assert check(m.collision_rate(stat))
        est = m.estimate_values(stat, ["same", "v0", "absent"], target="respondents")
        _, f, se, _, _ = estimate_by_definition(m, reports, ["same", "v0", "absent"], "respondents")
        np.testing.assert_allclose(est.frequencies, f, rtol=1e-9, atol=1e-13)
        np.testing.assert_allclose(est.std_errors, se, rtol=1e-9)


@kinds
def test_an_estimate_above_one_plugs_in_one(kind: str) -> None:
    m = sketch(kind, epsilon=4.0)
    reports = m.privatize_many(["same"] * 30, rng=1)
    est = m.estimate_values(m.aggregate(reports), ["same"], target="respondents")
    _, f, se, _, _ = estimate_by_definition(m, reports, ["same"], "respondents")
    assert est.frequencies[0] > 1
    np.testing.assert_allclose(est.std_errors, se, rtol=1e-9)


@kinds
def test_no_reports_estimate_nothing(kind: str) -> None:
    m = sketch(kind)
    est = m.estimate_values(m.aggregate([]), ["apple", "x"])
    assert est.n == 0 and est.support_counts.tolist() == [0, 0]
    assert np.isnan(est.frequencies).all() and np.isnan(est.observed).all() and np.isnan(est.std_errors).all()
    fixed, se = m.without_collisions(m.aggregate([]), [b"apple", b"x"], est, np.array([0]))
    assert np.isnan(fixed).all() and np.isnan(se).all()


@kinds
@pytest.mark.parametrize("path", ["matrix", "hashing"])
def test_no_values_estimate_nothing(kind: str, path: str, accelerator: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if path == "hashing":
        monkeypatch.setattr(sketch_module, "_MATRIX_ENTRIES", 0)
    m = sketch(kind)
    est = m.estimate_values(m.aggregate(m.privatize_many(POPULATION, rng=16)), [])
    assert est.domain == () and est.frequencies.shape == (0,) and est.n == len(POPULATION)


@kinds
def test_aggregates_of_another_kind_or_shape_are_refused_in_whole_messages(kind: str) -> None:
    m = sketch(kind)
    with pytest.raises(TypeError, match=r"^estimate_from needs a SketchCounts aggregate; got SupportCounts$"):
        m.estimate_from(dn.SupportCounts(m.fingerprint, np.zeros(2, dtype=np.int64), 0))
    with pytest.raises(TypeError, match=r"^estimate_from needs a SketchCounts aggregate; got dict$"):
        m.estimate_from(m.aggregate([]).to_json())
    wrong = sketch_module.SketchCounts(m.fingerprint, np.zeros((2, 8), dtype=np.int64), np.zeros(2, dtype=np.int64))
    message = rf"^aggregate table has shape \(2, 8\); {type(m).__name__} needs \(4, 16\)$"
    with pytest.raises(AggregateError, match=message):
        m.estimate_from(wrong)


# ---------------------------------------------------------------- the variance
@kinds
def test_variance_is_the_oracle_plus_the_collision_term(kind: str) -> None:
    m = sketch(kind, rows=8, width=32)
    p, q0 = rates(m)
    q = q0 + (p - q0) / 32
    f = np.array([0.0, 0.25, 0.5])
    for target in ("population", "respondents"):
        expected = pure_variance(1000, p, q, f, target) + np.array([0.1, 0.2, 0.3]) / (8 * 31)
        got = m.variance(1000, f, [0.1, 0.2, 0.3], target)
        assert got.dtype == np.float64
        np.testing.assert_allclose(got, expected, rtol=1e-13)
    np.testing.assert_allclose(m.variance(50), pure_variance(50, p, q, 0.0, "population"), rtol=1e-13)
    np.testing.assert_allclose(m.variance(1), pure_variance(1, p, q, 0.0, "population"), rtol=1e-13)
    for n in (0, -1):
        with pytest.raises(ValueError, match=rf"^n must be positive; got {n}$"):
            m.variance(n)


# ------------------------------------------------------ collision weights, fixed bias
def weights_by_definition(m: Any, data: list[str], others: list[str]) -> np.ndarray:
    out = np.zeros((len(data), len(others)))
    for i, d in enumerate(data):
        for k, x in enumerate(others):
            if d == x:
                continue
            kappa = sum(m.hash(j, d) == m.hash(j, x) for j in range(m.rows)) / m.rows
            out[i, k] = (kappa - 1 / m.width) * m.width / (m.width - 1)
    return out


def fixed_by_definition(
    m: Any, reports: np.ndarray, est: Any, weights: np.ndarray, heavy: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """:meth:`without_collisions` by its docstring: ``f - W_H f_H`` with ``f^_H = (I + W_HH) f_H``, and the SE."""
    f, errors = est.frequencies, est.std_errors
    w = weights[:, heavy]
    shares = np.linalg.solve(np.eye(heavy.size) + w[heavy], f[heavy])
    fixed = f - w @ shares
    plug = np.clip(fixed, 0, 1)
    table, per_row = table_by_definition(m, reports)
    n = len(reports)
    pi = min(max(collision_rate_by_definition(m, table, per_row), 0.0), 1.0) * (n - 1) / n
    others = pi - (plug[heavy] ** 2).sum() - np.where(np.isin(np.arange(f.size), heavy), 0.0, plug**2)
    p, q0 = rates(m)
    q = q0 + (p - q0) / m.width
    variance = (
        pure_variance(n, p, q, plug, "population") + np.maximum(others, 0.0) / (m.rows * (m.width - 1))
        + (np.abs(w) @ errors[heavy]) ** 2
    )
    return fixed, np.sqrt(variance)


@kinds
@pytest.mark.parametrize("path", ["matrix", "hashing"])
def test_collision_weights_and_fixed_estimates_are_the_formulas(
    kind: str, path: str, accelerator: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``w`` from the shared rows, and ``f - W f_H`` with ``f^_H = (I + W_HH) f_H``, SE of the docstring."""
    if path == "hashing":
        monkeypatch.setattr(sketch_module, "_MATRIX_ENTRIES", 0)
        monkeypatch.setattr(sketch_module, "_CATEGORY_CHUNK", 2)
    m = sketch(kind, rows=4, width=8)  # 8 buckets, 4 rows: many shared buckets
    asked = ["apple", "banana", "u0", "u1", "u2", "never", "other"]
    data = [v.encode() for v in asked]
    weights = weights_by_definition(m, asked, asked)
    assert (weights > 0).any() and (weights < 0).any()
    np.testing.assert_allclose(m.collision_weights(data, data), weights, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(m.collision_weights(data[:2], data), weights[:2], rtol=1e-12, atol=1e-15)

    reports = m.privatize_many(POPULATION, rng=15)
    stat = m.aggregate(reports)
    est = m.estimate_values(stat, asked)
    heavy = np.array([0, 1])
    fixed, se = m.without_collisions(stat, m.hashed(data), est, heavy)
    expected, expected_se = fixed_by_definition(m, reports, est, weights, heavy)
    np.testing.assert_allclose(fixed, expected, rtol=1e-9, atol=1e-13)
    np.testing.assert_allclose(se, expected_se, rtol=1e-9)
    f, errors = est.frequencies, est.std_errors
    # no heavy keys: the estimate as it was
    same, same_se = m.without_collisions(stat, data, est, np.array([], dtype=np.int64))
    assert same.tolist() == f.tolist() and same_se.tolist() == errors.tolist()


def test_the_flip_numerator_is_the_smallest_within_epsilon() -> None:
    """``t``: the smallest integer with ``2 ln((2**32 - t) / t) <= epsilon`` (one less exceeds it)."""
    for epsilon in (0.5, 1.0, 2.0, 4.0, 8.0):
        m = dn.CountMeanSketch(epsilon=epsilon, rows=1, width=8, seed=SEED)
        t = m.flip_numerator
        assert 2 * math.log((2**32 - t) / t) <= epsilon < 2 * math.log((2**32 - t + 1) / (t - 1))
        assert m.epsilon == pytest.approx(2 * math.log((2**32 - t) / t), rel=1e-12)
    # just below the loss of t = 100,000,002 the float first guess, t itself, is one too small
    edge = float(np.nextafter(2 * privacy.ln_up(Fraction(2**32 - 100_000_002, 100_000_002)), 0))
    m = dn.CountMeanSketch(epsilon=edge, rows=1, width=8, seed=SEED)
    assert math.ceil(2**32 / (1 + math.exp(edge / 2))) == 100_000_002
    assert m.flip_numerator == 100_000_003 and m.epsilon <= edge
    # at exactly that loss, t itself (not t + 1: the smallest flip rate within epsilon)
    exact = 2 * privacy.ln_up(Fraction(2**32 - 100_000_002, 100_000_002))
    assert dn.CountMeanSketch(epsilon=exact, rows=1, width=8, seed=SEED).flip_numerator == 100_000_002


def test_collision_weights_come_in_blocks_of_keys(restore_accelerator: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """numpy pairs the keys a block at a time (3 keys of 4 rows here): each key's weights are its own."""
    from deniable import _accelerate as accelerate

    accelerate.set_accelerator("numpy")
    monkeypatch.setattr(sketch_module, "_PAIR_CELLS", 12)
    m = sketch("cms", rows=4, width=8)
    asked = [f"k{i}" for i in range(10)]
    weights = m.collision_weights([v.encode() for v in asked], [v.encode() for v in asked[:4]])
    np.testing.assert_allclose(weights, weights_by_definition(m, asked, asked[:4]), rtol=1e-12, atol=1e-15)


@kinds
def test_one_heavy_key_above_one_with_a_collision_rate_above_one(kind: str) -> None:
    """Everyone holds one value: its estimate (seed 8) and the estimated collision rate exceed 1, so the
    clips of :meth:`without_collisions` at 1 matter; one heavy key is subtracted like several."""
    m = sketch(kind, epsilon=4.0)
    asked = ["same", "x", "y"]
    data = [v.encode() for v in asked]
    reports = m.privatize_many(["same"] * 60, rng=8)
    stat = m.aggregate(reports)
    est = m.estimate_values(stat, asked)
    heavy = np.array([0])
    fixed, se = m.without_collisions(stat, data, est, heavy)
    expected, expected_se = fixed_by_definition(m, reports, est, weights_by_definition(m, asked, asked), heavy)
    assert m.collision_rate(stat) > 1 and fixed[0] > 1
    np.testing.assert_allclose(fixed, expected, rtol=1e-9, atol=1e-13)
    np.testing.assert_allclose(se, expected_se, rtol=1e-9)
