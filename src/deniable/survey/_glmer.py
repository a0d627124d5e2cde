"""Random-effects logistic regression of a randomized-response answer (GLMMRR's ``RRglmer``, lme4's ``glmer``).

``glmer("y ~ x + (1 | school)", data, design)`` models the prevalence of
respondent ``i`` in school ``j`` as ``pi_i = logistic(x_i' beta + z_i' b_j)``
with ``b_j ~ N(0, Sigma)`` independently per school, and the answer through
the design: for a yes/no design ``P(yes) = c + d pi_i`` with
``c = P(yes | non-carrier)`` and ``d = P(yes | carrier) - c`` (GLMMRR's
misclassification form; any one-group design with two true states, its
transition matrix in general). ``(1 | school)`` is a random intercept,
``(1 + x | school)`` a random intercept and slope with their correlation
(``Sigma`` unstructured, as lme4's). The marginal likelihood is approximated
by Laplace's method (``nAGQ=1``) or adaptive Gauss-Hermite quadrature
(``nAGQ > 1``, a random intercept only), as lme4 computes them
(:mod:`deniable.survey._mixed`), and maximized over lme4's
``theta`` (the lower-triangular factor of ``Sigma``, its diagonal
non-negative) and ``beta`` with scipy's L-BFGS-B, then polished by Newton
steps on the finite-difference Hessian. Standard errors of ``beta``: the
inverse of minus that Hessian of the approximated log-likelihood over
``(theta, beta)`` (what lme4's ``vcov`` reports), ``beta``'s block; with a
variance component on its bound (0), over ``beta`` alone.

Direct questioning (``Warner(p=1)``: ``c = 0, d = 1``) is lme4's
``glmer(family = binomial)``. ``weights=`` ``a_i`` count each respondent's
conditional log-likelihood ``a_i`` times, ``log P(y_i | b)`` becoming
``a_i log P(y_i | b)`` inside the integral, as lme4's binomial ``weights=``
(a pseudo-likelihood with model-based standard errors). Needs the
``survey`` extra.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import patsy
from scipy import optimize, stats
from statsmodels.iolib.summary2 import Summary
from statsmodels.tools.numdiff import approx_fprime, approx_hess3

from deniable._results import ConfidenceInterval, Result, ResultTable, check_level
from deniable._sample_design import _weights
from deniable.errors import SeparationError
from deniable.survey._design_base import Design
from deniable.survey._formula import namespace, plain, r_syntax
from deniable.survey._likelihood import ResponseLikelihood, check_design, fit
from deniable.survey._mixed import MixedLikelihood
from deniable.survey._regression_base import OFFSET_COLUMN, _answer, _frame, _Rows, offset_column

__all__ = ["glmer", "GLMMResults"]

MAX_NAGQ = 100
_BAR = re.compile(r"\(\s*([^()|]*?)\s*(\|\|?)\s*([^()|]*?)\s*\)")


@dataclass
class GLMMResults(Result):
    """A fitted random-effects randomized-response logit (built by :func:`glmer`).

    ``params``, ``bse``, ``pvalues`` (pandas Series by term), ``cov_params``
    of the fixed effects; ``variance_components`` (variance and standard
    deviation per random term, ``correlation`` between them), ``theta``
    (lme4's) with its Wald standard errors ``theta_bse`` (NaN on the bound
    0), ``random_effects`` (the conditional modes per cluster), ``llf``,
    ``aic``, ``bic``, ``nobs``, ``n_groups``, ``weights`` (the sum of the
    row weights used, None unweighted); :meth:`summary`.
    """

    params: pd.Series
    bse: pd.Series
    cov_params: pd.DataFrame
    variance_components: pd.DataFrame
    correlation: pd.DataFrame
    theta: np.ndarray
    theta_bse: np.ndarray
    random_effects: pd.DataFrame
    llf: float
    nobs: int
    n_groups: int
    group: str
    nagq: int
    design: Design
    formula: str
    n_dropped: int
    converged: bool
    singular: bool
    weights: float | None = None

    ci_methods: ClassVar[tuple[str, ...]] = ("wald",)

    @property
    def df_model(self) -> int:
        """The number of parameters: fixed effects and lme4's ``theta``."""
        return len(self.params) + len(self.theta)

    @property
    def aic(self) -> float:
        """``-2 llf + 2 k`` with ``k`` the fixed effects and variance parameters."""
        return -2 * self.llf + 2 * self.df_model

    @property
    def bic(self) -> float:
        """``-2 llf + k log(n)``."""
        return -2 * self.llf + self.df_model * float(np.log(self.nobs))

    @property
    def pvalues(self) -> pd.Series:
        """Two-sided Wald p-values of the fixed effects."""
        return pd.Series(2 * stats.norm.sf(np.abs(self.params / self.bse)), index=self.params.index)

    @property
    def std_errors(self) -> Any:
        """``bse`` as an array aligned with ``params``."""
        return self.bse.to_numpy()

    def confidence_interval(self, confidence_level: float = 0.95, method: str | None = None) -> ConfidenceInterval:
        """Wald intervals ``beta +- z SE`` of the fixed effects."""
        z = stats.norm.isf((1 - check_level(confidence_level)) / 2)
        self._method(method)
        est, se = self.params.to_numpy(), self.std_errors
        return ConfidenceInterval(est - z * se, est + z * se)

    def _table(self, confidence_level: float, method: str | None) -> ResultTable:
        low, high = self.confidence_interval(confidence_level, method)
        fields = {"design": self.design.model, "formula": self.formula, "n": self.nobs, "n_groups": self.n_groups,
                  "n_dropped": self.n_dropped, "nAGQ": self.nagq, "llf": self.llf, "aic": self.aic,
                  "converged": self.converged, "weights": self.weights,
                  "variance": dict(zip(self.variance_components.index, self.variance_components["variance"],
                                       strict=True))}
        columns = {"estimate": self.params.to_numpy(), "std_error": self.std_errors, "ci_low": low, "ci_high": high,
                   "pvalue": self.pvalues.to_numpy()}
        return ResultTable(fields, columns, "parameter", list(self.params.index), "parameters")

    def summary(self, alpha: float = 0.05) -> Summary:
        """The fit as lme4 prints it: the approximation, log-likelihood and AIC, the variance components
        and the fixed effects with standard errors, z, p-values and intervals."""
        p = ", ".join(f"{float(v):.6g}" for v in self.design.p)
        method = "ML, Laplace" if self.nagq == 1 else f"ML, adaptive Gauss-Hermite (nAGQ = {self.nagq})"
        smry = Summary()
        smry.add_title(f"Randomized-response GLMM: {self.design.model} design, p = ({p})")
        info = {"Formula:": self.formula, "Method:": method,
                "Observations:": str(self.nobs), f"Groups ({self.group}):": str(self.n_groups),
                **({} if self.weights is None else {"Weights (sum):": f"{self.weights:.6g}"}),
                "Log-likelihood:": f"{self.llf:.4f}", "AIC:": f"{self.aic:.4f}", "BIC:": f"{self.bic:.4f}"}
        for name, row in self.variance_components.iterrows():
            info[f"{name}:"] = f"variance {row['variance']:.6g}, SD {row['std_dev']:.6g}"
        terms = list(self.variance_components.index)
        for a in range(len(terms)):
            for b in range(a):
                info[f"corr({terms[b]}, {terms[a].split(': ', 1)[1]}):"] = f"{self.correlation.iloc[a, b]:.4f}"
        smry.add_dict(info, ncols=1)
        low, high = self.confidence_interval(1 - alpha)
        smry.add_df(pd.DataFrame({"Coef.": self.params, "Std.Err.": self.bse, "z": self.params / self.bse,
                                  "P>|z|": self.pvalues, f"[{alpha / 2:g}": low, f"{1 - alpha / 2:g}]": high}),
                    float_format="%.6g")
        notes = [f"{self.n_dropped} row{'s' if self.n_dropped != 1 else ''} with missing values dropped."]
        if self.singular:
            notes.append("Singular fit: a variance component is 0 (or the correlation +-1); standard errors are "
                         "conditional on it.")
        if not self.converged:
            notes.append("The maximization did not converge.")
        smry.add_text("\n".join(notes))
        return smry

    def __str__(self) -> str:
        return str(self.summary())


