"""Prevalence by the groups of a plain covariate (year of study, region), and a test of equal prevalence.

For each level ``l`` of the covariate, :func:`~deniable.survey._prevalence`
on that level's answers. The likelihood-ratio test of "the prevalence is the
same in every level" compares

* the full model: one prevalence per level (and, for a two-group design,
  one extra parameter per level), ``llf_full = sum_l max ll_l``;
* the null model: one prevalence shared by all levels, the extra parameter
  still free per level, ``llf_null = max_pi sum_l max_extra ll_l(pi, extra)``;

``LR = 2 (llf_full - llf_null)`` is referred to ``chi2`` with ``(L - 1)``
degrees of freedom (``(L - 1)(m - 1)`` for the m category shares of FR),
which holds asymptotically when the true prevalence is inside (0, 1).
Both maxima are over the parameter space (maximum likelihood, also for
Kuk with several cards, whose reported estimate is RRuni's moment one).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable._sample_design import sample_design
from deniable.survey._designs import Design
from deniable.survey._prevalence import (
    PrevalenceFit,
    answer_cells,
    answer_counts,
    loglik,
    maximum_likelihood,
    prevalence_from_counts,
)
from deniable.survey._weighted import influence, weighted_prevalence

__all__ = ["GroupedPrevalence", "prevalence_by"]


@dataclass(frozen=True)
class GroupedPrevalence:
    """Prevalence per level of a plain covariate, with the likelihood-ratio test of equality.

    ``fits`` maps each level (in sorted order) to its :class:`PrevalenceFit`;
    ``lr_statistic``, ``df`` and ``pvalue`` test equal prevalence (by the
    ``test`` named: ``"likelihood ratio"``, or for a complex sample ``"wald"``,
    whose statistic ``lr_statistic`` then holds); ``dropped`` counts
    respondents whose covariate was missing.
    """

    design: Design
    fits: dict[Any, PrevalenceFit]
    lr_statistic: float
    df: int
    pvalue: float
    dropped: int
    test: str = "likelihood ratio"

    def to_frame(self, level: float = 0.95) -> Any:
        """A pandas DataFrame: level, n, parameter, estimate, std_error, ci_low, ci_high."""
        import pandas as pd

        frames = []
        for value, fit in self.fits.items():
            frame = fit.to_frame(level)
            frame.insert(0, "n", fit.n)
            frame.insert(0, "level", value)
            frames.append(frame)
        return pd.concat(frames, ignore_index=True)

    def _repr_html_(self) -> str:
        """The prevalence per level as an HTML table (Jupyter), the test of equal prevalence below."""
        from deniable._html import table

        rows = []
        for value, fit in self.fits.items():
            key = next(iter(fit.params))
            low, high = fit.ci()[key]
            rows.append([value, fit.n, fit.params[key], fit.bse[key], low, high])
        note = (f"equal prevalence: {self.test} statistic {self.lr_statistic:.3f}, df {self.df}, "
                f"p = {self.pvalue:.4g}" + (f"; {self.dropped} respondents without a level left out"
                                            if self.dropped else ""))
        return table(f"Prevalence by level ({self.design.model} design)",
                     ["level", "n", "prevalence", "std. error", "95% interval low", "interval high"], rows, note)

    def __repr__(self) -> str:
        parts = ", ".join(f"{k!r}: pi={f.params[next(iter(f.params))]:.4f} (n={f.n})" for k, f in self.fits.items())
        return (
            f"GroupedPrevalence({self.design.model}, {{{parts}}}, equal prevalence: "
            f"{'LR' if self.test == 'likelihood ratio' else 'Wald'}={self.lr_statistic:.3f}, "
            f"df={self.df}, p={self.pvalue:.4g})"
        )


def _missing(values: NDArray[Any]) -> NDArray[np.bool_]:
    if values.dtype.kind == "f":
        return np.isnan(values)
    if values.dtype == object:
        return np.array([v is None or (isinstance(v, float) and v != v) for v in values.tolist()], dtype=bool)
    return np.zeros(values.size, dtype=bool)


def prevalence_by(responses: Any, design: Design, by: Any, group: Any = None, *, data: Any = None,
                  **sample: Any) -> GroupedPrevalence:
    """Prevalence in each level of ``by`` (one plain value per respondent) and the test of equal prevalence.

    Respondents whose ``by`` is missing (None or NaN) are left out and counted
    in ``dropped``; every level needs at least 2 answers (per group).
    ``sample``: the complex-sample arguments of :func:`~deniable.survey.prevalence`
    (``weights``, ``strata``, ``cluster``, ``fpc``, ``repweights``, ...). With
    them each level is a domain of the whole sample (its design-based SE
    keeps every PSU) and equality is tested by the design-based Wald test
    of the levels' differences (the prevalence; FR's first m - 1 shares),
    chi-square with ``(L - 1)`` times that many degrees of freedom. With
    ``data``, the answers, ``by``, ``group`` and those arguments may be column names.
    """
    if data is not None:
        responses, by, group = (data[v] if isinstance(v, str) else v for v in (responses, by, group))
    if any(v is not None for v in sample.values()):
        return _weighted_prevalence_by(responses, design, by, group, data, sample)
    answers = np.asarray(responses)
    levels_of = np.asarray(by)
    if levels_of.shape != (answers.size,):
        raise ValueError(f"by must have one value per respondent ({answers.size}); got shape {levels_of.shape}")
    groups = None if group is None else np.asarray(group)
    keep = ~_missing(levels_of)
    levels = sorted(set(levels_of[keep].tolist()), key=lambda v: (str(type(v)), v))
    if len(levels) < 2:
        raise ValueError(f"by must have at least 2 levels to compare; got {len(levels)}")
    counts: dict[Any, NDArray[np.int64]] = {}
    fits: dict[Any, PrevalenceFit] = {}
    for value in levels:
        rows = keep & (levels_of == value)
        try:
            counts[value] = answer_counts(answers[rows], design, None if groups is None else groups[rows])
            fits[value] = prevalence_from_counts(counts[value], design)
        except ValueError as exc:
            raise ValueError(f"level {value!r} of by: {exc}") from None
    full = sum(loglik(design, c, maximum_likelihood(design, c, fits[v].params)) for v, c in counts.items())
    null, df = _null(design, counts, fits)
    statistic = max(0.0, 2 * (full - null))
    from scipy.stats import chi2

    return GroupedPrevalence(design, fits, statistic, df, float(chi2.sf(statistic, df)), int((~keep).sum()))


def _null(design: Design, counts: dict[Any, NDArray[np.int64]], fits: dict[Any, PrevalenceFit]) -> tuple[float, int]:
    """The null log-likelihood (one prevalence for all levels) and the test's degrees of freedom."""
    extra_levels = len(counts) - 1
    if design.extra is None:  # the levels share every parameter: the pooled fit
        pooled = np.sum(np.stack(list(counts.values())), axis=0)
        start = prevalence_from_counts(pooled, design).params
        names = design.param_names
        free = len(names) - 1 if len(names) > 1 else 1  # FR's m shares add up to 1
        return loglik(design, pooled, maximum_likelihood(design, pooled, start)), extra_levels * free
    from scipy.optimize import minimize_scalar

    def profile(pi: float) -> float:
        return sum(
            loglik(design, c, maximum_likelihood(design, c, fits[v].params, fixed=("pi", pi)))
            for v, c in counts.items()
        )

    best = minimize_scalar(lambda pi: -profile(pi), bounds=(0.0, 1.0), method="bounded", options={"xatol": 1e-9})
    return max(-float(best.fun), profile(0.0), profile(1.0)), extra_levels


