"""Each question's results, chosen once by its randomizer's registry kind.

:func:`question_json` answers a question of ``GET /surveys/{id}/results`` from
its merged aggregate (never from the reports), by the table
:data:`PRESENTATIONS` keyed by the randomizer's kind
(:func:`deniable.server._questions.kind_of`); a plain question by
:func:`plain_json`.

* **frequency** (and **sketch**): the unbiased frequency per category,
  :meth:`Estimate.to_dict <deniable._estimate.Estimate.to_dict>` at the level,
  with the Norm-Sub projection and the support counts.
* **design**: the prevalence is :func:`deniable.survey.prevalence_from_counts`
  on the answer counts per group: RRreg's estimate and standard error (the
  sampling model: respondents drawn from a population), with the
  profile-likelihood interval at ``level``. By category of each plain
  categorical question the same fit runs on that category's counts, and
  :func:`deniable.survey.prevalence_by` tests equal prevalence across the
  categories that can be estimated (at least 2 answers in every group) by a
  likelihood ratio; for a two-group design the extra parameter (``t``,
  ``piUQ``, ``gamma``) stays free per category.
* **numeric**: the mean (:meth:`NumericMechanism.estimate_from
  <deniable.mechanisms._numeric.base.NumericMechanism.estimate_from>`), its
  standard error and normal interval; undefined with fewer than 2 reports.
* **range** (a number question for ranges): the CDF with its pointwise band
  and quantiles with intervals (:func:`deniable.server._range_results.range_json`).
* **set** (choose several): each option's share with its interval
  (:func:`deniable.server._set_questions.items_json`).
* **keyvalue**: each key's share of respondents and the mean of its values, with
  intervals (:func:`deniable.server._keyvalue_questions.keyvalue_json`).
* **heavy** (free text): the values :meth:`HeavyHitters.identify
  <deniable.heavy.HeavyHitters.identify>` discovers, cached by aggregate.
* **plain**: what was answered: counts per category, or for an integer
  question the count, mean, smallest and largest answer and the counts of
  the values given.
"""

from __future__ import annotations

import hashlib
import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable._aggregates import MeanStat, SupportCounts
from deniable._estimate import Estimate, MeanEstimate, Target
from deniable._results import jsonable
from deniable.heavy import HeavyStat
from deniable.server._joint_questions import joint_json
from deniable.server._keyvalue_questions import keyvalue_json
from deniable.server._list_questions import list_json
from deniable.server._questions import (
    DESIGN,
    FREQUENCY,
    HEAVY,
    JOINT,
    KEYVALUE,
    LIST,
    NUMERIC,
    PLAIN,
    RANGE,
    SET,
    SKETCH,
    AnyQuestion,
    PlainQuestion,
    Question,
    Tally,
    design_spec,
)
from deniable.server._range_results import range_json
from deniable.server._set_questions import items_json
from deniable.survey._groups import prevalence_by
from deniable.survey._prevalence import PrevalenceFit, prevalence_from_counts

__all__ = ["View", "question_json", "PRESENTATIONS", "frequency_json", "design_json", "plain_json", "mean_json",
           "mean_estimate", "discovery_json", "manipulation_json", "DETECTION_ALPHA"]


@dataclass(frozen=True)
class View:
    """What the results are asked for: the interval ``level``, the inference ``target``, the frequency
    questions' ``estimates`` (:func:`deniable.server._results.question_estimates`) and the survey's
    ``plain`` questions by id (a design question's answers by category)."""

    level: float
    target: Target
    estimates: Mapping[str, Estimate]
    plain: Mapping[str, PlainQuestion]


def question_json(q: AnyQuestion, aggregate: Any, view: View) -> dict[str, Any]:
    """One question's results from its merged aggregate."""
    return PRESENTATIONS[q.kind](q, aggregate, view)


