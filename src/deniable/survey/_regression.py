"""Logistic regression of a randomized-response answer on covariates (RRreg's ``RRlog``, rr's ``rrreg``).

``logit("y ~ age + I(age ** 2) + C(region)", data, design)`` models the
prevalence of the sensitive attribute as ``pi_i = logistic(x_i' beta)`` and
the answer through the design (see :mod:`deniable.survey._likelihood` for the
likelihood, its exact score and Hessian). Two-group designs add their
extra parameter (``t``, ``piUQ``, ``gamma``: one scalar shared by both
groups, in [0, 1]) after the coefficients. For CDM and CDMsym, ``gamma``
enters the likelihood: a respondent cheats (says "no") with probability
``gamma`` independently of the covariates, and ``pi_i`` is the carrier share
among honest respondents. (RRreg's RRlog leaves gamma out of the likelihood,
so its "gamma" is never estimated.) Kuk with several cards takes the count
of red cards as the answer; FR with more than two categories is refused.

Estimation is maximum likelihood by Newton's method with the exact Hessian,
from the intercept-only fit (run on the distinct answers, so it costs
nothing), until the Newton decrement is below 1e-10; seeded restarts follow
only when that maximum is in doubt (see :func:`logit`). Standard errors come from the exact observed
information (``cov_type="oim"``, what RRreg reports up to its numerical
Hessian) or the outer product of the scores (``cov_type="opg"``, what rr's
``rrreg`` reports). The results are a statsmodels
``GenericLikelihoodModelResults``: ``params``, ``bse``, ``conf_int()``,
``pvalues``, ``llf``, ``summary()``, plus ``predict(newdata)`` (the
prevalence) and :meth:`RRLogitResults.lr_test`.

Formulas are patsy's, read as R users write them (:mod:`deniable.survey._formula`):
a column name with dots (``cov.age``) may be written bare, ``^`` means ``**``,
``y ~ .`` is every other column, ``factor(x)`` and ``relevel(x, ref = "a")``
make categories, ``log``/``exp``/``sqrt`` are numpy's, ``scale(x)`` and
``center(x)`` use the rows that have a value, ``poly(x, 2)`` is R's; a column of a few integer codes
entering as a number draws a warning. This module needs the ``survey``
extra (pandas, statsmodels, patsy).

:func:`linear` is RRreg's ``RRlin``: linear regression of a plain outcome
on a randomized-response predictor (:mod:`deniable.survey._mixture`).
"""

from __future__ import annotations

import re
from typing import Any, ClassVar, NamedTuple

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

from deniable._intervals import z_for
from deniable._results import ConfidenceInterval, Result, ResultTable, check_level
from deniable._sample_design import SampleDesign
from deniable.survey._designs import Design
from deniable.survey._formula import namespace, plain, r_syntax, warn_coded_numbers
from deniable.survey._likelihood import (
    Likelihood,
    Maximum,
    ResponseLikelihood,
    SeparationError,
    check_design,
    covariance,
    fit,
    maximize,
)
from deniable.survey._mixture import MixtureLikelihood, check_one_group
from deniable.survey._weighted import sandwich, survey_sample

__all__ = ["logit", "linear", "lr_test", "LRTest", "RRLogit", "RRLogitResults", "RRLinear", "RRLinearResults"]


class LRTest(NamedTuple):
    """Likelihood-ratio test of a restricted model against the full one: ``2 (llf_full - llf_restricted)``."""

    statistic: float
    df: int
    pvalue: float


class _RRModel(GenericLikelihoodModel):  # type: ignore[misc]
    """A statsmodels model whose log-likelihood, score and Hessian are a deniable likelihood's (exact)."""

    def __init__(self, endog: Any, exog: Any, likelihood: Likelihood, design_info: Any,
                 extra_names: list[str]) -> None:
        self.likelihood = likelihood
        self.design_info = design_info
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


class RRLogit(_RRModel):
    """The statsmodels model of a randomized-response logistic regression (built by :func:`logit`)."""