def _weighted_prevalence_by(responses: Any, design: Design, by: Any, group: Any, data: Any,
                           arguments: dict[str, Any]) -> Any:
    """:func:`~deniable.survey.prevalence_by` from a complex sample: domain estimates and a Wald test."""
    from scipy.stats import chi2

    cells = answer_cells(responses, design, group)
    sample = sample_design(cells.size, data=data, **arguments)
    assert sample is not None
    levels_of = np.asarray(by)
    if levels_of.shape != (cells.size,):
        raise ValueError(f"by must have one value per respondent ({cells.size}); got shape {levels_of.shape}")
    keep = ~_missing(levels_of)
    levels = sorted(set(levels_of[keep].tolist()), key=lambda v: (str(type(v)), v))
    if len(levels) < 2:
        raise ValueError(f"by must have at least 2 levels to compare; got {len(levels)}")
    fits: dict[Any, PrevalenceFit] = {}
    parts, replicates, randomization = [], [], []
    for value in levels:
        rows = np.flatnonzero(keep & (levels_of == value))
        try:
            fits[value] = weighted_prevalence(cells[rows], design, sample, rows)
        except ValueError as exc:
            raise ValueError(f"level {value!r} of by: {exc}") from None
        params, z, replicate, added = influence(cells[rows], design, sample, rows)
        parts.append(z)
        replicates.append(replicate)
        randomization.append(np.zeros((z.shape[1], z.shape[1])) if added is None else added)
    tested = 1 if design.groups > 1 or len(design.param_names) == 1 else len(design.param_names) - 1
    k = len(design.param_names)
    full = np.concatenate([np.array(list(f.params.values())) for f in fits.values()])
    if sample.repweights is None:
        from scipy.linalg import block_diag

        cov = sample.variance(np.hstack(parts)) + block_diag(*randomization)
    else:
        cov = sample.replicate_variance(lambda w: np.concatenate([r(w) for r in replicates]), full)
    select = np.concatenate([np.arange(tested) + j * k for j in range(len(levels))])
    theta, v = full[select].reshape(len(levels), tested), cov[np.ix_(select, select)]
    contrast = np.kron(np.hstack([np.eye(len(levels) - 1), -np.ones((len(levels) - 1, 1))]), np.eye(tested))
    diff = contrast @ theta.ravel()
    statistic = float(diff @ np.linalg.solve(contrast @ v @ contrast.T, diff))
    df = (len(levels) - 1) * tested
    return GroupedPrevalence(design, fits, statistic, df, float(chi2.sf(statistic, df)), int((~keep).sum()),
                             test="wald")