# ------------------------------------------------------------------ frequency
def frequency_json(q: Question, _aggregate: Any, view: View) -> dict[str, Any]:
    """A frequency question's results: :meth:`Estimate.to_dict` at the level, with the question, the
    Norm-Sub projection and the aggregate."""
    est = view.estimates[q.id]
    data = est.to_dict(view.level)
    consistent = est.consistent("norm-sub").frequencies if est.n else np.full(len(q.categories), np.nan)
    return {
        "id": q.id,
        "text": q.text,
        "type": q.type,
        "mechanism": q.mechanism.name,
        "epsilon": q.epsilon,
        "n": data["n"],
        "target": data["target"],
        "categories": q.categories,
        # a decode without support counts (RAPPOR) has no observed shares
        **{key: data.get(key, [None] * len(q.categories))
           for key in ("estimate", "std_error", "ci_low", "ci_high", "observed")},
        "consistent": jsonable(consistent),
        "support_counts": SupportCounts(q.mechanism.fingerprint, est.support_counts, est.n).to_json(),
        "manipulation": manipulation_json(est, q.mechanism),
    }


DETECTION_ALPHA = 1e-3
"""The false-alarm rate of the detections the results run (:mod:`deniable._detection`)."""


def manipulation_json(est: Estimate, mechanism: Any = None) -> dict[str, Any] | None:
    """How far fake responses could move a frequency question's shares, and whether its shares look pushed.

    ``per_fake_report``: the most one fake response among the ``n`` moves a share,
    ``max_v 1 / (n (p* - q*))`` (:meth:`Estimate.manipulation_bound
    <deniable._estimate.Estimate.manipulation_bound>`); ``sensitivity``: the most one
    chosen report raises a share from 0, times ``n`` (``(1 - q*)/(p* - q*)``); for an
    estimate decoded by least squares (RAPPOR), the ``mechanism``'s own figures,
    ``max spread / n`` and ``max output`` (:meth:`deniable.RAPPOR.manipulation`);
    ``frequency_test``: :func:`deniable.frequency_test` at :data:`DETECTION_ALPHA`;
    ``change_from_previous_round``: in a round's results, :func:`deniable.change_test`
    against the last earlier round with responses. None without responses, or where
    the sensitivity is not derived (RAPPOR with more candidates than equations).
    """
    if est.n == 0:
        return None
    from deniable._detection import frequency_test

    if np.all(np.isfinite(est.p_star)):
        per_report = float(np.max(est.manipulation_bound(1)))
        sensitivity = float(np.max((1 - est.q_star) / (est.p_star - est.q_star)))
    else:
        try:
            figures = mechanism.manipulation()
        except NotImplementedError:
            return None
        per_report, sensitivity = float(np.max(figures.spread)) / est.n, float(np.max(figures.output))
    return {
        "per_fake_report": per_report,
        "sensitivity": sensitivity,
        "frequency_test": frequency_test(est, DETECTION_ALPHA).to_dict(),
        "change_from_previous_round": None,  # rounds: set by deniable.server._results.rounds_json
    }


# --------------------------------------------------------------------- design
def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _fit(q: Question, counts: NDArray[np.int64]) -> PrevalenceFit | None:
    """The fit, or ``None`` when some group has fewer than 2 answers."""
    if counts.sum(axis=1).min() < 2:
        return None
    return prevalence_from_counts(counts, q.design)


def _parameters(fit: PrevalenceFit | None, q: Question, level: float) -> list[dict[str, Any]]:
    if fit is None:
        return [{"name": k, "estimate": None, "std_error": None, "ci_low": None, "ci_high": None}
                for k in q.design.param_names]
    ci = fit.ci(level)
    return [
        {"name": k, "estimate": _finite(v), "std_error": _finite(fit.bse[k]),
         "ci_low": _finite(ci[k][0]), "ci_high": _finite(ci[k][1])}
        for k, v in fit.params.items()
    ]


