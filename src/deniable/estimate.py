"""Result types: ``Estimate`` (category frequencies) and the mergeable ``SupportCounts``.

For a pure frequency oracle (Wang et al., USENIX Security 2017) each report
supports a set of categories, with ``P[v in S(y) | x = v] = p*`` and
``P[v in S(y) | x != v] = q*``. From the support counts ``C_v`` of ``n``
reports:

* observed share      ``lambda_v = C_v / n``
* unbiased estimate   ``f_v = (lambda_v - q*) / (p* - q*)``
* variance            ``q*(1-q*) / (n (p*-q*)^2) + f_v (1-p*-q*) / (n (p*-q*))``

The variance (:func:`pure_variance`) is for the fixed population of ``n``
respondents (only the randomization is random); standard
errors plug in ``clip(f_v, 0, 1)`` (the clamped plug-in of google/rappor).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from deniable import intervals
from deniable.aggregates import Mergeable, SupportCounts

__all__ = ["Mergeable", "SupportCounts", "Estimate", "pure_variance", "CIMethod"]

CIMethod = Literal["normal", "wilson", "clopper-pearson"]


def pure_variance(
    n: int | float,
    p_star: NDArray[np.float64] | float,
    q_star: NDArray[np.float64] | float,
    frequencies: NDArray[np.float64] | float,
) -> NDArray[np.float64]:
    """Per-category variance of the unbiased estimate from ``n`` reports (fixed population).

    ``q*(1-q*) / (n (p*-q*)^2) + f (1-p*-q*) / (n (p*-q*))``.
    """
    p = np.asarray(p_star, dtype=float)
    q = np.asarray(q_star, dtype=float)
    f = np.asarray(frequencies, dtype=float)
    gap = p - q
    return np.asarray((q * (1 - q) / gap**2 + f * (1 - p - q) / gap) / n, dtype=float)


@dataclass(frozen=True, eq=False)
class Estimate:
    """Debiased category frequencies with standard errors and confidence intervals.

    Attributes
    ----------
    domain: the categories, in order; every array below is aligned with it.
    frequencies: estimated share of respondents holding each category (may be
        < 0 or > 1 unless post-processed; see :meth:`consistent`).
    std_errors: standard errors from :func:`pure_variance`, ``None`` after a
        non-linear post-processing step.
    n: number of reports.
    observed: raw (biased) share of reports supporting each category.
    """

    mechanism: str
    epsilon: float
    domain: tuple[Any, ...]
    frequencies: NDArray[np.float64]
    std_errors: NDArray[np.float64] | None
    n: int
    observed: NDArray[np.float64]
    support_counts: NDArray[np.int64]
    p_star: NDArray[np.float64]
    q_star: NDArray[np.float64]
    post_processing: str = "none"
    truth: NDArray[np.float64] | None = field(default=None, repr=False)

    @property
    def counts(self) -> NDArray[np.float64]:
        """Estimated number of respondents per category: ``frequencies * n``."""
        return self.frequencies * self.n

    def ci(
        self, level: float = 0.95, method: CIMethod = "normal"
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Per-category ``(low, high)`` confidence interval at ``level``.

        * ``"normal"``: ``f ± z·SE`` (Wald; SE from :func:`pure_variance` with
          the clamped plug-in).
        * ``"wilson"`` / ``"clopper-pearson"``: an interval for the support
          rate ``C_v / n`` (:mod:`deniable.intervals`) mapped through the
          affine debias ``(lambda - q*) / (p* - q*)`` and clipped to [0, 1].
          For a fixed population ``C_v`` is a sum of independent Bernoullis
          with mean rate ``lambda``, whose variance is at most the binomial
          ``lambda (1 - lambda) / n``, so these intervals are conservative;
          recommended for small n or frequencies near 0.

        Intervals are per category; for simultaneous coverage over k
        categories pass ``level = 1 - alpha / k`` (Bonferroni).
        """
        if not 0 < level < 1:
            raise ValueError(f"level must be in (0, 1); got {level!r}")
        if self.n == 0:
            raise ValueError("no reports: a confidence interval needs n >= 1")
        if method == "normal":
            if self.std_errors is None:
                raise ValueError(
                    f"this estimate is post-processed ({self.post_processing}); formula "
                    "standard errors do not apply. Take intervals from the unbiased "
                    "estimate, or use ci(..., method='wilson') there."
                )
            low, high = intervals.normal_interval(self.frequencies, self.std_errors, 1 - level)
            return low, high
        if method == "clopper-pearson":
            lo, hi = intervals.clopper_pearson(self.support_counts, self.n, 1 - level)
        elif method == "wilson":
            lo, hi = intervals.wilson_interval(self.support_counts, self.n, 1 - level)
        else:
            raise ValueError(
                f"method must be 'normal', 'wilson' or 'clopper-pearson'; got {method!r}"
            )
        gap = self.p_star - self.q_star
        low = np.clip((lo - self.q_star) / gap, 0.0, 1.0)
        high = np.clip((hi - self.q_star) / gap, 0.0, 1.0)
        return low, high

    def consistent(self, method: str = "norm-sub") -> Estimate:
        """A new Estimate on (or towards) the probability simplex.

        Methods (Wang et al., NDSS 2020): ``"clip"`` (negatives to 0),
        ``"normalize"`` (shift all entries equally so they sum to 1),
        ``"norm-mul"``, ``"norm-sub"`` (the default; equal to ``"project"``,
        the Euclidean projection onto the simplex), ``"base-cut"`` (zero the
        estimates below their Bonferroni-corrected significance threshold),
        ``"mle"`` (the maximum-likelihood frequencies on the simplex with
        bootstrap standard errors, :mod:`deniable.mle`).
        Post-processing costs no privacy but is biased, so the result carries
        no formula standard errors (the MLE carries bootstrap ones).
        """
        from deniable import consistency

        if method == "mle":
            from deniable import mle

            return mle.consistent_mle(self)

        freqs = consistency.apply(method, self.frequencies, self.std_errors)
        label = method if self.post_processing == "none" else f"{self.post_processing}+{method}"
        return replace(self, frequencies=freqs, std_errors=None, post_processing=label)

    def to_frame(self) -> Any:
        """A pandas DataFrame, one row per category (needs pandas)."""
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - exercised without pandas
            raise ImportError("to_frame() needs pandas: pip install 'deniable[stats]'") from exc
        data: dict[str, Any] = {
            "category": list(self.domain),
            "estimate": self.frequencies,
        }
        if self.std_errors is not None:
            low, high = self.ci(0.95)
            data.update(std_error=self.std_errors, ci_low=low, ci_high=high)
        data["observed"] = self.observed
        return pd.DataFrame(data).set_index("category")

    def __repr__(self) -> str:
        head = (
            f"Estimate({self.mechanism}, epsilon={self.epsilon:.6g}, n={self.n}"
            + (f", {self.post_processing}" if self.post_processing != "none" else "")
            + ")"
        )
        rows = []
        shown = min(len(self.domain), 20)
        if self.std_errors is not None:
            low, high = self.ci(0.95) if self.n else (self.frequencies, self.frequencies)
        for i in range(shown):
            row = f"  {self.domain[i]!s:>12}  {self.frequencies[i]: .4f}"
            if self.std_errors is not None:
                row += f"  ±{self.std_errors[i]:.4f}  [{low[i]: .4f}, {high[i]: .4f}]"
            rows.append(row)
        if len(self.domain) > shown:
            rows.append(f"  ... {len(self.domain) - shown} more")
        return "\n".join([head, *rows])


