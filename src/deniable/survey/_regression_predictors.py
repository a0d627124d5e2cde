"""Regressions with randomized answers as covariates: ``logit(..., rr_predictors=)`` (rr's ``rrreg.predictor``)
and ``linear(..., rr_predictors=)`` (RRreg's ``RRlin`` with several predictors and two-group designs).

A term of the formula named in ``rr_predictors`` is a column of randomized
answers; the regression uses the respondent's latent *truth* in its place,
summed over with its probability given the covariates and the answer
(:mod:`deniable.survey._predictor_likelihood` has the likelihood, its exact
score and Hessian). The fit is maximum likelihood by Newton's method (what
rr's EM converges to, without its iterations); standard errors from the
exact observed information (``cov_type="oim"``, what rr with ``optim=TRUE``
and RRlin report up to their numerical Hessians) or the outer product of the
scores (``"opg"``). A complex sample (``weights=``, ``strata=``,
``cluster=``, ``fpc=``, ``repweights=``) gives the weighted pseudo-likelihood
``sum_i w_i log L_i(theta)`` with design-based standard errors and design
effects, as :mod:`deniable.survey._weighted` computes them for ``logit``:
Taylor linearization of ``z_i = (-H)^{-1} w_i u_i`` (between-PSU variance
within strata, times ``1 - f_h`` with an fpc) or the replicates' refits. An
fpc shrinks the sampling's share of the variance only: the randomization's,
``sum_i f_i Var(z_i | S_i)`` over the respondents' latent truths ``S_i`` (the
outcome's, if randomized, and each predictor's, randomized independently, so
their joint transition matrix is the Kronecker product of the designs'), is
estimated without bias and added back. ``"robust"`` and ``"cluster"`` are the
sandwich. Parameters, in order: the outcome's coefficients (the
randomized term's coefficient is the effect of the truth), ``sigma`` for
``linear``, the latent truths' model (``"z:Intercept"``, ``"z:age"``, ... for
one predictor ``z``: ``logit P(z = 1 | w)``; for several, a multinomial logit
of their joint state against all-zero, ``"z1=1&z2=0:Intercept"``, ...) and the
extra parameter of a two-group predictor (``"z:t"``, ``"z:piUQ"``).

The latent truths' covariates ``w`` are the formula's other terms by default
(rr's model); ``rr_formula="1"`` makes their distribution constant, RRlin's
model. Needs the ``survey`` extra.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd
import patsy
from statsmodels.base import wrapper
from statsmodels.base.model import LikelihoodResultsWrapper

from deniable.errors import SeparationError
from deniable.survey._custom import Custom
from deniable.survey._design_base import Design
from deniable.survey._formula import namespace, plain, r_syntax
from deniable.survey._likelihood import DIVERGED_ETA, Maximum, check_design, covariance, maximize
from deniable.survey._predictor_likelihood import PredictorLikelihood, check_predictor_design, unbiased_truth
from deniable.survey._regression_base import _answer, _frame, _results, _Rows, _RRModel, _RRResults
from deniable.survey._weighted import prevalence, sandwich, survey_sample

__all__ = ["RRPredictorResults", "fit_predictors"]

DIRECT = Custom(np.eye(2))
"""A plain 0/1 outcome: the design that reports the truth."""


class _PredictorModel(_RRModel):
    """The statsmodels model of a regression on randomized predictors."""


class RRPredictorResults(_RRResults):
    """A regression with randomized answers as covariates (statsmodels results, ``params`` indexed by name).

    Besides the statsmodels results: ``predictors`` (column to design),
    ``state_probabilities()`` (the latent truths' distribution, averaged over
    the respondents, with delta-method standard errors).
    """

    title = "Regression on randomized predictors"
    predictors: dict[str, Design]
    kind: str

    def _title(self) -> str:
        parts = [f"{name} ({d.model}, p = {', '.join(f'{float(v):.4g}' for v in d.p)})"
                 for name, d in self.predictors.items()]
        outcome = "plain outcome" if self.design is None else f"{self.design.model} outcome"
        return f"{'Logit' if self.kind == 'logit' else 'Linear regression'} on {', '.join(parts)}; {outcome}"

    def state_probabilities(self) -> pd.DataFrame:
        """Per latent state: ``probability`` (the mean of ``P(s | w_i)`` over the respondents; with
        ``rr_formula="1"`` RRlin's ``pi``) and ``std_error`` (delta method on the state model's covariance)."""
        lik: PredictorLikelihood = self.model.likelihood
        theta = np.asarray(self.params)
        _, _, alpha, _ = lik.split(theta)
        prob = lik.state_probabilities(alpha)
        k, q = lik.n_states, lik.state_exog.shape[1]
        start = lik.k_beta + lik.k_sigma
        # d mean_i P_is / d alpha_l = mean_i P_is ([s = l] - P_il) w_i
        jac = np.zeros((k, lik.k_alpha))
        for s in range(k):
            for m in range(1, k):
                c = prob[:, s] * ((s == m) - prob[:, m])
                jac[s, (m - 1) * q: m * q] = c @ lik.state_exog / lik.nobs
        cov = np.asarray(self.cov_params())[start: start + lik.k_alpha, start: start + lik.k_alpha]
        se = np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", jac, cov, jac), 0.0))
        return pd.DataFrame({"probability": prob.mean(axis=0), "std_error": se}, index=_state_labels(self))


class RRPredictorResultsWrapper(LikelihoodResultsWrapper):  # type: ignore[misc]
    """Labels ``params``, ``bse``, ``pvalues``, ``conf_int()`` and ``cov_params()`` with the names."""


wrapper.populate_wrapper(RRPredictorResultsWrapper, RRPredictorResults)


def _state_labels(res: RRPredictorResults) -> list[str]:
    names = list(res.predictors)
    states = res.model.likelihood.states.astype(int)
    return ["&".join(f"{n}={v}" for n, v in zip(names, s, strict=True)) for s in states]


def fit_predictors(kind: str, formula: str, data: Any, design: Design | None, group: Any, rr_predictors: Any,
                   rr_formula: str | None, rr_groups: Any, restarts: int, cov_type: str | None, env: Any,
                   sample: dict[str, Any]) -> RRPredictorResults:
    """The fit behind ``logit`` and ``linear`` with ``rr_predictors`` (see :mod:`deniable.survey._regression`)."""
    if not isinstance(rr_predictors, dict) or not rr_predictors:
        raise ValueError(f"rr_predictors must be a non-empty dict of column name to Design; got {rr_predictors!r}")
    predictors = {str(k): check_predictor_design(str(k), d) for k, d in rr_predictors.items()}
    outcome_design = _outcome_design(kind, design, group)
    groups_arg = _check_groups(rr_groups, predictors)
    frame = _frame(data, "data")
    booleans = [k for k in predictors if k in frame.columns and pd.api.types.is_bool_dtype(frame[k])]
    if booleans:  # answers True / False enter as 1 / 0, not as a category
        frame = frame.assign(**{k: frame[k].astype(np.int64) for k in booleans})
    repweights = sample.get("repweights")
    named = (*groups_arg.values(), *(sample[k] for k in ("weights", "strata", "cluster")),
             *(repweights if isinstance(repweights, list) else ()))
    rows = _Rows.build(formula, frame, outcome_design or DIRECT, None, env,
                       tuple(v for v in named if isinstance(v, str)))
    if rows.offset is not None:
        raise ValueError(f"formula {formula!r}: randomized predictors (rr_predictors=) take no offset() term")
    survey, cov_name = survey_sample(rows.n_rows, cov_type, rows.frame, **sample)
    columns = _predictor_columns(rows, predictors)
    indexes, groups = [], []
    for name, d in predictors.items():
        values = rows.x[name].to_numpy()
        bad = ~np.isin(values, np.asarray(d.responses, dtype=np.float64))
        if bad.any():
            raise ValueError(f"rr_predictors[{name!r}]: answers must be one of {', '.join(map(str, d.responses))} "
                             f"for {d.model}; got {float(values[bad][0])!r} at row "
                             f"{rows.labels[np.flatnonzero(bad)[0]]!r}")
        indexes.append(np.searchsorted(np.asarray(d.responses, dtype=np.float64), values))
        groups.append(_row_groups(name, d, groups_arg.get(name), rows))
    y = _answer(rows.y, formula).to_numpy(dtype=np.float64)
    if kind == "logit":
        assert outcome_design is not None
        bad = ~np.isin(y, np.asarray(outcome_design.responses, dtype=np.float64))
        if bad.any():
            allowed = ", ".join(map(str, outcome_design.responses))
            raise ValueError(f"formula {formula!r}: the outcome must be one of {allowed}; got {float(y[bad][0])!r} "
                             f"at row {rows.labels[np.flatnonzero(bad)[0]]!r}")
    state_exog, state_names = _state_exog(rows, columns, rr_formula, env)
    lik = PredictorLikelihood(kind, y, rows.x.to_numpy(), columns, state_exog,
                              [(d, i, g) for d, i, g in zip(predictors.values(), indexes, groups, strict=True)],
                              None if design is None else outcome_design)
    names = _names(rows.names, kind, predictors, state_names)
    rows.check_size(names[len(rows.names):])
    if survey is not None:
        lik.weights = survey.weights[rows.positions] / float(np.mean(survey.weights[rows.positions]))
    best = _fit(lik, _start(lik, predictors, groups, indexes, columns, outcome_design, design is None), restarts)
    if survey is None:
        cov, deff = covariance(lik, best, cov_name), None
    else:
        cov, deff = sandwich(lik, best, survey, rows.positions, lik.with_weights)
    outcome = _answer(rows.y, formula)
    res = _results(_PredictorModel(outcome, rows.x, lik, rows.x.design_info, names[len(rows.names):]),
                   RRPredictorResults, best, cov)
    res.design, res.formula, res.cov_type, res.n_dropped = design, formula, cov_name, rows.dropped
    res.sample = None if survey is None else survey.describe()
    res.design_effect = None if deff is None else pd.Series(deff, index=names, name="design_effect")
    res.predictors, res.kind = predictors, kind
    return RRPredictorResultsWrapper(res)


def _outcome_design(kind: str, design: Design | None, group: Any) -> Design | None:
    if kind == "linear":
        return None
    if group is not None:
        raise ValueError("group: with rr_predictors the outcome's design has one group; group= is for a "
                         "two-group outcome (use rr_groups= for two-group predictors)")
    if design is None:
        return DIRECT
    check_design(design)
    if design.groups != 1:
        raise ValueError(f"design {design.model} has two groups: with rr_predictors the outcome's design must "
                         "have one group")
    return design


def _check_groups(rr_groups: Any, predictors: dict[str, Design]) -> dict[str, Any]:
    groups = {} if rr_groups is None else rr_groups
    if not isinstance(groups, dict):
        raise ValueError(f"rr_groups must be a dict of predictor name to group column or array; got {rr_groups!r}")
    for name in groups:
        if name not in predictors:
            raise ValueError(f"rr_groups names {name!r}, which is not in rr_predictors")
    for name, d in predictors.items():
        if d.groups == 2 and name not in groups:
            raise ValueError(f"rr_groups: {name!r} has the two-group design {d.model}; give its group column "
                             f"(rr_groups={{{name!r}: 'column'}})")
        if d.groups == 1 and name in groups:
            raise ValueError(f"rr_groups: {name!r} has the one-group design {d.model}; leave it out of rr_groups")
    return groups


def _predictor_columns(rows: _Rows, predictors: dict[str, Design]) -> list[int]:
    """The positions of the predictors' columns in the outcome's matrix; each must enter as a plain term only."""
    columns = []
    for name in predictors:
        if name not in rows.names:
            raise ValueError(f"rr_predictors names {name!r}, which is not a plain term of the formula "
                             f"(terms: {', '.join(rows.names)})")
        word = re.compile(rf"(?<![\w.]){re.escape(name)}(?![\w.])")
        other = [n for n in rows.names if n != name and word.search(n)]
        if other:
            raise ValueError(f"rr_predictors: {name!r} must enter the formula as a plain term only (its latent "
                             f"truth replaces the column); it also enters {', '.join(map(repr, other))}")
        columns.append(rows.names.index(name))
    return columns


def _row_groups(name: str, design: Design, given: Any, rows: _Rows) -> Any:
    if design.groups == 1:
        return None
    if isinstance(given, str):
        if given not in rows.frame.columns:
            raise ValueError(f"rr_groups[{name!r}]: {given!r} is not a column of data")
        values = rows.frame[given].to_numpy()
    else:
        values = np.asarray(given)
        if values.shape != (rows.n_rows,):
            raise ValueError(f"rr_groups[{name!r}] must have one entry per row of data ({rows.n_rows}); got shape "
                             f"{values.shape}")
    try:
        return design.check_groups(values[rows.positions], len(rows.positions))
    except ValueError as err:
        raise ValueError(f"rr_groups[{name!r}]: {err}") from None


def _state_exog(rows: _Rows, columns: list[int], rr_formula: str | None, env: Any) -> tuple[Any, list[str]]:
    """The latent truths' covariates: the outcome's other columns, or ``rr_formula``'s (a right-hand side)."""
    if rr_formula is None:
        keep = [j for j in range(len(rows.names)) if j not in columns]
        return rows.x.to_numpy()[:, keep], [rows.names[j] for j in keep]
    if not isinstance(rr_formula, str) or "~" in rr_formula:
        raise ValueError(f"rr_formula must be a right-hand side such as '1' or 'age + region'; got {rr_formula!r}")
    frame = rows.frame.iloc[rows.positions]
    try:
        w = patsy.dmatrix(r_syntax(rr_formula, frame.columns, ()), frame, NA_action="raise", return_type="dataframe",
                          eval_env=env.with_outer_namespace(namespace()))
    except patsy.PatsyError as err:
        raise ValueError(f"rr_formula {rr_formula!r}: {str(err).splitlines()[0]}") from None
    return w.to_numpy(dtype=np.float64), [plain(str(c)) for c in w.columns]


