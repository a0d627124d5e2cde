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
``center(x)`` use the rows that have a value, ``poly(x, 2)`` is R's, ``offset(z)`` adds ``z`` to the
linear predictor with coefficient 1 (so does ``offset=``); a column of a few integer codes
entering as a number draws a warning. This module needs the ``survey``
extra (pandas, statsmodels, patsy).

:func:`linear` is RRreg's ``RRlin``: linear regression of a plain outcome
on a randomized-response predictor (:mod:`deniable.survey._mixture`).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import patsy
from statsmodels.base import wrapper
from statsmodels.base.model import LikelihoodResultsWrapper

from deniable._intervals import z_for
from deniable._results import check_level
from deniable._sample_design import SampleDesign
from deniable.survey._designs import Design
from deniable.survey._formula import plain
from deniable.survey._likelihood import (
    Maximum,
    ResponseLikelihood,
    SeparationError,
    check_design,
    covariance,
    fit,
    maximize,
)
from deniable.survey._mixture import MixtureLikelihood, check_one_group
from deniable.survey._regression_base import (
    OFFSET_COLUMN,
    _answer,
    _check_restarts,
    _explain,
    _frame,
    _results,
    _Rows,
    _RRModel,
    _RRResults,
    offset_column,
    offset_sum,
)
from deniable.survey._regression_predictors import RRPredictorResults, fit_predictors
from deniable.survey._weighted import sandwich, survey_sample

__all__ = ["logit", "linear", "lr_test", "LRTest", "RRLogit", "RRLogitResults", "RRLinear", "RRLinearResults",
           "RRPredictorResults"]


class LRTest(NamedTuple):
    """Likelihood-ratio test of a restricted model against the full one: ``2 (llf_full - llf_restricted)``."""

    statistic: float
    df: int
    pvalue: float


class RRLogit(_RRModel):
    """The statsmodels model of a randomized-response logistic regression (built by :func:`logit`)."""


class RRLinear(_RRModel):
    """The statsmodels model of a linear regression on a randomized predictor (built by :func:`linear`)."""


class RRLogitResults(_RRResults):
    """A fitted randomized-response logistic regression (statsmodels results, ``params`` indexed by term)."""

    title = "Randomized-response logit"

    def predict(self, newdata: Any = None, offset: Any = None) -> pd.Series:
        """The predicted prevalence ``logistic(x' beta + o)``: of the respondents used, or of the rows of ``newdata``.

        ``o`` is the offset: the formula's ``offset()`` terms, evaluated on
        ``newdata``'s columns, plus for a fit given an ``offset=`` array the
        ``offset`` given here (one number per row of ``newdata``; a column name of it).
        Rows of ``newdata`` with a missing covariate or offset get NaN.
        """
        x, o, index, labels = self._covariates(newdata, offset)
        eta = x @ np.asarray(self.params)[: x.shape[1]] + o
        return pd.Series(0.5 * (1 + np.tanh(eta / 2)), index=index, name="prevalence").reindex(labels)

    def predict_interval(self, newdata: Any = None, level: float = 0.95, offset: Any = None) -> pd.DataFrame:
        """The predicted prevalence with its standard error and interval (``fit``, ``se``, ``ci_low``, ``ci_high``).

        With ``s = sqrt(x' V x)`` (``V`` the coefficients' covariance, design-based
        for a complex sample): ``se = fit (1 - fit) s`` (delta method) and the
        interval ``logistic(x' beta + o -+ z s)``, which stays in [0, 1]; the
        offset ``o`` (as for :meth:`predict`) is fixed, so adds no variance.
        """
        x, o, index, labels = self._covariates(newdata, offset)
        k = x.shape[1]
        eta = x @ np.asarray(self.params)[:k] + o
        spread = np.sqrt(np.einsum("ij,jk,ik->i", x, np.asarray(self.cov_params())[:k, :k], x))
        z = z_for(1 - check_level(level))
        fit_ = 0.5 * (1 + np.tanh(eta / 2))
        frame = pd.DataFrame({"fit": fit_, "se": fit_ * (1 - fit_) * spread,
                              "ci_low": 0.5 * (1 + np.tanh((eta - z * spread) / 2)),
                              "ci_high": 0.5 * (1 + np.tanh((eta + z * spread) / 2))}, index=index)
        return frame.reindex(labels)

    def _covariates(self, newdata: Any, offset: Any) -> tuple[Any, Any, Any, Any]:
        """The covariate matrix and offsets of the respondents used (or of ``newdata``'s complete rows), its row
        labels and the labels to report (``newdata``'s rows, NaN where a covariate or offset is missing)."""
        info, offset_info = self.model.design_info, self.model.offset_info
        keyword = offset_info is not None and any(OFFSET_COLUMN in n for n in offset_info.column_names)
        if newdata is None:
            if offset is not None:
                raise ValueError("offset: pass it with newdata; the respondents used keep their own offsets")
            labels, lik = self.model.data.row_labels, self.model.likelihood
            o = np.zeros(lik.nobs) if lik.offset is None else lik.offset
            return np.asarray(self.model.exog, dtype=np.float64), o, labels, labels
        frame = _frame(newdata, "newdata")
        if keyword != (offset is not None):
            raise ValueError("offset: the model was fitted with an offset= array, so newdata needs one too (one "
                             "number per row of newdata)" if keyword else
                             "offset: the model was fitted without an offset= array; newdata's offsets come from "
                             "its columns through the formula's offset() terms")
        frame, _ = offset_column(offset, frame, "newdata")
        if isinstance(offset, str):  # a column of newdata stands for the fitted array's
            frame = frame.assign(**{OFFSET_COLUMN: frame[offset]})
        try:
            x, *o = patsy.build_design_matrices([info] + ([] if offset_info is None else [offset_info]), frame,
                                                NA_action="drop", return_type="dataframe")
        except patsy.PatsyError as err:
            raise ValueError(f"newdata: {_explain(err, frame)}") from None
        total = offset_sum(o[0], x.index) if o else np.zeros(len(x))
        return np.asarray(x, dtype=np.float64), total, x.index, frame.index

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