def glmer(formula: str, data: Any, design: Design, *, nAGQ: int = 1,  # noqa: N803 (lme4's name)
          offset: Any = None, weights: Any = None) -> GLMMResults:
    """Fit a randomized-response logistic model with random effects by maximum likelihood (GLMMRR's ``RRglmer``).

    ``pi_i = logistic(x_i' beta + o_i + z_i' b_j)``, ``b_j ~ N(0, Sigma)`` per
    cluster ``j``, and ``P(answer y_i) = T[0, y_i] + (T[1, y_i] - T[0, y_i])
    pi_i`` with ``T`` the design's transition matrix (for a yes/no design
    ``P(yes) = c + d pi_i``). The log-likelihood
    ``sum_j log integral prod_{i in j} P(y_i | b) N(b; 0, Sigma) db`` is
    approximated as lme4 does (see :mod:`deniable.survey._mixed`). With
    ``weights`` ``a_i`` it is the pseudo-log-likelihood
    ``sum_j log integral prod_{i in j} P(y_i | b)^{a_i} N(b; 0, Sigma) db``:
    each respondent's conditional log-likelihood counted ``a_i`` times, as
    lme4's ``glmer(..., weights=, family=binomial)`` counts a 0/1 answer
    (an integer weight is that many copies of the row; all 1 is the
    unweighted fit).

    Parameters
    ----------
    formula : str
        ``"answer ~ fixed terms + (1 | cluster)"`` or ``(1 + x | cluster)``
        (lme4's syntax, one random-effects term; the fixed terms are
        patsy's, read as R users write them).
    data : DataFrame or mapping of columns
        The answers (the design's responses), covariates and the cluster
        column. Rows with a missing value in a used column are dropped.
    design : Design
        A one-group design with two true states (``Warner(p=1)`` is direct
        questioning).
    nAGQ : int
        1: the Laplace approximation; more: adaptive Gauss-Hermite
        quadrature with that many nodes (a random intercept only).
    offset : str or array, optional
        ``o_i``, a term with its coefficient fixed at 1 (lme4's ``offset``): a
        column name of ``data`` or one number per row; ``offset()`` terms of
        the fixed part add to it.
    weights : str, array or None
        Level-1 (respondent) weights ``a_i >= 0``: a column of ``data`` or
        one number per row of ``data``. Used as given, as lme4 uses them:
        frequency weights, so the standard errors are model-based. For
        sampling weights, scale them first (within each cluster to sum to
        its sample size is the usual choice, Pfeffermann et al. 1998: the
        variance components depend on the scale); the standard errors then
        ignore the sampling design.

    Returns
    -------
    GLMMResults
        Fixed effects with standard errors, variance components,
        log-likelihood, AIC and :meth:`GLMMResults.summary`.

    Raises
    ------
    ValueError
        Naming the argument: no random-effects term or more than one, a
        cluster column not in ``data``, fewer than two clusters, ``nAGQ``
        not an integer in 1..100 or above 1 with random slopes, a
        two-group design, answers outside the design's, an offset not a
        column, of the wrong length or not finite, ``weights`` of the wrong
        length, negative, missing or not finite.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> import deniable as dn
    >>> rng = np.random.default_rng(1)
    >>> school = np.repeat(np.arange(30), 40)
    >>> x = rng.normal(size=school.size)
    >>> truth = rng.random(school.size) < 1 / (1 + np.exp(-(-1 + x + rng.normal(size=30)[school])))
    >>> d = dn.survey.Warner(p=0.85)
    >>> df = pd.DataFrame({"y": d.privatize_many(truth, rng=rng), "x": x, "school": school})
    >>> res = dn.survey.glmer("y ~ x + (1 | school)", df, design=d)
    >>> list(res.params.index)
    ['Intercept', 'x']

    Weights of 1 give the unweighted fit; a weight of 2 is the row twice:

    >>> ones = dn.survey.glmer("y ~ x + (1 | school)", df.assign(w=1.0), design=d, weights="w")
    >>> bool((ones.params == res.params).all()), ones.weights
    (True, 1200.0)
    """
    check_design(design)
    if design.groups != 1 or design.extra is not None or len(design.states) != 2:
        raise ValueError(f"design must be a one-group design with two true states for glmer; got {design.model} "
                         f"({design.groups} groups, states {', '.join(design.states)})")
    nagq = _check_nagq(nAGQ)
    if not isinstance(formula, str) or "~" not in formula:
        raise ValueError(f"formula must be a string 'answer ~ terms + (1 | cluster)'; got {formula!r}")
    fixed, random_lhs, cluster_name = _split(formula)
    if random_lhs != "1" and nagq > 1:
        raise ValueError(f"nAGQ must be 1 (the Laplace approximation) with random slopes ({random_lhs} | "
                         f"{cluster_name}); adaptive quadrature takes a random intercept only, as lme4's; got {nAGQ}")
    frame = _frame(data, "data")
    index = frame.index
    frame, _ = offset_column(offset, frame.reset_index(drop=True), "data")
    row_weights = None if weights is None else _weights(weights, "weights", len(frame), frame)
    if cluster_name not in frame.columns:
        raise ValueError(f"the cluster {cluster_name!r} of ({random_lhs} | {cluster_name}) is not a column of data "
                         f"(columns: {', '.join(map(str, frame.columns))})")
    env = patsy.EvalEnvironment.capture(1).with_outer_namespace(namespace())
    try:
        z_all = patsy.dmatrix(r_syntax(random_lhs, frame.columns), frame, NA_action="drop", return_type="dataframe",
                              eval_env=env)
    except patsy.PatsyError as err:
        raise ValueError(f"formula {formula!r}: the random term ({random_lhs} | {cluster_name}): "
                         f"{str(err).splitlines()[0]}") from None
    keep = frame[cluster_name].notna().to_numpy() & np.isin(np.arange(len(frame)), z_all.index)
    sub = frame[keep].reset_index(drop=True)
    column = offset if isinstance(offset, str) or offset is None else OFFSET_COLUMN  # an array is in the frame
    rows = _Rows.build(fixed, sub, design, None, patsy.EvalEnvironment.capture(1), (cluster_name, weights), column)
    codes, labels = pd.factorize(sub[cluster_name].to_numpy()[rows.positions], sort=True)
    if len(labels) < 2:
        raise ValueError(f"the cluster {cluster_name!r} has {len(labels)} level in the rows used: random effects "
                         "need at least two clusters")
    rows.check_size([])
    z = z_all.loc[np.flatnonzero(keep)[rows.positions]].to_numpy(dtype=np.float64)
    answer = _answer(rows.y, fixed)
    x = rows.x.to_numpy(dtype=np.float64)
    try:
        flat = ResponseLikelihood(design, answer.to_numpy(), None, x, offset=rows.offset)
    except ValueError as err:
        raise ValueError(f"{err} (column {rows.y.columns[0]!r} of data)") from None
    used = None if row_weights is None else row_weights[np.flatnonzero(keep)[rows.positions]]
    flat.weights = used
    table = design.transition_matrix(1)
    at = flat.answer_index
    lik = MixedLikelihood(table[0, at], table[1, at] - table[0, at], table, x, z, codes.astype(np.int64), nagq,
                          rows.offset, used)
    start = np.concatenate([lik.diagonal()[: lik.k_theta], fit(flat, rows.names, restarts=0).params])  # Lambda = I
    params, converged, info = _maximize(lik, start)
    z_names = [plain(n) for n in z_all.columns]
    return _results(lik, params, converged, info, rows, z_names, labels, cluster_name, nagq, design, formula,
                    len(index) - len(rows.positions))


