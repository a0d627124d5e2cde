"""Complex samples: survey weights, strata, clusters (PSUs), finite population corrections, replicate weights.

The formulas of R's ``survey`` package (``svydesign``, ``svrepdesign``).
Respondent ``i`` in primary sampling unit (PSU) ``j`` of stratum ``h`` has
weight ``w_i`` (the inverse of its inclusion probability); stratum ``h`` has
``n_h`` sampled PSUs and sampling fraction ``f_h`` (0 without ``fpc``).

**Linearization** (Taylor). An estimator ``theta`` whose error is, to first
order, a weighted total ``theta_hat - theta ~ sum_i z_i`` (``z_i`` its
*influence* contribution: ``w_i (y_i - lambda) / sum w`` for a ratio mean,
``(-H)^{-1} w_i u_i`` for a pseudo-likelihood with scores ``u_i`` and weighted
Hessian ``H``) has the design-based covariance

    V = sum_h (1 - f_h) n_h / (n_h - 1) sum_j (t_hj - tbar_h)(t_hj - tbar_h)'

with ``t_hj = sum_{i in hj} z_i`` the PSU totals and ``tbar_h`` their mean in
the stratum (``survey::svyrecvar`` with one stage). A PSU is a (stratum,
cluster) pair: cluster labels may repeat across strata (R's ``nest=TRUE``).
Without ``cluster`` every respondent is its own PSU; without ``strata`` there
is one stratum. Rows outside the estimate (a domain, missing values) keep
their PSU and contribute ``z_i = 0``, as ``subset()`` of a survey design does.

**A lonely PSU** (``n_h = 1``) has no within-stratum variance. ``lonely_psu``
is R's ``options(survey.lonely.psu=)``: ``"fail"`` (the default: an error
naming the stratum), ``"remove"`` and ``"certainty"`` (the stratum adds
nothing), ``"adjust"`` (its PSU total is centred at the mean of all PSU
totals, which is 0 for influence contributions, instead of its stratum's),
``"average"`` (the other strata's variance
is scaled by ``H / (H - H_lonely)``, so the lonely strata get their average).

**Replicate weights** (``repweights``: one column of full weights per
replicate, R's ``combined.weights=TRUE``): the estimate ``theta_r`` refitted
with each column, and ``V = scale sum_r rscale_r (theta_r - c)(theta_r - c)'``
with ``c`` the mean of the replicates (R's default) or the full-sample
estimate (``mse=True``). ``rep_type``: ``"JK1"`` (``scale = (R-1)/R``),
``"JKn"`` (``rscale_r = (n_h - 1)/n_h`` of the stratum the replicate deletes
from: give ``rscales`` or ``strata`` and ``cluster``), ``"bootstrap"``
(``scale = 1/(R-1)``), ``"BRR"`` (``scale = 1/R``).

**Design effect**: ``V`` over the variance the same estimator would have
from a simple random sample of the same size, estimated as ``survey``'s
``deff=TRUE`` does: ``V_srs = W / (n - 1) sum_i z_i z_i' / w_i`` (``W = sum
w``), times ``1 - n / W`` with ``fpc``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["LONELY_PSU", "REP_TYPES", "SampleDesign", "sample_design", "design_variance"]

LONELY_PSU = ("fail", "remove", "certainty", "adjust", "average")
REP_TYPES = ("JK1", "JKn", "bootstrap", "BRR")


@dataclass(frozen=True, eq=False)
class SampleDesign:
    """How the respondents were sampled: ``weights``, PSU and stratum codes, fpc, replicate weights.

    Built by :func:`sample_design` (which checks every argument). ``psu`` holds
    one code per row for its (stratum, cluster) pair and ``stratum_of_psu`` the
    stratum of each PSU; ``fraction`` is ``f_h`` per stratum (None without fpc).
    """

    weights: NDArray[np.float64]
    strata: NDArray[np.int64]
    psu: NDArray[np.int64]
    stratum_of_psu: NDArray[np.int64]
    stratum_labels: tuple[Any, ...]
    fraction: NDArray[np.float64] | None
    repweights: NDArray[np.float64] | None
    rep_type: str | None
    rscales: NDArray[np.float64] | None
    mse: bool
    lonely_psu: str
    weighted: bool
    clustered: bool
    stratified: bool

    @property
    def n(self) -> int:
        return int(self.weights.size)

    @property
    def kind(self) -> str:
        """``"linearization"`` or ``"replicate (JK1)"`` and so on: how the variance is estimated."""
        return "linearization" if self.repweights is None else f"replicate ({self.rep_type})"

    def describe(self) -> str:
        """One line for a summary: the parts of the design and how its variance is estimated."""
        parts = []
        if self.weighted:
            parts.append("weighted")
        if self.stratified:
            parts.append(f"{len(self.stratum_labels)} strata")
        if self.clustered:
            parts.append(f"{self.stratum_of_psu.size} PSUs")
        if self.fraction is not None:
            parts.append("fpc")
        if self.repweights is not None:
            parts.append(f"{self.repweights.shape[1]} {self.rep_type} replicates")
        return f"{', '.join(parts) or 'simple random sample'}; design-based SEs by {self.kind}"

    def variance(self, z: NDArray[np.float64]) -> NDArray[np.float64]:
        """``V`` (module docstring) of the influence contributions ``z`` (one row per respondent)."""
        return design_variance(z, self.psu, self.stratum_of_psu, self.fraction, self.lonely_psu, self.stratum_labels)

    def srs_variance(self, z: NDArray[np.float64], weights: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
        """``V_srs = W / (n - 1) sum_i z_i z_i' / w_i`` over the rows with positive weight (times ``1 - n/W``
        with fpc): the simple random sample's variance, the design effect's denominator."""
        w = self.weights if weights is None else weights
        used = w > 0
        n, total = int(used.sum()), float(w[used].sum())
        zu = z[used]
        out = total / (n - 1) * (zu / w[used][:, None]).T @ zu
        if self.fraction is not None:
            out = out * max(1 - n / total, 0.0)
        return np.asarray(out)

    def replicate_variance(self, estimate: Callable[[NDArray[np.float64]], NDArray[np.float64]],
                           full: NDArray[np.float64]) -> NDArray[np.float64]:
        """``scale sum_r rscale_r (theta_r - c)(theta_r - c)'`` with ``theta_r = estimate(repweights[:, r])``."""
        assert self.repweights is not None and self.rscales is not None
        reps = np.array([estimate(self.repweights[:, r]) for r in range(self.repweights.shape[1])])
        centre = full if self.mse else reps.mean(axis=0)
        dev = reps - centre
        count = reps.shape[0]
        scale = {"JK1": (count - 1) / count, "JKn": 1.0, "bootstrap": 1 / (count - 1), "BRR": 1 / count}
        return np.asarray(scale[str(self.rep_type)] * (dev * self.rscales[:, None]).T @ dev)

    def covariance(self, z: NDArray[np.float64], estimate: Callable[[NDArray[np.float64]], NDArray[np.float64]],
                   full: NDArray[np.float64], weights: NDArray[np.float64],
                   added: NDArray[np.float64] | None = None) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """The design-based covariance (linearization of ``z`` plus ``added``, or the replicates of
        ``estimate``) and the design effect of each parameter (its variance over :meth:`srs_variance`'s
        with the ``weights`` of the rows used, 0 elsewhere)."""
        if self.repweights is None:
            cov = self.variance(z) + (0.0 if added is None else added)
        else:
            cov = self.replicate_variance(estimate, full)
        srs = np.diag(self.srs_variance(z, weights))
        with np.errstate(divide="ignore", invalid="ignore"):
            deff = np.where(srs > 0, np.diag(cov) / srs, np.nan)
        return cov, deff


