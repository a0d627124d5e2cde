"""What the survey regressions share: the statsmodels model and results of a deniable likelihood, the formula's rows.

:class:`_Rows` reads a formula on the data (patsy, with R's syntax; see
:mod:`deniable.survey._formula`); :class:`_RRModel` and :class:`_RRResults`
wrap a likelihood with exact derivatives in statsmodels; :func:`_results`
builds the results at a maximum. Used by :mod:`deniable.survey._regression`
(``logit``, ``linear``) and :mod:`deniable.survey._regression_predictors`
(randomized answers as predictors). Needs the ``survey`` extra.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import patsy
from statsmodels.base.model import GenericLikelihoodModel, GenericLikelihoodModelResults, LikelihoodModelResults

from deniable._results import ConfidenceInterval, Result, ResultTable, check_level
from deniable.survey._designs import Design
from deniable.survey._formula import plain, r_syntax, split_offsets, warn_coded_numbers, with_offset
from deniable.survey._likelihood import Likelihood, Maximum

__all__: list[str] = []

OFFSET_COLUMN = "(offset)"
"""The column that carries an ``offset=`` array into the formula (R's model frame names it so too)."""


class _RRModel(GenericLikelihoodModel):  # type: ignore[misc]
    """A statsmodels model whose log-likelihood, score and Hessian are a deniable likelihood's (exact)."""

    def __init__(self, endog: Any, exog: Any, likelihood: Likelihood, design_info: Any,
                 extra_names: list[str], offset_info: Any = None) -> None:
        self.likelihood = likelihood
        self.design_info = design_info
        self.offset_info = offset_info  # the formula's offset() terms (patsy), None without
        super().__init__(endog, exog, extra_params_names=extra_names or None)
        # degrees of freedom without the intercept (if any) and the extra parameters, also for "- 1" formulas
        k_exog = likelihood.k_params - len(extra_names)
        self.df_model = float(k_exog - self.k_constant)
        self.df_resid = float(len(endog) - likelihood.k_params)

    def loglike(self, params: Any) -> float:
        return self.likelihood.loglike(params)

    def loglikeobs(self, params: Any) -> Any:
        return self.likelihood.loglike_obs(params)

    def score(self, params: Any) -> Any:
        return self.likelihood.score(params)

    def score_obs(self, params: Any) -> Any:
        return self.likelihood.score_obs(params)

    def hessian(self, params: Any) -> Any:
        return self.likelihood.hessian(params)

_SE_NAMES = {"oim": "observed information", "opg": "outer product of scores",
             "robust": "sandwich (robust)", "cluster": "sandwich, clustered"}


class _RRResults(Result, GenericLikelihoodModelResults):  # type: ignore[misc]
    """statsmodels results of a randomized-response model, with its design and the rows dropped.

    Besides statsmodels' ``params``, ``bse``, ``conf_int()``, the result shape
    of :mod:`deniable._results`: ``confidence_interval`` (Wald, as
    ``conf_int``), ``std_errors``, ``to_dict`` and ``to_frame``.
    """

    title = "Randomized-response model"
    design: Design
    formula: str
    n_dropped: int
    cov_type: str
    sample: str | None = None
    design_effect: pd.Series | None = None
    converged: bool
    extra_at_bound: bool

    def summary(self, alpha: float = 0.05) -> Any:
        """statsmodels' summary table, titled with the design, noting the covariance and the rows dropped."""
        smry = super().summary(title=self._title(), alpha=alpha)
        notes = [f"Standard errors: {_SE_NAMES.get(self.cov_type, 'design-based')} (cov_type={self.cov_type!r})."]
        if self.sample is not None and self.design_effect is not None:
            deff = ", ".join(f"{k} {v:.3g}" for k, v in self.design_effect.items())
            notes += [f"Sample: {self.sample}.", f"Design effects: {deff}."]
        notes += [
            f"{self.n_dropped} row{'s' if self.n_dropped != 1 else ''} with missing values dropped.",
        ]
        if self.model.offset_info is not None:
            terms = ", ".join(map(_offset_name, self.model.offset_info.column_names))
            notes.append(f"Offset (coefficient fixed at 1): {terms}.")
        if self.extra_at_bound:
            notes.append(f"{self.model.exog_names[-1]} is on a bound of [0, 1]: no standard error; the "
                         "coefficients' are conditional on it.")
        smry.add_extra_txt(notes)
        return smry


    ci_methods: ClassVar[tuple[str, ...]] = ("wald",)

    def _title(self) -> str:
        p = ", ".join(f"{float(v):.6g}" for v in self.design.p)
        return f"{self.title}: {self.design.model} design, p = ({p})"

    @property
    def std_errors(self) -> Any:
        """The standard errors, ``bse`` as an array aligned with ``params``."""
        return np.asarray(self.bse)

    def confidence_interval(self, confidence_level: float = 0.95, method: str | None = None) -> ConfidenceInterval:
        """Wald intervals ``estimate +- z SE`` per parameter: the columns of ``conf_int(alpha=1 - level)``."""
        level = check_level(confidence_level)
        self._method(method)
        bounds = np.asarray(self.conf_int(alpha=1 - level))
        return ConfidenceInterval(bounds[:, 0], bounds[:, 1])

    def _table(self, confidence_level: float, method: str | None) -> ResultTable:
        """Per parameter: ``estimate``, ``std_error``, ``ci_low``, ``ci_high``, ``pvalue``; the model in the
        fields."""
        low, high = self.confidence_interval(confidence_level, method)
        fields = {"design": getattr(self.design, "model", None), "formula": self.formula,
                  "n": int(self.nobs),
                  "n_dropped": self.n_dropped, "cov_type": self.cov_type, "converged": self.converged,
                  "llf": float(self.llf)}
        columns = {"estimate": np.asarray(self.params), "std_error": self.std_errors, "ci_low": low,
                   "ci_high": high, "pvalue": np.asarray(self.pvalues)}
        if self.design_effect is not None:
            fields["sample"] = self.sample
            columns["design_effect"] = self.design_effect.to_numpy()
        return ResultTable(fields, columns, "parameter", list(self.model.exog_names), "parameters")

    def _repr_html_(self, max_rows: int = 60) -> str:
        """The summary table as HTML (Jupyter)."""
        return str(self.summary().as_html())


# ------------------------------------------------------------------ helpers
class _Rows:
    """The complete rows of a formula: outcome ``y`` and covariates ``x`` (patsy frames, ``x`` named by
    :attr:`names`), their ``labels`` in the data, the ``groups`` (or None) and how many rows were ``dropped``;
    ``offset`` (or None): per row the sum of the formula's ``offset()`` terms and the ``offset=`` argument,
    whose patsy design is ``offset_info``."""

    def __init__(self, y: pd.DataFrame, x: pd.DataFrame, labels: Any, groups: Any, dropped: int,
                 formula: str) -> None:
        self.y, self.x, self.labels, self.groups, self.dropped, self.formula = y, x, labels, groups, dropped, formula
        self.names = [plain(n) for n in x.columns]
        x.columns = self.names
        self.frame: pd.DataFrame = pd.DataFrame()  # all rows of the data, positions 0..n_rows-1
        self.n_rows = len(x)
        self.positions: Any = np.arange(len(x))  # the rows used, as positions in frame
        self.offset: Any = None
        self.offset_info: Any = None

    @classmethod
    def build(cls, formula: str, data: Any, design: Design, group: Any, env: Any, exclude: tuple[Any, ...] = (),
              offset: Any = None) -> _Rows:
        if not isinstance(formula, str) or "~" not in formula:
            raise ValueError(f"formula must be a string 'answer ~ terms'; got {formula!r}")
        frame = _frame(data, "data")
        index = frame.index
        frame = frame.reset_index(drop=True)
        frame, offset_term = offset_column(offset, frame, "data")
        frame_all, n_rows = frame, len(frame)
        groups = _groups(group, frame, design)
        if groups is not None:
            keep = groups.notna().to_numpy()
            frame, groups = frame[keep], groups[keep]
        try:
            named = tuple(str(v) for v in (*exclude, offset, OFFSET_COLUMN) if isinstance(v, str))
            y, x = patsy.dmatrices(r_syntax(formula, frame.columns, named) + offset_term, frame, NA_action="drop",
                                   return_type="dataframe", eval_env=env.with_outer_namespace(with_offset()))
        except patsy.PatsyError as err:
            raise ValueError(f"formula {formula!r}: {_explain(err, frame)}") from None
        warn_coded_numbers(formula, frame, x.design_info)
        info, offset_info = split_offsets(x.design_info, formula)
        total = None if offset_info is None else offset_sum(x[offset_info.column_names], index[x.index])
        if offset_info is not None:
            x = x[info.column_names]
            x.design_info = info
        g = None if groups is None else groups.loc[x.index].to_numpy()
        rows = cls(y, x, index[x.index], g, n_rows - len(x), formula)
        rows.frame, rows.n_rows, rows.positions = frame_all, n_rows, x.index.to_numpy()
        rows.offset, rows.offset_info = total, offset_info
        return rows

    def check_size(self, extra: list[str]) -> None:
        """Refuse too few rows (no more than the parameters) and collinear terms."""
        k = len(self.names) + len(extra)
        if not self.names:
            raise ValueError(f"formula {self.formula!r} has no coefficient to estimate (only offsets): "
                             "keep the intercept or a term")
        if len(self.x) <= k:
            raise ValueError(f"data has {len(self.x)} complete rows for {k} parameters "
                             f"({', '.join(self.names + extra)}): need more rows than parameters")
        rank = np.linalg.matrix_rank(self.x.to_numpy())
        if rank < self.x.shape[1]:
            raise ValueError(f"formula {self.formula!r}: the terms are collinear in the rows used "
                             f"(rank {rank} for {self.x.shape[1]} columns: {', '.join(self.names)})")


def offset_column(offset: Any, frame: pd.DataFrame, name: str) -> tuple[pd.DataFrame, str]:
    """The frame and the formula term of an ``offset=`` argument: a column of ``frame`` (named ``name`` in
    errors) or an array with one number per row (added to a copy of the frame as ``(offset)``)."""
    if offset is None:
        return frame, ""
    if isinstance(offset, str):
        if offset not in frame.columns:
            raise ValueError(f"offset {offset!r} is not a column of {name} "
                             f"(columns: {', '.join(map(str, frame.columns))})")
        return frame, f" + offset(Q({offset!r}))"
    values = np.asarray(offset)
    if values.ndim != 1 or len(values) != len(frame):
        raise ValueError(f"offset must be a column name or one number per row of {name} ({len(frame)}); "
                         f"got shape {values.shape}")
    if values.dtype.kind not in "biuf":
        raise ValueError(f"offset must be numbers (the fixed part of the linear predictor); got dtype {values.dtype}")
    return frame.assign(**{OFFSET_COLUMN: values.astype(np.float64)}), f" + offset(Q({OFFSET_COLUMN!r}))"


def offset_sum(columns: pd.DataFrame, labels: Any) -> Any:
    """The offsets' sum per row; an error naming the term and the row where one is not finite (``log(0)``)."""
    values = columns.to_numpy(dtype=np.float64)
    bad = ~np.isfinite(values)
    if bad.any():
        i, j = (int(k[0]) for k in np.nonzero(bad))
        term = _offset_name(str(columns.columns[j]))
        raise ValueError(f"offset: {term} is {values[i, j]} at row {labels[i]!r}; an offset must be finite "
                         "(drop the rows where it is not, e.g. a zero exposure under log)")
    return values.sum(axis=1)


def _offset_name(column: str) -> str:
    """An offset column's name as the user wrote it: ``offset(log(e))``, or ``offset=`` for the argument."""
    return plain(column).replace(f"offset({OFFSET_COLUMN})", "offset=")


def _check_restarts(restarts: Any) -> None:
    if isinstance(restarts, bool) or not isinstance(restarts, int) or restarts < 0:
        raise ValueError(f"restarts must be a non-negative integer; got {restarts!r}")


def _results(model: _RRModel, cls: type[_RRResults], best: Maximum, cov: Any) -> Any:
    """statsmodels results of class ``cls`` at the maximum ``best`` with covariance ``cov``."""
    mlefit = LikelihoodModelResults(model, best.params, normalized_cov_params=cov)
    mlefit.mle_retvals = {"converged": best.converged, "iterations": best.iterations, "decrement": best.decrement}
    mlefit.mle_settings = {"optimizer": "newton", "start_params": None}
    res = cls(model, mlefit)
    res.converged, res.extra_at_bound = best.converged, best.at_bound
    return res


def _frame(data: Any, name: str) -> pd.DataFrame:
    if isinstance(data, pd.DataFrame):
        return data
    try:
        return pd.DataFrame(data)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{name} must be a DataFrame or a mapping of columns; got {type(data).__name__}: {err}") \
            from None


def _groups(group: Any, frame: pd.DataFrame, design: Design) -> pd.Series | None:
    if group is None:
        if design.groups > 1:
            design.check_groups(None, len(frame))  # raises: the group is required
        return None
    if isinstance(group, str):
        if group not in frame.columns:
            raise ValueError(f"group {group!r} is not a column of data (columns: {', '.join(map(str, frame.columns))})")
        return frame[group].reset_index(drop=True)
    values = pd.Series(np.asarray(group))
    if len(values) != len(frame):
        raise ValueError(f"group must have one entry per row of data ({len(frame)}); got {len(values)}")
    return values


def _explain(err: Exception, frame: pd.DataFrame) -> str:
    missing = re.search(r"name '([^']+)' is not defined", str(err))
    if missing:
        return (f"names {missing.group(1)!r}, which is not a column of the data "
                f"(columns: {', '.join(map(str, frame.columns))})")
    return str(err).splitlines()[0]


def _answer(y: pd.DataFrame, formula: str) -> pd.Series:
    """The answer column: numeric, or booleans (which patsy splits into [False] and [True])."""
    if y.shape[1] == 2 and str(y.columns[1]).endswith("[True]"):
        return y.iloc[:, 1].rename(str(y.columns[1])[: -len("[True]")])
    if y.shape[1] != 1:
        raise ValueError(f"formula {formula!r}: the response must be one numeric column (the design's answers); "
                         f"patsy made {y.shape[1]} columns: {', '.join(map(str, y.columns))}")
    return y.iloc[:, 0].rename(plain(str(y.columns[0])))
