"""One rule for every mechanism: the requested epsilon is realised to within 1% (never above), or refused.

Exact checks (no randomness): a scan of requests up to each mechanism's
stated limit (finer where the realised epsilon falls away), and refusals just
above it that name the limit. Power: without the limit, the first request
above it realises more than 1% less (or, for Laplace at 13, crashed). The count-mean sketch also
has a smallest request, and integer-ratio mechanisms (``exp_ratio``) meet tiny requests with 63-bit words.
"""

from __future__ import annotations

import numpy as np
import pytest

import deniable as dn
from deniable.mechanisms._numeric.additive import LAPLACE_MAX_EPSILON
from deniable.mechanisms._numeric.duchi import DUCHI_MAX_EPSILON
from deniable.mechanisms._numeric.piecewise import PIECEWISE_MAX_EPSILON
from deniable.mechanisms._numeric.square_wave import SQUARE_WAVE_MAX_EPSILON

CASES = [
    (dn.Laplace, LAPLACE_MAX_EPSILON, 10.5),
    (dn.Duchi, DUCHI_MAX_EPSILON, 20.0),
    (dn.Piecewise, PIECEWISE_MAX_EPSILON, 26.0),
    (dn.Hybrid, PIECEWISE_MAX_EPSILON, 26.0),
    (dn.SquareWave, SQUARE_WAVE_MAX_EPSILON, 26.0),
]


@pytest.mark.parametrize(("mechanism", "limit", "fine_from"), CASES)
def test_every_request_up_to_the_limit_is_realised_within_one_percent(mechanism, limit, fine_from) -> None:
    grid = np.concatenate([np.arange(0.5, fine_from, 0.5), np.arange(fine_from, limit, 0.05), [limit]])
    for eps in np.round(grid, 2):
        realised = mechanism(0, 1, epsilon=float(eps)).epsilon
        assert 0.99 * eps <= realised <= eps, (mechanism.__name__, eps, realised)


@pytest.mark.parametrize(("mechanism", "limit", "fine_from"), CASES)
def test_above_the_limit_the_constructor_refuses_naming_it(mechanism, limit, fine_from) -> None:
    for eps in (limit + 0.01, limit + 1.0, 40.0):
        with pytest.raises(ValueError, match=f"realises epsilon to within 1% only up to {limit:g}"):
            mechanism(0, 1, epsilon=eps)


def test_power_the_limits_are_where_the_realised_epsilon_falls_short() -> None:
    """Bypassing the check, the first failing requests found by the scan realise more than 1% less."""
    from deniable.mechanisms._numeric.lattice import laplace_lattice

    assert laplace_lattice(11.23).epsilon < 0.99 * 11.23
    with pytest.raises(ZeroDivisionError), np.errstate(divide="ignore"):
        laplace_lattice(13.0)
    from deniable.mechanisms._numeric import duchi

    eps = 21.48  # Duchi's construction without the check
    c = min((1 << duchi._BETA_BITS) - 1, int(np.tanh(eps / 2) * 2.0**duchi._BETA_BITS))
    while duchi._duchi_epsilon(c) > eps:
        c -= 1
    assert duchi._duchi_epsilon(c) < 0.99 * eps


def test_count_mean_sketch_realises_every_request_in_its_range_within_one_percent() -> None:
    """CMS's flip numerator ``t / 2**32`` realises ``2 ln((2**32 - t) / t)``: a log-spaced scan from the
    smallest stated request, a fine one near the top (where ``t`` is small), and both ends exactly."""
    from deniable.mechanisms._sketch import CMS_MAX_EPSILON, CMS_MIN_EPSILON

    grid = np.concatenate([
        np.geomspace(CMS_MIN_EPSILON, 40.0, 400), np.arange(40.0, CMS_MAX_EPSILON, 0.01),
        [CMS_MIN_EPSILON, CMS_MAX_EPSILON],
    ])
    for eps in grid:
        realised = dn.CountMeanSketch(epsilon=float(eps), rows=2, width=8).epsilon
        assert 0.99 * eps <= realised <= eps, (eps, realised)


@pytest.mark.parametrize("eps", [100.0, 44.36, 43.5, 41.57, 1.5e-7, 1e-9])
def test_count_mean_sketch_refuses_requests_outside_its_range_naming_it(eps) -> None:
    """Once it realised 44.36 for any larger request and 0.93 of 1e-8."""
    limits = r"CountMeanSketch realises epsilon to within 1% only (up to 41\.5|from 2e-07)"
    with pytest.raises(ValueError, match=limits):
        dn.CountMeanSketch(epsilon=eps, rows=2, width=8)


def test_power_count_mean_sketch_limits_are_where_its_flip_numerators_fall_short() -> None:
    """Just outside the range the best flip numerator realises more than 1% less than asked."""
    from fractions import Fraction

    from deniable import _privacy as privacy

    def realised(t: int) -> float:
        return 2 * privacy.ln_up(Fraction((1 << 32) - t, t))

    assert realised(1) < 0.99 * 100  # the largest of all
    assert realised(5) < 0.99 * 41.57 < realised(4)  # just above the limit: 41.57 gets t = 5's
    k = 98  # t = 2**31 - k realises k / 2**29; the request just below k + 1's gets k's
    assert realised((1 << 31) - k) < 0.99 * realised((1 << 31) - k - 1) * (1 - 1e-12)
    assert realised((1 << 31) - k - 1) < 2e-7


@pytest.mark.parametrize("eps", [1e-8, 1e-9, 1e-12])
def test_tiny_requests_to_integer_ratio_mechanisms_are_realised_within_one_percent(eps) -> None:
    """32-bit numerators once realised 0.93 of 1e-9; ``exp_ratio`` now moves to 63 bits when 32 fall short."""
    for mechanism in (dn.HadamardCountMeanSketch(epsilon=eps, rows=2, width=8), dn.BinaryRR(epsilon=eps)):
        assert 0.99 * eps <= mechanism.epsilon <= eps, (mechanism, eps)
