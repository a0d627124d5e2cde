"""``ictreg``: regression for list experiments (R ``list``'s ``ictreg``), with ``predict``.

The model and its estimation are in :mod:`deniable.survey._list`. This
module adds the formula interface (patsy; the ``survey`` extra), the
results (``params`` named ``sensitive:<term>`` and ``control:<term>``,
``bse``, ``llf``, ``predict``) and complex samples. Standard errors: the
inverse of the exact observed information (``method="ml"``), the two-step
sandwich (``"nls"``), HC3 (``method="lm"``), or design-based with a complex sample.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import patsy

from deniable._intervals import z_for
from deniable._results import ConfidenceInterval, Result, ResultTable, check_level
from deniable.survey._formula import namespace, plain, r_syntax, warn_coded_numbers
from deniable.survey._likelihood import maximize
from deniable.survey._list import ListExperiment, ListLikelihood, _logistic_fit
from deniable.survey._weighted import sandwich, survey_sample

__all__ = ["ictreg", "ICTRegResults"]

METHODS = ("ml", "nls", "lm")


@dataclass(frozen=True, eq=False)
class ICTRegResults(Result):
    """A fitted list-experiment regression: ``params``, ``bse`` (pandas Series by name), ``cov``, ``llf``.

    ``predict()`` gives each respondent's probability of the sensitive item
    with its standard error; ``design_effect`` and ``sample`` are set for a
    complex sample.
    """

    experiment: ListExperiment
    method: str
    formula: str
    params: pd.Series
    bse: pd.Series
    cov: Any
    llf: float | None
    nobs: int
    n_dropped: int
    cov_type: str
    design_effect: pd.Series | None = None
    sample: str | None = None
    _exog: Any = field(default=None, repr=False)
    _design_info: Any = field(default=None, repr=False)
    ci_methods: ClassVar[tuple[str, ...]] = ("wald",)

    def confidence_interval(self, confidence_level: float = 0.95, method: str | None = None) -> ConfidenceInterval:
        """``estimate +- z SE`` per parameter."""
        level = check_level(confidence_level)
        self._method(method)
        z = z_for(1 - level)
        values, se = self.params.to_numpy(), self.bse.to_numpy()
        return ConfidenceInterval(values - z * se, values + z * se)

    def _table(self, confidence_level: float, method: str | None) -> ResultTable:
        low, high = self.confidence_interval(confidence_level, method)
        fields: dict[str, Any] = {"J": self.experiment.J, "epsilon": self.experiment.epsilon, "method": self.method,
                                  "formula": self.formula, "n": self.nobs, "n_dropped": self.n_dropped,
                                  "cov_type": self.cov_type, "llf": self.llf}
        columns = {"estimate": self.params.to_numpy(), "std_error": self.bse.to_numpy(), "ci_low": low,
                   "ci_high": high}
        if self.design_effect is not None:
            fields["sample"] = self.sample
            columns["design_effect"] = self.design_effect.to_numpy()
        return ResultTable(fields, columns, "parameter", list(self.params.index), "parameters")

    def predict(self, newdata: Any = None, level: float = 0.95) -> pd.DataFrame:
        """Each respondent's (or ``newdata`` row's) probability of the sensitive item, with SE and interval.

        ``ml``: ``g = logistic(x' delta)``, ``SE = g (1 - g) sqrt(x' V x)``;
        ``lm``: ``x' delta`` with ``SE = sqrt(x' V x)``; ``V`` the sensitive
        coefficients' covariance. Columns ``fit``, ``se``, ``ci_low``, ``ci_high``.
        """
        x = self._exog if newdata is None else _exog(self._design_info, newdata)
        k = x.shape[1]
        delta = self.params.to_numpy()[:k]
        v = np.asarray(self.cov)[:k, :k]
        eta = x @ delta
        spread = np.sqrt(np.einsum("ij,jk,ik->i", x, v, x))
        if self.method == "ml":
            fit = 0.5 * (1 + np.tanh(eta / 2))
            se = fit * (1 - fit) * spread
        else:
            fit, se = eta, spread
        z = z_for(1 - check_level(level))
        return pd.DataFrame({"fit": fit, "se": se, "ci_low": fit - z * se, "ci_high": fit + z * se})

    def predict_mean(self, level: float = 0.95) -> tuple[float, float, tuple[float, float]]:
        """The mean predicted prevalence over the respondents, its delta-method SE and interval."""
        x = self._exog
        k = x.shape[1]
        delta = self.params.to_numpy()[:k]
        v = np.asarray(self.cov)[:k, :k]
        if self.method == "ml":
            g = 0.5 * (1 + np.tanh(x @ delta / 2))
            mean, grad = float(g.mean()), (x * (g * (1 - g))[:, None]).mean(axis=0)
        else:
            mean, grad = float((x @ delta).mean()), x.mean(axis=0)
        se = math.sqrt(float(grad @ v @ grad))
        z = z_for(1 - check_level(level))
        return mean, se, (mean - z * se, mean + z * se)

    def __repr__(self) -> str:
        rows = ", ".join(f"{k}={v:.4f} ({self.bse[k]:.4f})" for k, v in self.params.items())
        return (f"ICTRegResults(J={self.experiment.J}, method={self.method!r}, n={self.nobs}, {rows}; "
                f"epsilon=inf: a treated answer of 0 or {self.experiment.J + 1} reveals the sensitive item)")


def _exog(design_info: Any, data: Any) -> Any:
    frame = data if isinstance(data, pd.DataFrame) else pd.DataFrame(data)
    (x,) = patsy.build_design_matrices([design_info], frame, NA_action="raise", return_type="matrix")
    return np.asarray(x, dtype=np.float64)


def ictreg(formula: str, data: Any, treat: str, J: int, method: str = "ml", *,  # noqa: N803
           cov_type: str | None = None, weights: Any = None, strata: Any = None, cluster: Any = None,
           repweights: Any = None, rep_type: str | None = None, rscales: Any = None, mse: bool = False,
           lonely_psu: str = "fail") -> ICTRegResults:
    """Regression of a list experiment's answers on covariates (R ``list``'s ``ictreg``).

    ``formula``: ``"y ~ terms"`` (patsy), ``y`` the count of items;
    ``treat``: the column of the list shown (0 control, 1 with the sensitive
    item); ``J``: the number of control items; ``method``: ``"ml"`` (the
    constrained maximum-likelihood model, EM then Newton) or ``"lm"``
    (least squares with interactions, HC3 SEs). Rows with a missing value
    are dropped (``n_dropped``). ``cov_type`` and the complex-sample
    arguments as for :func:`~deniable.survey.logit` (no ``fpc``: the random
    assignment to the lists adds variance that no fpc reduces).
    """
    experiment = ListExperiment(J)
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(map(repr, METHODS))}; got {method!r}")
    frame = (data if isinstance(data, pd.DataFrame) else pd.DataFrame(data)).reset_index(drop=True)
    if not isinstance(treat, str) or treat not in frame.columns:
        raise ValueError(f"treat must name a column of data (columns: {', '.join(map(str, frame.columns))}); "
                         f"got {treat!r}")
    named = tuple(str(v) for v in (treat, weights, strata, cluster) if isinstance(v, str))
    env = patsy.EvalEnvironment.capture(1).with_outer_namespace(namespace())
    try:
        y, x = patsy.dmatrices(r_syntax(formula, frame.columns, named), frame, NA_action="drop",
                               return_type="dataframe", eval_env=env)
    except patsy.PatsyError as err:
        raise ValueError(f"formula {formula!r}: {str(err).splitlines()[0]}") from None
    warn_coded_numbers(formula, frame, x.design_info)
    design_info = x.design_info
    positions = x.index.to_numpy()
    keep_treat = frame[treat].iloc[positions].notna().to_numpy()
    positions, y, x = positions[keep_treat], y[keep_treat], x[keep_treat]
    answers, treated = experiment.check(y.iloc[:, 0].to_numpy(), frame[treat].iloc[positions].to_numpy())
    sample, cov_name = survey_sample(len(frame), cov_type, frame, weights=weights, strata=strata, cluster=cluster,
                                     repweights=repweights, rep_type=rep_type, rscales=rscales, mse=mse,
                                     lonely_psu=lonely_psu)
    if cov_type is None and sample is None:
        cov_name = "oim" if method == "ml" else "HC3"
    exog = x.to_numpy(dtype=np.float64)
    names = [plain(str(c)) for c in x.columns]
    if len(answers) <= 2 * len(names):
        raise ValueError(f"data has {len(answers)} complete rows for {2 * len(names)} parameters")
    w = None if sample is None else sample.weights[positions] / float(np.mean(sample.weights[positions]))
    if method == "ml":
        params, cov, llf, deff = _ml(experiment.J, answers, treated, exog, w, sample, positions)
    elif method == "nls":
        params, cov, deff = _nls(experiment.J, answers, treated, exog, w, sample, positions)
        llf = None
    else:
        params, cov, deff = _lm(answers, treated, exog, w, sample, positions)
        llf = None
    labels = [f"sensitive:{n}" for n in names] + [f"control:{n}" for n in names]
    if method == "lm":
        labels = labels[len(names):] + labels[: len(names)]  # R's order is the same: report sensitive first
        order = np.r_[np.arange(len(names), 2 * len(names)), np.arange(len(names))]
        params, cov = params[order], cov[np.ix_(order, order)]
        deff = None if deff is None else deff[order]
        labels = [f"sensitive:{n}" for n in names] + [f"control:{n}" for n in names]
    se = np.sqrt(np.diag(cov))
    return ICTRegResults(experiment, method, formula, pd.Series(params, index=labels), pd.Series(se, index=labels),
                         cov, llf, len(answers), len(frame) - len(answers), cov_name,
                         None if deff is None else pd.Series(deff, index=labels, name="design_effect"),
                         None if sample is None else sample.describe(), exog, design_info)


def _ml(J: int, y: Any, treated: Any, exog: Any, w: Any, sample: Any, positions: Any) -> tuple[Any, ...]:  # noqa: N803
    """EM from the difference-in-means start, Newton to a decrement below 1e-10, and the covariance."""
    lik = ListLikelihood(J, y, treated, exog)
    lik.weights = w
    k = exog.shape[1]
    weights = np.ones(len(y)) if w is None else w
    control = ~treated
    psi = _logistic_fit(exog[control], y[control] / J, weights[control] * J, np.zeros(k))
    share = np.clip(float(np.average(y[treated], weights=weights[treated]))
                    - float(np.average(y[control], weights=weights[control])), 0.02, 0.98)
    delta = np.zeros(k)
    delta[0] = math.log(share / (1 - share)) if np.allclose(exog[:, 0], 1.0) else 0.0
    start = lik.em(np.concatenate([delta, psi]))
    best = maximize(lik, start)
    if not best.converged:
        raise ValueError("the list-experiment likelihood reached no maximum (Newton's method did not converge)")
    if sample is None:
        return best.params, np.linalg.inv(-lik.hessian(best.params)), best.llf, None
    cov, deff = sandwich(lik, best, sample, positions, lik.with_weights)
    return best.params, cov, best.llf, deff


def _least_squares(x: Any, target: Any, scale: float, w: Any, start: Any, steps: int = 500) -> Any:
    """``argmin sum_i w_i (target_i - scale logistic(x_i' beta))^2``: Newton's method with the exact Hessian,
    damped (Levenberg) where it is not positive definite or the step does not lower the sum, until the
    Newton decrement is below 1e-20 times the sum."""
    beta = np.array(start, dtype=np.float64)

    def loss(b: Any) -> float:
        return float(w @ (target - scale / (1 + np.exp(-(x @ b)))) ** 2)

    current, damping = loss(beta), 0.0
    for _ in range(steps):
        g = 1 / (1 + np.exp(-(x @ beta)))
        d1 = scale * g * (1 - g)
        resid = target - scale * g
        grad = x.T @ (w * resid * d1)  # minus half the gradient of the sum
        hess = (x * (w * (d1**2 - resid * d1 * (1 - 2 * g)))[:, None]).T @ x
        scale_h = float(np.max(np.abs(np.diag(hess)))) or 1.0
        while True:
            try:
                factor = np.linalg.cholesky(hess + damping * scale_h * np.eye(len(beta)))
            except np.linalg.LinAlgError:
                damping = max(damping * 10, 1e-10)
                continue
            step = np.linalg.solve(factor.T, np.linalg.solve(factor, grad))
            trial = loss(beta + step)
            if trial <= current or damping > 1e8:
                break
            damping = max(damping * 10, 1e-10)
        if trial > current:
            break
        decrement = float(grad @ step)
        beta, current = beta + step, trial
        damping = damping / 10 if damping > 1e-10 else 0.0
        if decrement <= 1e-20 * max(current, 1e-300):
            break
    return beta


def _nls(J: int, y: Any, treated: Any, exog: Any, w: Any, sample: Any, positions: Any) -> tuple[Any, ...]:  # noqa: N803
    """Imai's (2011) two-step non-linear least squares and its stacked sandwich (module docstring).

    Step 1: ``psi`` minimizes ``sum_control (y - J h)^2``; step 2: ``delta``
    minimizes ``sum_treated (y - J h - g)^2`` with ``psi`` fixed. The
    estimating equations ``m_i`` (``(y - J h - g) g' x`` for the treated,
    ``(y - J h) J h' x`` for the controls) and their expected Jacobian ``G``
    give ``z_i = -G^{-1} m_i``; the covariance is ``sum_i z_i z_i'`` (R's),
    or the design's with a complex sample.
    """
    weights = np.ones(len(y)) if w is None else w
    k = exog.shape[1]
    control = ~treated
    psi0 = _logistic_fit(exog[control], y[control] / J, weights[control] * J, np.zeros(k))
    psi = _least_squares(exog[control], y[control].astype(float), float(J), weights[control], psi0)
    h = 1 / (1 + np.exp(-(exog @ psi)))
    adjusted = y - J * h
    share = np.clip(adjusted[treated], 0.0, 1.0)
    delta0 = _logistic_fit(exog[treated], share, weights[treated], np.zeros(k))
    delta = _least_squares(exog[treated], adjusted[treated], 1.0, weights[treated], delta0)
    g = 1 / (1 + np.exp(-(exog @ delta)))
    dg, dh = g * (1 - g), h * (1 - h)
    m = np.zeros((len(y), 2 * k))
    m[treated, :k] = ((adjusted - g) * dg)[treated, None] * exog[treated]
    m[control, k:] = ((y - J * h) * J * dh)[control, None] * exog[control]
    m *= weights[:, None]

    def gram(rows: Any, c: Any) -> Any:
        return (exog[rows] * (weights * c)[rows, None]).T @ exog[rows]

    jacobian = np.block([[-gram(treated, dg**2), -gram(treated, J * dg * dh)],
                         [np.zeros((k, k)), -gram(control, (J * dh) ** 2)]])
    z_rows = -m @ np.linalg.inv(jacobian).T
    params = np.concatenate([delta, psi])
    if sample is None:
        return params, z_rows.T @ z_rows, None
    z = np.zeros((sample.n, 2 * k))
    z[positions] = z_rows
    used = np.zeros(sample.n)
    used[positions] = weights

    def replicate(rep: Any) -> Any:
        return _nls(J, y, treated, exog, rep[positions] / float(np.mean(sample.weights[positions])), None,
                    positions)[0]

    cov, deff = sample.covariance(z, replicate, params, used)
    return params, cov, deff


def _lm(y: Any, treated: Any, exog: Any, w: Any, sample: Any, positions: Any) -> tuple[Any, ...]:
    """Least squares of ``y`` on ``[x, treat x]``; HC3 covariance, or the design-based sandwich."""
    design = np.hstack([exog, exog * treated[:, None]])
    weights = np.ones(len(y)) if w is None else w
    xtwx = (design * weights[:, None]).T @ design
    inverse = np.linalg.inv(xtwx)
    beta = inverse @ (design.T @ (weights * y))
    resid = y - design @ beta
    if sample is None:
        leverage = np.einsum("ij,jk,ik->i", design, inverse, design)
        meat = (design * (resid / (1 - leverage))[:, None] ** 2).T @ design
        return beta, inverse @ meat @ inverse, None
    z = np.zeros((sample.n, design.shape[1]))
    z[positions] = (design * (weights * resid)[:, None]) @ inverse
    used = np.zeros(sample.n)
    used[positions] = weights

    def replicate(rep: Any) -> Any:
        r = rep[positions]
        return np.linalg.solve((design * r[:, None]).T @ design, design.T @ (r * y))

    cov, deff = sample.covariance(z, replicate, beta, used)
    return beta, cov, deff
