"""Confidence sequences over a survey's rounds (``rounds: {anytime: true}``).

Each round of a survey with ``anytime`` gets ``sequences``: per frequency and
number question (by id), the estimate from the reports of every round so far
and its anytime-valid interval (:mod:`deniable._sequences`, at the results'
level), which covers at every round at once, so the dashboard may be read
after each round. Rounds ask the same devices again: a device's answers in
two rounds share its true value, and only the randomization is fresh. The
sequence then covers the share (or mean) over the reports so far, each
device counted once per round it answered (the respondents' running mean of
:func:`deniable._sequences.confidence_sequence`). A memoizing mechanism (its
reports of one value repeat the same memoized draw) breaks the independence
the sequence needs: its questions get ``null``; so do the rounds before a
question's first report. Without ``anytime`` each round's ``sequences`` is ``null``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from deniable._accounting import report_cost
from deniable._results import jsonable
from deniable._sequences import confidence_sequence
from deniable.server._questions import FREQUENCY, NUMERIC
from deniable.server._surveys import Survey

__all__ = ["add_sequences", "window_sequences"]


def add_sequences(survey: Survey, per_round: Mapping[int, Mapping[str, Any]], rounds: list[dict[str, Any]],
                  level: float, planned_n: int) -> None:
    """Set ``sequences`` (by question id) on each round of ``rounds`` (aligned with ``per_round``)."""
    for entry in rounds:
        entry["sequences"] = {}
    for q in survey.questions:
        if not q.randomized or q.kind not in (FREQUENCY, NUMERIC):
            continue
        stats = [aggregates[q.id] for aggregates in per_round.values()]
        first = next((k for k, st in enumerate(stats) if st.n > 0), None)
        cs = None
        if report_cost(q.mechanism).lifetime is None and first is not None:
            cs = confidence_sequence(q.mechanism, stats[first:], 1 - level, planned_n=planned_n,
                                     target="respondents")
        for k, entry in enumerate(rounds):
            if cs is None or first is None or k < first:
                entry["sequences"][q.id] = None
                continue
            j = k - first
            rows = {"estimate": cs.estimate[j], "ci_low": cs.low[j], "ci_high": cs.high[j]}
            values = {key: row[0] if q.kind == NUMERIC else row for key, row in rows.items()}
            entry["sequences"][q.id] = jsonable({"n": cs.n[j], **values, "alpha": cs.alpha, "planned_n": planned_n})


def window_sequences(survey: Survey, per_round: Mapping[int, Mapping[str, Any]], listed: list[dict[str, Any]],
                     level: float) -> None:
    """Set ``sequences`` on the ``listed`` rounds of a window (each with its ``round``) from ``per_round``:
    every round's aggregates, since a round's sequence reads every round from the first."""
    assert survey.rounds is not None
    ordered = dict(sorted(per_round.items()))
    every: list[dict[str, Any]] = [{} for _ in ordered]
    add_sequences(survey, ordered, every, level, survey.rounds.planned_n)
    by_round = {index: entry["sequences"] for index, entry in zip(ordered, every, strict=True)}
    for entry in listed:
        entry["sequences"] = by_round.get(entry["round"])
