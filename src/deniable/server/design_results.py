"""Results of design and plain questions, from their tallies (never from the reports).

A design question's prevalence is :func:`deniable.survey.prevalence_from_counts`
on its answer counts per group: RRreg's estimate and standard error (the
sampling model: respondents drawn from a population), with the
profile-likelihood interval at ``level``. By category ``c`` of each plain
categorical question the same fit runs on that category's counts, and a
likelihood-ratio test compares "one set of parameters for every category"
with "one per category": ``G = 2 (sum_c llf_c - llf_pooled)``, chi-square
with ``(C - 1) x (number of parameters)`` degrees of freedom over the ``C``
categories that can be estimated (at least 2 answers in every group). For a
one-group design that is the test of equal prevalence; for a two-group design
the null also makes the extra parameter (``t``, ``piUQ``, ``gamma``) equal.

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
    """Prevalence per category of ``plain`` and the likelihood-ratio test of equal parameters."""
    from scipy.stats import chi2

    rows = []
    fits: list[PrevalenceFit] = []
    used = []
    for c, category in enumerate(plain.categories):
        fit = _fit(q, table[c])
        if fit is not None:
            fits.append(fit)
            used.append(c)
        pi = _parameters(fit, q, level)[0]
        rows.append({"category": category, "n": int(table[c].sum()), **{k: v for k, v in pi.items() if k != "name"}})
    test: dict[str, Any] | None = None
    if len(fits) >= 2:
        pooled = prevalence_from_counts(table[used].sum(axis=0), q.design)
        statistic = max(0.0, 2 * (math.fsum(f.llf for f in fits) - pooled.llf))
        df = (len(fits) - 1) * len(q.design.param_names)
        test = {
            "method": "likelihood ratio",
            "null": "equal prevalence in every category" if q.groups == 1
            else f"equal {' and '.join(q.design.param_names)} in every category",
            "statistic": statistic,
            "df": df,
            "p_value": float(chi2.sf(statistic, df)),
            "categories": len(fits),
        }
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