def design_variance(z: NDArray[np.float64], psu: NDArray[np.int64], stratum_of_psu: NDArray[np.int64],
                    fraction: NDArray[np.float64] | None, lonely_psu: str = "fail",
                    stratum_labels: tuple[Any, ...] = ()) -> NDArray[np.float64]:
    """The one-stage linearization variance of ``sum_i z_i`` (module docstring), vectorized over PSUs."""
    z = np.asarray(z, dtype=np.float64).reshape(len(psu), -1)
    n_psu, n_strata = stratum_of_psu.size, int(stratum_of_psu.max()) + 1 if stratum_of_psu.size else 0
    totals = np.zeros((n_psu, z.shape[1]))
    np.add.at(totals, psu, z)
    per_stratum = np.bincount(stratum_of_psu, minlength=n_strata).astype(np.float64)
    sums = np.zeros((n_strata, z.shape[1]))
    np.add.at(sums, stratum_of_psu, totals)
    lonely = per_stratum == 1
    if lonely.any() and lonely_psu == "fail":
        h = int(np.flatnonzero(lonely)[0])
        label = stratum_labels[h] if stratum_labels else h
        raise ValueError(f"strata: stratum {label!r} has only one PSU, so no variance within it; pass "
                         f"lonely_psu= one of {', '.join(map(repr, LONELY_PSU[1:]))} (R's survey.lonely.psu)")
    centre = sums[stratum_of_psu] / per_stratum[stratum_of_psu, None]
    if lonely_psu == "adjust":  # R centres a lonely PSU's total at 0, the mean of all (the z sum to 0)
        centre[lonely[stratum_of_psu]] = 0.0
    dev = totals - centre
    factor = np.where(lonely, 1.0, per_stratum / np.maximum(per_stratum - 1, 1))
    if fraction is not None:
        factor = factor * (1 - fraction)
    if lonely_psu in ("remove", "certainty", "average"):
        factor = np.where(lonely, 0.0, factor)
    out = (dev * factor[stratum_of_psu, None]).T @ dev
    if lonely_psu == "average" and lonely.any() and not lonely.all():
        out = out * n_strata / (n_strata - lonely.sum())
    return np.asarray(out)