def _names(outcome: list[str], kind: str, predictors: dict[str, Design], state: list[str]) -> list[str]:
    names = list(outcome) + (["sigma"] if kind == "linear" else [])
    keys = list(predictors)
    for s in PredictorLikelihood.state_list(len(keys))[1:]:
        label = keys[0] if len(keys) == 1 else "&".join(f"{k}={int(v)}" for k, v in zip(keys, s, strict=True))
        names += [f"{label}:{w}" for w in state]
    names += [f"{k}:{d.extra}" for k, d in predictors.items() if d.extra]
    return names


def _start(lik: PredictorLikelihood, predictors: dict[str, Design], groups: list[Any], indexes: list[Any],
           columns: list[int], outcome_design: Design | None, plain_outcome: bool) -> Any:
    """Start values: each truth's prevalence (and extra parameter) from its answers alone, independent truths,
    the outcome's coefficients by least squares on the answers rescaled to estimate the truths."""
    x = lik.exog.copy()
    pis, extra = [], None
    for d, g, idx, col in zip(predictors.values(), groups, indexes, columns, strict=True):
        answers = np.asarray(d.responses, dtype=np.float64)[idx]
        a = None
        if d.extra:
            fit_ = prevalence(answers.astype(np.int64), d, g)
            a = extra = float(np.clip(fit_.params[d.extra], 0.02, 0.98))
        x[:, col] = unbiased_truth(d, answers, g, a)
        pis.append(float(np.clip(x[:, col].mean(), 0.05, 0.95)))
    if lik.outcome == "linear":
        beta, *_ = np.linalg.lstsq(x, lik.y, rcond=None)
        head = [beta, [max(float(np.std(lik.y - x @ beta)), 1e-3)]]
    else:
        assert outcome_design is not None
        target = lik.y if plain_outcome else unbiased_truth(outcome_design, lik.y, None, None)
        level = float(np.clip(np.mean(target), 0.05, 0.95))
        beta = np.zeros(x.shape[1])
        ones = _ones(lik.exog)
        if ones is not None:
            beta[ones] = np.log(level / (1 - level))
        head = [beta]
    alpha = np.zeros((lik.n_states - 1, lik.state_exog.shape[1]))
    ones = _ones(lik.state_exog)
    if ones is not None:
        states = lik.states
        log_p = states @ np.log(pis) + (1 - states) @ np.log(1 - np.asarray(pis))
        alpha[:, ones] = log_p[1:] - log_p[0]
    return np.concatenate([*head, alpha.ravel(), [extra] if extra is not None else []])


