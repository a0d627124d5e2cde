"""The prevalence and regressions from a complex sample: weighted estimates, design-based standard errors.

**Prevalence.** The weighted answer counts ``N[g, r] = sum_{i in cell (g, r)}
w_i`` replace the counts: the moment estimate ``theta = F(N)`` (the weighted
shares of the answers put through the design, as for a simple random
sample), which in the interior maximizes the weighted pseudo-log-likelihood
``sum_i w_i log P_{g_i}(y_i | theta)``; outside the parameter space, that
pseudo-likelihood's maximum, its standard error the unbounded moment
estimate's (as without weights). Each respondent's influence contribution
is ``z_i = w_i dF / dN[g_i, y_i]`` (:func:`~deniable.survey._prevalence.moment_jacobian`);
the covariance is the design's (:mod:`deniable._sample_design`):
linearization of ``z``, or the replicates' moment estimates. For Warner's
design this is ``SE(lambda) / (2p - 1)`` with ``SE(lambda)`` ``svymean``'s SE of
the weighted share of "yes".

**Regressions** (``survey::svymle``, Stata's ``svy:``). The estimate maximizes
the weighted pseudo-log-likelihood ``sum_i w_i l_i(theta)`` (weights scaled to
mean 1, which changes neither the estimate nor its covariance); with scores
``u_i`` and the weighted Hessian ``H``, ``z_i = (-H)^{-1} w_i u_i`` and the
covariance is the sandwich ``(-H)^{-1} J (-H)^{-1}``, ``J`` the design variance
of the total ``sum_i w_i u_i``; or the replicates' refits (Newton from the
full-sample estimate). Unweighted, ``cov_type="robust"`` is the sandwich with
each respondent its own PSU and ``"cluster"`` with the clusters as PSUs: both
``J`` carry the factor ``G / (G - 1)`` of ``G`` PSUs, as Stata's ``vce(robust)``
and ``vce(cluster)`` of a likelihood model do.

The default interval of a weighted prevalence is Wald, ``estimate +- z SE``;
``method="profile"`` is the profile likelihood of the weighted counts scaled
to the effective sample size ``n / deff`` of the parameter profiled (a
Rao-Scott scaling: the interval stays in [0, 1]).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from deniable._intervals import z_for
from deniable._results import ConfidenceInterval, ResultTable, check_level
from deniable._sample_design import SampleDesign, sample_design
from deniable.survey._design_base import Design
from deniable.survey._likelihood import Likelihood, Maximum, maximize
from deniable.survey._mixture import MixtureLikelihood
from deniable.survey._predictor_likelihood import PredictorLikelihood
from deniable.survey._prevalence import (
    PrevalenceFit,
    _inside,
    _profile_interval,
    answer_cells,
    loglik,
    maximum_likelihood,
    moment_jacobian,
    prevalence_from_counts,
)

__all__ = ["COV_TYPES", "WeightedPrevalenceFit", "influence", "prevalence", "weighted_prevalence", "sandwich",
           "survey_sample"]


@dataclass(frozen=True)
class WeightedPrevalenceFit(PrevalenceFit):
    """A :class:`~deniable.survey.PrevalenceFit` from a complex sample: design-based ``bse`` and ``cov``.

    ``counts`` are the weighted answer counts, ``llf`` the weighted
    pseudo-log-likelihood, ``n`` the respondents with a positive weight;
    ``design_effect`` maps each parameter to its variance over a simple
    random sample's of the same size, ``sample`` says how the respondents
    were sampled and how the variance is estimated.
    """

    design_effect: dict[str, float]
    sample: str

    ci_methods: ClassVar[tuple[str, ...]] = ("wald", "profile")

    def confidence_interval(self, confidence_level: float = 0.95, method: str | None = None) -> ConfidenceInterval:
        """``"wald"`` (the default): ``estimate +- z SE``; ``"profile"``: the profile likelihood of the counts
        scaled to the effective sample size ``n / deff`` of each parameter (module docstring)."""
        level = check_level(confidence_level)
        if self._method(method) == "wald":
            z = z_for(1 - level)
            values, se = np.array(list(self.params.values())), self.std_errors
            return ConfidenceInterval(values - z * se, values + z * se)
        cut = z_for(1 - level) ** 2 / 2
        bounds = []
        for k in self.params:
            deff = self.design_effect[k]
            scale = self.n / (float(self.counts.sum()) * (deff if np.isfinite(deff) and deff > 0 else 1.0))
            scaled = replace(self, counts=self.counts * scale)
            scaled = replace(scaled, llf=loglik(self.design, scaled.counts, self.params))
            bounds.append(_profile_interval(scaled, k, cut))
        arr = np.array(bounds).reshape(-1, 2)
        return ConfidenceInterval(arr[:, 0], arr[:, 1])

    def _table(self, confidence_level: float, method: str | None) -> ResultTable:
        """:class:`PrevalenceFit`'s table with the ``design_effect`` column and the ``sample`` field."""
        table = super()._table(confidence_level, method)
        table.fields["sample"] = self.sample
        table.columns["design_effect"] = [self.design_effect[k] for k in self.params]
        return table

    def _note(self, more: int) -> str:
        return f"design-based SEs ({self.sample}); {self.method} estimate"

    def __repr__(self) -> str:
        ci = self.ci()
        rows = ", ".join(
            f"{k}={v:.4f} (SE {self.bse[k]:.4f}, deff {self.design_effect[k]:.3g}, 95% CI "
            f"{ci[k][0]:.4f}..{ci[k][1]:.4f})" for k, v in self.params.items()
        )
        eps = self.design.epsilon
        privacy = "infinite" if math.isinf(eps) else f"{eps:.4g}"
        return (f"WeightedPrevalenceFit({self.design.model}, epsilon={privacy}, n={self.n}, {rows}, "
                f"method={self.method!r}, sample={self.sample!r})")