# ------------------------------------------------------------------ checking the arguments
def _column(value: Any, name: str, n: int, data: Any) -> NDArray[Any]:
    """``value`` as one entry per row: an array, or a column name of ``data``."""
    if isinstance(value, str):
        if data is None:
            raise ValueError(f"{name}={value!r} names a column, but no data= was given: pass an array")
        if value not in getattr(data, "columns", data):
            cols = ", ".join(map(str, getattr(data, "columns", list(data))))
            raise ValueError(f"{name} {value!r} is not a column of data (columns: {cols})")
        value = data[value]
    arr = np.asarray(value)
    if arr.shape != (n,):
        raise ValueError(f"{name} must have one entry per respondent ({n}); got shape {arr.shape}")
    return arr


def _weights(value: Any, name: str, n: int, data: Any) -> NDArray[np.float64]:
    arr = _column(value, name, n, data)
    try:
        w = arr.astype(np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be numbers; got {arr.dtype}") from None
    bad = ~np.isfinite(w) | (w < 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name} must be finite and non-negative (inverse inclusion probabilities); "
                         f"got {arr[i].item() if isinstance(arr[i], np.generic) else arr[i]!r} at position {i}")
    if not np.any(w > 0):
        raise ValueError(f"{name} must have a positive entry; all are 0")
    return w


def _codes(value: Any, name: str, n: int, data: Any) -> tuple[NDArray[np.int64], tuple[Any, ...]]:
    arr = _column(value, name, n, data)
    missing = _missing(arr)
    if missing.any():
        i = int(np.flatnonzero(missing)[0])
        raise ValueError(f"{name} must have a value for every respondent; missing at position {i}")
    labels, codes = np.unique(arr.astype(str) if arr.dtype == object else arr, return_inverse=True)
    return codes.astype(np.int64), tuple(v.item() if isinstance(v, np.generic) else v for v in labels)


def _missing(arr: NDArray[Any]) -> NDArray[np.bool_]:
    if arr.dtype.kind == "f":
        return np.isnan(arr)
    if arr.dtype == object:
        return np.array([v is None or (isinstance(v, float) and v != v) for v in arr.tolist()], dtype=bool)
    return np.zeros(arr.shape, dtype=bool)


def sample_design(n: int, weights: Any = None, strata: Any = None, cluster: Any = None, fpc: Any = None,
                  repweights: Any = None, rep_type: str | None = None, rscales: Any = None, mse: bool = False,
                  lonely_psu: str = "fail", data: Any = None) -> SampleDesign | None:
    """The checked :class:`SampleDesign` of ``n`` respondents, or None when no argument describes one.

    Each argument is an array with one entry per respondent or, with ``data``,
    a column name (``repweights``: a 2-D array, or a list of column names).
    Raises ``ValueError`` naming the argument: weights of the wrong length,
    negative, NaN or infinite; a missing stratum or cluster; an fpc that varies
    within a stratum or is below the PSUs sampled; a lonely PSU (at the
    variance, unless ``lonely_psu`` says what to do); replicate weights without
    a valid ``rep_type``.
    """
    if all(v is None for v in (weights, strata, cluster, fpc, repweights)):
        if rep_type is not None or rscales is not None or mse:
            raise ValueError("rep_type, rscales and mse need repweights=")
        return None
    if lonely_psu not in LONELY_PSU:
        raise ValueError(f"lonely_psu must be one of {', '.join(map(repr, LONELY_PSU))}; got {lonely_psu!r}")
    w = np.ones(n) if weights is None else _weights(weights, "weights", n, data)
    strata_codes, labels = (np.zeros(n, dtype=np.int64), ("all",)) if strata is None else \
        _codes(strata, "strata", n, data)
    if cluster is None:
        pair = np.arange(n, dtype=np.int64)
    else:
        cluster_codes, _ = _codes(cluster, "cluster", n, data)
        pair = strata_codes * (int(cluster_codes.max()) + 1) + cluster_codes
    unique_pairs, psu = np.unique(pair, return_inverse=True)
    first = np.zeros(unique_pairs.size, dtype=np.int64)
    first[psu[::-1]] = np.arange(n)[::-1]
    stratum_of_psu = strata_codes[first]
    fraction = None if fpc is None else _fraction(fpc, n, data, strata_codes, stratum_of_psu, labels)
    reps, scales = None, None
    if repweights is not None:
        reps, scales = _replicates(repweights, rep_type, rscales, n, data, strata_codes, psu, stratum_of_psu)
    elif rep_type is not None or rscales is not None or mse:
        raise ValueError("rep_type, rscales and mse need repweights=")
    return SampleDesign(w, strata_codes, psu.astype(np.int64), stratum_of_psu, labels, fraction, reps, rep_type,
                        scales, bool(mse), lonely_psu, weights is not None, cluster is not None,
                        strata is not None)