def _check_nagq(nagq: Any) -> int:
    if isinstance(nagq, bool) or not isinstance(nagq, (int, np.integer)) or not 1 <= nagq <= MAX_NAGQ:
        raise ValueError(f"nAGQ must be an integer in 1..{MAX_NAGQ} (1: Laplace); got {nagq!r}")
    return int(nagq)


def _split(formula: str) -> tuple[str, str, str]:
    """The fixed-effects formula, the random term's left side and its cluster column."""
    left, right = formula.split("~", 1)
    bars = list(_BAR.finditer(right))
    if not bars:
        raise ValueError(f"formula {formula!r} has no random-effects term: add one such as (1 | cluster), or use "
                         "dn.survey.logit for fixed effects only")
    if len(bars) > 1:
        raise ValueError(f"formula {formula!r} has {len(bars)} random-effects terms; glmer takes one, "
                         "(1 | cluster) or (1 + x | cluster)")
    bar = bars[0]
    lhs, sep, cluster = bar.group(1) or "1", bar.group(2), bar.group(3)
    if sep == "||" or not re.fullmatch(r"[A-Za-z_][\w.]*", cluster):
        raise ValueError(f"formula {formula!r}: the random term must be (terms | cluster) with a column name as the "
                         f"cluster; got {bar.group(0)!r}")
    rest = (right[: bar.start()] + right[bar.end():]).strip()
    rest = re.sub(r"\+\s*(?=\+|$)", "", re.sub(r"^\s*\+", "", rest)).strip()
    rest = re.sub(r"\+\s*\+", "+", rest).strip()
    if "|" in rest:
        raise ValueError(f"formula {formula!r}: a '|' outside the random term ({bar.group(0)})")
    return f"{left.strip()} ~ {rest or '1'}", lhs, cluster