def influence(cells: NDArray[np.int64], design: Design, sample: SampleDesign, rows: NDArray[np.int64]
              ) -> tuple[dict[str, float], NDArray[np.float64], Callable[[NDArray[np.float64]], NDArray[np.float64]],
                         NDArray[np.float64] | None]:
    """The moment estimate from the respondents at ``rows``, their influence contributions ``z`` (one row per
    respondent of the sample, 0 outside ``rows``), the estimate as a function of the row weights (for
    replicates) and, with an fpc, the randomization's variance to add (:func:`randomization_variance`)."""
    size = design.groups * len(design.responses)

    def counts(w: NDArray[np.float64]) -> NDArray[Any]:
        return np.bincount(cells, weights=w[rows], minlength=size).reshape(design.groups, -1)

    params, jac = moment_jacobian(design, counts(sample.weights))
    added = None
    z = np.zeros((sample.n, len(params)))
    z[rows] = sample.weights[rows, None] * jac[:, cells].T
    if sample.fraction is not None and sample.repweights is None:
        answers = len(design.responses)
        first = cells - cells % answers
        alternatives = [sample.weights[rows, None] * jac[:, first + r].T for r in range(answers)]
        extra = params.get(design.extra) if design.extra else None
        added = randomization_variance(sample, rows, cells % answers, cells // answers + 1,
                                       lambda g: design.transition_matrix(g, extra), alternatives, design.model)

    def replicate(w: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.array(list(moment_jacobian(design, counts(w))[0].values()))

    return params, z, replicate, added


def weighted_prevalence(cells: NDArray[np.int64], design: Design, sample: SampleDesign,
                        rows: NDArray[np.int64] | None = None) -> WeightedPrevalenceFit:
    """The prevalence from the answer ``cells`` (:func:`~deniable.survey._prevalence.answer_cells`) of the
    respondents at ``rows`` of ``sample`` (all by default; a domain otherwise), design-based (module docstring)."""
    rows = np.arange(sample.n) if rows is None else rows
    size = design.groups * len(design.responses)

    def counts(w: NDArray[np.float64]) -> NDArray[Any]:
        return np.bincount(cells, weights=w[rows], minlength=size).reshape(design.groups, -1)

    n_counts = np.bincount(cells[sample.weights[rows] > 0], minlength=size).reshape(design.groups, -1)
    for g, row in enumerate(n_counts, start=1):
        if row.sum() < 2:
            where = f" in group {g}" if design.groups > 1 else ""
            raise ValueError(f"responses need at least 2 answers with a positive weight{where} for "
                             f"{design.model}; got {row.sum()}")
    weighted = counts(sample.weights)
    params, z, replicate, added = influence(cells, design, sample, rows)
    full = np.array(list(params.values()))
    used = np.zeros(sample.n)
    used[rows] = sample.weights[rows]
    cov, deff = sample.covariance(z, replicate, full, used, added)
    method = "moment"
    if not _inside(design, params):
        params = maximum_likelihood(design, weighted, start=params)
        method = "ml"
    names = list(params)
    return WeightedPrevalenceFit(
        design=design,
        params=params,
        bse={k: float(math.sqrt(max(cov[i, i], 0.0))) for i, k in enumerate(names)},
        cov=cov,
        llf=loglik(design, weighted, params),
        n=int(n_counts.sum()),
        n_by_group=tuple(int(c) for c in n_counts.sum(axis=1)),
        method=method,
        counts=weighted,
        design_effect={k: float(deff[i]) for i, k in enumerate(names)},
        sample=sample.describe(),
    )


def sandwich(lik: Any, best: Maximum, sample: SampleDesign, rows: NDArray[np.int64],
             refit: Callable[[NDArray[np.float64]], Likelihood]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The design-based covariance of a pseudo-maximum-likelihood fit and each parameter's design effect.

    ``lik`` is weighted (``lik.weights``, the sample's weights at ``rows``
    scaled to mean 1); ``refit(w)`` gives the likelihood with the row weights
    ``w`` for a replicate. With the extra parameter on a bound of [0, 1] its
    row and column are NaN and the rest is conditional on it, as for the
    observed information.
    """
    keep = np.ones(lik.k_params, dtype=bool)
    if best.at_bound:
        keep[-1] = False
    info = -lik.hessian(best.params)[np.ix_(keep, keep)]
    inverse = np.linalg.inv(info)
    weights = np.zeros(sample.n)
    weights[rows] = sample.weights[rows]  # unscaled: the design effect's fpc factor 1 - n / W needs W
    z = np.zeros((sample.n, int(keep.sum())))
    z[rows] = (lik.weights[:, None] * lik.score_obs(best.params)[:, keep]) @ inverse
    added = None
    if sample.fraction is not None and sample.repweights is None:
        answers, groups, matrix_of, others, model = _randomization(lik, best.params)
        alternatives = [(lik.weights[:, None] * other.score_obs(best.params)[:, keep]) @ inverse for other in others]
        added = randomization_variance(sample, rows, answers, groups, matrix_of, alternatives, model)
    scale = float(np.mean(sample.weights[rows]))

    def replicate(w: NDArray[np.float64]) -> NDArray[np.float64]:
        found = maximize(refit(w[rows] / scale), best.params)
        return np.asarray(found.params[keep])

    part, part_deff = sample.covariance(z, replicate, best.params[keep], weights, added)
    cov = np.full((lik.k_params, lik.k_params), np.nan)
    cov[np.ix_(keep, keep)] = part
    deff = np.full(lik.k_params, np.nan)
    deff[keep] = part_deff
    return cov, deff


def _randomization(lik: Any, params: NDArray[np.float64]) -> tuple[
        NDArray[np.int64], NDArray[np.int64], Callable[[int], NDArray[np.float64]], list[Any], str]:
    """What :func:`randomization_variance` needs of a likelihood: the answers, groups, transition matrices, the
    likelihoods had every respondent given each answer (in order) and the design's name."""
    if isinstance(lik, PredictorLikelihood):
        return lik.randomization(params)
    design = lik.design
    extra = float(params[-1]) if design.extra and not isinstance(lik, MixtureLikelihood) else None
    return (lik.answer_index, lik.groups, lambda g: design.transition_matrix(g, extra),
            [lik.with_answer(r) for r in design.responses], design.model)


COV_TYPES = ("oim", "opg", "robust", "cluster")


def survey_sample(n: int, cov_type: str | None, data: Any, **design: Any) -> tuple[SampleDesign | None, str]:
    """The sample design of a regression's ``n`` rows of ``data`` and the name of its covariance.

    ``design`` holds :func:`~deniable._sample_design.sample_design`'s
    arguments. ``cov_type``: None (design-based with a complex sample, else
    ``"oim"``), ``"oim"`` or ``"opg"`` (model-based: refused with a complex
    sample), ``"robust"`` (the sandwich, each respondent its own PSU unless
    strata or weights say more; refused with ``cluster``), ``"cluster"`` (needs
    ``cluster``).
    """
    if cov_type is not None and cov_type not in COV_TYPES:
        raise ValueError(f"cov_type must be one of {', '.join(map(repr, COV_TYPES))} (or left out); got {cov_type!r}")
    sample = sample_design(n, data=data, **design)
    given = [k for k in ("weights", "strata", "cluster", "fpc", "repweights") if design.get(k) is not None]
    if cov_type in ("oim", "opg"):
        if sample is not None:
            raise ValueError(f"cov_type={cov_type!r} is model-based, but {', '.join(given)} describe a complex "
                             "sample: leave cov_type out for design-based standard errors")
        return None, cov_type
    if cov_type == "robust":
        if design.get("cluster") is not None:
            raise ValueError("cov_type='robust' treats each respondent as its own PSU, but cluster= was given: "
                             "use cov_type='cluster'")
        if sample is None:
            sample = replace(sample_design(n, weights=np.ones(n)), weighted=False)  # type: ignore[type-var]
        return sample, "robust"
    if cov_type == "cluster":
        if design.get("cluster") is None:
            raise ValueError("cov_type='cluster' needs cluster= (a column or one label per row)")
        return sample, "cluster"
    return sample, ("oim" if sample is None else sample.kind)


def randomization_variance(sample: SampleDesign, rows: NDArray[np.int64], answers: NDArray[np.int64],
                           groups: NDArray[np.int64], matrix_of: Callable[[int], NDArray[np.float64]],
                           alternatives: list[NDArray[np.float64]], model: str) -> NDArray[np.float64]:
    """``sum_i f_i Var(z_i | S_i)``, estimated without bias: the randomization's variance that an fpc must not remove.

    ``alternatives[r]`` holds each respondent's ``z_i`` had the answer been
    ``r`` (rows of ``rows``), ``answers`` the answers given (positions in the
    columns of ``P``), ``groups`` their groups and ``matrix_of(g)`` group
    ``g``'s transition matrix ``P`` (the design's
    :meth:`~deniable.survey.Design.transition_matrix`; for several randomized
    answers given independently, the Kronecker product of their matrices,
    the answers counted in the same mixed radix); ``model`` names the design
    in errors. Given the latent state ``s`` (a row of ``P``), ``Var(z_i | s) =
    sum_r P[s, r] z_i(r) z_i(r)' - m_i(s) m_i(s)'`` with ``m_i(s) = sum_r P[s, r]
    z_i(r)``; ``L = (P')^+`` has ``E[L[s, Y] | S = t] = [s = t]``, so
    ``sum_s L[s, y_i] Var(z_i | s)`` is unbiased for ``Var(z_i | S_i)``. Needs
    the states to be told apart by the answers (``P`` of full row rank).
    """
    assert sample.fraction is not None
    f = sample.fraction[sample.strata[rows]]
    k = alternatives[0].shape[1]
    out = np.zeros((k, k))
    for g in np.unique(groups):
        here = groups == g
        matrix = matrix_of(int(g))
        if np.linalg.matrix_rank(matrix) < matrix.shape[0]:
            raise ValueError(f"fpc: {model}'s answers cannot tell its {matrix.shape[0]} latent states apart "
                             "per respondent, so the randomization's variance (which no fpc reduces) cannot be "
                             "estimated; leave fpc out (the variance is then conservative)")
        unbiased = np.linalg.pinv(matrix.T)[:, answers[here]] * f[here]  # (states, rows): f_i L[s, y_i]
        z = [a[here] for a in alternatives]
        for r in range(len(z)):
            c = unbiased.T @ matrix[:, r]  # sum_s f_i L[s, y_i] P[s, r]
            out += (z[r] * c[:, None]).T @ z[r]
        for state in range(matrix.shape[0]):
            m = sum(matrix[state, r] * z[r] for r in range(len(z)))
            out -= (m * unbiased[state][:, None]).T @ m
    return out


def prevalence(responses: Any, design: Design, group: Any = None, *, weights: Any = None, strata: Any = None,
               cluster: Any = None, fpc: Any = None, repweights: Any = None, rep_type: str | None = None,
               rscales: Any = None, mse: bool = False, lonely_psu: str = "fail", data: Any = None) -> PrevalenceFit:
    """Estimate the prevalence ``pi`` (and the extra parameter) from randomized answers.

    A complex sample (any of ``weights``, ``strata``, ``cluster``, ``fpc``,
    ``repweights``; R ``survey``'s ``svydesign`` and ``svrepdesign`` arguments,
    see :mod:`deniable._sample_design`) gives a
    :class:`WeightedPrevalenceFit`: the weighted
    estimate with design-based standard errors and design effects. With
    ``data`` (a DataFrame or mapping), ``responses``, ``group`` and those
    arguments may be column names.

    >>> import numpy as np
    >>> from deniable.survey import Warner
    >>> fit = prevalence(np.array([1] * 60 + [0] * 40), Warner(p=0.7))
    >>> round(fit.params["pi"], 4), round(fit.bse["pi"], 4)
    (0.75, 0.1231)
    """
    if not isinstance(design, Design):
        raise TypeError(f"design must be a deniable.survey design; got {type(design).__name__}")
    if data is not None:
        responses = data[responses] if isinstance(responses, str) else responses
        group = data[group] if isinstance(group, str) else group
    cells = answer_cells(responses, design, group)
    sample = sample_design(cells.size, weights, strata, cluster, fpc, repweights, rep_type, rscales, mse,
                           lonely_psu, data)
    if sample is None:
        size = design.groups * len(design.responses)
        return prevalence_from_counts(np.bincount(cells, minlength=size).reshape(design.groups, -1), design)
    return weighted_prevalence(cells, design, sample)