def _fraction(fpc: Any, n: int, data: Any, strata: NDArray[np.int64], stratum_of_psu: NDArray[np.int64],
              labels: tuple[Any, ...]) -> NDArray[np.float64]:
    """``f_h`` per stratum from R's fpc: a sampling fraction (<= 1) or the population's PSU count (> 1)."""
    values = _weights(fpc, "fpc", n, data)
    n_h = np.bincount(stratum_of_psu, minlength=len(labels)).astype(np.float64)
    out = np.empty(len(labels))
    for h in range(len(labels)):
        v = np.unique(values[strata == h])
        if v.size != 1:
            raise ValueError(f"fpc must be constant within a stratum; stratum {labels[h]!r} has {v.size} values")
        if v[0] > 1 and v[0] < n_h[h]:
            raise ValueError(f"fpc of stratum {labels[h]!r} is {v[0]:g} PSUs in the population, fewer than the "
                             f"{int(n_h[h])} sampled")
        out[h] = v[0] if v[0] <= 1 else n_h[h] / v[0]
    return out


def _replicates(repweights: Any, rep_type: str | None, rscales: Any, n: int, data: Any,
                strata: NDArray[np.int64], psu: NDArray[np.int64], stratum_of_psu: NDArray[np.int64]
                ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    if rep_type not in REP_TYPES:
        raise ValueError(f"rep_type must be one of {', '.join(map(repr, REP_TYPES))} with repweights; "
                         f"got {rep_type!r}")
    if isinstance(repweights, (list, tuple)) and repweights and all(isinstance(c, str) for c in repweights):
        if data is None:
            raise ValueError("repweights names columns, but no data= was given: pass a 2-D array")
        cols = [_weights(c, f"repweights column {c!r}", n, data) for c in repweights]
        reps = np.column_stack(cols)
    else:
        reps = np.asarray(repweights, dtype=np.float64)
        if reps.ndim != 2 or reps.shape[0] != n:
            raise ValueError(f"repweights must be a 2-D array with one row per respondent ({n}) and one column "
                             f"per replicate; got shape {reps.shape}")
        if not np.all(np.isfinite(reps)) or np.any(reps < 0):
            raise ValueError("repweights must be finite and non-negative")
    count = reps.shape[1]
    if count < 2:
        raise ValueError(f"repweights must have at least 2 replicates; got {count}")
    if rscales is not None:
        scales = np.asarray(rscales, dtype=np.float64)
        if scales.shape != (count,) or not np.all(np.isfinite(scales)) or np.any(scales < 0):
            raise ValueError(f"rscales must be {count} finite non-negative numbers (one per replicate); "
                             f"got shape {scales.shape}")
        return reps, scales
    if rep_type != "JKn":
        return reps, np.ones(count)
    n_h = np.bincount(stratum_of_psu).astype(np.float64)
    scales = np.empty(count)
    for r in range(count):
        dropped = np.unique(strata[reps[:, r] == 0])
        if dropped.size != 1 or n_h[dropped[0]] < 2:
            raise ValueError("rep_type 'JKn': give rscales= (one (n_h - 1)/n_h per replicate), or strata= and "
                             "cluster= with each replicate deleting PSUs of one stratum")
        scales[r] = (n_h[dropped[0]] - 1) / n_h[dropped[0]]
    return reps, scales
