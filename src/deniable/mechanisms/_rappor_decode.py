"""RAPPOR's server side: the least-squares decode and its result, :class:`RapporEstimate`.

The per-cohort Bloom bit counts ``t`` are regressed on the sparse design
``X`` of the candidates' Bloom filters (:meth:`deniable.RAPPOR.estimate_from`):
``f = G^+ X' t`` with ``G = X'X``, and the standard errors are the sandwich
``diag(G^+ X' W X G^+)`` of the bit-level noise ``W`` (:func:`least_squares`).
The decode has no per-category support count, so its only interval is the
normal one; a :class:`RapporEstimate` refuses the binomial (Wilson,
Clopper-Pearson) intervals instead of answering with NaN.

With more candidates than equations (``k > cohorts * num_bits``) the system
is underdetermined: least squares would spread the mass over the
candidates (the minimum-norm solution; with 2,048 candidates and the truth
on 16 of them their estimates summed to 0.47). There the decode selects
candidates as Google's RAPPOR analysis does (Erlingsson, Pihur & Korolova
2014, section 4: a sparse regression selects, least squares fits the
selected, and a Bonferroni-corrected test keeps the significant ones), with
nonnegative least squares as the sparse selector (:func:`select`, in
place of Google's lasso, with no penalty to tune): the candidates it sets
above zero are refitted by least squares, those whose estimate exceeds
``z_(1 - 0.05/k)`` standard errors are kept and refitted once more, and
every other candidate is reported as 0 with an unknown (NaN) standard
error. The estimate says so (:attr:`RapporEstimate.selected`) and a
:class:`~deniable.errors.DeniableWarning` names the counts.
"""

from __future__ import annotations

import contextlib
import warnings
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from deniable._estimate import Estimate, Target
from deniable.errors import DeniableWarning

__all__ = ["RapporEstimate", "least_squares", "one_blas_thread", "select"]

SELECTION_ALPHA = 0.05
"""Family-wise level of the test that keeps a selected candidate (Bonferroni over the ``k`` candidates)."""


@dataclass(frozen=True, eq=False)
class RapporEstimate(Estimate):
    """RAPPOR's decoded frequencies: an :class:`~deniable.Estimate` without support counts.

    The frequencies are a least-squares solution (module docstring), so
    ``observed``, ``support_counts``, ``p_star`` and ``q_star`` hold no
    per-category values (NaN, zeros), ``confidence_interval`` applies only
    ``method="normal"`` (the others are refused, naming it) and
    ``consistent("mle")`` is refused; every other post-processing applies as
    to any estimate.

    ``selected`` is None where the system was determined; where it was not
    (more candidates than equations), the mask of the candidates the
    selection kept (module docstring): the others have frequency 0 and a
    NaN standard error. :meth:`deniable.RAPPOR.estimate` makes it; its parameters are those of
    :class:`~deniable.Estimate` and ``selected``.

    Parameters
    ----------
    selected : numpy.ndarray of bool, optional
        The candidates the selection kept, where the system was not
        determined; None otherwise.

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> rng = np.random.default_rng(0)
    >>> m = dn.RAPPOR(["a", "b", "c", "d"], num_bits=16, num_hashes=2, num_cohorts=4, epsilon=4.0)
    >>> values = rng.choice(["a", "b", "c", "d"], size=8000, p=[0.4, 0.3, 0.2, 0.1])
    >>> est = m.estimate(m.privatize_many(values, rng=rng))
    >>> type(est).__name__, est.selected is None, est.ci_methods
    ('RapporEstimate', True, ('normal',))
    >>> bool(np.all(np.abs(est.frequencies - [0.4, 0.3, 0.2, 0.1]) < 5 * est.std_errors))
    True
    """

    selected: NDArray[np.bool_] | None = field(default=None, repr=False)

    ci_methods: ClassVar[tuple[str, ...]] = ("normal",)
    _methods_note: ClassVar[str] = (
        " for a RAPPOR estimate (decoded by least squares: no support counts for a binomial interval)"
    )
    _observed: ClassVar[bool] = False

    @classmethod
    def decoded(
        cls, mechanism: Any, frequencies: NDArray[np.float64], std_errors: NDArray[np.float64], n: int,
        target: Target, selected: NDArray[np.bool_] | None = None,
    ) -> RapporEstimate:
        """The estimate of ``mechanism``'s decode: its frequencies and standard errors from ``n`` reports."""
        nan = np.full(mechanism.k, np.nan)
        return cls(mechanism=mechanism.name, epsilon=mechanism.epsilon, domain=mechanism.domain,
                   frequencies=frequencies, std_errors=std_errors, n=n, observed=nan,
                   support_counts=np.zeros(mechanism.k, dtype=np.int64), p_star=nan, q_star=nan, target=target,
                   selected=selected)


