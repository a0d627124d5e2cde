"""Correlations between randomized answers and with plain variables (RRreg's ``RRcor``), with delta-method SEs.

A randomized answer ``z`` about a latent value ``t`` (a one-group design's
transition matrix ``P[t, r] = P(answer r | truth t)``) has ``E[z | t] = m0 + c t``
for every design that answers truthfully with some probability and otherwise
draws from a distribution that ignores ``t`` (all of RRreg's one-group
designs; ``c`` is RRreg's "probability of answering the sensitive question").
So ``x = (z - m0) / c`` is unbiased for ``t`` and ``x = t + u`` with noise ``u``
uncorrelated with ``t`` and with every other variable:

    Cov(x_i, x_j) = Cov(t_i, t_j),   Var(x) = Var(t) (1 + q),   q = E[Var(z | t)] / (c^2 Var(t)).

The estimate (Fox & Tracy's, as RRcor computes it) corrects the observed
Pearson correlation for the noise:

    r_ij = cor(z_i, z_j) sign(c_i c_j) sqrt((1 + q_i) (1 + q_j)),

with ``q`` at the moment estimates of the latent distribution (``w``, the
answers' shares put through the inverse of ``P``): ``Var(t) = sum_t w_t t^2 -
(sum_t w_t t)^2`` and ``E[Var(z | t)] = sum_t w_t Var(z | t)``. A plain variable
has ``q = 0``. For two binary attributes ``r`` is the phi coefficient of the
latent 2 x 2 table. The estimate is clipped to [-1, 1], as RRcor does.

Standard errors by the delta method: ``r`` is a smooth function ``g`` of the
means ``m`` of per-respondent moments (each randomized answer's category
indicators, each plain variable and its square, the products of pairs), so
``Var(r) = grad g' Cov(h) grad g / n`` with the gradient taken by central
differences of ``g``. (RRcor offers bootstrap SEs instead; the two agree to
the bootstrap's Monte Carlo error.) Intervals: ``"fisher"`` (default)
transforms ``tanh(atanh(r) +- z SE / (1 - r^2))`` and stays in [-1, 1];
``"wald"`` is ``r +- z SE``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from deniable._intervals import z_for
from deniable._results import ConfidenceInterval, Result, ResultTable, check_level, pandas
from deniable.survey._design_base import Design

__all__ = ["Correlation", "correlation"]


@dataclass(frozen=True)
class _Variable:
    """One column: its values, and for a randomized answer its design's answers, transition matrix and the
    pseudo-inverse of its transpose."""

    name: str
    values: NDArray[np.float64]
    design: Design | None
    answers: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    matrix: NDArray[np.float64] = field(default_factory=lambda: np.zeros((0, 0)))
    inverse: NDArray[np.float64] = field(default_factory=lambda: np.zeros((0, 0)))

    @classmethod
    def build(cls, name: str, values: NDArray[np.float64], design: Design | None) -> _Variable:
        if design is None:
            return cls(name, values, None)
        matrix = design.transition_matrix(1)
        return cls(name, values, design, np.asarray(design.responses, dtype=np.float64), matrix,
                   np.asarray(np.linalg.pinv(matrix.T), dtype=np.float64))

    def moments(self) -> NDArray[np.float64]:
        """Per respondent, the moments ``g`` needs: the answer's category indicators, or ``(v, v^2)``."""
        if self.design is None:
            return np.column_stack([self.values, self.values**2])
        return (self.values[:, None] == self.answers).astype(np.float64)

    def summary(self, m: NDArray[np.float64]) -> tuple[float, float, float, float]:
        """From this variable's moment means ``m``: the answer's mean and variance, ``sign(c)`` and ``q``."""
        if self.design is None:
            return float(m[0]), float(m[1] - m[0] ** 2), 1.0, 0.0
        r, p = self.answers, self.matrix
        mean, var = float(m @ r), float(m @ r**2 - (m @ r) ** 2)
        c = float(p[1] @ r - p[0] @ r)
        states = np.arange(p.shape[0], dtype=np.float64)
        w = self.inverse @ m  # the moment estimate of the latent distribution (least squares)
        latent_var = float(w @ states**2 - (w @ states) ** 2)
        noise = float(w @ (p @ r**2 - (p @ r) ** 2)) / c**2
        return mean, var, float(np.sign(c)), noise / latent_var if latent_var > 0 else np.inf


