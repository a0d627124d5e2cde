"""Estimates by slice: one result per value of a plain (not randomized) field.

``m.estimate(reports, by=labels)`` splits the reports by ``labels`` (an app
version, a country, a day, an experiment's arm: anything sent as is beside the
randomized report, one label per report) and estimates each slice on its own,
exactly as ``m.estimate`` would on that slice's reports alone. The slices are
disjoint sets of respondents, so their estimates are independent and each
carries its own standard errors and intervals; the labels themselves are not
randomized, and neither is whatever they reveal.

Small slices. A slice's interval means little when the slice has few reports:
the normal approximation needs a few dozen, and the randomization's noise
needs many more at a small epsilon. A slice is flagged ``small`` when it has
fewer reports than :func:`small_slice_threshold` ``= max(30, n_0.1)``, where
``n_0.1`` is the number of reports that makes the 95% interval at most
``±0.1`` wide on a share (on a mean: ``±10%`` of the range ``high - low``) in
the worst case over the truth, for the estimate's target
(what :func:`deniable.sample_size` gives at ``margin=0.1``; for a mean, the mechanism's
worst-case variance plus, for the population target, the largest spread of
values ``(high - low)^2 / 4``). The rule depends only on the mechanism and
the slice's size, not on its noisy estimate, so it cannot be gamed by the
noise; a :class:`~deniable.DeniableWarning` names the small slices.

>>> import numpy as np, deniable as dn
>>> m = dn.GRR(["a", "b"], epsilon=2.0)
>>> rng = np.random.default_rng(1)
>>> version = rng.choice(["v1", "v2"], 4000)
>>> sl = m.estimate(m.privatize_many(np.where(version == "v1", "a", "b"), rng=rng), by=version)
>>> sl.labels, int(sl.n.sum())
(('v1', 'v2'), 4000)
>>> bool(abs(sl["v1"].frequencies[0] - 1) < 0.1)
True
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable._estimate import check_target, worst_per_user_variance
from deniable._intervals import z_for
from deniable._results import ConfidenceInterval, Result, ResultTable
from deniable.errors import DeniableWarning

__all__ = ["SlicedEstimate", "estimate_by", "sliced_estimate", "slice_labels", "small_slice_threshold",
           "SMALL_SLICE_MARGIN", "SMALL_SLICE_MIN"]

SMALL_SLICE_MIN = 30
"""Below this many reports a slice is small whatever its mechanism (the normal interval is not trusted)."""
SMALL_SLICE_MARGIN = 0.1
"""The 95% half-width (a share; a mean: this fraction of its range) a slice must reach not to be small."""


def small_slice_threshold(mechanism: Any, target: str = "population") -> int:
    """The fewest reports a slice needs not to be flagged small (module docstring: ``max(30, n_0.1)``).

    ``n_0.1 = z^2 V / 0.1^2`` with ``z`` the 95% normal quantile and ``V`` the
    largest variance of one report's contribution over the truth: for a
    frequency oracle :func:`deniable.sample_size`'s, for a mean the
    mechanism's worst-case ``variance(1)`` (plus ``(high - low)^2 / 4`` for
    the population target) over ``(0.1 (high - low))^2``. A randomizer with no
    variance formula gets the floor of 30.
    """
    target = check_target(target)
    z = z_for(0.05)
    try:
        if hasattr(mechanism, "support_rates"):
            worst = worst_per_user_variance(mechanism, None, target)
            scale = 1.0
        else:
            scale = mechanism.high - mechanism.low
            worst = float(mechanism.variance(1)) + (scale**2 / 4 if target == "population" else 0.0)
        needed = math.ceil(z * z * worst / (SMALL_SLICE_MARGIN * scale) ** 2 - 1e-9)
    except (AttributeError, NotImplementedError, TypeError, ValueError):
        needed = 0
    return max(SMALL_SLICE_MIN, int(needed))


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def slice_labels(by: Any, n: int) -> tuple[str, list[Any], NDArray[np.intp]]:
    """``(name, slices, codes)``: the field's name, its distinct labels (sorted; a pandas categorical's
    categories in their order) and each report's slice position.

    ValueError naming ``by`` unless it holds exactly one label per report,
    or when a categorical's category has no report (an empty slice).
    """
    name = str(getattr(by, "name", None) or "slice")
    categorical = getattr(by, "cat", by)  # a pandas Series of dtype category, or a pandas Categorical
    if hasattr(categorical, "categories") and hasattr(categorical, "codes"):
        codes = np.asarray(categorical.codes, dtype=np.intp)
        if codes.shape != (n,):
            raise ValueError(f"by must hold one label per report: {n} reports, got {codes.size} labels")
        if np.any(codes < 0):
            raise ValueError(f"by has a missing label at index {int(np.flatnonzero(codes < 0)[0])}")
        slices = [_plain(c) for c in categorical.categories]
        counts = np.bincount(codes, minlength=len(slices))
        if np.any(counts == 0):
            empty = slices[int(np.flatnonzero(counts == 0)[0])]
            raise ValueError(f"by: the slice {empty!r} has no reports (an empty category); drop unused "
                             "categories first (remove_unused_categories)")
        return name, slices, codes
    labels = np.asarray(by)
    if labels.ndim != 1 or labels.shape[0] != n:
        raise ValueError(f"by must hold one label per report: {n} reports, got labels of shape {labels.shape}")
    if n == 0:
        raise ValueError("by: no reports to slice (an empty slice has no estimate)")
    try:
        distinct, codes = np.unique(labels, return_inverse=True)
    except TypeError as exc:
        raise ValueError(f"by must hold labels of one comparable type (strings or numbers); {exc}") from None
    if distinct.dtype.kind == "f" and np.isnan(distinct).any():
        raise ValueError("by has a missing label (NaN)")
    return name, [_plain(v) for v in distinct], np.asarray(codes, dtype=np.intp).reshape(n)


def estimate_by(mechanism: Any, reports: Any, by: Any, target: Any = "population") -> SlicedEstimate:
    """One estimate per slice of ``reports`` by ``by`` (module docstring); what ``m.estimate(..., by=)`` returns.

    The reports are checked once; each slice's aggregate is made from its
    rows and estimated by ``mechanism.estimate_from`` for ``target``.
    """
    target = check_target(target)
    checked = mechanism._checked(reports)
    name, slices, codes = slice_labels(by, len(checked))
    order = np.argsort(codes, kind="stable")
    ends = np.cumsum(np.bincount(codes, minlength=len(slices)))
    stats = [mechanism._aggregate_checked(checked[order[(ends[j - 1] if j else 0) : ends[j]]])
             for j in range(len(slices))]
    return sliced_estimate(mechanism, name, slices, stats, target, stacklevel=4)


def sliced_estimate(mechanism: Any, by: str, labels: Sequence[Any], aggregates: Sequence[Any],
                    target: Any = "population", *, stacklevel: int = 2) -> SlicedEstimate:
    """The :class:`SlicedEstimate` of each slice's (merged) aggregate, ``aggregates[j]`` that of ``labels[j]``.

    Warns (:class:`~deniable.DeniableWarning`) naming the small slices;
    ValueError naming the slice whose aggregate cannot be estimated (a
    mean of fewer than 2 reports).
    """
    target = check_target(target)
    results = []
    for label, stat in zip(labels, aggregates, strict=True):
        try:
            results.append(mechanism.estimate_from(stat, target=target))
        except ValueError as exc:
            raise ValueError(f"by: slice {label!r} ({stat.n} reports): {exc}") from None
    out = SlicedEstimate(by, tuple(labels), tuple(results), small_slice_threshold(mechanism, target))
    if out.small.any():
        few = [label for label, small in zip(out.labels, out.small, strict=True) if small]
        warnings.warn(
            f"{len(few)} slice(s) of {by!r} have fewer than {out.min_n} reports, too few for a 95% interval "
            f"within ±{SMALL_SLICE_MARGIN:g} (their 'small' is True): {few[:10]!r}"
            + (" ..." if len(few) > 10 else ""), DeniableWarning, stacklevel=stacklevel,
        )
    return out


@dataclass(frozen=True, eq=False)
class SlicedEstimate(Result, Mapping[Any, Any]):
    """One estimate per slice, in :attr:`labels` order: ``sl[label]`` is that slice's result.

    A mapping from each label to its result (``Estimate``, ``MeanEstimate``,
    ...). :attr:`n` holds each slice's number of reports, :attr:`small`
    whether it has fewer than :attr:`min_n` (the module's rule). Its table
    is the long form: one row per slice and category (one per slice for a
    mean), with the slice's ``n`` and ``small`` on each row; ``to_frame()``
    is that table as a DataFrame, ``to_dict()`` its columns.

    ``m.estimate(reports, by=labels)`` makes it.

    Parameters
    ----------
    by : str
        The name of the field the reports were sliced by (a pandas Series'
        name, else ``"slice"``).
    labels : tuple
        The slices' labels.
    results : tuple
        Their estimates, aligned with ``labels``.
    min_n : int
        The fewest reports a slice needs not to be small
        (:func:`small_slice_threshold`).

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> m = dn.GRR(["a", "b", "c"], epsilon=2.0)
    >>> rng = np.random.default_rng(0)
    >>> x = rng.choice(["a", "b", "c"], 6000, p=[0.5, 0.3, 0.2])
    >>> platform = np.where(rng.random(6000) < 0.5, "ios", "android")
    >>> sliced = m.estimate(m.privatize_many(x, rng=rng), by=platform)
    >>> sliced.labels, sliced.n.tolist(), sliced.min_n
    (('android', 'ios'), [3000, 3000], 208)
    >>> type(sliced["ios"]).__name__
    'Estimate'
    """

    by: str
    labels: tuple[Any, ...]
    results: tuple[Any, ...]
    min_n: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "_index", {label: j for j, label in enumerate(self.labels)})

    # ------------------------------------------------------------ mapping
    def __getitem__(self, label: Any) -> Any:
        try:
            return self.results[self._index[_plain(label)]]  # type: ignore[attr-defined]
        except KeyError:
            raise KeyError(f"no slice {label!r}; the slices of {self.by!r} are {list(self.labels)!r:.300}") from None

    def __iter__(self) -> Iterator[Any]:
        return iter(self.labels)

    def __len__(self) -> int:
        return len(self.labels)

    # ------------------------------------------------------------- fields
    @property
    def n(self) -> NDArray[np.int64]:
        """Each slice's number of reports (respondents), aligned with :attr:`labels`."""
        return np.array([r.n for r in self.results], dtype=np.int64)

    @property
    def small(self) -> NDArray[np.bool_]:
        """Whether each slice has fewer than :attr:`min_n` reports (module docstring)."""
        return self.n < self.min_n

    @property
    def ci_methods(self) -> tuple[str, ...]:  # type: ignore[override]
        """The interval methods every slice's result offers."""
        return tuple(m for m in self.results[0].ci_methods if all(m in r.ci_methods for r in self.results))

    @property
    def std_errors(self) -> NDArray[np.float64]:
        """The standard errors in the long form's row order (slice by slice)."""
        return np.concatenate([np.atleast_1d(np.asarray(_errors(r), dtype=float)) for r in self.results])

    def confidence_interval(self, confidence_level: float = 0.95, method: str | None = None) -> ConfidenceInterval:
        """Every slice's interval by ``method``, concatenated in the long form's row order."""
        parts = [r.confidence_interval(confidence_level, method) for r in self.results]
        return ConfidenceInterval(np.concatenate([np.atleast_1d(p.low) for p in parts]),
                                  np.concatenate([np.atleast_1d(p.high) for p in parts]))

    def _table(self, confidence_level: float, method: str | None) -> ResultTable:
        """The long form: ``slice``, each result's own label column (``category``, ...) and columns, ``n``,
        ``small``; the first result's fields (less its ``n``), ``by`` and ``min_n``."""
        tables = [r._table(confidence_level, method) for r in self.results]
        rows = [len(t.labels) if t.index is not None else 1 for t in tables]
        columns: dict[str, Any] = {}
        inner = tables[0].index
        if inner is not None:
            columns[inner] = [label for t in tables for label in t.labels]
        for key in tables[0].columns:
            columns[key] = np.concatenate([np.atleast_1d(np.asarray(t.columns.get(key, np.nan))) for t in tables])
        columns["n"] = np.repeat(self.n, rows)
        columns["small"] = np.repeat(self.small, rows)
        labels = [label for label, k in zip(self.labels, rows, strict=True) for _ in range(k)]
        fields = {k: v for k, v in tables[0].fields.items() if k != "n"}
        return ResultTable({"by": self.by, **fields, "min_n": self.min_n}, columns, "slice", labels, "slices")

    def to_frame(self, confidence_level: float | None = None, method: str | None = None) -> Any:
        """The long-form table as a pandas DataFrame: one row per slice and category (needs pandas)."""
        frame = super().to_frame(confidence_level, method)
        frame.attrs.update(by=self.by, min_n=self.min_n)
        return frame

    def _caption(self) -> str:
        first = self.results[0]._caption().split(", n = ")[0]
        return f"{first}, by {self.by}: {len(self)} slices, n = {int(self.n.sum()):,}"

    def _note(self, more: int) -> str:
        small = int(self.small.sum())
        return (f"{more} more rows (to_frame() has all). " if more > 0 else "") + (
            f"{small} slice(s) under {self.min_n} reports: small, their intervals say little." if small else "")

    def __repr__(self) -> str:
        rows = [f"  {label!s:>12}  n={n:<8}" + ("  (small)" if s else "")
                for label, n, s in zip(self.labels[:20], self.n, self.small, strict=False)]
        more = [f"  ... {len(self) - 20} more"] if len(self) > 20 else []
        return "\n".join([f"SlicedEstimate(by {self.by!r}, {len(self)} slices, min_n={self.min_n})", *rows, *more])


def _errors(result: Any) -> Any:
    errors = getattr(result, "std_errors", None)
    return getattr(result, "std_error", np.nan) if errors is None else errors