def _by_category(q: Question, plain: PlainQuestion, table: NDArray[np.int64], level: float) -> dict[str, Any]:
    """Prevalence per category of ``plain`` and the likelihood-ratio test of equal prevalence.

    The test is :func:`deniable.survey.prevalence_by`'s, over the categories
    with at least 2 answers in every group, on the answers rebuilt from the
    tally (``table[c, g - 1, r]``: answers ``r`` in group ``g`` and category ``c``).
    """
    fits = {c: _fit(q, table[c]) for c in range(len(plain.categories))}
    rows = []
    for c, category in enumerate(plain.categories):
        pi = _parameters(fits[c], q, level)[0]
        rows.append({"category": category, "n": int(table[c].sum()), **{k: v for k, v in pi.items() if k != "name"}})
    used = [c for c, fit in fits.items() if fit is not None]
    test: dict[str, Any] | None = None
    if len(used) >= 2:
        cells = [(c, g, r) for c in used for g in range(q.design.groups) for r in (0, 1)]
        sizes = [int(table[c, g, r]) for c, g, r in cells]
        by = prevalence_by(
            np.repeat([r for _, _, r in cells], sizes), q.design, np.repeat([c for c, _, _ in cells], sizes),
            group=None if q.design.groups == 1 else np.repeat([g + 1 for _, g, _ in cells], sizes),
        )
        test = {"method": "likelihood ratio", "null": "equal prevalence in every category",
                "statistic": by.lr_statistic, "df": by.df, "p_value": by.pvalue, "categories": len(used)}
    return {"question": plain.id, "text": plain.text, "rows": rows, "test": test}


def design_json(q: Question, tally: Tally, view: View) -> dict[str, Any]:
    """A design question's results: prevalence with SE and interval, and by plain category."""
    level, plain = view.level, view.plain
    counts = tally.arrays["counts"]
    fit = _fit(q, counts)
    return {
        "id": q.id,
        "text": q.text,
        "type": q.type,
        "kind": "design",
        "design": design_spec(q.design),
        "groups": q.design.groups,
        "epsilon": _finite(q.epsilon),
        "reveals_truth": not math.isfinite(q.epsilon),
        "n": int(counts.sum()),
        "answer_counts": counts.tolist(),
        "estimator": "maximum likelihood (RRreg's RRuni): standard error under the sampling model, "
        "profile-likelihood interval",
        "method": None if fit is None else fit.method,
        "parameters": _parameters(fit, q, level),
        "by": [_by_category(q, plain[qid], tally.arrays[f"by:{qid}"], level) for qid, _ in q.by],
    }


# ---------------------------------------------------------------------- numeric
def mean_estimate(q: Question, stat: MeanStat, target: Target) -> MeanEstimate:
    """The mean estimate of a number question's merged aggregate; NaN values with fewer than 2 reports."""
    m = q.mechanism
    if stat.n >= 2:
        return m.estimate_from(stat, target=target)
    nan = math.nan
    return MeanEstimate(mechanism=m.name, epsilon=m.epsilon, mean=nan, std_error=nan, sample_std_error=nan,
                        n=stat.n, low=m.low, high=m.high, target=target)


def mean_json(q: Question, stat: MeanStat, view: View) -> dict[str, Any]:
    """A number question's results: the estimated mean with its standard error and interval at ``level``.

    ``estimate`` is the debiased mean of the answers (clamped to ``[low,
    high]``), ``std_error`` its standard error for ``target`` and ``ci_low``,
    ``ci_high`` the normal interval; all ``None`` with fewer than 2 reports.
    ``aggregate`` is the merged :class:`~deniable._aggregates.MeanStat`, to
    recompute them exactly.
    """
    level = view.level
    data = mean_estimate(q, stat, view.target).to_dict(level)
    return {
        "id": q.id, "text": q.text, "type": q.type, "kind": "mean", "mechanism": q.mechanism.name,
        "epsilon": q.epsilon, "n": data["n"], "target": data["target"], "level": level,
        "low": data["low"], "high": data["high"], "units": q.units,
        **{key: data[key] for key in ("estimate", "std_error", "ci_low", "ci_high")},
        "aggregate": stat.to_json(),
    }


# ------------------------------------------------------------------ free text
_CACHE: OrderedDict[tuple[str, str, float], dict[str, Any]] = OrderedDict()
_CACHE_SIZE = 64
_CACHE_LOCK = threading.Lock()