def _check_design(name: str, design: Any) -> Design:
    if not isinstance(design, Design):
        raise TypeError(f"designs[{name!r}] must be a deniable.survey Design (e.g. design('Warner', p=0.8)); "
                        f"got {design!r}")
    if design.groups != 1:
        raise ValueError(f"designs[{name!r}]: {design.model} has two groups; correlation takes one-group designs")
    p = design.transition_matrix(1)
    r = np.asarray(design.responses, dtype=np.float64)
    means = p @ r
    if p.shape[0] < 2 or not np.allclose(np.diff(means), means[1] - means[0], atol=1e-12) or means[1] == means[0]:
        raise ValueError(f"designs[{name!r}]: {design.model}'s expected answer is not a linear function of the "
                         "truth, so the answers do not estimate it (correlation needs E[answer | t] = m0 + c t, "
                         "c != 0)")
    return design


def _pair(a: _Variable, b: _Variable, ma: NDArray[np.float64], mb: NDArray[np.float64], mab: float) -> float:
    """``r`` of two variables from their moment means and the mean of the product of their values."""
    mean_a, var_a, sign_a, q_a = a.summary(ma)
    mean_b, var_b, sign_b, q_b = b.summary(mb)
    cor = (mab - mean_a * mean_b) / np.sqrt(var_a * var_b)
    return float(cor * sign_a * sign_b * np.sqrt((1 + q_a) * (1 + q_b)))


def _pair_estimate(a: _Variable, b: _Variable) -> tuple[float, float]:
    """``r`` (clipped to [-1, 1]) and its delta-method standard error (of the unclipped estimate) for one pair."""
    ha, hb = a.moments(), b.moments()
    h = np.column_stack([ha, hb, a.values * b.values])
    m = h.mean(axis=0)
    ka = ha.shape[1]

    def g(v: NDArray[np.float64]) -> float:
        return _pair(a, b, v[:ka], v[ka:-1], float(v[-1]))

    r = g(m)
    grad = np.empty(m.size)
    for j in range(m.size):
        step = 1e-6 * max(1.0, abs(float(m[j])))
        up, down = m.copy(), m.copy()
        up[j] += step
        down[j] -= step
        grad[j] = (g(up) - g(down)) / (2 * step)
    cov = np.atleast_2d(np.cov(h, rowvar=False))
    variance = max(float(grad @ cov @ grad), 0.0) / len(h)
    return float(np.clip(r, -1.0, 1.0)), float(np.sqrt(variance))


@dataclass(frozen=True, eq=False)
class Correlation(Result):
    """Correlations of latent (randomized) and plain variables: :func:`correlation`'s result.

    ``matrix`` and ``std_errors`` are pandas DataFrames indexed by the
    variables (diagonal 1 and NaN); ``n`` the complete rows used; ``designs``
    which columns are randomized answers. As a table (``to_frame()``), one
    row per pair ``"a ~ b"``: ``estimate``, ``std_error``, ``ci_low``,
    ``ci_high``, ``pvalue`` (Wald test of no correlation).
    """

    matrix: Any
    std_errors: Any
    n: int
    n_dropped: int
    designs: dict[str, Design]

    ci_methods: ClassVar[tuple[str, ...]] = ("fisher", "wald")

    def _pairs(self) -> tuple[list[str], NDArray[np.float64], NDArray[np.float64]]:
        names = list(self.matrix.index)
        i, j = np.triu_indices(len(names), 1)
        labels = [f"{names[a]} ~ {names[b]}" for a, b in zip(i, j, strict=True)]
        return labels, self.matrix.to_numpy()[i, j], self.std_errors.to_numpy()[i, j]

    def confidence_interval(self, confidence_level: float = 0.95, method: str | None = None) -> ConfidenceInterval:
        """Per pair (in ``to_frame()``'s order): ``"fisher"`` ``tanh(atanh(r) +- z SE / (1 - r^2))``, or
        ``"wald"`` ``r +- z SE`` (also for an estimate clipped to -1 or 1, there clipped to [-1, 1])."""
        level, chosen = check_level(confidence_level), self._method(method)
        _, r, se = self._pairs()
        z = z_for(1 - level)
        if chosen == "wald":
            return ConfidenceInterval(r - z * se, r + z * se)
        inner = np.abs(r) < 1  # on the bound (a clipped estimate) the Wald interval, clipped
        safe = np.where(inner, r, 0.0)
        spread = z * se / (1 - safe**2)
        low = np.where(inner, np.tanh(np.arctanh(safe) - spread), np.clip(r - z * se, -1, 1))
        high = np.where(inner, np.tanh(np.arctanh(safe) + spread), np.clip(r + z * se, -1, 1))
        return ConfidenceInterval(low, high)

    def _table(self, confidence_level: float, method: str | None) -> ResultTable:
        from scipy import stats

        labels, r, se = self._pairs()
        low, high = self.confidence_interval(confidence_level, method)
        with np.errstate(divide="ignore", invalid="ignore"):
            pvalue = 2 * stats.norm.sf(np.abs(r / se))
        fields = {"n": self.n, "n_dropped": self.n_dropped,
                  "designs": {k: d.model for k, d in self.designs.items()}}
        columns = {"estimate": r, "std_error": se, "ci_low": low, "ci_high": high, "pvalue": pvalue}
        return ResultTable(fields, columns, "pair", labels, "pairs")

    def __repr__(self) -> str:
        return f"Correlation(n={self.n}, designs={ {k: d.model for k, d in self.designs.items()} })\n{self.matrix}"


