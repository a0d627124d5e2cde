"""List experiments (the item count technique), as R's ``list`` package analyses them.

A control group (``treat = 0``) reports how many of ``J`` innocuous items
apply to them; a treatment group (``treat = 1``) sees the same list plus
the sensitive item. With ``Y(0)`` in ``0..J`` the count of control items and
``Z`` the sensitive item, the answer is ``y = Y(0) + treat Z``.

**Difference in means** (:func:`list_difference`): ``tau = mean(y | treat=1)
- mean(y | treat=0)`` estimates the prevalence of ``Z``, with ``SE =
sqrt(s1^2/n1 + s0^2/n0)``; from a complex sample, the weighted means and the
linearization of ``z_i = w_i [t_i (y_i - m1)/W1 - (1 - t_i)(y_i - m0)/W0]``.

**Regression** (:func:`ictreg`, R's ``ictreg``). ``method="ml"``: the
constrained model of Imai (2011) and Blair & Imai (2012),
``Z ~ Bernoulli(g_i)``, ``g_i = logistic(x_i' delta)``, and ``Y(0) | x ~
Binomial(J, h_i)``, ``h_i = logistic(x_i' psi)``, independent of ``Z``. The
likelihood of a respondent is ``Bin(y; J, h)`` in the control group and
``g A + (1 - g) B`` in the treatment group, ``A = Bin(y - 1; J, h)`` (0 at
``y = 0``) and ``B = Bin(y; J, h)`` (0 at ``y = J + 1``). The fit runs the EM
algorithm (``Z`` missing: posterior ``g A / L`` for the treated, ``g`` for
the controls; M-steps are weighted logistic and binomial regressions) to
a relative change of the log-likelihood below 1e-10, then Newton's method
with the exact Hessian, whose inverse gives the standard errors.
``method="lm"``: least squares of ``y`` on ``x`` and ``treat x`` (the
sensitive coefficients are the interactions' and estimate a linear
probability model), with HC3 standard errors as R's ``vcovHC``.

With survey weights (``weights``, ``strata``, ``cluster``, replicates; see
:mod:`deniable._sample_design`) the estimates maximize the weighted
pseudo-likelihood (minimize weighted least squares), with design-based
sandwich standard errors and design effects.

**Privacy.** A list experiment protects a treated respondent only where
the count leaves the sensitive item undetermined: ``y = 0`` proves ``Z = 0``
and ``y = J + 1`` proves ``Z = 1`` (the floor and ceiling effects), so its
local epsilon is infinite, as Mangat's design's is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from deniable import _randomness as randomness
from deniable._intervals import z_for
from deniable._results import ConfidenceInterval, Result, ResultTable, check_level
from deniable._sample_design import sample_design

__all__ = ["ListExperiment", "ListDifference", "list_difference", "list_difference_from_counts", "ListLikelihood"]


class ListExperiment:
    """A list experiment with ``J`` control items: the analysis's design, and its privacy.

    ``epsilon`` is infinite: a treated respondent answering 0 (floor) or
    ``J + 1`` (ceiling) reveals the sensitive item.
    """

    epsilon = math.inf

    def __init__(self, J: int) -> None:  # noqa: N803  (J: the literature's and R's name)
        if isinstance(J, bool) or not isinstance(J, (int, np.integer)) or J < 1:
            raise ValueError(f"J must be a positive integer (the number of control items); got {J!r}")
        self.J = int(J)

    def __repr__(self) -> str:
        return (f"ListExperiment(J={self.J}): epsilon infinite (a treated answer of 0 or {self.J + 1} "
                "reveals the sensitive item: floor and ceiling)")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ListExperiment) and other.J == self.J

    def __hash__(self) -> int:
        return hash(("ListExperiment", self.J))

    def check(self, y: Any, treat: Any) -> tuple[NDArray[np.int64], NDArray[np.bool_]]:
        """The answers as integers and the treatment as booleans, after checking both.

        Raises ``ValueError`` naming ``treat`` for a value other than 0/1 (or
        booleans) and ``y`` for an answer that is not an integer in ``0..J``
        (control) or ``0..J+1`` (treatment), or a different length.
        """
        t = np.asarray(treat)
        y_arr = np.asarray(y)
        if t.ndim != 1 or y_arr.shape != t.shape:
            raise ValueError(f"y and treat must be 1-D with one entry per respondent; got shapes {y_arr.shape} "
                             f"and {t.shape}")
        ok_t = np.isin(t, (0, 1)) if t.dtype.kind in "biuf" else np.zeros(t.shape, dtype=bool)
        if not ok_t.all():
            i = int(np.flatnonzero(~ok_t)[0])
            raise ValueError(f"treat must be 0 (control list) or 1 (with the sensitive item); got "
                             f"{_plain(t[i])!r} at position {i}")
        treated = t.astype(bool)
        numeric = y_arr.dtype.kind in "biuf"
        with np.errstate(invalid="ignore"):
            ok = (np.isfinite(y_arr) & (y_arr == np.round(y_arr)) & (y_arr >= 0)
                  & (y_arr <= self.J + treated)) if numeric else np.zeros(y_arr.shape, dtype=bool)
        if not ok.all():
            i = int(np.flatnonzero(~ok)[0])
            top = self.J + int(treated[i])
            raise ValueError(f"y must be a count of items in 0..{top} ({'treatment' if treated[i] else 'control'} "
                             f"list of J={self.J}{' + 1' if treated[i] else ''} items); got {_plain(y_arr[i])!r} "
                             f"at position {i}")
        return y_arr.astype(np.int64), treated

    def reports(self, answers: Any, rng: randomness.RNGLike = None) -> list[dict[str, int]]:
        """One device's list-experiment reports: each answer's list drawn at random, and its count.

        ``answers``: per respondent ``{"control": c, "sensitive": z}``, with ``c``
        the number of control items that apply (``0..J``) and ``z`` whether the
        sensitive item does. Each respondent is assigned the longer list with
        probability 1/2 (an exact fair bit from the OS CSPRNG unless ``rng``
        is given) and reports ``{"treat": t, "count": c + t z}``: the
        sensitive answer itself never leaves the device.
        """
        control, sensitive = [], []
        for i, answer in enumerate(answers):
            c = answer.get("control") if isinstance(answer, dict) else None
            z = answer.get("sensitive") if isinstance(answer, dict) else None
            if isinstance(c, bool) or not isinstance(c, (int, np.integer)) or not 0 <= c <= self.J:
                raise ValueError(f"answers[{i}].control must be the number of control items that apply, an "
                                 f"integer in 0..{self.J}; got {c!r:.60}")
            if not isinstance(z, (bool, np.bool_)):
                raise ValueError(f"answers[{i}].sensitive must be true or false; got {z!r:.60}")
            control.append(int(c))
            sensitive.append(bool(z))
        treat = randomness.uniform_below(2, len(control), randomness.resolve(rng)).astype(np.int64)
        counts = np.asarray(control, dtype=np.int64) + treat * np.asarray(sensitive, dtype=np.int64)
        return [{"treat": int(t), "count": int(c)} for t, c in zip(treat.tolist(), counts.tolist(), strict=True)]


def _plain(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v


@dataclass(frozen=True)
class ListDifference(Result):
    """The difference in means of a list experiment: the prevalence of the sensitive item.

    ``estimate``, ``std_error``, ``n1`` / ``n0`` (treatment and control
    respondents); from a complex sample ``design_effect`` and ``sample`` too.
    """

    experiment: ListExperiment
    estimate: float
    std_error: float
    n1: int
    n0: int
    design_effect: float | None = None
    sample: str | None = None
    ci_methods: ClassVar[tuple[str, ...]] = ("normal",)
    _z: Any = field(default=None, repr=False, compare=False)

    def confidence_interval(self, confidence_level: float = 0.95, method: str | None = None) -> ConfidenceInterval:
        """``estimate +- z_{(1+level)/2} SE``."""
        level = check_level(confidence_level)
        self._method(method)
        z = z_for(1 - level)
        return ConfidenceInterval(self.estimate - z * self.std_error, self.estimate + z * self.std_error)

    def _table(self, confidence_level: float, method: str | None) -> ResultTable:
        low, high = self.confidence_interval(confidence_level, method)
        fields: dict[str, Any] = {"J": self.experiment.J, "epsilon": self.experiment.epsilon, "n1": self.n1,
                                  "n0": self.n0}
        if self.sample is not None:
            fields |= {"sample": self.sample, "design_effect": self.design_effect}
        return ResultTable(fields, {"estimate": self.estimate, "std_error": self.std_error, "ci_low": low,
                                    "ci_high": high})

    def __repr__(self) -> str:
        low, high = self.confidence_interval()
        deff = "" if self.design_effect is None else f", deff {self.design_effect:.3g}"
        return (f"ListDifference(J={self.experiment.J}, estimate={self.estimate:.4f} (SE {self.std_error:.4f}"
                f"{deff}, 95% CI {low:.4f}..{high:.4f}), n1={self.n1}, n0={self.n0}, epsilon=inf: a treated "
                f"answer of 0 or {self.experiment.J + 1} reveals the sensitive item)")


def list_difference(y: Any, treat: Any, J: int, *, data: Any = None, **sample: Any) -> ListDifference:  # noqa: N803
    """The difference in means ``mean(y | treat=1) - mean(y | treat=0)`` and its standard error.

    ``sample``: the complex-sample arguments of :func:`~deniable.survey.prevalence`
    (``weights``, ``strata``, ``cluster``, ``fpc``, ``repweights``, ...): weighted
    means and a design-based SE. With ``data``, ``y``, ``treat`` and those may be column names.
    """
    experiment = ListExperiment(J)
    if data is not None:
        y, treat = (data[v] if isinstance(v, str) else v for v in (y, treat))
    answers, treated = experiment.check(y, treat)
    n1, n0 = int(treated.sum()), int((~treated).sum())
    if n1 < 2 or n0 < 2:
        raise ValueError(f"treat must give each list at least 2 respondents; got {n1} treated and {n0} control")
    design = sample_design(answers.size, data=data, **sample)
    if design is None:
        cells = treated.astype(np.int64) * (experiment.J + 2) + answers
        return list_difference_from_counts(np.bincount(cells, minlength=2 * (experiment.J + 2)).reshape(2, -1))
    if design.fraction is not None:
        raise ValueError("fpc: not supported for list experiments (the random assignment to the lists adds "
                         "variance that no fpc reduces); leave fpc out for a conservative variance")
    estimate, z = _difference(answers, treated, design.weights)

    def replicate(w: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.array([_difference(answers, treated, w)[0]])

    cov, deff = design.covariance(z[:, None], replicate, np.array([estimate]), design.weights)
    return ListDifference(experiment, estimate, math.sqrt(float(cov[0, 0])), n1, n0, float(deff[0]),
                          design.describe())


def list_difference_from_counts(counts: Any) -> ListDifference:
    """The difference in means from the answers' counts: ``counts[t, y]`` respondents of list ``t`` answered ``y``.

    ``counts`` has two rows (control, treatment) of ``J + 2`` columns (answers
    ``0..J+1``; the control row's last is 0). With :math:`n_t`, :math:`\\bar y_t`
    and :math:`s_t^2` (divisor :math:`n_t - 1`) the lists' sizes, means and
    variances, the estimate is :math:`\\bar y_1 - \\bar y_0` and its standard
    error :math:`\\sqrt{s_1^2/n_1 + s_0^2/n_0}`. ValueError with fewer than 2
    respondents in a list.
    """
    table = np.asarray(counts, dtype=np.int64)
    if table.ndim != 2 or table.shape[0] != 2 or table.shape[1] < 3 or (table < 0).any() or table[0, -1]:
        raise ValueError("counts must be 2 rows (control, treatment) of J + 2 non-negative counts of the answers "
                         f"0..J+1, the control row's last 0; got {table.tolist()!r:.120}")
    experiment = ListExperiment(table.shape[1] - 2)
    n0, n1 = (int(row.sum()) for row in table)
    if n1 < 2 or n0 < 2:
        raise ValueError(f"treat must give each list at least 2 respondents; got {n1} treated and {n0} control")
    values = np.arange(table.shape[1], dtype=np.float64)
    means = [float(values @ table[t]) / n for t, n in ((0, n0), (1, n1))]
    variances = [float(((values - means[t]) ** 2) @ table[t]) / (n - 1) for t, n in ((0, n0), (1, n1))]
    se = math.sqrt(variances[1] / n1 + variances[0] / n0)
    return ListDifference(experiment, means[1] - means[0], se, n1, n0)


def _difference(y: NDArray[np.int64], treated: NDArray[np.bool_], w: NDArray[np.float64]
                ) -> tuple[float, NDArray[np.float64]]:
    """The weighted difference in means and each respondent's influence contribution."""
    w1, w0 = float(w[treated].sum()), float(w[~treated].sum())
    if w1 <= 0 or w0 <= 0:
        raise ValueError("weights: each list needs a positive total weight")
    m1, m0 = float(w[treated] @ y[treated]) / w1, float(w[~treated] @ y[~treated]) / w0
    z = np.where(treated, w * (y - m1) / w1, -w * (y - m0) / w0)
    return m1 - m0, z


class ListLikelihood:
    """The constrained list-experiment log-likelihood in ``theta = (delta, psi)`` (module docstring).

    Exact score and Hessian; ``weights`` (survey weights of the rows) when set.
    """

    k_extra = 0

    def __init__(self, J: int, y: NDArray[np.int64], treated: NDArray[np.bool_], exog: NDArray[np.float64]) -> None:  # noqa: N803
        self.J, self.y, self.treated, self.exog = J, y, treated, exog
        self.nobs, k = exog.shape
        self.k = k
        self.k_params = 2 * k
        self.weights: NDArray[np.float64] | None = None
        self.log_choose = np.array([math.lgamma(J + 1) - math.lgamma(j + 1) - math.lgamma(J - j + 1)
                                    for j in range(J + 1)])

    def with_weights(self, weights: NDArray[np.float64] | None) -> ListLikelihood:
        other = ListLikelihood(self.J, self.y, self.treated, self.exog)
        other.weights = weights
        return other

    def _binomial(self, count: NDArray[np.int64], eta: NDArray[np.float64]) -> NDArray[np.float64]:
        """``Bin(count; J, logistic(eta))``, 0 where count is outside 0..J."""
        inside = (count >= 0) & (count <= self.J)
        c = np.clip(count, 0, self.J)
        log_h = -np.logaddexp(0.0, -eta)
        log_q = -np.logaddexp(0.0, eta)
        return np.where(inside, np.exp(self.log_choose[c] + c * log_h + (self.J - c) * log_q), 0.0)

    def _parts(self, theta: Any) -> dict[str, NDArray[np.float64]]:
        t = np.asarray(theta, dtype=np.float64)
        eta_g, eta_h = self.exog @ t[: self.k], self.exog @ t[self.k:]
        g = 0.5 * (1 + np.tanh(eta_g / 2))
        h = 0.5 * (1 + np.tanh(eta_h / 2))
        a = np.where(self.treated, self._binomial(self.y - 1, eta_h), 0.0)
        b = self._binomial(self.y, eta_h)
        lik = np.where(self.treated, g * a + (1 - g) * b, b)
        return {"g": g, "h": h, "a": a, "b": b, "lik": lik}

    def _sum(self, values: NDArray[np.float64]) -> Any:
        return values.sum(axis=0) if self.weights is None else self.weights @ values

    def loglike_obs(self, theta: Any) -> NDArray[np.float64]:
        with np.errstate(divide="ignore"):
            return np.log(self._parts(theta)["lik"])

    def loglike(self, theta: Any) -> float:
        return float(self._sum(self.loglike_obs(theta)))

    def _derivatives(self, theta: Any) -> tuple[NDArray[np.float64], ...]:
        """Per row: ``dl/d eta_g``, ``dl/d eta_h`` and the three second derivatives in ``(eta_g, eta_h)``."""
        p = self._parts(theta)
        g, h, a, b, lik = p["g"], p["h"], p["a"], p["b"], p["lik"]
        mean, spread = self.J * h, self.J * h * (1 - h)
        da, db = a * (self.y - 1 - mean), b * (self.y - mean)  # d/d eta_h of A and B
        t = self.treated
        v = g * (1 - g)
        lg = np.where(t, v * (a - b), 0.0)
        lh = np.where(t, g * da + (1 - g) * db, db)
        lgg = np.where(t, v * (1 - 2 * g) * (a - b), 0.0)
        lgh = np.where(t, v * (da - db), 0.0)
        lhh = np.where(t, g * (a * (self.y - 1 - mean) ** 2 - a * spread)
                       + (1 - g) * (b * (self.y - mean) ** 2 - b * spread), b * (self.y - mean) ** 2 - b * spread)
        sg, sh = lg / lik, lh / lik
        return sg, sh, lgg / lik - sg**2, lgh / lik - sg * sh, lhh / lik - sh**2

    def score_obs(self, theta: Any) -> NDArray[np.float64]:
        sg, sh, *_ = self._derivatives(theta)
        return np.hstack([sg[:, None] * self.exog, sh[:, None] * self.exog])

    def score(self, theta: Any) -> NDArray[np.float64]:
        return np.asarray(self._sum(self.score_obs(theta)))

    def hessian(self, theta: Any) -> NDArray[np.float64]:
        _, _, hgg, hgh, hhh = self._derivatives(theta)
        w = np.ones(self.nobs) if self.weights is None else self.weights
        x = self.exog

        def block(c: NDArray[np.float64]) -> NDArray[np.float64]:
            return np.asarray((x * (w * c)[:, None]).T @ x)

        return np.block([[block(hgg), block(hgh)], [block(hgh), block(hhh)]])

    def em(self, start: NDArray[np.float64], tol: float = 1e-10, max_iter: int = 2000) -> NDArray[np.float64]:
        """EM from ``start`` until the log-likelihood's relative change is below ``tol``: the E-step's posterior
        of ``Z`` is ``g A / L`` (treated) or ``g`` (control), the M-steps weighted logistic (``delta``) and
        binomial (``psi``) regressions."""
        theta = np.array(start, dtype=np.float64)
        w = np.ones(self.nobs) if self.weights is None else self.weights
        old = self.loglike(theta)
        for _ in range(max_iter):
            p = self._parts(theta)
            post = np.where(self.treated, p["g"] * p["a"] / p["lik"], p["g"])
            delta = _logistic_fit(self.exog, post, w, theta[: self.k])
            # Y(0) = y - Z for the treated: posterior mean count; binomial in J trials
            count = np.where(self.treated, self.y - post, self.y)
            psi = _logistic_fit(self.exog, count / self.J, w * self.J, theta[self.k:])
            theta = np.concatenate([delta, psi])
            new = self.loglike(theta)
            if abs(new - old) <= tol * abs(new):
                break
            old = new
        return theta


def _logistic_fit(x: NDArray[np.float64], share: NDArray[np.float64], w: NDArray[np.float64],
                  start: NDArray[np.float64], steps: int = 50) -> NDArray[np.float64]:
    """``argmax sum_i w_i [s_i log p_i + (1 - s_i) log(1 - p_i)]``, ``p = logistic(x beta)``: Newton (IRLS)."""
    beta = np.array(start, dtype=np.float64)
    for _ in range(steps):
        p = 0.5 * (1 + np.tanh(x @ beta / 2))
        grad = x.T @ (w * (share - p))
        info = (x * (w * p * (1 - p))[:, None]).T @ x
        step = np.linalg.solve(info, grad)
        beta = beta + step
        if float(np.max(np.abs(step))) < 1e-12:
            break
    return beta
