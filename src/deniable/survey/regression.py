"""Logistic regression of a randomized-response answer on covariates (RRreg's ``RRlog``, rr's ``rrreg``).

``logit("y ~ age + I(age ** 2) + C(region)", data, design)`` models the
prevalence of the sensitive attribute as ``pi_i = logistic(x_i' beta)`` and
the answer through the design (see :mod:`deniable.survey.likelihood` for the
likelihood, its exact score and Hessian). Two-group designs add their
extra parameter (``t``, ``piUQ``, ``gamma``: one scalar shared by both
groups, in [0, 1]) after the coefficients. For CDM and CDMsym, ``gamma``
enters the likelihood: a respondent cheats (says "no") with probability
``gamma`` independently of the covariates, and ``pi_i`` is the carrier share
among honest respondents. (RRreg's RRlog leaves gamma out of the likelihood,
so its "gamma" is never estimated.) Kuk with several cards takes the count
of red cards as the answer; FR with more than two categories is refused.

Estimation is maximum likelihood by Newton's method with the exact Hessian,
from an intercept-only start and seeded restarts, until the Newton
decrement is below 1e-10. Standard errors come from the exact observed
information (``cov_type="oim"``, what RRreg reports up to its numerical
Hessian) or the outer product of the scores (``cov_type="opg"``, what rr's
``rrreg`` reports). The results are a statsmodels
``GenericLikelihoodModelResults``: ``params``, ``bse``, ``conf_int()``,
``pvalues``, ``llf``, ``summary()``, plus ``predict(newdata)`` (the
prevalence) and :meth:`RRLogitResults.lr_test`.

Formulas are patsy's. As in R, a column name with dots (``cov.age``) may be
written bare, and ``^`` means ``**`` (R's power in ``I()`` and its crossing
of terms). This module needs the ``survey`` extra (pandas, statsmodels, patsy).
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import patsy
from statsmodels.base import wrapper
from statsmodels.base.model import (
    GenericLikelihoodModel,
    GenericLikelihoodModelResults,
    LikelihoodModelResults,
    LikelihoodResultsWrapper,
)

from deniable.survey.designs import Design
from deniable.survey.likelihood import ResponseLikelihood, check_design, covariance, fit

__all__ = ["logit", "lr_test", "LRTest", "RRLogit", "RRLogitResults"]


class LRTest(NamedTuple):
    """Likelihood-ratio test of a restricted model against the full one: ``2 (llf_full - llf_restricted)``."""

    statistic: float
    df: int
    pvalue: float


class RRLogit(GenericLikelihoodModel):  # type: ignore[misc]
    """The statsmodels model of a randomized-response logistic regression (built by :func:`logit`)."""

    def __init__(self, endog: Any, exog: Any, likelihood: ResponseLikelihood, design_info: Any,
                 extra_names: list[str]) -> None:
        self.likelihood = likelihood
        self.design_info = design_info
        super().__init__(endog, exog, extra_params_names=extra_names or None)
        # degrees of freedom without the intercept (if any) and the extra parameter, also for "- 1" formulas
        self.df_model = float(likelihood.exog.shape[1] - self.k_constant)
        self.df_resid = float(likelihood.nobs - likelihood.k_params)

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


class RRLogitResults(GenericLikelihoodModelResults):  # type: ignore[misc]
    """A fitted randomized-response logistic regression (statsmodels results, ``params`` indexed by term)."""

    design: Design
    formula: str
    n_dropped: int
    cov_type: str
    converged: bool
    extra_at_bound: bool

    def predict(self, newdata: Any = None) -> pd.Series:
        """The predicted prevalence ``logistic(x' beta)``: of the respondents used, or of the rows of ``newdata``.

        Rows of ``newdata`` with a missing covariate get NaN.
        """
        k = self.model.exog.shape[1]
        beta = np.asarray(self.params)[:k]
        if newdata is None:
            return pd.Series(self.model.likelihood.prevalence(np.asarray(self.params)),
                             index=self.model.data.row_labels, name="prevalence")
        frame = _frame(newdata, "newdata")
        try:
            (x,) = patsy.build_design_matrices([self.model.design_info], frame, NA_action="drop",
                                               return_type="dataframe")
        except patsy.PatsyError as err:
            raise ValueError(f"newdata: {_explain(err, frame)}") from None
        eta = np.asarray(x, dtype=np.float64) @ beta
        return pd.Series(0.5 * (1 + np.tanh(eta / 2)), index=x.index, name="prevalence").reindex(frame.index)

    def lr_test(self, restricted: RRLogitResults) -> LRTest:
        """Likelihood-ratio test of the nested ``restricted`` fit (same rows and design) against this one."""
        return lr_test(self, restricted)

    def summary(self, alpha: float = 0.05) -> Any:
        """statsmodels' summary table, titled with the design, noting the covariance and the rows dropped."""
        p = ", ".join(f"{float(v):.6g}" for v in self.design.p)
        smry = super().summary(title=f"Randomized-response logit: {self.design.model} design, p = ({p})",
                               alpha=alpha)
        notes = [
            f"Standard errors: {'observed information' if self.cov_type == 'oim' else 'outer product of scores'}"
            f" (cov_type={self.cov_type!r}).",
            f"{self.n_dropped} row{'s' if self.n_dropped != 1 else ''} with missing values dropped.",
        ]
        if self.extra_at_bound:
            notes.append(f"{self.model.exog_names[-1]} is on a bound of [0, 1]: no standard error; the "
                         "coefficients' are conditional on it.")
        smry.add_extra_txt(notes)
        return smry


class RRLogitResultsWrapper(LikelihoodResultsWrapper):  # type: ignore[misc]
    """Labels ``params``, ``bse``, ``pvalues``, ``conf_int()`` and ``cov_params()`` with the term names."""


wrapper.populate_wrapper(RRLogitResultsWrapper, RRLogitResults)


def logit(formula: str, data: Any, design: Design, group: Any = None, *, cov_type: str = "oim",
          restarts: int = 4) -> RRLogitResults:
    """Fit ``pi_i = logistic(x_i' beta)`` to randomized answers by maximum likelihood.

    ``formula``: ``"answer ~ terms"`` (patsy; the answer column holds the
    design's responses: 0/1, booleans, or a count of red cards for Kuk).
    ``data``: a DataFrame or a mapping of columns. ``design``: a
    :class:`~deniable.survey.designs.Design`. ``group``: for a two-group
    design, a column name of ``data`` or an array with 1 or 2 per row.
    Rows with a missing value in a used column (or the group) are dropped
    (``n_dropped``). ``cov_type``: ``"oim"`` (exact observed information) or
    ``"opg"`` (outer product of scores, as rr's ``rrreg``). ``restarts``:
    extra seeded starting points besides the intercept-only start.

    Raises ``ValueError`` naming the argument for a response outside the
    design's answers, a missing or bad group, a formula naming a missing
    column, collinear terms, too few rows, and (as ``SeparationError``)
    perfect separation: a diverging coefficient or a singular information matrix.
    """
    check_design(design)
    if not isinstance(formula, str) or "~" not in formula:
        raise ValueError(f"formula must be a string 'answer ~ terms'; got {formula!r}")
    if isinstance(restarts, bool) or not isinstance(restarts, int) or restarts < 0:
        raise ValueError(f"restarts must be a non-negative integer; got {restarts!r}")
    frame = _frame(data, "data")
    index = frame.index
    frame = frame.reset_index(drop=True)
    n_rows = len(frame)
    groups = _groups(group, frame, design)
    text = _r_syntax(formula, frame.columns)
    env = patsy.EvalEnvironment.capture(1)
    if groups is not None:
        keep = groups.notna().to_numpy()
        frame, groups = frame[keep], groups[keep]
    try:
        y, x = patsy.dmatrices(text, frame, NA_action="drop", return_type="dataframe", eval_env=env)
    except patsy.PatsyError as err:
        raise ValueError(f"formula {formula!r}: {_explain(err, frame)}") from None
    answer = _answer(y, formula)
    names = [_plain(n) for n in x.columns]
    x.columns = names
    extra = [design.extra] if design.extra else []
    k = len(names) + len(extra)
    if len(x) <= k:
        raise ValueError(f"data has {len(x)} complete rows for {k} parameters ({', '.join(names + extra)}): "
                         "need more rows than parameters")
    rank = np.linalg.matrix_rank(x.to_numpy())
    if rank < x.shape[1]:
        raise ValueError(f"formula {formula!r}: the terms are collinear in the rows used "
                         f"(rank {rank} for {x.shape[1]} columns: {', '.join(names)})")
    g = None if groups is None else groups.loc[x.index].to_numpy()
    try:
        lik = ResponseLikelihood(design, answer.to_numpy(), g, x.to_numpy(), labels=index[x.index])
    except ValueError as err:
        raise ValueError(f"{err} (column {y.columns[0]!r} of data)" if "response" in str(err) else str(err)) from None
    best = fit(lik, names + extra, restarts=restarts)
    cov = covariance(lik, best, cov_type)
    model = RRLogit(answer, x, lik, x.design_info, extra)
    mlefit = LikelihoodModelResults(model, best.params, normalized_cov_params=cov)
    mlefit.mle_retvals = {"converged": best.converged, "iterations": best.iterations, "decrement": best.decrement}
    mlefit.mle_settings = {"optimizer": "newton", "start_params": None}
    res = RRLogitResults(model, mlefit)
    res.design, res.formula, res.cov_type = design, formula, cov_type
    res.n_dropped = n_rows - len(x)
    res.converged, res.extra_at_bound = best.converged, best.at_bound
    return RRLogitResultsWrapper(res)


def lr_test(full: RRLogitResults, restricted: RRLogitResults) -> LRTest:
    """``2 (llf_full - llf_restricted)`` against chi-square with the difference in parameters as df.

    Both fits must use the same design and the same answers (the same rows:
    drop missing values before fitting models with different terms). The
    chi-square reference assumes the extra parameter is not on a bound.
    """
    from scipy import stats

    for name, res in (("full", full), ("restricted", restricted)):
        if not isinstance(getattr(res, "_results", res), RRLogitResults):
            raise TypeError(f"{name} must be a result of deniable.survey.logit; got {type(res).__name__}")
    if full.design != restricted.design:
        raise ValueError(f"restricted uses design {restricted.design!r}, full uses {full.design!r}: not nested")
    a, b = full.model.likelihood, restricted.model.likelihood
    if a.nobs != b.nobs or not (np.array_equal(a.responses, b.responses) and np.array_equal(a.groups, b.groups)):
        raise ValueError(f"restricted was fitted to other rows ({b.nobs}) than full ({a.nobs}): drop the rows "
                         "with missing values in any term before fitting both")
    df = len(full.params) - len(restricted.params)
    if df < 1:
        raise ValueError(f"restricted must have fewer parameters than full; got {len(restricted.params)} vs "
                         f"{len(full.params)}")
    statistic = 2 * (float(full.llf) - float(restricted.llf))
    if statistic < -1e-6:
        raise ValueError(f"restricted fits better than full (log-likelihood {restricted.llf:.6f} > {full.llf:.6f}): "
                         "the models are not nested")
    statistic = max(statistic, 0.0)
    return LRTest(statistic, df, float(stats.chi2.sf(statistic, df)))


# ------------------------------------------------------------------ helpers
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


_DOTTED = r"(?<![\w.\"'])({})(?![\w.\"'(])"


def _r_syntax(formula: str, columns: Any) -> str:
    """R habits in patsy: bare column names with dots become ``Q("name")``, and ``^`` becomes ``**``."""
    text = formula.replace("^", "**")
    dotted = sorted((c for c in columns if isinstance(c, str) and "." in c), key=len, reverse=True)
    if dotted:
        pattern = re.compile(_DOTTED.format("|".join(map(re.escape, dotted))))
        text = pattern.sub(lambda m: f'Q("{m.group(1)}")', text)
    return text


def _plain(name: str) -> str:
    """A term's name as the user wrote it: ``Q("cov.age")`` back to ``cov.age``."""
    return re.sub(r"""Q\((["'])(.*?)\1\)""", r"\2", name)


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
    return y.iloc[:, 0].rename(_plain(str(y.columns[0])))