def logit(formula: str, data: Any, design: Design | None, group: Any = None, *, cov_type: str | None = None,
          restarts: int = 4, weights: Any = None, strata: Any = None, cluster: Any = None, fpc: Any = None,
          repweights: Any = None, rep_type: str | None = None, rscales: Any = None, mse: bool = False,
          lonely_psu: str = "fail", rr_predictors: dict[str, Design] | None = None, rr_formula: str | None = None,
          rr_groups: dict[str, Any] | None = None, offset: Any = None) -> RRLogitResults | RRPredictorResults:
    """Fit ``pi_i = logistic(x_i' beta + o_i)`` to randomized answers by maximum likelihood.

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

    ``o_i`` is the offset, a term whose coefficient is fixed at 1 (R's and
    statsmodels' offset): the linear predictor is ``eta = X beta + o`` in
    the likelihood, its score and Hessian, the start, ``predict`` and
    ``drop1``. It is the sum of the formula's ``offset()`` terms
    (``"y ~ x + offset(log(exposure))"``) and of ``offset``: a column name
    of ``data`` or an array with one number per row of ``data`` (then
    ``predict(newdata, offset=...)`` needs one per row of ``newdata``).
    Rows where an offset is missing are dropped; an infinite one is an error.

    Raises ``ValueError`` naming the argument for a response outside the
    design's answers, a missing or bad group, a formula naming a missing
    column, collinear terms, too few rows, an offset that is not a column,
    of the wrong length or not finite, and (as ``SeparationError``)
    perfect separation: a diverging coefficient or a singular information matrix.

    ``rr_predictors``: terms of the formula that are columns of randomized
    answers, each with its design (``{"z": design}``; rr's
    ``rrreg.predictor``): the outcome is regressed on their latent truths,
    jointly with a logit of each truth on the other terms (or on
    ``rr_formula``, a right-hand side such as ``"1"``); ``design`` is then the
    outcome's one-group design, or None for a plain 0/1 outcome;
    ``rr_groups`` gives a two-group predictor's group column. The
    complex-sample arguments apply there too: the weighted
    pseudo-log-likelihood ``sum_i w_i log L_i`` with the sandwich of the
    per-respondent scores (between-PSU variance within strata, ``1 - f_h``
    with an fpc) or the replicates' refits; an fpc leaves the
    randomization's variance of every randomized answer (outcome and
    predictors, independently randomized: the Kronecker product of their
    transition matrices) in. See
    :mod:`deniable.survey._regression_predictors`.
    """
    if rr_predictors is not None or rr_formula is not None or rr_groups is not None:
        _check_restarts(restarts)
        _no_offset(offset)
        return fit_predictors("logit", formula, data, design, group, rr_predictors, rr_formula, rr_groups, restarts,
                              cov_type, patsy.EvalEnvironment.capture(1),
                              {"weights": weights, "strata": strata, "cluster": cluster, "fpc": fpc,
                               "repweights": repweights, "rep_type": rep_type, "rscales": rscales, "mse": mse,
                               "lonely_psu": lonely_psu})
    check_design(design)
    assert design is not None  # check_design refused anything else
    _check_restarts(restarts)
    rows = _Rows.build(formula, data, design, group, patsy.EvalEnvironment.capture(1),
                       (group, weights, strata, cluster, fpc, *(repweights if isinstance(repweights, list) else ())),
                       offset)
    sample, cov_name = survey_sample(rows.n_rows, cov_type, rows.frame, weights=weights, strata=strata,
                                     cluster=cluster, fpc=fpc, repweights=repweights, rep_type=rep_type,
                                     rscales=rscales, mse=mse, lonely_psu=lonely_psu)
    answer = _answer(rows.y, formula)
    extra = [design.extra] if design.extra else []
    rows.check_size(extra)
    try:
        lik = ResponseLikelihood(design, answer.to_numpy(), rows.groups, rows.x.to_numpy(), labels=rows.labels,
                                 offset=rows.offset)
    except ValueError as err:
        if "response" not in str(err):
            raise
        raise ValueError(f"{err} (column {rows.y.columns[0]!r} of data)") from None
    if sample is not None:
        lik.weights = sample.weights[rows.positions] / float(np.mean(sample.weights[rows.positions]))
    best = fit(lik, rows.names + extra, restarts=restarts)
    cov, deff = _covariance(lik, best, cov_name, sample, rows.positions)
    res = _results(RRLogit(answer, rows.x, lik, rows.x.design_info, extra, rows.offset_info), RRLogitResults, best,
                   cov)
    res.design, res.formula, res.cov_type, res.n_dropped = design, formula, cov_name, rows.dropped
    res.sample = None if sample is None else sample.describe()
    res.design_effect = None if deff is None else pd.Series(deff, index=rows.names + extra, name="design_effect")
    return RRLogitResultsWrapper(res)