def _maximize(lik: MixedLikelihood, start: np.ndarray) -> tuple[np.ndarray, bool, Any]:
    """L-BFGS-B on minus the approximated log-likelihood (central-difference gradient) over ``theta`` without
    bounds (the likelihood is even in each column of ``Lambda``, so no search stops on the bound 0 where its
    gradient vanishes), then Newton steps on the finite-difference Hessian until the decrement is tiny.
    Returns the maximum, whether it converged and minus the Hessian over the free coordinates there (None if
    the last step moved)."""

    def objective(params: np.ndarray) -> float:
        value = lik.loglike(params)
        return -value if np.isfinite(value) else 1e300

    found = optimize.minimize(objective, start, method="L-BFGS-B", jac="3-point",
                              options={"ftol": 1e-12, "gtol": 1e-6, "maxiter": 1000})
    params = lik.canonical(found.x)
    if not np.all(np.isfinite(params)) or objective(params) >= 1e300:
        raise SeparationError("glmer: the approximated likelihood reached no maximum (perfect separation?)")
    converged, info = False, None
    for _ in range(20):
        free = _free(lik, params)
        sub = _restrict(objective, params, free)
        grad = np.ravel(approx_fprime(params[free], sub, centered=True))
        hess = np.reshape(approx_hess3(params[free], sub), (grad.size, grad.size))
        try:
            step = -np.linalg.solve(hess, grad)
        except np.linalg.LinAlgError:
            break
        decrement = float(-grad @ step)
        if not np.isfinite(decrement) or decrement < 0:
            break
        if decrement < 1e-10:
            converged, info = True, hess
            break
        base, t = objective(params), 1.0
        while t > 1e-4:
            trial = params.copy()
            trial[free] += t * step
            if objective(trial) <= base:
                params = lik.canonical(trial)
                break
            t /= 2
        else:
            converged = decrement < 1e-6
            break
    return params, converged, info


