"""Results of design and plain questions, from their tallies (never from the reports).

A design question's prevalence is :func:`deniable.survey.prevalence_from_counts`
on its answer counts per group: RRreg's estimate and standard error (the
sampling model: respondents drawn from a population), with the
profile-likelihood interval at ``level``. By category of each plain
categorical question the same fit runs on that category's counts, and
:func:`deniable.survey.prevalence_by` tests equal prevalence across the
categories that can be estimated (at least 2 answers in every group) by a
likelihood ratio; for a two-group design the extra parameter (``t``,
``piUQ``, ``gamma``) stays free per category.

A plain question's result is what was answered: counts per category, or for
an integer question the count, mean, smallest and largest answer and the
counts of the values given.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable.server.questions import DesignQuestion, PlainQuestion, Tally
from deniable.survey.groups import prevalence_by
from deniable.survey.prevalence import PrevalenceFit, prevalence_from_counts

__all__ = ["design_json", "plain_json"]


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _fit(q: DesignQuestion, counts: NDArray[np.int64]) -> PrevalenceFit | None:
    """The fit, or ``None`` when some group has fewer than 2 answers."""
    if counts.sum(axis=1).min() < 2:
        return None
    return prevalence_from_counts(counts, q.design)


def _parameters(fit: PrevalenceFit | None, q: DesignQuestion, level: float) -> list[dict[str, Any]]:
    if fit is None:
        return [{"name": k, "estimate": None, "std_error": None, "ci_low": None, "ci_high": None}
                for k in q.design.param_names]
    ci = fit.ci(level)
    return [
        {"name": k, "estimate": _finite(v), "std_error": _finite(fit.bse[k]),
         "ci_low": _finite(ci[k][0]), "ci_high": _finite(ci[k][1])}
        for k, v in fit.params.items()
    ]


def _by_category(q: DesignQuestion, plain: PlainQuestion, table: NDArray[np.int64], level: float) -> dict[str, Any]:
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
        cells = [(c, g, r) for c in used for g in range(q.groups) for r in (0, 1)]
        sizes = [int(table[c, g, r]) for c, g, r in cells]
        by = prevalence_by(
            np.repeat([r for _, _, r in cells], sizes), q.design, np.repeat([c for c, _, _ in cells], sizes),
            group=None if q.groups == 1 else np.repeat([g + 1 for _, g, _ in cells], sizes),
        )
        test = {"method": "likelihood ratio", "null": "equal prevalence in every category",
                "statistic": by.lr_statistic, "df": by.df, "p_value": by.pvalue, "categories": len(used)}
    return {"question": plain.id, "text": plain.text, "rows": rows, "test": test}


def design_json(q: DesignQuestion, tally: Tally, plain: Mapping[str, PlainQuestion], level: float) -> dict[str, Any]:
    """A design question's results: prevalence with SE and interval, and by plain category."""
    counts = tally.arrays["counts"]
    fit = _fit(q, counts)
    return {
        "id": q.id,
        "text": q.text,
        "type": q.type,
        "kind": "design",
        "design": q.spec,
        "groups": q.groups,
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


def plain_json(q: PlainQuestion, tally: Tally) -> dict[str, Any]:
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