def _no_offset(offset: Any) -> None:
    if offset is not None:
        raise ValueError("offset: randomized predictors (rr_predictors=) take no offset; fit without one")


def _covariance(lik: Any, best: Maximum, cov_name: str, sample: SampleDesign | None, positions: Any
                ) -> tuple[Any, Any]:
    """The model-based covariance (``"oim"``, ``"opg"``) or the design-based sandwich and design effects."""
    if sample is None:
        return covariance(lik, best, cov_name), None
    return sandwich(lik, best, sample, positions, lik.with_weights)


def linear(formula: str, data: Any, design: Design | None = None, predictor: str | None = None, *, restarts: int = 4,
           cov_type: str | None = None, weights: Any = None, strata: Any = None, cluster: Any = None,
           fpc: Any = None, repweights: Any = None, rep_type: str | None = None, rscales: Any = None,
           mse: bool = False, lonely_psu: str = "fail", rr_predictors: dict[str, Design] | None = None,
           rr_formula: str | None = None, rr_groups: dict[str, Any] | None = None, offset: Any = None
           ) -> RRLinearResults | RRPredictorResults:
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
    An offset ``o_i`` (the formula's ``offset()`` terms plus ``offset``, as
    for :func:`logit`) enters the mean with coefficient 1:
    ``y | T ~ Normal(x_T' beta + o, sigma^2)``, so the fit is that of ``y - o``.

    ``rr_predictors`` (instead of ``design`` and ``predictor``): several
    randomized predictors, each with its design (``{"z1": d1, "z2": d2}``,
    two-group designs too, their groups in ``rr_groups``), as RRreg's
    ``RRlin`` takes them; the truths' joint distribution depends on the other
    terms, or on ``rr_formula`` (``"1"``: constant, RRlin's model); the
    complex-sample arguments, ``fpc`` included, as for :func:`logit`. See
    :mod:`deniable.survey._regression_predictors`.
    """
    if rr_predictors is not None or rr_formula is not None or rr_groups is not None:
        if design is not None or predictor is not None:
            raise ValueError("linear takes design= and predictor= (one randomized predictor) or rr_predictors=, "
                             "not both")
        _check_restarts(restarts)
        _no_offset(offset)
        return fit_predictors("linear", formula, data, None, None, rr_predictors, rr_formula, rr_groups, restarts,
                              cov_type, patsy.EvalEnvironment.capture(1),
                              {"weights": weights, "strata": strata, "cluster": cluster, "fpc": fpc,
                               "repweights": repweights, "rep_type": rep_type, "rscales": rscales, "mse": mse,
                               "lonely_psu": lonely_psu})
    if design is None:
        raise TypeError("linear needs design= (the randomized predictor's design) or rr_predictors=")
    check_one_group(design)
    _check_restarts(restarts)
    rows = _Rows.build(formula, data, design, None, patsy.EvalEnvironment.capture(1),
                       (weights, strata, cluster, fpc, *(repweights if isinstance(repweights, list) else ())), offset)
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
        shifted = outcome.to_numpy() - (0.0 if rows.offset is None else rows.offset)
        lik = MixtureLikelihood(design, answers, shifted, rows.x.to_numpy(), column)
    except ValueError as err:
        raise ValueError(f"{err} (column {name!r} of data)") from None
    if sample is not None:
        lik.weights = sample.weights[rows.positions] / float(np.mean(sample.weights[rows.positions]))
    best = _fit_linear(lik, design, restarts)
    cov, deff = _covariance(lik, best, cov_name, sample, rows.positions)
    res = _results(RRLinear(outcome, rows.x, lik, rows.x.design_info, ["sigma", "pi"], rows.offset_info),
                   RRLinearResults, best, cov)
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

    Both fits must use the same design, the same answers (the same rows:
    drop missing values before fitting models with different terms) and the same offsets. The
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
    offsets = [np.zeros(lik.nobs) if lik.offset is None else lik.offset for lik in (a, b)]
    if not np.array_equal(offsets[0], offsets[1]):
        raise ValueError("restricted has other offsets than full: not nested (fit both with the same offset)")
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
