"""Subset selection: the large-omega sampler (exactly uniform subsets, linear work), and the
mechanism's numbers (default omega, probabilities, transition matrix) and report checks.

Two calibrated chi-square tests, alpha 1e-6 each (Bonferroni over the file:
2 assertions at 5e-7 under the null), each with a power check in which a
plausible wrong sampler (short keys, ties broken by position: the bug that
the second, 32-bit part of the key exists to avoid) fails the same test.
"""

from __future__ import annotations

import itertools
import math
import re

import numpy as np
import pytest

import deniable as dn
from deniable import _randomness as randomness
from deniable import testing
from deniable.mechanisms import _subset as subset
from deniable.mechanisms._subset import _smallest_keys

ALPHA = testing.bonferroni(1e-6, 2)


def _ties_by_position(n: int, population: int, size: int, source: randomness.Source) -> np.ndarray:
    """Wrong on purpose: the ``size`` smallest 4-bit keys, ties going to the lower position."""
    keys = randomness.uniform_words(n * population, np.uint8, source).reshape(n, population) >> 4
    return np.sort(np.argsort(keys, axis=1, kind="stable")[:, :size], axis=1)


def _every_subset(sampler, rng: np.random.Generator) -> testing.CheckResult:  # type: ignore[no-untyped-def]
    """Chi-square of the 252 subsets of 5 out of 10 against 1/252 each, 100,000 draws."""
    population, size, n = 10, 5, 100_000
    picks = sampler(n, population, size, randomness.GeneratorSource(rng))
    masks = (1 << picks).sum(axis=1)  # a subset as a bit mask
    subsets = [sum(1 << i for i in s) for s in itertools.combinations(range(population), size)]
    observed = np.bincount(masks, minlength=1 << population)[subsets]
    assert observed.sum() == n  # every draw is one of the subsets
    return testing.chi_square_gof(observed, np.full(len(subsets), 1 / len(subsets)), ALPHA, label="C(10, 5)")


