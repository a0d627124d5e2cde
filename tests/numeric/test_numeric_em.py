"""Layer A for ``em_reconstruct``: the EM / EMS iterates against the dense channel matrix.

``em_reconstruct`` applies the sliding-window channel with cumulative sums.
Here the channel is written out as a matrix, column by column from its
definition (input cell ``i`` reaches output cells ``i .. i + L``, the two end
cells with half weight; a share ``gamma`` goes to the uniform cell law), and
one EM step is ``theta <- theta * A^T (c / A theta) / n``, then for EMS the
``(1/4, 1/2, 1/4)`` smoothing with the end bins repeated, then renormalizing.
No randomness: the counts are fixed integers, some of them zero.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from numpy.typing import NDArray

from deniable.mechanisms._numeric import em_reconstruct

GAMMA = 0.3
# (input cells, window, bins): a window shorter than the input range, one as long, one longer; one input
# cell per bin and three
SHAPES = [(12, 5, 4), (8, 7, 8), (6, 9, 3)]


def _uniform(cells: int) -> NDArray[np.float64]:
    """A uniform-branch cell law that is not flat (so its weight in each sum shows)."""
    u = np.arange(1.0, cells + 1.0)
    return u / u.sum()


def _counts(cells: int) -> NDArray[np.int64]:
    """Fixed report counts with zeros and a skew (a reconstruction far from flat)."""
    counts = (np.arange(cells) * 7 + 3) % 11
    counts[::4] = 0
    return counts.astype(np.int64)


def _channel(input_cells: int, window: int, bins: int) -> NDArray[np.float64]:
    """``A[j, b] = P(output cell j | input uniform in bin b)``, written out densely."""
    cells = input_cells + window
    trapezoid = np.zeros((cells, input_cells))
    for i in range(input_cells):
        trapezoid[i + 1 : i + window, i] = 1.0 / window
        trapezoid[i, i] += 1.0 / (2 * window)
        trapezoid[i + window, i] += 1.0 / (2 * window)
    per_cell = GAMMA * _uniform(cells)[:, None] + (1 - GAMMA) * trapezoid
    return per_cell.reshape(cells, bins, input_cells // bins).mean(axis=2)


def _loglik(A: NDArray[np.float64], counts: NDArray[np.int64], theta: NDArray[np.float64]) -> float:
    """Log-likelihood per report of the bin probabilities ``theta``."""
    q = A @ theta
    seen = counts > 0
    return float(counts[seen] @ np.log(q[seen])) / counts.sum()


def _step(
    A: NDArray[np.float64], counts: NDArray[np.int64], theta: NDArray[np.float64], smooth: bool
) -> NDArray[np.float64]:
    """One EM (or EMS) step with the dense channel."""
    theta = theta * (A.T @ (counts / (A @ theta))) / counts.sum()
    if smooth:
        padded = np.concatenate([theta[:1], theta, theta[-1:]])
        theta = padded[:-2] / 4 + padded[1:-1] / 2 + padded[2:] / 4
    return theta / theta.sum()


def _reconstruct(shape: tuple[int, int, int], **options: object) -> tuple[NDArray[np.float64], int, bool]:
    """``em_reconstruct`` of the fixed counts for ``shape`` = (input cells, window, bins)."""
    input_cells, window, bins = shape
    cells = input_cells + window
    return em_reconstruct(
        _counts(cells), window=window, input_cells=input_cells, bins=bins,
        uniform_share=GAMMA, uniform_pmf=_uniform(cells), **options,  # type: ignore[arg-type]
    )


def _dense(shape: tuple[int, int, int], steps: int, smooth: bool) -> list[NDArray[np.float64]]:
    """The first ``steps`` dense iterates, starting from the flat histogram."""
    input_cells, window, bins = shape
    A = _channel(input_cells, window, bins)
    counts = _counts(input_cells + window)
    thetas = [np.full(bins, 1.0 / bins)]
    for _ in range(steps):
        thetas.append(_step(A, counts, thetas[-1], smooth))
    return thetas


def test_the_dense_channel_is_a_channel() -> None:
    """Each bin's column is a probability law over the output cells (the test's own matrix is sound)."""
    for input_cells, window, bins in SHAPES:
        np.testing.assert_allclose(_channel(input_cells, window, bins).sum(axis=0), 1.0, rtol=1e-14)


@pytest.mark.parametrize("smooth", [False, True])
@pytest.mark.parametrize("shape", SHAPES)
def test_each_iterate_is_the_dense_em_step(shape: tuple[int, int, int], smooth: bool) -> None:
    """With tolerance 0 nothing converges: ``max_iterations = k`` returns the k-th dense iterate."""
    dense = _dense(shape, 6, smooth)
    for k in (1, 2, 6):
        theta, iterations, converged = _reconstruct(shape, smooth=smooth, tolerance=0.0, max_iterations=k)
        assert (iterations, converged) == (k, False)
        np.testing.assert_allclose(theta, dense[k], rtol=1e-12, atol=1e-15)
    assert not np.allclose(dense[6], dense[0])  # the counts move the histogram away from flat


@pytest.mark.parametrize("shape", SHAPES)
def test_smoothing_is_the_default(shape: tuple[int, int, int]) -> None:
    theta, _, _ = _reconstruct(shape, tolerance=0.0, max_iterations=3)
    np.testing.assert_allclose(theta, _dense(shape, 3, True)[3], rtol=1e-12, atol=1e-15)
    assert not np.allclose(_dense(shape, 3, True)[3], _dense(shape, 3, False)[3])


@pytest.mark.parametrize("smooth", [False, True])
@pytest.mark.parametrize("tolerance", [1e-4, 1e-7, None])  # None: the default, 1e-7
@pytest.mark.parametrize("shape", SHAPES)
def test_it_stops_at_the_first_log_likelihood_change_below_the_tolerance(
    shape: tuple[int, int, int], tolerance: float | None, smooth: bool
) -> None:
    """Iteration ``i`` evaluates iterate ``i - 1``; it stops, returning that iterate, when the change is small.

    The log-likelihood of the flat start is compared with minus infinity (never small).
    """
    options: dict[str, object] = {"smooth": smooth} if tolerance is None else {"smooth": smooth, "tolerance": tolerance}
    tol = 1e-7 if tolerance is None else tolerance
    theta, iterations, converged = _reconstruct(shape, **options)
    assert converged and iterations >= 4
    input_cells, window, bins = shape
    A, counts = _channel(input_cells, window, bins), _counts(input_cells + window)
    dense = _dense(shape, iterations - 1, smooth)
    np.testing.assert_allclose(theta, dense[-1], rtol=1e-11, atol=1e-15)
    changes = [abs(_loglik(A, counts, b) - _loglik(A, counts, a)) for a, b in zip(dense, dense[1:], strict=False)]
    assert changes[-1] < tol
    assert min(changes[:-1]) >= tol


def test_it_gives_up_after_max_iterations_by_default_ten_thousand() -> None:
    """Tolerance 0 never converges: the default cap returns the 10,000th iterate, not converged."""
    theta, iterations, converged = _reconstruct(SHAPES[0], tolerance=0.0)
    assert (iterations, converged) == (10_000, False)
    assert theta.shape == (SHAPES[0][2],) and math.isclose(theta.sum(), 1.0, rel_tol=1e-12)


def test_no_reports_is_an_error() -> None:
    with pytest.raises(ValueError, match=r"^no reports to reconstruct from$"):
        em_reconstruct(
            np.zeros(17, dtype=np.int64), window=5, input_cells=12, bins=4,
            uniform_share=GAMMA, uniform_pmf=_uniform(17),
        )


def test_one_report_is_enough() -> None:
    """A single report is a (very noisy) histogram, not an error."""
    counts = np.zeros(17, dtype=np.int64)
    counts[3] = 1
    theta, _, converged = em_reconstruct(
        counts, window=5, input_cells=12, bins=4, uniform_share=GAMMA, uniform_pmf=_uniform(17)
    )
    assert converged and theta.shape == (4,) and math.isclose(theta.sum(), 1.0, rel_tol=1e-12)
    assert int(np.argmax(theta)) == 0  # output cell 3 is reached from input cells 0 to 3 only


def test_counts_at_their_expectation_stop_at_the_second_iteration_at_the_flat_start() -> None:
    """Counts ``n A theta`` (rounded, n = 10**7) for a flat ``theta``: the flat start is (almost) the
    maximum, so the first step changes the log-likelihood by far less than the tolerance and the second
    iteration stops, returning the first iterate."""
    shape = SHAPES[0]
    input_cells, window, bins = shape
    cells = input_cells + window
    A = _channel(input_cells, window, bins)
    counts = np.rint(1e7 * (A @ np.full(bins, 1.0 / bins))).astype(np.int64)
    for smooth in (False, True):
        theta, iterations, converged = em_reconstruct(
            counts, window=window, input_cells=input_cells, bins=bins, uniform_share=GAMMA,
            uniform_pmf=_uniform(cells), smooth=smooth,
        )
        assert (iterations, converged) == (2, True)
        np.testing.assert_allclose(theta, 1.0 / bins, rtol=1e-5)


def test_cells_no_input_can_reach_are_left_out_of_the_likelihood() -> None:
    """Without the uniform share, reports only in the top cells give the lowest bin probability 0;
    then the lowest output cell has probability 0 and no reports, and the likelihood (summed over the
    cells with reports) still converges."""
    input_cells, window, bins = SHAPES[0]
    cells = input_cells + window
    counts = np.zeros(cells, dtype=np.int64)
    counts[8:] = np.arange(1, cells - 7)  # output cells 0..7 are the only ones input cells 0..2 reach
    theta, iterations, converged = em_reconstruct(
        counts, window=window, input_cells=input_cells, bins=bins, uniform_share=0.0,
        uniform_pmf=_uniform(cells), smooth=False, max_iterations=2000,
    )
    assert converged and iterations < 2000
    assert theta[0] == 0.0 and math.isclose(theta.sum(), 1.0, rel_tol=1e-12)
