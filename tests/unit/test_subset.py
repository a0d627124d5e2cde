"""Subset selection's large-omega sampler: exactly uniform subsets, linear work.

Two calibrated chi-square tests, alpha 1e-6 each (Bonferroni over the file:
2 assertions at 5e-7 under the null), each with a power check in which a
plausible wrong sampler (short keys, ties broken by position: the bug that
the second, 32-bit part of the key exists to avoid) fails the same test.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from deniable import randomness, testing
from deniable.mechanisms.subset import _smallest_keys

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


@pytest.mark.parametrize("check", [_every_subset, _first_half])
def test_smallest_keys_draws_uniform_subsets(check, rng: np.random.Generator) -> None:  # type: ignore[no-untyped-def]
    result = check(_smallest_keys, rng)
    assert result.passed, str(result)


@pytest.mark.parametrize("check", [_every_subset, _first_half])
def test_smallest_keys_check_has_power(check, rng: np.random.Generator) -> None:  # type: ignore[no-untyped-def]
    result = check(_ties_by_position, rng)
    assert not result.passed, str(result)


@pytest.mark.parametrize(("population", "size"), [(17, 17), (17, 1), (300, 299), (65_535, 17_625)])
def test_smallest_keys_shape(population: int, size: int, rng: np.random.Generator) -> None:
    """Distinct ascending positions in range, at the edges (all chosen, one chosen) and at
    the size of omega-SS for k = 65,536 at epsilon 1."""
    picks = _smallest_keys(3, population, size, randomness.GeneratorSource(rng))
    assert picks.shape == (3, size)
    assert (np.diff(picks, axis=1) > 0).all() and picks.min() >= 0 and picks.max() < population