def correlation(data: Any, designs: dict[str, Design], columns: list[str] | None = None) -> Correlation:
    """Pearson correlations of the latent truths behind randomized answers, and with plain columns (RRcor).

    Parameters
    ----------
    data : DataFrame or mapping of columns
        One row per respondent. The columns named in ``designs`` hold the
        randomized answers (the design's responses: 0/1, a count of red cards
        for Kuk, the category for FR); the others are plain numbers.
    designs : dict
        Column name to its one-group :class:`~deniable.survey.Design`.
    columns : list of str, optional
        The variables to correlate, in order (default: every column of ``data``).
        Rows with a missing value in any of them are dropped.

    Returns
    -------
    Correlation
        ``matrix`` (the estimates ``r_ij = cor(z_i, z_j) sign(c_i c_j) sqrt((1 + q_i)(1 + q_j))``, see
        :mod:`deniable.survey._correlation`), ``std_errors`` (delta method), ``confidence_interval()``,
        ``to_frame()`` with one row per pair.

    Raises
    ------
    ValueError
        A design's column missing from ``data``, an answer outside its design's responses, a plain column
        that is not numeric, a two-group design, fewer than two variables or too few complete rows.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> import deniable.survey as sv
    >>> rng = np.random.default_rng(1)
    >>> t = rng.random(4000) < 0.3
    >>> d = sv.Warner(p=0.8)
    >>> df = pd.DataFrame({"rr": d.privatize_many(t, rng=rng), "age": 40 + 10 * t + rng.normal(0, 5, 4000)})
    >>> cor = sv.correlation(df, designs={"rr": d})
    >>> bool(abs(cor.matrix.loc["rr", "age"] - 0.67) < 0.1)
    True
    """
    pd = pandas()
    frame = data if isinstance(data, pd.DataFrame) else pd.DataFrame(data)
    if not isinstance(designs, dict):
        raise TypeError(f"designs must be a dict of column name to Design; got {type(designs).__name__}")
    names = list(frame.columns) if columns is None else list(columns)
    for name in [*designs, *names]:
        if name not in frame.columns:
            raise ValueError(f"{name!r} is not a column of data (columns: {', '.join(map(str, frame.columns))})")
    extra = [k for k in designs if k not in names]
    if extra:
        raise ValueError(f"designs names {', '.join(map(repr, extra))}, which columns leaves out")
    if len(names) < 2:
        raise ValueError(f"correlation needs at least two variables; got {names}")
    used = frame[names]
    for name in names:
        if not pd.api.types.is_numeric_dtype(used[name]) and not pd.api.types.is_bool_dtype(used[name]):
            raise ValueError(f"column {name!r} must be numeric; got dtype {used[name].dtype}")
    complete = used.dropna()
    if len(complete) < 3:
        raise ValueError(f"data has {len(complete)} complete rows in {', '.join(map(repr, names))}; need at least 3")
    variables = []
    for name in names:
        values = complete[name].to_numpy(dtype=np.float64)
        design = _check_design(name, designs[name]) if name in designs else None
        if design is not None:
            bad = ~np.isin(values, np.asarray(design.responses, dtype=np.float64))
            if bad.any():
                raise ValueError(f"column {name!r}: answers must be one of {', '.join(map(str, design.responses))} "
                                 f"for {design.model}; got {float(values[bad][0])!r}")
        elif np.ptp(values) == 0:
            raise ValueError(f"column {name!r} is constant in the rows used: it has no correlation")
        variables.append(_Variable.build(name, values, design))
    k = len(names)
    matrix, se = np.eye(k), np.full((k, k), np.nan)
    for a in range(k):
        for b in range(a + 1, k):
            matrix[a, b], se[a, b] = _pair_estimate(variables[a], variables[b])
            matrix[b, a], se[b, a] = matrix[a, b], se[a, b]
    return Correlation(pd.DataFrame(matrix, index=names, columns=names), pd.DataFrame(se, index=names, columns=names),
                       len(complete), len(frame) - len(complete), {k: designs[k] for k in names if k in designs})
