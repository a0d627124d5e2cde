"""Result types: ``Estimate`` (category frequencies) and the mergeable ``SupportCounts``.

For a pure frequency oracle (Wang et al., USENIX Security 2017) each report
supports a set of categories, with ``P[v in S(y) | x = v] = p*`` and
``P[v in S(y) | x != v] = q*``. From the support counts ``C_v`` of ``n``
reports:

* observed share      ``lambda_v = C_v / n``
* unbiased estimate   ``f_v = (lambda_v - q*) / (p* - q*)``
* variance            ``q*(1-q*) / (n (p*-q*)^2) + f_v (1-p*-q*) / (n (p*-q*))``   (A)

([formula (A)][formula-a] in the documentation's math pages.)

Every estimate has an inference **target** (:data:`TARGETS`):

* ``"population"`` (the default): the respondents are a random sample of a
  population and ``f_v`` estimates the population's share. The variance adds
  the sampling term: ``(A) + f_v (1 - f_v) / n``, which equals
  ``lambda_v (1 - lambda_v) / (n (p*-q*)^2)`` with ``lambda_v = q* + (p*-q*) f_v``
  the support rate (Warner's ``lambda (1 - lambda) / (n (2p-1)^2)``); its
  plug-in uses the observed share ``C_v / n``.
* ``"respondents"``: a census of the fixed set of ``n`` respondents; only the
  randomization is random and the variance is (A), plugging in
  ``clip(f_v, 0, 1)`` (the clamped plug-in of google/rappor).

The point estimate is the same for both; only its standard error and
interval differ (:func:`pure_variance`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Literal

import numpy as np
from numpy.typing import NDArray

from deniable import _consistency as consistency
from deniable import _intervals as intervals
from deniable import _mle as mle
from deniable._aggregates import Mergeable, SupportCounts
from deniable._results import ConfidenceInterval, Result, ResultTable, check_level, refuse_method

__all__ = [
    "Mergeable", "SupportCounts", "Estimate", "pure_variance", "CIMethod",
    "Target", "TARGETS", "check_target", "sampling_variance", "worst_per_user_variance",
]

CIMethod = Literal["normal", "wilson", "clopper-pearson"]
"""How ``ci`` builds an interval: normal (Wald), or Wilson / Clopper-Pearson for the support rate, mapped."""
Target = Literal["population", "respondents"]
"""What an estimate is of: the population the respondents were sampled from, or these respondents only."""
TARGETS: tuple[Target, ...] = ("population", "respondents")
"""The values of :data:`Target`, the default first."""

_TARGET_WORDS = {
    "population": "the population the respondents were sampled from",
    "respondents": "the fixed set of respondents (a census)",
}


def check_target(target: object) -> Target:
    """Validate an inference target: ``"population"`` or ``"respondents"``."""
    if isinstance(target, str) and target in TARGETS:
        return target
    raise ValueError(f"target must be 'population' or 'respondents'; got {target!r}")


def sampling_variance(n: int | float, frequencies: Any, target: Target) -> NDArray[np.float64]:
    """The sampling term a population target adds to a fixed-population variance.

    ``f (1 - f) / n`` for ``"population"`` (the variance of the share of ``n``
    respondents drawn at random from a population with share ``f``), 0 for
    ``"respondents"``.
    """
    f = np.asarray(frequencies, dtype=float)
    if check_target(target) == "respondents":
        return np.zeros_like(f)
    return np.asarray(f * (1 - f) / n, dtype=float)


def pure_variance(
    n: int | float,
    p_star: NDArray[np.float64] | float,
    q_star: NDArray[np.float64] | float,
    frequencies: NDArray[np.float64] | float,
    target: Target = "population",
) -> NDArray[np.float64]:
    """Per-category variance of a pure oracle's unbiased estimate from ``n`` reports.

    ``"respondents"``: [formula (A)][formula-a], ``q*(1-q*) / (n (p*-q*)^2) + f (1-p*-q*) / (n (p*-q*))``.
    ``"population"``: (A) ``+ f (1 - f) / n`` ``= lambda (1 - lambda) / (n (p*-q*)^2)``
    with ``lambda = q* + (p*-q*) f``.
    """
    p = np.asarray(p_star, dtype=float)
    q = np.asarray(q_star, dtype=float)
    f = np.asarray(frequencies, dtype=float)
    gap = p - q
    fixed = (q * (1 - q) / gap**2 + f * (1 - p - q) / gap) / n
    return np.asarray(fixed + sampling_variance(n, f, target), dtype=float)


def worst_per_user_variance(mechanism: Any, frequency: float | None, target: Target) -> float:
    """``max_f n Var(f)`` for ``target`` over f in [0, 1], or at ``frequency``.

    For a pure oracle ``n Var = A + B f`` with ``A = q*(1-q*)/(p*-q*)^2`` and
    ``B = (1-p*-q*)/(p*-q*)`` (:func:`deniable._estimate.pure_variance`), plus
    ``f(1-f)`` for the population target, so the maximum has a closed form:
    at an end point, or at ``f = (1 + B)/2`` with the sampling term. Other
    mechanisms are maximised over a grid of their ``variance``.
    """
    sampling = target == "population"
    try:
        p, q = mechanism.support_rates()
    except (AttributeError, NotImplementedError):
        grid = np.linspace(0, 1, 201) if frequency is None else np.array([float(frequency)])
        return max(float(np.max(mechanism.variance(1, np.full(mechanism.k, f), target))) for f in grid)
    a = q * (1 - q) / (p - q) ** 2
    b = (1 - p - q) / (p - q)
    if frequency is not None:
        f = np.full_like(a, float(frequency))
    elif sampling:
        f = np.clip((1 + b) / 2, 0.0, 1.0)
    else:
        f = np.where(b > 0, 1.0, 0.0)
    return float(np.max(a + b * f + (f * (1 - f) if sampling else 0.0)))


@dataclass(frozen=True, eq=False)
class Estimate(Result):
    r"""Debiased category frequencies with standard errors and confidence intervals.

    The result shape of :mod:`deniable._results`: :meth:`confidence_interval`
    (``ci`` is its older spelling), :meth:`to_dict`, :meth:`to_frame`, and an
    HTML table in notebooks. A mechanism's ``estimate`` makes it.

    Parameters
    ----------
    mechanism : str
        The name of the mechanism that made the reports.
    epsilon : float
        Its privacy loss per report.
    domain : tuple
        The categories, in order; every array below is aligned with it.
    frequencies : numpy.ndarray
        The estimated share of each category (may be < 0 or > 1 unless
        post-processed; see :meth:`consistent`).
    std_errors : numpy.ndarray or None
        Standard errors for ``target`` (:func:`pure_variance`); None after a
        non-linear post-processing step.
    n : int
        The number of reports.
    observed : numpy.ndarray
        The raw (biased) share of reports supporting each category.
    support_counts : numpy.ndarray
        How many reports support each category.
    p_star, q_star : numpy.ndarray
        Per category, the probability that a report supports it when it is
        (``p_star``) or is not (``q_star``) the respondent's value.
    target : {"population", "respondents"}, default "population"
        What the frequencies estimate, and so which variance the standard
        errors and intervals use: the share in the population the
        respondents were sampled from, or the share among these very
        respondents.
    post_processing : str, default "none"
        The post-processing applied (``"norm-sub"``, ...), or ``"none"``.
    truth : numpy.ndarray, optional
        The true shares, where a simulation knows them (not shown by
        ``repr``).

    Notes
    -----
    For a pure oracle, :math:`\hat f_v = (C_v / n - q^*_v) / (p^*_v - q^*_v)`
    with :math:`C_v` the support count; for the population target its
    variance is :math:`\lambda_v (1 - \lambda_v) / (n (p^*_v - q^*_v)^2)` with
    :math:`\lambda_v = q^*_v + f_v (p^*_v - q^*_v)`.

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> rng = np.random.default_rng(0)
    >>> m = dn.GRR(["a", "b", "c"], epsilon=2.0)
    >>> x = rng.choice(["a", "b", "c"], size=5000, p=[0.5, 0.3, 0.2])
    >>> est = m.estimate(m.privatize_many(x, rng=rng))
    >>> est.n, est.domain, est.target
    (5000, ('a', 'b', 'c'), 'population')
    >>> bool(np.all(np.abs(est.frequencies - [0.5, 0.3, 0.2]) < 5 * est.std_errors))
    True
    >>> low, high = est.confidence_interval()
    >>> bool(np.all(low < high))
    True
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
    target: Target = "population"
    post_processing: str = "none"
    truth: NDArray[np.float64] | None = field(default=None, repr=False)

    ci_methods: ClassVar[tuple[str, ...]] = ("normal", "wilson", "clopper-pearson")
    _observed: ClassVar[bool] = True  # whether the estimate has observed support shares

    @property
    def counts(self) -> NDArray[np.float64]:
        """Estimated number of respondents per category: ``frequencies * n``."""
        return self.frequencies * self.n

    def confidence_interval(self, confidence_level: float = 0.95, method: str | None = None) -> ConfidenceInterval:
        """Per-category interval at ``confidence_level`` for :attr:`target` (``ci`` is its older spelling).

        * ``"normal"`` (the default): ``f ± z·SE`` (Wald; SE from
          :func:`pure_variance` for the target, with its plug-in).
        * ``"wilson"`` / ``"clopper-pearson"``: an interval for the support
          rate ``C_v / n`` (:mod:`deniable._intervals`) mapped through the
          affine debias ``(lambda - q*) / (p* - q*)`` and clipped to [0, 1].
          Respondents sampled from a population make ``C_v`` exactly
          ``Binomial(n, lambda)``, so these intervals serve both targets: for
          a fixed set of respondents ``C_v`` is a sum of independent
          Bernoullis with mean rate ``lambda``, whose variance is at most the
          binomial's, and they are conservative there. Recommended for small
          n or frequencies near 0.

        Intervals are per category; for simultaneous coverage over k
        categories pass ``confidence_level = 1 - alpha / k`` (Bonferroni).
        """
        level = check_level(confidence_level)
        chosen = self._method(method)
        if self.n == 0:
            raise ValueError("no reports: a confidence interval needs n >= 1")
        if chosen == "normal":
            if self.std_errors is None:
                raise ValueError(
                    f"this estimate is post-processed ({self.post_processing}); formula "
                    "standard errors do not apply. Take intervals from the unbiased "
                    "estimate, or use ci(..., method='wilson') there."
                )
            low, high = intervals.normal_interval(self.frequencies, self.std_errors, 1 - level)
            return ConfidenceInterval(low, high)
        binomial = intervals.clopper_pearson if chosen == "clopper-pearson" else intervals.wilson_interval
        lo, hi = binomial(self.support_counts, self.n, 1 - level)
        gap = self.p_star - self.q_star
        return ConfidenceInterval(np.clip((lo - self.q_star) / gap, 0.0, 1.0),
                                  np.clip((hi - self.q_star) / gap, 0.0, 1.0))

    def manipulation_bound(self, m_fake: int) -> NDArray[np.float64]:
        """The most ``m_fake`` fake reports among these ``n`` can move each unbiased share.

        ``m_fake / (n (p* - q*))`` per category: one report's debiased
        contribution ``(1[v in S(y)] - q*) / (p* - q*)`` ranges over an interval
        of width ``1 / (p* - q*)``, so ``m_fake`` chosen reports move the mean
        from what the genuine ones give by at most that, whatever the data
        (:mod:`deniable._manipulation`). It bounds the unbiased estimate, not a
        post-processed one.
        """
        from deniable._manipulation import Manipulation, frequency_sensitivity

        if not np.all(np.isfinite(self.p_star)):
            raise NotImplementedError(f"{self.mechanism} is decoded by least squares; no manipulation bound")
        output, spread = frequency_sensitivity(self.p_star, self.q_star)
        bound = Manipulation(self.mechanism, output, np.ones_like(output), spread).bound(m_fake, self.n)
        return np.asarray(bound, dtype=float)

    def manipulation_note(self) -> str:
        """:meth:`manipulation_bound` as the sentence the repr, the command line and the results page
        show ('' without reports, for RAPPOR, or after post-processing)."""
        if self.n == 0 or not np.all(np.isfinite(self.p_star)) or self.post_processing != "none":
            return ""
        worst = float(np.max(1 / (self.p_star - self.q_star)))
        return (f"m fake reports among these {self.n:,} could move a share by at most m \u00d7 "
                f"{worst / self.n:.3g} ({worst:.4g}/n per fake report)")

    def consistent(self, method: str = "norm-sub") -> Estimate:
        """A new Estimate on (or towards) the probability simplex, with the same target.

        Methods (Wang et al., NDSS 2020): ``"clip"`` (negatives to 0),
        ``"normalize"`` (shift all entries equally so they sum to 1),
        ``"norm-mul"``, ``"norm-sub"`` (the default; equal to ``"project"``,
        the Euclidean projection onto the simplex), ``"base-cut"`` (zero the
        estimates below their Bonferroni-corrected significance threshold),
        ``"mle"`` (the maximum-likelihood frequencies on the simplex with
        bootstrap standard errors, solved exactly), ``"ibu"`` (the same
        likelihood maximized by the iterative Bayesian update, the EM of
        Arcolezi et al., to a certified log-likelihood gap).
        Post-processing costs no privacy but is biased, so the result carries
        no formula standard errors (the MLE carries bootstrap ones).
        """
        if method in ("mle", "ibu"):
            fit = mle.fit(self, method="exact" if method == "mle" else "ibu")
            return replace(self, frequencies=fit.frequencies, std_errors=fit.std_errors, post_processing=method)

        freqs = consistency.apply(method, self.frequencies, self.std_errors)
        label = method if self.post_processing == "none" else f"{self.post_processing}+{method}"
        return replace(self, frequencies=freqs, std_errors=None, post_processing=label)

    def _table(self, confidence_level: float, method: str | None) -> ResultTable:
        """Per category: ``estimate``, ``std_error``, ``ci_low``, ``ci_high`` (without standard errors after
        post-processing; NaN without reports), ``observed`` (and ``truth`` of a simulation)."""
        columns: dict[str, Any] = {"estimate": self.frequencies}
        if self.std_errors is not None:
            nan = np.full(len(self.domain), np.nan)
            low, high = self.confidence_interval(confidence_level, method) if self.n else (nan, nan)
            columns.update(std_error=self.std_errors, ci_low=low, ci_high=high)
        if self._observed:
            columns["observed"] = self.observed
        if self.truth is not None:
            columns["truth"] = self.truth
        fields = {"mechanism": self.mechanism, "epsilon": self.epsilon, "n": self.n, "target": self.target,
                  "post_processing": self.post_processing}
        return ResultTable(fields, columns, "category", self.domain, "categories")

    def to_frame(self, confidence_level: float | None = None, method: str | None = None) -> Any:
        """A pandas DataFrame, one row per category (needs pandas).

        Columns: ``estimate``, ``std_error`` (a standard error), ``ci_low`` and
        ``ci_high`` (the interval at ``confidence_level``, 0.95 by default, by
        ``method``), ``observed`` (``truth`` of a simulation) and ``target``;
        ``frame.attrs`` holds ``target`` and ``level``.
        """
        frame = super().to_frame(confidence_level, method)
        frame["target"] = self.target
        frame = frame.set_index("category")
        frame.attrs.update(target=self.target, level=0.95 if confidence_level is None else confidence_level)
        return frame

    def _caption(self) -> str:
        return (f"{self.mechanism}, \u03b5 = {self.epsilon:.4g}, n = {self.n:,}"
                + ("" if self.post_processing == "none" else f" ({self.post_processing})"))

    def _note(self, more: int) -> str:
        line = self.manipulation_note()
        return (f"{more} more categories (to_frame() has all). " if more > 0 else "") + (
            f"target: {self.target} ({_TARGET_WORDS[self.target]})") + (f". {line}" if line else "")

    def __repr__(self) -> str:
        head = (
            f"{type(self).__name__}({self.mechanism}, epsilon={self.epsilon:.6g}, n={self.n}, "
            f"target={self.target}"
            + (f", {self.post_processing}" if self.post_processing != "none" else "")
            + f")\n  target: {_TARGET_WORDS[self.target]}"
        )
        if line := self.manipulation_note():
            head += f"\n  {line}"
        errors = self.std_errors is not None
        header = f"  {'category':>12}  {'estimate':>8}"
        if errors:
            header += f"  {'std error':>9}  95% interval"
        rows = [header]
        shown = min(len(self.domain), 20)
        if self.std_errors is not None:
            low, high = self.ci(0.95) if self.n else (self.frequencies, self.frequencies)
        for i in range(shown):
            row = f"  {self.domain[i]!s:>12}  {self.frequencies[i]: .5f}"
            if self.std_errors is not None:
                row += f"  {self.std_errors[i]:9.5f}  [{low[i]: .4f}, {high[i]: .4f}]"
            rows.append(row)
        if len(self.domain) > shown:
            rows.append(f"  ... {len(self.domain) - shown} more")
        return "\n".join([head, *rows])