# --------------------------------------------------------------------- numeric
__all__ += ["MeanEstimate", "HistogramEstimate"]


@dataclass(frozen=True, eq=False)
class HistogramEstimate:
    """An estimated distribution of the respondents' (clamped) values on a grid.

    ``probabilities[i]`` is the estimated share of respondents whose value
    lies in ``[edges[i], edges[i+1])`` (original units; sums to 1).
    ``method`` names the reconstruction (``"ems"``, ``"em"``); ``iterations``
    and ``converged`` describe its run.
    """

    edges: NDArray[np.float64]
    probabilities: NDArray[np.float64]
    method: str
    iterations: int
    converged: bool

    @property
    def centers(self) -> NDArray[np.float64]:
        return (self.edges[:-1] + self.edges[1:]) / 2

    @property
    def mean(self) -> float:
        """Mean of the histogram (values spread uniformly within each bin)."""
        return float(np.dot(self.centers, self.probabilities))

    def cdf(self, x: Any) -> NDArray[np.float64]:
        """``P(value <= x)``, linear within bins."""
        cumulative = np.concatenate([[0.0], np.cumsum(self.probabilities)])
        return np.interp(np.asarray(x, dtype=float), self.edges, cumulative)

    def quantile(self, q: Any) -> NDArray[np.float64]:
        """Inverse of :meth:`cdf` (linear within bins)."""
        qs = np.asarray(q, dtype=float)
        if np.any((qs < 0) | (qs > 1)):
            raise ValueError(f"quantile levels must be in [0, 1]; got {q!r}")
        cumulative = np.concatenate([[0.0], np.cumsum(self.probabilities)])
        return np.interp(qs, cumulative, self.edges)

    def __repr__(self) -> str:
        return (
            f"HistogramEstimate({len(self.probabilities)} bins on [{self.edges[0]:.6g}, "
            f"{self.edges[-1]:.6g}], {self.method}, {self.iterations} iterations)"
        )


