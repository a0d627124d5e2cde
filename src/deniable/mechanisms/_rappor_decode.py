"""RAPPOR's server side: the least-squares decode and its result, :class:`RapporEstimate`.

The per-cohort Bloom bit counts ``t`` are regressed on the sparse design
``X`` of the candidates' Bloom filters (:meth:`deniable.RAPPOR.estimate_from`):
``f = G^+ X' t`` with ``G = X'X``, and the standard errors are the sandwich
``diag(G^+ X' W X G^+)`` of the bit-level noise ``W`` (:func:`least_squares`).
The decode has no per-category support count, so its only interval is the
normal one; a :class:`RapporEstimate` refuses the binomial (Wilson,
Clopper-Pearson) intervals instead of answering with NaN.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from deniable._estimate import Estimate, Target

__all__ = ["RapporEstimate", "least_squares", "one_blas_thread"]


@dataclass(frozen=True, eq=False)
class RapporEstimate(Estimate):
    """RAPPOR's decoded frequencies: an :class:`~deniable.Estimate` without support counts.

    The frequencies are a least-squares solution (module docstring), so
    ``observed``, ``support_counts``, ``p_star`` and ``q_star`` hold no
    per-category values (NaN, zeros), ``confidence_interval`` applies only
    ``method="normal"`` (the others are refused, naming it) and
    ``consistent("mle")`` is refused; every other post-processing applies as
    to any estimate.
    """

    ci_methods: ClassVar[tuple[str, ...]] = ("normal",)
    _methods_note: ClassVar[str] = (
        " for a RAPPOR estimate (decoded by least squares: no support counts for a binomial interval)"
    )
    _observed: ClassVar[bool] = False

    @classmethod
    def decoded(
        cls, mechanism: Any, frequencies: NDArray[np.float64], std_errors: NDArray[np.float64], n: int,
        target: Target,
    ) -> RapporEstimate:
        """The estimate of ``mechanism``'s decode: its frequencies and standard errors from ``n`` reports."""
        nan = np.full(mechanism.k, np.nan)
        return cls(mechanism=mechanism.name, epsilon=mechanism.epsilon, domain=mechanism.domain,
                   frequencies=frequencies, std_errors=std_errors, n=n, observed=nan,
                   support_counts=np.zeros(mechanism.k, dtype=np.int64), p_star=nan, q_star=nan, target=target)


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