def _stat_digest(stat: HeavyStat) -> str:
    h = hashlib.blake2b(digest_size=16)
    for sketch in (*stat.levels, *([stat.word] if stat.word is not None else [])):
        h.update(np.ascontiguousarray(sketch.row_counts).tobytes())
        h.update(np.ascontiguousarray(sketch.table).tobytes())
    return h.hexdigest()


def _discovered(q: Question, stat: HeavyStat, level: float) -> dict[str, Any]:
    found = q.hitters.identify(stat, level=level)
    rows = [
        {"value": v, "count": float(c), "std_error": float(s), "ci_low": float(lo), "ci_high": float(hi),
         "truncated": bool(t)}
        for v, c, s, lo, hi, t in zip(found.values, found.counts, found.std_errors, found.ci_low, found.ci_high,
                                      found.truncated.tolist(), strict=True)
    ]
    return {"values": rows}


def discovery_json(q: Question, stat: HeavyStat, view: View) -> dict[str, Any]:
    """A free-text question's results: the discovered values, most frequent first, with counts and CIs.

    ``values`` are those :meth:`HeavyHitters.identify` reports (count
    significantly above 0: one-sided z test at 5%, Bonferroni over every
    candidate value), each with ``count`` (estimated respondents),
    ``std_error``, the normal interval at ``level`` (``ci_low``, ``ci_high``)
    and ``truncated`` (a text cut at ``max_length``); ``alphabet`` when the
    question has one. Cached by aggregate.
    """
    h, level = q.hitters, view.level
    key = (h.fingerprint, _stat_digest(stat), level)
    with _CACHE_LOCK:
        cached = _CACHE.get(key)
        if cached is not None:
            _CACHE.move_to_end(key)
    if cached is None:
        cached = _discovered(q, stat, level) if stat.n else {"values": []}
        with _CACHE_LOCK:
            _CACHE[key] = cached
            while len(_CACHE) > _CACHE_SIZE:
                _CACHE.popitem(last=False)
    return {
        "id": q.id, "text": q.text, "type": q.type, "kind": "discovery", "method": h.method,
        "value_kind": h.kind, "max_length": h.max_length, "top_k": h.top_k, "epsilon": q.epsilon,
        "n": stat.n, "target": "population", "level": level,
        "selection": "values whose count is significantly above 0 (one-sided z test at 5%, Bonferroni over "
        "every candidate value), most frequent first",
        "values": [dict(v) for v in cached["values"]],
        **({} if h.alphabet is None else {"alphabet": h.alphabet}),
    }


# ---------------------------------------------------------------------- plain
def plain_json(q: PlainQuestion, tally: Tally, _view: View | None = None) -> dict[str, Any]:
    """A plain question's answers as given: counts per category, or a summary of the integers."""
    counts = tally.arrays["counts"]
    n = int(counts.sum())
    out: dict[str, Any] = {"id": q.id, "text": q.text, "type": q.type, "kind": "plain", "randomized": False, "n": n}
    if q.type == "categorical":
        out["categories"] = list(q.categories)
        out["counts"] = counts.tolist()
        return out
    values = np.arange(q.min, q.max + 1)
    given = np.flatnonzero(counts)
    out["values"] = values[given].tolist()
    out["counts"] = counts[given].tolist()
    out["mean"] = float(np.dot(values, counts) / n) if n else None
    out["min"] = int(values[given[0]]) if n else None
    out["max"] = int(values[given[-1]]) if n else None
    return out


PRESENTATIONS: dict[str, Callable[[Any, Any, View], dict[str, Any]]] = {
    FREQUENCY: frequency_json, SKETCH: frequency_json, DESIGN: design_json, NUMERIC: mean_json, HEAVY: discovery_json,
    PLAIN: plain_json, JOINT: joint_json, RANGE: range_json, SET: items_json, LIST: list_json,
    KEYVALUE: keyvalue_json,
}
"""Each question kind's results: the randomizer's registry kind (:func:`deniable.server._questions.kind_of`),
or ``"plain"``."""