def one_blas_thread() -> contextlib.AbstractContextManager[Any]:
    """BLAS limited to one thread while in the block, when threadpoolctl is installed
    (``deniable[fast]``); a no-op without it.

    The decode's BLAS calls are short: a second OpenBLAS thread saves little wall
    time and, on a busy machine, spins while it waits, doubling the CPU time.
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return contextlib.nullcontext()
    return threadpool_limits(1, user_api="blas")


def least_squares(
    design: Any, target: NDArray[np.float64], noise: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Least squares ``f = G^+ X' t`` with ``G = X'X`` (``X`` sparse), and ``diag(G^+ X' W X G^+)``.

    ``W = diag(noise)``: the sandwich variance of each coefficient. ``G`` is
    built from the sparse design (each column has ``num_hashes`` entries per
    cohort) and inverted through its Cholesky factor when it is well
    conditioned (reciprocal condition number at least 1e-10, so
    ``G^+ = G^-1``); otherwise by the pseudo-inverse. With ``A = G^+``
    symmetric, ``diag(A X' W X A)_i = sum_r noise_r (X A)_ri^2``: one sparse
    times dense product (``2 nnz(X) k`` flops) instead of dense ``k x k``
    products, so the only cubic work is the factor and its inverse.
    """
    from scipy import linalg

    with one_blas_thread():
        gram = (design.T @ design).toarray()
        factor, info = linalg.lapack.dpotrf(gram, lower=1)  # clean: the upper triangle zeroed
        if info == 0:
            rcond, info = linalg.lapack.dpocon(factor, np.linalg.norm(gram, 1), uplo="L")
        if info == 0 and rcond >= 1e-10:
            inverse, info = linalg.lapack.dpotri(factor, lower=1, overwrite_c=1)  # the lower triangle of G^-1
            inverse += np.tril(inverse, -1).T
        else:
            inverse = np.linalg.pinv(gram)
        # the products past the factor are einsum, not BLAS: without threadpoolctl BLAS's second
        # thread would wake for them and spin after
        freqs = np.einsum("ij,j->i", inverse, design.T @ target)
        spread = np.asarray(design @ inverse)  # X A, (cohorts * num_bits) x k
        spread *= spread
        return freqs, np.einsum("r,ri->i", noise, spread)


def select(
    design: Any, target: NDArray[np.float64], noise: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.bool_]]:
    """The underdetermined decode (module docstring): frequencies, fixed-respondent variances, kept mask.

    Nonnegative least squares (``scipy.optimize.nnls``) on the dense design
    selects; :func:`least_squares` refits the selected columns; a candidate
    is kept when ``f_i / SE_i > z_(1 - SELECTION_ALPHA / k)``, and the kept
    ones are refitted. Unkept candidates get frequency 0 and variance NaN.
    """
    from scipy.optimize import nnls
    from scipy.stats import norm

    k = design.shape[1]
    freqs, var = np.zeros(k), np.full(k, np.nan)
    with one_blas_thread():
        start, _ = nnls(design.toarray(), target, maxiter=10 * k)
    chosen = np.flatnonzero(start > 0)
    if chosen.size:
        fit, fit_var = least_squares(design[:, chosen], target, noise)
        z = fit / np.sqrt(np.clip(fit_var, 1e-300, None))
        chosen = chosen[z > norm.isf(SELECTION_ALPHA / k)]
    kept = np.zeros(k, dtype=bool)
    kept[chosen] = True
    if chosen.size:
        freqs[chosen], var[chosen] = least_squares(design[:, chosen], target, noise)
    warnings.warn(
        f"RAPPOR decode: {k:,} candidates exceed the {design.shape[0]:,} equations (cohorts x bits), so "
        f"least squares is underdetermined; {chosen.size} candidates were selected (nonnegative least "
        f"squares, then a Bonferroni test at {SELECTION_ALPHA:g}) and the other {k - chosen.size:,} are "
        "reported as 0 with an unknown standard error (more cohorts or bits make the system determined)",
        DeniableWarning,
        stacklevel=4,
    )
    return freqs, var, kept