# --------------------------------------------------------------------- numeric
__all__ += ["MeanEstimate", "HistogramEstimate"]


@dataclass(frozen=True, eq=False)
class HistogramEstimate(Result):
    """An estimated distribution of the respondents' (clamped) values on a grid.

    ``probabilities[i]`` is the estimated share of respondents whose value
    lies in ``[edges[i], edges[i+1])`` (original units; sums to 1).
    ``method`` names the reconstruction (``"ems"``, ``"em"``); ``iterations``
    and ``converged`` describe its run.

    Parameters
    ----------
    edges : numpy.ndarray
        The ``d + 1`` bin edges, original units, increasing.
    probabilities : numpy.ndarray
        The ``d`` estimated bin shares, summing to 1.
    method : str
        The reconstruction: ``"ems"`` (EM with smoothing) or ``"em"``.
    iterations : int
        The iterations it ran.
    converged : bool
        Whether it reached its tolerance before its iteration limit.

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> rng = np.random.default_rng(0)
    >>> m = dn.SquareWave(0, 1, epsilon=1.0)
    >>> est = m.estimate(m.privatize_many(rng.beta(2, 5, 2000), rng=rng))
    >>> h = est.histogram
    >>> h.method, h.converged, round(float(h.probabilities.sum()), 6)
    ('ems', True, 1.0)
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

    ci_methods: ClassVar[tuple[str, ...]] = ()
    _methods_note: ClassVar[str] = " to a reconstructed distribution (it carries no standard errors)"

    def confidence_interval(self, confidence_level: float = 0.95, method: str | None = None) -> ConfidenceInterval:
        """Refused: the reconstruction carries no standard errors, so no interval method applies."""
        refuse_method(method, self.ci_methods, self._methods_note)

    def _table(self, confidence_level: float, method: str | None) -> ResultTable:
        """Per bin: its edges ``low``, ``high`` and ``probability``; the reconstruction in the fields."""
        fields = {"reconstruction": self.method, "iterations": self.iterations, "converged": self.converged}
        columns = {"low": self.edges[:-1], "high": self.edges[1:], "probability": self.probabilities}
        return ResultTable(fields, columns, "bin", range(len(self.probabilities)), "bins")

    def _caption(self) -> str:
        return f"distribution ({self.method}, {self.iterations} iterations)"

    def __repr__(self) -> str:
        return (
            f"HistogramEstimate({len(self.probabilities)} bins on [{self.edges[0]:.6g}, "
            f"{self.edges[-1]:.6g}], {self.method}, {self.iterations} iterations)"
        )


@dataclass(frozen=True, eq=False)
class MeanEstimate(Result):
    r"""Debiased mean of numeric answers, with a standard error and intervals.

    The target decides what the mean estimates and which error it carries:

    * ``"population"`` (the default): the mean of the population the
      respondents were sampled from. The debiased reports ``t_i`` are then
      independent and identically distributed with that mean, and their
      variance is the noise's plus the spread of the values, so the standard
      error is the sample one, ``s / sqrt(n)`` (:attr:`sample_std_error`).
    * ``"respondents"``: the mean of these respondents' (clamped) values,
      fixed. Only the randomization is random, and the standard error comes
      from the mechanism's variance formula with the respondents' values
      held fixed (plugged in from the reports' first two moments; see the
      mechanism's ``estimate_from``). The sample error would also count the
      spread of the values, so it is conservative here.

    Parameters
    ----------
    mechanism : str
        The name of the mechanism that made the reports.
    epsilon : float
        Its privacy loss per report.
    mean : float
        The estimated mean of the values after clamping to ``[low, high]``
        (clamping is part of every numeric mechanism); the same for both
        targets.
    std_error : float
        The standard error for ``target``.
    sample_std_error : float
        :math:`s / \sqrt{n}` from the spread of the debiased reports (equal
        to ``std_error`` when the target is the population).
    n : int
        The number of reports.
    low, high : float
        The declared range of the values.
    delta : float, optional
        The delta of an (epsilon, delta) mechanism (Gaussian); None for pure
        epsilon-LDP.
    histogram : HistogramEstimate, optional
        An estimate of the whole distribution where the mechanism supports
        one, else None.
    target : {"population", "respondents"}, default "population"
        What the mean estimates (above).
    report_spread : float, optional
        The range of one debiased report (original units; ``inf`` for
        unbounded noise); None where not given.

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> rng = np.random.default_rng(0)
    >>> m = dn.Laplace(0, 10, epsilon=1.0)
    >>> est = m.estimate(m.privatize_many(rng.uniform(0, 10, 2000), rng=rng))
    >>> est.n, est.target, abs(est.mean - 5) < 5 * est.std_error
    (2000, 'population', True)
    >>> ci = est.confidence_interval()
    >>> bool(ci.low < est.mean < ci.high)
    True
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
    target: Target = "population"
    report_spread: float | None = None
    """The range of one debiased report (original units; ``inf`` for unbounded noise), which bounds how
    far one fake report moves the mean times ``n`` (:meth:`manipulation_bound`); None where not given."""

    def manipulation_bound(self, m_fake: int) -> float:
        """The most ``m_fake`` fake reports among these ``n`` can move the mean: ``m_fake * spread / n``.

        The spread is the range of one report's debiased value (:mod:`deniable._manipulation`);
        infinite for mechanisms with unbounded noise (Laplace, Gaussian).
        """
        from deniable._manipulation import Manipulation

        if self.report_spread is None:
            raise NotImplementedError(f"{self.mechanism}: no manipulation bound was recorded")
        spread = self.report_spread
        return float(Manipulation(self.mechanism, spread, self.high - self.low, spread).bound(m_fake, self.n))

    def confidence_interval(self, confidence_level: float = 0.95, method: str | None = None) -> ConfidenceInterval:
        """Normal interval ``mean ± z · std_error`` at ``confidence_level`` for :attr:`target` (floats;
        ``ci`` is its older spelling)."""
        level = check_level(confidence_level)
        self._method(method)
        low, high = intervals.normal_interval(self.mean, self.std_error, 1 - level)
        return ConfidenceInterval(low, high)

    def _table(self, confidence_level: float, method: str | None) -> ResultTable:
        """One row: ``estimate`` (the mean), ``std_error``, ``ci_low``, ``ci_high``; the range in the fields."""
        low, high = self.confidence_interval(confidence_level, method)
        fields = {"mechanism": self.mechanism, "epsilon": self.epsilon, "delta": self.delta, "n": self.n,
                  "target": self.target, "low": self.low, "high": self.high}
        columns = {"estimate": self.mean, "std_error": self.std_error, "ci_low": low, "ci_high": high}
        return ResultTable(fields, columns, extra={"range": f"[{self.low:g}, {self.high:g}]"})

    _headers: ClassVar[dict[str, str]] = {"estimate": "mean"}

    def _caption(self) -> str:
        privacy = f"\u03b5 = {self.epsilon:.4g}" + (f", \u03b4 = {self.delta:.3g}" if self.delta is not None else "")
        return f"{self.mechanism}, {privacy}, n = {self.n:,}"

    def _note(self, more: int) -> str:
        return f"target: {self.target} ({_TARGET_WORDS[self.target]})"

    def __repr__(self) -> str:
        low, high = self.ci(0.95)
        extra = f", {self.histogram!r}" if self.histogram is not None else ""
        privacy = f"epsilon={self.epsilon:.6g}" + (
            f", delta={self.delta:.3g}" if self.delta is not None else ""
        )
        fakes = (f"; m fake reports could move it by at most m \u00d7 {self.report_spread / self.n:.3g}"
                 if self.report_spread is not None and self.n else "")
        return (
            f"MeanEstimate({self.mechanism}, {privacy}, n={self.n}, target={self.target}: "
            f"mean {self.mean:.6g}, std error {self.std_error:.3g}, "
            f"95% interval [{low:.6g}, {high:.6g}]{extra}{fakes})"
        )