@dataclass(frozen=True, eq=False)
class MeanEstimate:
    """Debiased mean of numeric answers, with standard errors and intervals.

    Attributes
    ----------
    mean: estimated mean of the respondents' values after clamping to
        ``[low, high]`` (clamping is part of every numeric mechanism).
    std_error: from the mechanism's variance formula for the fixed
        population of ``n`` respondents (the formula's dependence on the
        unknown values is plugged in from the reports' first two moments;
        see the mechanism's ``estimate_from``).
    sample_std_error: ``s / sqrt(n)`` from the spread of the debiased
        reports; it also counts the spread of the true values, so it is the
        right error for the mean of the population the respondents were
        sampled from (and conservative for the respondents themselves).
    n: number of reports.
    histogram: an estimate of the whole distribution where the mechanism
        supports one (:class:`HistogramEstimate`), else None.
    """

    mechanism: str
    epsilon: float
    mean: float
    std_error: float
    sample_std_error: float
    n: int
    low: float
    high: float
    delta: float | None = None
    histogram: HistogramEstimate | None = None

    def ci(self, level: float = 0.95, method: Literal["formula", "sample"] = "formula") -> tuple[float, float]:
        """Normal ``(low, high)`` interval ``mean ± z · SE`` at ``level``.

        ``method="formula"`` uses :attr:`std_error`, ``"sample"`` uses
        :attr:`sample_std_error`.
        """
        if not 0 < level < 1:
            raise ValueError(f"level must be in (0, 1); got {level!r}")
        if method == "formula":
            se = self.std_error
        elif method == "sample":
            se = self.sample_std_error
        else:
            raise ValueError(f"method must be 'formula' or 'sample'; got {method!r}")
        low, high = intervals.normal_interval(self.mean, se, 1 - level)
        return low, high

    def __repr__(self) -> str:
        low, high = self.ci(0.95)
        extra = f", {self.histogram!r}" if self.histogram is not None else ""
        privacy = f"epsilon={self.epsilon:.6g}" + (
            f", delta={self.delta:.3g}" if self.delta is not None else ""
        )
        return (
            f"MeanEstimate({self.mechanism}, {privacy}, n={self.n}: mean {self.mean:.6g} "
            f"± {self.std_error:.3g}, 95% CI [{low:.6g}, {high:.6g}]{extra})"
        )