def _free(lik: MixedLikelihood, params: np.ndarray) -> np.ndarray:
    """The coordinates not on a bound (all but a diagonal entry of ``Lambda`` at 0, set to exactly 0)."""
    at_bound = lik.diagonal() & (np.abs(params) < 1e-5)
    params[at_bound] = 0.0
    return np.asarray(~at_bound)


def _restrict(f: Any, params: np.ndarray, free: np.ndarray) -> Any:
    def sub(values: np.ndarray) -> float:
        full = params.copy()
        full[free] = values
        return float(f(full))

    return sub


def _results(lik: MixedLikelihood, params: np.ndarray, converged: bool, info: Any, rows: _Rows, z_names: list[str],
             labels: Any, cluster: str, nagq: int, design: Design, formula: str, dropped: int) -> GLMMResults:
    k = lik.k_theta
    free = _free(lik, params)
    singular = not free[:k].all()
    if info is None or len(info) != free.sum():
        info = np.reshape(approx_hess3(params[free], _restrict(lambda p: -lik.loglike(p), params, free)),
                          (free.sum(), free.sum()))
    try:
        cov_free = np.linalg.inv(info)
    except np.linalg.LinAlgError:
        raise SeparationError("glmer: the information matrix at the maximum is singular") from None
    beta_at = np.flatnonzero(free) >= k
    cov = cov_free[np.ix_(beta_at, beta_at)]
    theta_bse = np.full(k, np.nan)
    theta_bse[free[:k]] = np.sqrt(np.diag(cov_free)[~beta_at])
    names = rows.names
    sigma = lik.covariance(params[:k])
    sd = np.sqrt(np.diag(sigma))
    term_names = [f"{cluster}: {n}" for n in z_names]
    with np.errstate(invalid="ignore", divide="ignore"):
        corr = sigma / np.outer(sd, sd)
    lik.mode_failures = 0
    llf = lik.loglike(params)
    ranef = lik.random_effects(params)
    converged = converged and lik.mode_failures == 0  # every cluster's mode found at the maximum
    return GLMMResults(
        params=pd.Series(params[k:], index=names, name="coef"),
        bse=pd.Series(np.sqrt(np.diag(cov)), index=names, name="bse"),
        cov_params=pd.DataFrame(cov, index=names, columns=names),
        variance_components=pd.DataFrame({"variance": np.diag(sigma), "std_dev": sd}, index=term_names),
        correlation=pd.DataFrame(corr, index=term_names, columns=term_names),
        theta=params[:k].copy(), theta_bse=theta_bse,
        random_effects=pd.DataFrame(ranef, index=pd.Index(labels, name=cluster), columns=z_names),
        llf=llf, nobs=len(rows.positions), n_groups=lik.n_clusters, group=cluster, nagq=nagq,
        design=design, formula=formula, n_dropped=dropped, converged=converged, singular=singular,
        weights=None if lik.weighted is None else float(lik.weighted.sum()))