class RRLinear(_RRModel):
    """The statsmodels model of a linear regression on a randomized predictor (built by :func:`linear`)."""


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
        p = ", ".join(f"{float(v):.6g}" for v in self.design.p)
        smry = super().summary(title=f"{self.title}: {self.design.model} design, p = ({p})", alpha=alpha)
        notes = [f"Standard errors: {_SE_NAMES.get(self.cov_type, 'design-based')} (cov_type={self.cov_type!r})."]
        if self.sample is not None and self.design_effect is not None:
            deff = ", ".join(f"{k} {v:.3g}" for k, v in self.design_effect.items())
            notes += [f"Sample: {self.sample}.", f"Design effects: {deff}."]
        notes += [
            f"{self.n_dropped} row{'s' if self.n_dropped != 1 else ''} with missing values dropped.",
        ]
        if self.extra_at_bound:
            notes.append(f"{self.model.exog_names[-1]} is on a bound of [0, 1]: no standard error; the "
                         "coefficients' are conditional on it.")
        smry.add_extra_txt(notes)
        return smry


    ci_methods: ClassVar[tuple[str, ...]] = ("wald",)

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
        fields = {"design": self.design.model, "formula": self.formula, "n": int(self.nobs),
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


class RRLogitResults(_RRResults):
    """A fitted randomized-response logistic regression (statsmodels results, ``params`` indexed by term)."""

    title = "Randomized-response logit"

    def predict(self, newdata: Any = None) -> pd.Series:
        """The predicted prevalence ``logistic(x' beta)``: of the respondents used, or of the rows of ``newdata``.

        Rows of ``newdata`` with a missing covariate get NaN.
        """
        x, index, labels = self._covariates(newdata)
        eta = x @ np.asarray(self.params)[: x.shape[1]]
        return pd.Series(0.5 * (1 + np.tanh(eta / 2)), index=index, name="prevalence").reindex(labels)

    def predict_interval(self, newdata: Any = None, level: float = 0.95) -> pd.DataFrame:
        """The predicted prevalence with its standard error and interval (``fit``, ``se``, ``ci_low``, ``ci_high``).

        With ``s = sqrt(x' V x)`` (``V`` the coefficients' covariance, design-based
        for a complex sample): ``se = fit (1 - fit) s`` (delta method) and the
        interval ``logistic(x' beta -+ z s)``, which stays in [0, 1].
        """
        x, index, labels = self._covariates(newdata)
        k = x.shape[1]
        eta = x @ np.asarray(self.params)[:k]
        spread = np.sqrt(np.einsum("ij,jk,ik->i", x, np.asarray(self.cov_params())[:k, :k], x))
        z = z_for(1 - check_level(level))
        fit_ = 0.5 * (1 + np.tanh(eta / 2))
        frame = pd.DataFrame({"fit": fit_, "se": fit_ * (1 - fit_) * spread,
                              "ci_low": 0.5 * (1 + np.tanh((eta - z * spread) / 2)),
                              "ci_high": 0.5 * (1 + np.tanh((eta + z * spread) / 2))}, index=index)
        return frame.reindex(labels)

    def _covariates(self, newdata: Any) -> tuple[Any, Any, Any]:
        """The covariate matrix of the respondents used (or of ``newdata``'s complete rows), its row labels and
        the labels to report (``newdata``'s rows, NaN where a covariate is missing)."""
        if newdata is None:
            labels = self.model.data.row_labels
            return np.asarray(self.model.exog, dtype=np.float64), labels, labels
        frame = _frame(newdata, "newdata")
        try:
            (x,) = patsy.build_design_matrices([self.model.design_info], frame, NA_action="drop",
                                               return_type="dataframe")
        except patsy.PatsyError as err:
            raise ValueError(f"newdata: {_explain(err, frame)}") from None
        return np.asarray(x, dtype=np.float64), x.index, frame.index

    def drop1(self) -> pd.DataFrame:
        """Per-term likelihood-ratio tests, as R's ``drop1(fit, test = "Chisq")``: each term left out in turn,
        the model refitted on the same rows, ``2 (llf - llf_without)`` against chi-square with the term's
        number of columns as degrees of freedom. Columns ``df``, ``llf``, ``lr``, ``pvalue``, one row per term."""
        from scipy import stats

        if self.sample is not None:
            raise ValueError("drop1: likelihood-ratio tests need the model's likelihood; a complex sample's "
                             "pseudo-likelihood has no chi-square reference (use the design-based Wald tests)")
        lik, info = self.model.likelihood, self.model.design_info
        extra = [self.design.extra] if self.design.extra else []
        out = {}
        for term in info.terms:
            if not term.factors:  # the intercept
                continue
            keep = np.ones(lik.exog.shape[1], dtype=bool)
            keep[info.term_slices[term]] = False
            names = [n for n, k in zip(self.model.exog_names, keep, strict=False) if k] + extra
            best = fit(lik.with_exog(lik.exog[:, keep]), names)
            statistic = max(2 * (float(self.llf) - best.llf), 0.0)
            df = int((~keep).sum())
            out[plain(term.name())] = (df, best.llf, statistic, float(stats.chi2.sf(statistic, df)))
        return pd.DataFrame.from_dict(out, orient="index", columns=["df", "llf", "lr", "pvalue"])

    def lr_test(self, restricted: RRLogitResults) -> LRTest:
        """Likelihood-ratio test of the nested ``restricted`` fit (same rows and design) against this one."""
        return lr_test(self, restricted)



class RRLinearResults(_RRResults):
    """A fitted linear regression on a randomized predictor: coefficients, ``sigma`` and ``pi``."""

    title = "Linear regression on a randomized predictor"
    predictor: str


class RRLogitResultsWrapper(LikelihoodResultsWrapper):  # type: ignore[misc]
    """Labels ``params``, ``bse``, ``pvalues``, ``conf_int()`` and ``cov_params()`` with the term names."""


class RRLinearResultsWrapper(LikelihoodResultsWrapper):  # type: ignore[misc]
    """Labels ``params``, ``bse``, ``pvalues``, ``conf_int()`` and ``cov_params()`` with the term names."""


wrapper.populate_wrapper(RRLogitResultsWrapper, RRLogitResults)
wrapper.populate_wrapper(RRLinearResultsWrapper, RRLinearResults)


def logit(formula: str, data: Any, design: Design, group: Any = None, *, cov_type: str | None = None,
          restarts: int = 4, weights: Any = None, strata: Any = None, cluster: Any = None, fpc: Any = None,
          repweights: Any = None, rep_type: str | None = None, rscales: Any = None, mse: bool = False,
          lonely_psu: str = "fail") -> RRLogitResults:
    """Fit ``pi_i = logistic(x_i' beta)`` to randomized answers by maximum likelihood.

    ``formula``: ``"answer ~ terms"`` (patsy; the answer column holds the
    design's responses: 0/1, booleans, or a count of red cards for Kuk).
    ``data``: a DataFrame or a mapping of columns. ``design``: a
    :class:`~deniable.survey._designs.Design`. ``group``: for a two-group
    design, a column name of ``data`` or an array with 1 or 2 per row.
    Rows with a missing value in a used column (or the group) are dropped
    (``n_dropped``). ``cov_type``: ``"oim"`` (exact observed information, the
    default without a complex sample), ``"opg"`` (outer product of scores, as
    rr's ``rrreg``), ``"robust"`` or ``"cluster"`` (the sandwich, Stata's
    ``vce(robust)`` and ``vce(cluster)``). A complex sample (``weights``,
    ``strata``, ``cluster``, ``fpc``, ``repweights`` with ``rep_type``,
    ``rscales``, ``mse``, ``lonely_psu``: R ``survey``'s arguments, columns of
    ``data`` or arrays, see :mod:`deniable._sample_design`) gives the
    weighted pseudo-maximum-likelihood fit with design-based standard errors
    (:mod:`deniable.survey._weighted`) and ``design_effect``. ``restarts``:
    extra seeded starting points, searched only when the maximum from the
    intercept-only start is in doubt: its search failed or did not converge
    (Newton decrement not below 1e-10), the extra parameter ended on a bound
    of [0, 1], the Hessian there is not negative definite, or a coefficient
    diverges. Then the fit is the restarts' best log-likelihood.

    Raises ``ValueError`` naming the argument for a response outside the
    design's answers, a missing or bad group, a formula naming a missing
    column, collinear terms, too few rows, and (as ``SeparationError``)
    perfect separation: a diverging coefficient or a singular information matrix.
    """
    check_design(design)
    _check_restarts(restarts)
    rows = _Rows.build(formula, data, design, group, patsy.EvalEnvironment.capture(1),
                       (group, weights, strata, cluster, fpc, *(repweights if isinstance(repweights, list) else ())))
    sample, cov_name = survey_sample(rows.n_rows, cov_type, rows.frame, weights=weights, strata=strata,
                                     cluster=cluster, fpc=fpc, repweights=repweights, rep_type=rep_type,
                                     rscales=rscales, mse=mse, lonely_psu=lonely_psu)
    answer = _answer(rows.y, formula)
    extra = [design.extra] if design.extra else []
    rows.check_size(extra)
    try:
        lik = ResponseLikelihood(design, answer.to_numpy(), rows.groups, rows.x.to_numpy(), labels=rows.labels)
    except ValueError as err:
        if "response" not in str(err):
            raise
        raise ValueError(f"{err} (column {rows.y.columns[0]!r} of data)") from None
    if sample is not None:
        lik.weights = sample.weights[rows.positions] / float(np.mean(sample.weights[rows.positions]))
    best = fit(lik, rows.names + extra, restarts=restarts)
    cov, deff = _covariance(lik, best, cov_name, sample, rows.positions)
    res = _results(RRLogit(answer, rows.x, lik, rows.x.design_info, extra), RRLogitResults, best, cov)
    res.design, res.formula, res.cov_type, res.n_dropped = design, formula, cov_name, rows.dropped
    res.sample = None if sample is None else sample.describe()
    res.design_effect = None if deff is None else pd.Series(deff, index=rows.names + extra, name="design_effect")
    return RRLogitResultsWrapper(res)


def _covariance(lik: Any, best: Maximum, cov_name: str, sample: SampleDesign | None, positions: Any
                ) -> tuple[Any, Any]:
    """The model-based covariance (``"oim"``, ``"opg"``) or the design-based sandwich and design effects."""
    if sample is None:
        return covariance(lik, best, cov_name), None
    return sandwich(lik, best, sample, positions, lik.with_weights)


def linear(formula: str, data: Any, design: Design, predictor: str | None = None, *, restarts: int = 4,
           cov_type: str | None = None, weights: Any = None, strata: Any = None, cluster: Any = None,
           fpc: Any = None, repweights: Any = None, rep_type: str | None = None, rscales: Any = None,
           mse: bool = False, lonely_psu: str = "fail") -> RRLinearResults:
    """Linear regression of a plain outcome on a randomized-response predictor (RRreg's ``RRlin``).

    ``formula``: ``"outcome ~ predictor + covariates"``; ``predictor`` (by
    default the formula's first term, as RRlin takes it) names the column of
    randomized answers, made by the one-group ``design``. The outcome is
    regressed on the predictor's latent *true* state ``T`` (a carrier with
    probability ``pi``): ``y | T ~ Normal(x_T' beta, sigma^2)``, see
    :mod:`deniable.survey._mixture`. Parameters: the coefficients, ``sigma``
    and ``pi``; standard errors from the exact observed information. Rows
    with missing values are dropped (``n_dropped``). ``cov_type`` and the
    complex-sample arguments (``weights``, ``strata``, ``cluster``, ...) as
    for :func:`logit`: the weighted pseudo-likelihood with design-based SEs.
    """
    check_one_group(design)
    _check_restarts(restarts)
    rows = _Rows.build(formula, data, design, None, patsy.EvalEnvironment.capture(1),
                       (weights, strata, cluster, fpc, *(repweights if isinstance(repweights, list) else ())))
    sample, cov_name = survey_sample(rows.n_rows, cov_type, rows.frame, weights=weights, strata=strata,
                                     cluster=cluster, fpc=fpc, repweights=repweights, rep_type=rep_type,
                                     rscales=rscales, mse=mse, lonely_psu=lonely_psu)
    outcome = _answer(rows.y, formula)
    covariates = [n for n in rows.names if n != "Intercept"]
    name = covariates[0] if predictor is None and covariates else predictor
    if name not in covariates:
        raise ValueError(f"predictor must name a plain term of the formula (the column of randomized answers); "
                         f"got {name!r}, terms: {', '.join(covariates) or 'none'}")
    rows.check_size(["sigma", "pi"])
    column = rows.names.index(name)
    answers = rows.x[name].to_numpy()
    try:
        lik = MixtureLikelihood(design, answers, outcome.to_numpy(), rows.x.to_numpy(), column)
    except ValueError as err:
        raise ValueError(f"{err} (column {name!r} of data)") from None
    if sample is not None:
        lik.weights = sample.weights[rows.positions] / float(np.mean(sample.weights[rows.positions]))
    best = _fit_linear(lik, design, restarts)
    cov, deff = _covariance(lik, best, cov_name, sample, rows.positions)
    res = _results(RRLinear(outcome, rows.x, lik, rows.x.design_info, ["sigma", "pi"]), RRLinearResults, best, cov)
    res.design, res.formula, res.cov_type, res.n_dropped = design, formula, cov_name, rows.dropped
    res.sample = None if sample is None else sample.describe()
    res.design_effect = None if deff is None else pd.Series(deff, index=rows.names + ["sigma", "pi"],
                                                            name="design_effect")
    res.predictor = name
    return RRLinearResultsWrapper(res)


def _fit_linear(lik: MixtureLikelihood, design: Design, restarts: int) -> Maximum:
    """The best Newton ascent from least squares on the answers rescaled to estimate the state (and ``pi``
    from their mean), and from ``restarts`` seeded perturbations of it."""
    values = np.asarray(design.responses, dtype=np.float64)
    m0, m1 = design.transition_matrix(1) @ values  # E[answer | state 0 or 1]
    x = lik.exog.copy()
    x[:, lik.column] = (x[:, lik.column] - m0) / (m1 - m0)  # unbiased for the state
    pi = float(np.clip(x[:, lik.column].mean(), 0.05, 0.95))
    beta, *_ = np.linalg.lstsq(x, lik.y, rcond=None)
    base = np.concatenate([beta, [float(np.std(lik.y - x @ beta)), pi]])
    rng = np.random.default_rng(0)
    starts = [base] + [base * np.concatenate([rng.uniform(0.5, 1.5, beta.size), [1.0, 1.0]])
                       for _ in range(restarts)]
    best: Maximum | None = None
    for start in starts:
        try:
            found = maximize(lik, start)
        except (ValueError, FloatingPointError):
            continue
        if best is None or found.llf > best.llf:
            best = found
    if best is None or not best.converged:
        raise SeparationError("the mixture likelihood reached no maximum from any start")
    return best


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
class _Rows:
    """The complete rows of a formula: outcome ``y`` and covariates ``x`` (patsy frames, ``x`` named by
    :attr:`names`), their ``labels`` in the data, the ``groups`` (or None) and how many rows were ``dropped``."""

    def __init__(self, y: pd.DataFrame, x: pd.DataFrame, labels: Any, groups: Any, dropped: int,
                 formula: str) -> None:
        self.y, self.x, self.labels, self.groups, self.dropped, self.formula = y, x, labels, groups, dropped, formula
        self.names = [plain(n) for n in x.columns]
        x.columns = self.names
        self.frame: pd.DataFrame = pd.DataFrame()  # all rows of the data, positions 0..n_rows-1
        self.n_rows = len(x)
        self.positions: Any = np.arange(len(x))  # the rows used, as positions in frame

    @classmethod
    def build(cls, formula: str, data: Any, design: Design, group: Any, env: Any, exclude: tuple[Any, ...] = ()
              ) -> _Rows:
        if not isinstance(formula, str) or "~" not in formula:
            raise ValueError(f"formula must be a string 'answer ~ terms'; got {formula!r}")
        frame = _frame(data, "data")
        index = frame.index
        frame = frame.reset_index(drop=True)
        frame_all, n_rows = frame, len(frame)
        groups = _groups(group, frame, design)
        if groups is not None:
            keep = groups.notna().to_numpy()
            frame, groups = frame[keep], groups[keep]
        try:
            named = tuple(str(v) for v in exclude if isinstance(v, str))
            y, x = patsy.dmatrices(r_syntax(formula, frame.columns, named), frame, NA_action="drop",
                                   return_type="dataframe", eval_env=env.with_outer_namespace(namespace()))
        except patsy.PatsyError as err:
            raise ValueError(f"formula {formula!r}: {_explain(err, frame)}") from None
        warn_coded_numbers(formula, frame, x.design_info)
        g = None if groups is None else groups.loc[x.index].to_numpy()
        rows = cls(y, x, index[x.index], g, n_rows - len(x), formula)
        rows.frame, rows.n_rows, rows.positions = frame_all, n_rows, x.index.to_numpy()
        return rows

    def check_size(self, extra: list[str]) -> None:
        """Refuse too few rows (no more than the parameters) and collinear terms."""
        k = len(self.names) + len(extra)
        if len(self.x) <= k:
            raise ValueError(f"data has {len(self.x)} complete rows for {k} parameters "
                             f"({', '.join(self.names + extra)}): need more rows than parameters")
        rank = np.linalg.matrix_rank(self.x.to_numpy())
        if rank < self.x.shape[1]:
            raise ValueError(f"formula {self.formula!r}: the terms are collinear in the rows used "
                             f"(rank {rank} for {self.x.shape[1]} columns: {', '.join(self.names)})")


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
