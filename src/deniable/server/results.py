"""A survey's results: estimates from the stored aggregates, and their JSON form.

Results are computed from each question's merged aggregate (its support
counts ``C_v`` and ``n``), never from the reports, so they cost the same for
ten reports or ten million. For a question whose mechanism has support
probabilities ``p*`` and ``q*``, the estimate of category ``v`` is
``f_v = (C_v / n - q*) / (p* - q*)`` with the standard errors of
:func:`deniable.estimate.pure_variance` for the inference target:
``"population"`` (the default: the respondents are a sample of a
population) or ``"respondents"`` (these respondents only).

>>> estimates = question_estimates(survey, storage.aggregates(survey.id))  # doctest: +SKIP
>>> results_json(survey, estimates)["questions"][0]["estimate"]            # doctest: +SKIP
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from deniable.aggregates import SupportCounts
from deniable.estimate import Estimate, Target
from deniable.server.design_results import design_json, plain_json
from deniable.server.questions import DesignQuestion, PlainQuestion
from deniable.server.surveys import Question, Survey

__all__ = ["question_estimates", "results_json"]


def question_estimates(
    survey: Survey, aggregates: Mapping[str, Any], target: Target = "population"
) -> dict[str, Estimate]:
    """The unbiased estimate of every mechanism question for ``target``, by question id, from its merged aggregate."""
    return {
        q.id: q.mechanism.estimate_from(aggregates[q.id], target=target)
        for q in survey.questions
        if isinstance(q, Question)
    }


def _finite_or_none(values: Any) -> list[float | None]:
    """A JSON list: NaN (undefined without reports) becomes ``None``."""
    return [v if math.isfinite(v) else None for v in np.asarray(values, dtype=float).tolist()]


def _question_json(q: Question, est: Estimate, level: float) -> dict[str, Any]:
    if est.n:
        low, high = est.ci(level)
        consistent = est.consistent("norm-sub").frequencies
    else:
        low = high = consistent = np.full(len(q.categories), np.nan)
    return {
        "id": q.id,
        "text": q.text,
        "type": q.type,
        "mechanism": q.mechanism.name,
        "epsilon": q.epsilon,
        "n": est.n,
        "target": est.target,
        "categories": q.categories,
        "estimate": _finite_or_none(est.frequencies),
        "std_error": _finite_or_none(est.std_errors),
        "ci_low": _finite_or_none(low),
        "ci_high": _finite_or_none(high),
        "observed": _finite_or_none(est.observed),
        "consistent": _finite_or_none(consistent),
        "support_counts": SupportCounts(q.mechanism.fingerprint, est.support_counts, est.n).to_json(),
    }


def results_json(
    survey: Survey, estimates: Mapping[str, Estimate], level: float = 0.95,
    aggregates: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The results as ``GET /surveys/{id}/results`` answers them.

    Per question: the inference ``target`` of the estimates, the unbiased
    estimate, standard errors (``std_error``), normal intervals at ``level``
    (``ci_low``, ``ci_high``), the observed support shares ``C_v / n``, the Norm-Sub
    projection onto the simplex, and the ``support_counts`` aggregate
    (:meth:`deniable.SupportCounts.to_json`: fingerprint, n, counts) to
    recompute any of them exactly. Values undefined without reports are ``None``.
    Design and plain questions (their tallies in ``aggregates``) are answered
    by :mod:`deniable.server.design_results`.
    """
    plain = {q.id: q for q in survey.questions if isinstance(q, PlainQuestion)}
    questions = [
        _question_json(q, estimates[q.id], level) if isinstance(q, Question)
        else design_json(q, aggregates[q.id], plain, level) if isinstance(q, DesignQuestion)  # type: ignore[index]
        else plain_json(q, aggregates[q.id])  # type: ignore[index]
        for q in survey.questions
    ]
    return {
        "id": survey.id,
        "title": survey.title,
        "n_responses": questions[0]["n"],
        # design questions' prevalence is always for the population (RRuni's sampling model)
        "target": next((e.target for e in estimates.values()), "population"),
        "level": level,
        "questions": questions,
    }
