"""A survey's results by slice: ``GET /surveys/{id}/results?by=QUESTION``.

``by`` names a plain question (``randomized: false``: an app version, a
country, an experiment's arm, asked as is). Each frequency, sketch and number
question is then estimated once per allowed answer of that question, from the
reports of the respondents who gave it (:mod:`deniable._slices`: a slice's
estimate is exactly ``m.estimate`` of its reports, for the results' target).
Unlike the whole survey's results, which come from the merged aggregates,
slices are made from the stored responses, read once in chunks: the cost grows
with the number of responses. Design questions already have their prevalence by
category of every plain question; free-text questions are not sliced.

Each question gets ``min_n`` (:func:`deniable._slices.small_slice_threshold`:
the fewest reports for a 95% interval within ±0.1 on a share, or 10% of the
range for a mean, and at least 30) and per slice its ``value``, ``n``, ``small``
(``n < min_n``) and the estimate's columns (``None`` where the slice has too
few reports for any: no report, or fewer than 2 for a mean).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import numpy as np

from deniable._estimate import Target
from deniable._results import jsonable
from deniable._slices import small_slice_threshold
from deniable.server._errors import Invalid
from deniable.server._questions import FREQUENCY, NUMERIC, PLAIN, SKETCH, Question
from deniable.server._surveys import Survey

__all__ = ["by_question", "sliced_json", "SLICED_KINDS"]

SLICED_KINDS = (FREQUENCY, SKETCH, NUMERIC)
"""The kinds of question estimated slice by slice."""


def by_question(survey: Survey, by: str) -> Any:
    """The plain question ``by`` names; :class:`Invalid` naming ``by`` otherwise."""
    plain = [q.id for q in survey.questions if q.kind == PLAIN]
    try:
        q = survey.question(by)
    except KeyError:
        q = None
    if q is None or q.kind != PLAIN:
        allowed = f"one of {plain!r}" if plain else "none: this survey has no plain question"
        raise Invalid("by", f"must be the id of a plain (not randomized) question, {allowed}; got {by!r:.80}")
    return q


def _columns(q: Question, stat: Any, target: Target, level: float) -> dict[str, Any]:
    """The estimate of one slice's aggregate as its to_dict columns; ``None`` each where it has none."""
    keys = ("estimate", "std_error", "ci_low", "ci_high")
    if stat is None or (q.kind == NUMERIC and stat.n < 2):
        return dict.fromkeys(keys)
    data = q.mechanism.estimate_from(stat, target=target).to_dict(level)
    return {key: data[key] for key in keys}


def sliced_json(
    survey: Survey, responses: Iterable[list[tuple[int, str]]], by: str, target: Target, level: float
) -> dict[str, Any]:
    """The ``by`` part of the results: per sliced question, per allowed answer of ``by``, its estimate.

    ``responses``: the stored responses in chunks of ``(row, reports JSON)``
    (:meth:`Storage.iter_responses <deniable.server._storage.Storage.iter_responses>`).
    A response without an answer to ``by`` (another question drawn under
    ``allocation: sample``) is in no slice.
    """
    plain = by_question(survey, by)
    values = plain.values
    sliced = [q for q in survey.questions if q.randomized and q.kind in SLICED_KINDS]
    stats: dict[str, list[Any]] = {q.id: [None] * len(values) for q in sliced}
    for chunk in responses:
        answers = [json.loads(text) for _, text in chunk]
        labelled = [a for a in answers if by in a]
        if not labelled:
            continue
        slice_of = plain.reports_from_json([a[by] for a in labelled])
        if plain.type == "integer":
            slice_of = slice_of - plain.min
        for q in sliced:
            rows = [i for i, a in enumerate(labelled) if q.id in a]
            if not rows:
                continue
            checked = q.mechanism._checked(q.mechanism.reports_from_json([labelled[i][q.id] for i in rows]))
            codes = slice_of[rows]
            for j in np.unique(codes).tolist():
                part = q.mechanism._aggregate_checked(checked[codes == j])
                stats[q.id][j] = part if stats[q.id][j] is None else stats[q.id][j] + part
    out = []
    for q in sliced:
        min_n = small_slice_threshold(q.mechanism, target)
        out.append({
            "id": q.id, "text": q.text, "type": q.type, "kind": "mean" if q.kind == NUMERIC else "shares",
            "mechanism": q.mechanism.name, "epsilon": q.epsilon, "min_n": min_n,
            **({} if q.kind == NUMERIC else {"categories": jsonable(list(q.categories))}),
            "slices": [{"value": value, "n": n, "small": n < min_n, **jsonable(_columns(q, stat, target, level))}
                       for value, stat in zip(values, stats[q.id], strict=True)
                       for n in [0 if stat is None else stat.n]],
        })
    return {"question": by, "text": plain.text, "values": values, "questions": out}