def _ones(x: Any) -> int | None:
    hits: Any = np.flatnonzero(np.all(x == 1.0, axis=0)) if len(x) else []
    return int(hits[0]) if len(hits) else None


def _fit(lik: PredictorLikelihood, base: Any, restarts: int) -> Maximum:
    """Newton from ``base``; ``restarts`` seeded perturbations of it when that maximum is in doubt (not converged,
    the extra parameter on a bound, or a Hessian there that is not negative definite). The best is kept."""
    rng = np.random.default_rng(0)
    best = _search(lik, base)
    if _in_doubt(lik, best):
        for _ in range(restarts):
            trial = base + rng.normal(0.0, 0.5, base.size)
            if lik.k_sigma:
                trial[lik.k_beta] = base[lik.k_beta] * rng.uniform(0.5, 2.0)
            if lik.k_extra:
                trial[-1] = rng.uniform(0.05, 0.95)
            found = _search(lik, trial)
            if found is not None and (best is None or found.llf > best.llf):
                best = found
    if best is None or not best.converged:
        raise SeparationError("rr_predictors: the likelihood reached no maximum from any start (perfect separation, "
                              "or too few respondents for the model)")
    beta, _, alpha, _ = lik.split(best.params)
    eta = np.concatenate([*(np.abs(x @ beta) for x in lik.rows if lik.outcome == "logit"),
                          np.abs(lik.state_exog @ alpha.T).ravel()])
    if eta.size and eta.max() > DIVERGED_ETA:
        raise SeparationError("rr_predictors: perfect separation: a fitted probability is 0 or 1 to within 1e-13 "
                              "(a coefficient diverges); drop or merge the term that separates the outcome or a "
                              "truth")
    info = -lik.hessian(best.params)
    keep = np.ones(lik.k_params, dtype=bool)
    if best.at_bound:
        keep[-1] = False
    if np.linalg.eigvalsh(info[np.ix_(keep, keep)])[0] <= 0:
        raise SeparationError("rr_predictors: singular information matrix at the maximum: some parameter is not "
                              "identified (perfect separation, or collinear terms)")
    return best


def _search(lik: PredictorLikelihood, start: Any) -> Maximum | None:
    try:
        return maximize(lik, start)
    except (ValueError, FloatingPointError, np.linalg.LinAlgError):
        return None


def _in_doubt(lik: PredictorLikelihood, found: Maximum | None) -> bool:
    if found is None or not found.converged or found.at_bound:
        return True
    try:
        np.linalg.cholesky(-lik.hessian(found.params))
    except np.linalg.LinAlgError:
        return True
    return False
