"""A number question's results under a range mechanism: the CDF with its band, and quantiles with intervals.

A ``type: number`` question randomized by ``hierarchical`` or ``haar``
(:mod:`deniable.server._numeric_questions`) is estimated from its merged
aggregate by :meth:`estimate_from <deniable.HierarchicalHistogram.estimate_from>`,
a :class:`~deniable.RangeEstimate` (population target):

* ``cdf``: the estimated share of answers below each point ``x`` (the bin
  edges, at most :data:`CDF_POINTS` of them, evenly spread), unbiased for the
  binned answers, with its standard error and the pointwise normal interval
  ``F^(x) +- z SE`` at the results' level, clipped to ``[0, 1]`` where ``F`` lies (:meth:`RangeEstimate.cdf_band
  <deniable.RangeEstimate.cdf_band>`; exactly 0 at ``low`` and 1 at ``high``);
* ``quantiles``: the ``q``-quantiles of :data:`QUANTILES`, where the running
  maximum of the CDF first reaches ``q``, with the interval that inverts the
  pointwise band (the bins whose band may cross ``q``; :meth:`RangeEstimate.quantile
  <deniable.RangeEstimate.quantile>`) and half the width of the ``+-1`` SE
  interval as ``std_error``.

With no reports, or while some level has none (no standard error yet), the
estimates or the intervals are ``None``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from deniable import _intervals as intervals
from deniable._aggregates import SupportCounts
from deniable._results import jsonable
from deniable.server._questions import Question

__all__ = ["range_json", "QUANTILES", "CDF_POINTS"]

QUANTILES = (0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95)
"""The quantile levels a range question's results give."""
CDF_POINTS = 257
"""The most points of the CDF the results give (every edge up to 256 bins, else evenly spread edges)."""


def _cdf(edges: Any, est: Any, se: Any, level: float) -> dict[str, Any]:
    keep = np.unique(np.round(np.linspace(0, edges.size - 1, min(edges.size, CDF_POINTS))).astype(np.int64))
    low, high = intervals.normal_interval(est[keep], se[keep], 1 - level)
    return {"x": edges[keep], "estimate": est[keep], "std_error": se[keep], "ci_low": np.clip(low, 0, 1),
            "ci_high": np.clip(high, 0, 1)}


def range_json(q: Question, stat: SupportCounts, view: Any) -> dict[str, Any]:
    """A range question's results: the CDF with its pointwise band and the quantiles with intervals."""
    m = q.mechanism
    level = view.level
    out: dict[str, Any] = {
        "id": q.id, "text": q.text, "type": q.type, "kind": "range", "mechanism": m.name, "epsilon": q.epsilon,
        "n": stat.n, "target": "population", "level": level, "low": m.low, "high": m.high, "bins": m.bins,
        "units": q.units, "aggregate": stat.to_json(),
    }
    if not stat.n:
        return {**out, "cdf": None, "quantiles": None}
    estimate = m.estimate_from(stat)
    edges, est, se = estimate.cdf_band()
    bounded = bool(np.isfinite(se).all())  # else some level has no reports yet
    quantiles = []
    for q_level in QUANTILES:
        found = estimate.quantile(q_level)
        low, high = found.confidence_interval(level) if bounded else (None, None)
        quantiles.append({"q": q_level, "estimate": found.value, "std_error": found.std_error if bounded else None,
                          "ci_low": low, "ci_high": high})
    return jsonable({**out, "cdf": _cdf(edges, est, se, level), "quantiles": quantiles})