def _first_half(sampler, rng: np.random.Generator) -> testing.CheckResult:  # type: ignore[no-untyped-def]
    """Chi-square of how many of the 600 positions' lower 300 are among 300 chosen (many
    byte ties per row) against the hypergeometric law, 20,000 draws."""
    population, size, n = 600, 300, 20_000
    picks = sampler(n, population, size, randomness.GeneratorSource(rng))
    low = (picks < population // 2).sum(axis=1)
    counts = np.bincount(low, minlength=size + 1)
    half = population // 2
    probs = np.array([math.comb(half, j) * math.comb(half, size - j) for j in range(size + 1)], dtype=object)
    probs = np.array([float(p / math.comb(population, size)) for p in probs])
    return testing.chi_square_gof(counts, probs / probs.sum(), ALPHA, label="hypergeometric")


@pytest.mark.stat
@pytest.mark.parametrize("check", [_every_subset, _first_half])
def test_smallest_keys_draws_uniform_subsets(check, rng: np.random.Generator) -> None:  # type: ignore[no-untyped-def]
    result = check(_smallest_keys, rng)
    assert result.passed, str(result)


@pytest.mark.stat
@pytest.mark.parametrize("check", [_every_subset, _first_half])
def test_smallest_keys_check_has_power(check, rng: np.random.Generator) -> None:  # type: ignore[no-untyped-def]
    result = check(_ties_by_position, rng)
    assert not result.passed, str(result)


@pytest.mark.parametrize(("population", "size"), [(17, 17), (17, 1), (300, 299), (300, 300), (65_535, 17_625)])
def test_smallest_keys_shape(population: int, size: int, rng: np.random.Generator) -> None:
    """Distinct ascending positions in range, at the edges (all chosen, with 5- and 8-bit first
    key parts; one chosen) and at the size of omega-SS for k = 65,536 at epsilon 1."""
    picks = _smallest_keys(3, population, size, randomness.GeneratorSource(rng))
    assert picks.shape == (3, size)
    assert (np.diff(picks, axis=1) > 0).all() and picks.min() >= 0 and picks.max() < population


# ------------------------------------------------------- the mechanism's numbers


@pytest.mark.parametrize(
    ("k", "epsilon", "omega"),
    [(12, 1.0, 3), (2, 1.0, 1), (100, 0.01, 50), (3, 1e-6, 1), (4, 0.01, 2), (10, 5.0, 1), (65_536, 1.0, 17_625)],
)
def test_default_omega_is_k_over_e_plus_1(k: int, epsilon: float, omega: int) -> None:
    """``omega = max(1, min(k - 1, round(k / (e^eps + 1))))`` (Wang et al. 2016)."""
    assert omega == max(1, min(k - 1, round(k / (math.exp(epsilon) + 1))))
    assert dn.SubsetSelection(k, epsilon=epsilon).omega == omega


@pytest.mark.parametrize(("k", "omega", "epsilon"), [(6, 2, 0.5), (7, 3, 1.0), (5, 1, 2.0), (5, 4, 1.0)])
def test_probabilities_and_epsilon(k: int, omega: int, epsilon: float) -> None:
    """With ``(a, b) = exp_ratio(eps, k)``: ``P(Y | x)`` is ``a / Z`` when ``x`` is in ``Y`` and ``b / Z``
    otherwise, ``Z = a C(k-1, w-1) + b C(k-1, w)``; so ``p = w a / (w a + (k - w) b)``,
    ``q* = (p (w - 1) + (1 - p) w) / (k - 1)`` and ``epsilon = ln(a / b)`` rounded up."""
    from fractions import Fraction

    from deniable._privacy import exp_ratio, ln_up

    m = dn.SubsetSelection(k, epsilon=epsilon, omega=omega)
    a, b = exp_ratio(epsilon, k)
    z = a * math.comb(k - 1, omega - 1) + b * math.comb(k - 1, omega)
    p = Fraction(a * math.comb(k - 1, omega - 1), z)
    assert m.prob == p == Fraction(omega * a, omega * a + (k - omega) * b)
    assert m.support_probabilities() == ([p] * k, [(p * (omega - 1) + (1 - p) * omega) / (k - 1)] * k)
    assert m.epsilon == ln_up(Fraction(a, b)) <= epsilon
    outputs, matrix = m.transition_matrix()
    assert outputs == list(itertools.combinations(range(k), omega))
    for x in range(k):
        np.testing.assert_allclose(matrix[x], [(a if x in y else b) / z for y in outputs], rtol=1e-14)
    assert m.report_bits == min(k, omega * (k - 1).bit_length())


def test_large_transition_matrices_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """At most 20,000 subsets (``_MATRIX_OUTPUTS``), the limit included: at 20,000 itself only ``k = 20,000``
    (omega 1 or 19,999: a 3.2 GB matrix), so the edge is checked with the limit lowered to C(6, 3) = 20."""
    assert dn.SubsetSelection(16, epsilon=1.0, omega=8).transition_matrix()[1].shape == (16, 12_870)
    message = "^transition_matrix enumerates all subsets; too many$"
    with pytest.raises(NotImplementedError, match=message):
        dn.SubsetSelection(30, epsilon=1.0, omega=4).transition_matrix()  # C(30, 4) = 27,405
    m = dn.SubsetSelection(6, epsilon=1.0, omega=3)
    monkeypatch.setattr(subset, "_MATRIX_OUTPUTS", 20)
    assert m.transition_matrix()[1].shape == (6, 20)
    monkeypatch.setattr(subset, "_MATRIX_OUTPUTS", 19)
    with pytest.raises(NotImplementedError, match=message):
        m.transition_matrix()


# ------------------------------------------------------------- report checks

SS6 = dn.SubsetSelection(6, epsilon=0.5)  # omega = 2


def test_report_messages_name_the_row() -> None:
    cases = [
        ([[0, 1], [2, 6]], r"^SubsetSelection report 1 has a position outside 0\.\.5: \[2, 6\]$"),
        ([[0, 1], [1, 2], [-1, 3]], r"^SubsetSelection report 2 has a position outside 0\.\.5: \[-1, 3\]$"),
        ([[0, 1], [3, 3]], r"^SubsetSelection report 1 must list distinct positions in ascending order; got \[3, 3\]$"),
        ([[4, 5], [0, 1], [2, 1]],
         r"^SubsetSelection report 2 must list distinct positions in ascending order; got \[2, 1\]$"),
        ([[0, 1, 2]], r"^SubsetSelection reports must each be 2 sorted category positions; got shape \(1, 3\) "
                      r"and dtype int64$"),
        (np.array([[0.0, 1.0]]), r"^SubsetSelection reports must each be 2 sorted category positions; "
                                 r"got shape \(1, 2\) and dtype float64$"),
        (np.array([0, 1]), r"^SubsetSelection reports must each be 2 sorted category positions; "
                           r"got shape \(2,\) and dtype int64$"),
    ]
    for reports, message in cases:
        with pytest.raises(ValueError, match=message):
            SS6.aggregate(reports)
    assert SS6.aggregate([[0, 5], [4, 5]]).counts.tolist() == [1, 0, 0, 0, 1, 2]
    assert SS6.aggregate(np.array([[0, 5]], dtype=np.uint8)).counts.tolist() == [1, 0, 0, 0, 0, 1]
    assert SS6.aggregate([]).counts.tolist() == [0] * 6


def test_structured_reports_need_the_subset_field() -> None:
    good = np.zeros(2, dtype=SS6.dtype)
    good["subset"] = [[0, 2], [1, 2]]
    assert SS6.aggregate(good).counts.tolist() == [1, 1, 2, 0, 0, 0]
    assert SS6.aggregate([good[0], good[1]]).counts.tolist() == [1, 1, 2, 0, 0, 0]  # single reports
    bad = np.zeros(2, dtype=[("set", "<i8", (2,))])
    with pytest.raises(ValueError, match=r"^SubsetSelection reports need the single field 'subset'; got "):
        SS6.aggregate(bad)


def test_one_category_reports_need_no_order() -> None:
    """omega = 1 is GRR: any position in range is a report."""
    m = dn.SubsetSelection(4, epsilon=3.0)
    assert m.omega == 1
    assert m.aggregate([[3], [0], [3]]).counts.tolist() == [1, 0, 0, 2]


def test_wire_reports_and_config() -> None:
    report = SS6.privatize(3, rng=2)
    as_json = SS6.report_to_json(report)
    assert isinstance(as_json, list) and len(as_json) == 2 and all(type(v) is int for v in as_json)
    assert as_json == sorted(as_json) and SS6.report_to_json(np.array([1, 4])) == [1, 4]
    assert len(SS6.reports_from_json([[1, 4], [0, 5]])) == 2 and len(SS6.reports_from_json([])) == 0
    for item in ([1], [1, 2, 3], [1, 2.0], "1,2", [True, 2]):
        with pytest.raises(ValueError, match=r"^SubsetSelection report 1 must be a list of 2 integers; got "):
            SS6.reports_from_json([[0, 1], item])
    again = dn.from_config(SS6.to_config())
    assert (again.omega, again._in, again._out, again.epsilon) == (SS6.omega, SS6._in, SS6._out, SS6.epsilon)
    assert SS6.to_config()["params"] == {"omega": 2, "inside_weight": SS6._in, "outside_weight": SS6._out}
    for omega in (0, 6):
        config = SS6.to_config()
        config["params"]["omega"] = omega
        with pytest.raises(ValueError, match=rf"^SubsetSelection params: omega must be in 1\.\.5; got {omega}$"):
            dn.from_config(config)


@pytest.mark.parametrize("omega", [0, 5, True, 2.0, None])
def test_omega_must_be_an_int_below_k(omega: object) -> None:
    if omega is None:
        assert dn.SubsetSelection(5, epsilon=1.0, omega=None).omega == 1
        return
    with pytest.raises(ValueError, match=rf"^omega must be an int in 1\.\.4 for SubsetSelection; got {omega!r}$"):
        dn.SubsetSelection(5, epsilon=1.0, omega=omega)  # type: ignore[arg-type]


def test_keys_tied_on_both_parts_at_the_cut_are_drawn_again() -> None:
    """Two rows of 4 positions, 2 chosen; 3-bit first parts (the bytes' top bits). Row 0's keys are
    0, 1, 2, 3 (no choice at the cut); row 1's are 0, 1, 1, 2, so one of its two positions tied at 1
    is taken by the 32-bit words. The first words tie there (7, 7): drawn again (3 < 9, position 2)."""
    from scripted import Scripted

    keys = bytes([0x00, 0x20, 0x40, 0x60, 0x00, 0x20, 0x20, 0x40])
    words = np.array([5, 7, 7, 5, 9, 3], dtype=np.uint32).tobytes()  # row 0's tied key, then row 1's two
    src = Scripted(keys + words)
    assert _smallest_keys(2, 4, 2, src).tolist() == [[0, 1], [0, 2]]
    assert src.data == b""  # both draws of words were used
    once = Scripted(keys + np.array([5, 9, 3], dtype=np.uint32).tobytes())
    assert _smallest_keys(2, 4, 2, once).tolist() == [[0, 1], [0, 2]] and once.data == b""


def test_messages_name_subset_selection() -> None:
    with pytest.raises(ValueError, match=r"^epsilon must be a positive finite number for SubsetSelection; got -1$"):
        dn.SubsetSelection(4, epsilon=-1)
    with pytest.raises(ValueError, match=r"^domain for SubsetSelection has duplicate category 'a'$"):
        dn.SubsetSelection(["a", "b", "a"], epsilon=1.0)
    config = dn.SubsetSelection(["a", "b", "c"], epsilon=1.0).to_config()
    config["domain"] = ["a", "b", "a"]
    with pytest.raises(ValueError, match=r"^domain for SubsetSelection has duplicate category 'a'$"):
        dn.from_config(config)


def test_json_positions_beyond_64_bits_name_the_report() -> None:
    """Regression: a JSON position of 2**70 raised numpy's 'Python int too large to convert to C long'."""
    for item in ([0, 2**70], [-(2**70), 1], [0, 6]):
        with pytest.raises(ValueError, match=rf"^SubsetSelection report 1 has a position outside 0\.\.5: "
                           rf"{re.escape(repr(item))}$"):
            SS6.reports_from_json([[0, 1], item])
