"""A survey's results: estimates from the stored aggregates, and their JSON form.

Results are computed from each question's merged aggregate (its support
counts ``C_v`` and ``n``), never from the reports, so they cost the same for
ten reports or ten million. For a question whose mechanism has support
probabilities ``p*`` and ``q*``, the estimate of category ``v`` is
``f_v = (C_v / n - q*) / (p* - q*)`` with the standard errors of
:func:`deniable._estimate.pure_variance` for the inference target:
``"population"`` (the default: the respondents are a sample of a
population) or ``"respondents"`` (these respondents only).

Under ``allocation: sample`` each question is estimated from the reports of
the respondents who drew it (:func:`deniable._allocation.sampled_estimate`):
``n`` differs by question and ``n_responses`` is their sum.

The results also state the central guarantee the reports would have if they
were collected through a trusted shuffler (anonymously, in random order):
``shuffled`` gives ``(epsilon, delta)`` of Feldman, McMillan & Talwar's bound
(:func:`deniable.shuffle_epsilon`) for the ``n_responses`` responses, each
from an ``epsilon_total``-LDP randomizer, at ``delta = min(1e-6, n^-1.1)``
(below ``1/n``, the usual requirement, for every ``n``), computed for ``n``
rounded down to two significant digits (computed once; fewer reports give a
larger epsilon and delta, so the statement holds for all of them; while a new
value is computed the service repeats the last one it stated:
:mod:`deniable.server._shuffled`). It is ``None``
where it does not apply: an infinite ``epsilon_total``, or plain questions
(answers sent as given are not randomized). A survey with rounds has it for
each round (a device answers at most once per round), not for all rounds
together: the Feldman-McMillan-Talwar bound is for ``n`` responses of ``n``
different people, and a device's responses in several rounds compose.

A survey with ``rounds`` also gets ``rounds`` (:func:`rounds_json`): every
round's results (each round's aggregates estimated exactly as the whole
survey's are) and how much of ``lifetime_epsilon`` its devices have spent.

>>> estimates = question_estimates(survey, storage.aggregates(survey.id))  # doctest: +SKIP
>>> results_json(survey, estimates)["questions"][0]["estimate"]            # doctest: +SKIP
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import scipy.stats  # noqa: F401 - at server start: the shuffled guarantee needs it (seconds to import when busy)

from deniable._allocation import sampled_estimate
from deniable._detection import shares_change
from deniable._estimate import Estimate, Target
from deniable.server._question_results import DETECTION_ALPHA, View, question_json
from deniable.server._questions import FREQUENCY, SKETCH, PlainQuestion
from deniable.server._refusal_counts import refusals_json
from deniable.server._rounds import END, iso_utc
from deniable.server._sequence_results import add_sequences
from deniable.server._shuffled import SHUFFLE_DELTA, Ahead
from deniable.server._shuffled import bound as shuffled_bound
from deniable.server._surveys import Survey

__all__ = [
    "question_estimates", "results_json", "rounds_json", "round_json", "shuffled_json", "shuffler_json",
    "round_guarantees",
    "defences_json", "with_changes", "with_refusals", "anytime_json", "SHUFFLE_DELTA",
]


def question_estimates(
    survey: Survey, aggregates: Mapping[str, Any], target: Target = "population"
) -> dict[str, Estimate]:
    """The unbiased estimate of every frequency question for ``target``, by question id, from its merged aggregate."""
    frequency = [q for q in survey.questions if q.randomized and q.kind in (FREQUENCY, SKETCH)]
    if survey.allocation == "sample":
        respondents = sum(aggregates[q.id].n for q in survey.questions)
        return {q.id: sampled_estimate(q.mechanism, aggregates[q.id], respondents, target) for q in frequency}
    return {q.id: q.mechanism.estimate_from(aggregates[q.id], target=target) for q in frequency}


def shuffled_json(survey: Survey, n: int, ahead: Ahead | None = None) -> dict[str, Any] | None:
    """The central ``(epsilon, delta)`` of ``n`` shuffled responses, or None where it does not apply.

    ``ahead``: a service's statements (:class:`deniable.server._shuffled.Ahead`), which may
    repeat the bound for fewer responses while the new one is computed.
    """
    epsilon0 = survey.epsilon_total
    if n < 1 or not math.isfinite(epsilon0) or not all(q.randomized for q in survey.questions):
        return None
    # for n rounded down to two significant digits
    epsilon, delta = shuffled_bound(epsilon0, n) if ahead is None else ahead.bound(epsilon0, n)
    return {"n": n, "epsilon_local": epsilon0, "epsilon": epsilon, "delta": delta}


def shuffler_json(survey: Survey, batches: Sequence[int], ahead: Ahead | None = None) -> dict[str, Any] | None:
    """The shuffled batches of a survey collected through a shuffler, and the central guarantee of the smallest.

    None unless the survey's ``transport`` says ``shuffler: true`` (it then takes
    no response but from a shuffled batch). Each batch is shuffled on its own,
    so every response hides among at least the smallest batch's responses of
    the survey: the guarantee stated is :func:`shuffled_json`'s for that number.
    """
    if not survey.policy.transport.shuffler:
        return None
    smallest = min(batches, default=0)
    bound = shuffled_json(survey, smallest, ahead) if smallest else None
    return {"batches": len(batches), "smallest": smallest, "largest": max(batches, default=0),
            "responses": sum(batches), "epsilon": None if bound is None else bound["epsilon"],
            "delta": None if bound is None else bound["delta"]}


def round_guarantees(
    survey: Survey, n_responses: int, batches: Sequence[int] | None, ahead: Ahead | None = None
) -> dict[str, Any]:
    """One round's ``shuffled`` (what shuffling would give its ``n_responses``) and ``shuffler``.

    ``shuffler`` is :func:`shuffler_json` of the batches the round's responses
    came in (``batches``: None for a survey not collected through a shuffler,
    then ``shuffler`` is None): the page states the shuffled guarantee for the
    round only where these batches hold all of its responses.
    """
    shuffler = None if batches is None else shuffler_json(survey, batches, ahead)
    return {"shuffled": shuffled_json(survey, n_responses, ahead), "shuffler": shuffler}


def _questions_json(
    survey: Survey, estimates: Mapping[str, Estimate], level: float, aggregates: Mapping[str, Any] | None,
    target: Target,
) -> list[dict[str, Any]]:
    plain = {q.id: q for q in survey.questions if isinstance(q, PlainQuestion)}
    view = View(level, target, estimates, plain)
    return [question_json(q, None if aggregates is None else aggregates.get(q.id), view) for q in survey.questions]


def _n_responses(survey: Survey, questions: list[dict[str, Any]]) -> int:
    return sum(q["n"] for q in questions) if survey.allocation == "sample" else int(questions[0]["n"])


def rounds_json(
    survey: Survey, per_round: Mapping[int, Mapping[str, Any]], budgets: Mapping[str, Any],
    current_round: int | None, target: Target = "population", level: float = 0.95,
    ahead: Ahead | None = None, refusals: Mapping[int, Mapping[str, int]] | None = None,
    batches: Mapping[int, Sequence[int]] | None = None,
) -> dict[str, Any]:
    """The ``rounds`` part of the results of a survey with rounds.

    ``per_round`` holds each round's aggregates (:meth:`Storage.round_aggregates
    <deniable.server._storage.Storage.round_aggregates>`); every round with
    responses gets ``round``, its ``start`` and ``end`` (ISO-8601 UTC),
    ``n_responses`` and ``questions`` exactly as the whole survey's results
    have them (estimates for ``target`` with standard errors, intervals at
    ``level`` and ``n``) and the ``shuffled`` guarantee of its responses, so a
    round is read like a survey of its own (``ahead``: :func:`shuffled_json`'s,
    so a read does not wait for a round's new value once one was stated), and
    its ``shuffler`` (:func:`round_guarantees`; ``batches``: the sizes of each
    round's shuffled batches, None for a survey not collected through a shuffler).
    ``devices`` is :meth:`Storage.device_budgets
    <deniable.server._storage.Storage.device_budgets>`: how much of
    ``lifetime_epsilon`` the devices have spent, with the memoization cap
    (assumes each device's value did not change and it kept its memoized
    state) and without it (every report counted).
    """
    rounds = survey.rounds
    assert rounds is not None
    out = []
    for index, aggregates in sorted(per_round.items()):
        one = round_json(survey, index, aggregates, target, level)
        kept = None if batches is None else batches.get(index, ())
        out.append({**one, **round_guarantees(survey, one["n_responses"], kept, ahead)})
    out = with_changes(out)
    if refusals is not None:
        out = with_refusals(out, refusals)
    if rounds.anytime:
        add_sequences(survey, dict(sorted(per_round.items())), out, level, rounds.planned_n)
    return {**rounds.to_json(), **anytime_json(survey), "current_round": current_round,
            "devices": dict(budgets), "rounds": out}


def anytime_json(survey: Survey) -> dict[str, Any]:
    """``anytime`` and ``planned_n`` of a survey with rounds (``planned_n`` None without ``anytime``)."""
    rounds = survey.rounds
    assert rounds is not None
    return {"anytime": rounds.anytime, "planned_n": rounds.planned_n if rounds.anytime else None}


def round_json(
    survey: Survey, index: int, aggregates: Mapping[str, Any], target: Target = "population", level: float = 0.95
) -> dict[str, Any]:
    """One round's results as :func:`rounds_json` lists them, but for the ``shuffled`` statement
    (which the service may state more tightly later; a closed round's results never change)."""
    rounds = survey.rounds
    assert rounds is not None and rounds.start is not None
    questions = _questions_json(survey, question_estimates(survey, aggregates, target), level, aggregates, target)
    return {
        "round": index,
        "start": iso_utc(rounds.start + index * rounds.every),
        "end": iso_utc(min(rounds.start + (index + 1) * rounds.every, END - 0.001)),
        "n_responses": _n_responses(survey, questions),
        "questions": questions,
        "sequences": None,  # rounds: {anytime: true}: add_sequences
    }


def with_refusals(rounds: list[dict[str, Any]], refusals: Mapping[int, Mapping[str, int]]) -> list[dict[str, Any]]:
    """The rounds' results, each with its ``refusals`` by kind (:mod:`deniable.server._refusal_counts`). New
    dicts: a closed round's results may be kept by the service's cache."""
    return [{**one, "refusals": refusals_json(refusals, one["round"])} for one in rounds]


def with_changes(rounds: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rounds' results (in order) with each frequency question's ``change_from_previous_round``: the
    change test (:func:`deniable.change_test` at ``DETECTION_ALPHA``) against the last earlier round in
    the list where it has responses (None for the first). New dicts: the rounds given are not changed."""
    previous: dict[str, dict[str, Any]] = {}
    out = []
    for one in rounds:
        questions = []
        for q in one["questions"]:
            if q.get("manipulation") is None:
                questions.append(q)
                continue
            before = previous.get(q["id"])
            change = None if before is None else shares_change(
                tuple(q["categories"]), (before["estimate"], before["std_error"]),
                (q["estimate"], q["std_error"]), DETECTION_ALPHA).to_dict()
            questions.append({**q, "manipulation": {**q["manipulation"], "change_from_previous_round": change}})
            previous[q["id"]] = q
        out.append({**one, "questions": questions})
    return out


def results_json(
    survey: Survey, estimates: Mapping[str, Estimate], level: float = 0.95,
    aggregates: Mapping[str, Any] | None = None, ahead: Ahead | None = None,
    target: Target | None = None, batches: Sequence[int] = (),
    refusals: Mapping[int, Mapping[str, int]] | None = None,
) -> dict[str, Any]:
    """The results as ``GET /surveys/{id}/results`` answers them.

    Per question: the inference ``target`` of the estimates, the unbiased
    estimate, standard errors (``std_error``), normal intervals at ``level``
    (``ci_low``, ``ci_high``), the observed support shares ``C_v / n``, the Norm-Sub
    projection onto the simplex, and the ``support_counts`` aggregate
    (:meth:`deniable.SupportCounts.to_json`: fingerprint, n, counts) to
    recompute any of them exactly. Values undefined without reports are ``None``.
    The other questions (design, number, free-text and plain questions, from
    their merged ``aggregates``; number questions' means for ``target``:
    default the estimates' target, else the population) are answered as
    :mod:`deniable.server._question_results` says for their kind.
    ``ahead``: :func:`shuffled_json`'s. ``batches``: the sizes of the survey's
    shuffled batches (:func:`shuffler_json`). ``refusals``: the refused
    responses per round and kind (:meth:`RefusalCounts.counts
    <deniable.server._refusal_counts.RefusalCounts.counts>`), summed in ``defences``.
    """
    chosen: Target = target if target is not None else next((e.target for e in estimates.values()), "population")
    questions = _questions_json(survey, estimates, level, aggregates, chosen)
    n_responses = _n_responses(survey, questions)
    return {
        "id": survey.id,
        "title": survey.title,
        "allocation": survey.allocation,
        "n_responses": n_responses,
        # per round only for a survey with rounds (one response per device per round)
        "shuffled": None if survey.rounds is not None else shuffled_json(survey, n_responses, ahead),
        "shuffler": shuffler_json(survey, batches, ahead),
        # design questions' prevalence is always for the population (RRuni's sampling model)
        "target": chosen,
        "level": level,
        "questions": questions,
        "rounds": None,  # a survey with rounds: rounds_json (its own queries), set by the app
        "by": None,  # ?by=QUESTION: the results by slice (server._sliced_results), set by the app
        "defences": defences_json(survey, n_responses, refusals),
    }


def defences_json(
    survey: Survey, n_responses: int, refusals: Mapping[int, Mapping[str, int]] | None = None
) -> dict[str, Any]:
    """What bounds the number of fake responses, beside what they could do (each question's ``manipulation``).

    The survey's flood defences (:mod:`deniable.server._policy`): ``invite_only``,
    the per-address ``rate_limit`` (None: off; not applied to invite-only
    surveys), the ``max_responses`` cap and the responses stored against it,
    and ``refusals``: the responses the service refused, by kind, over every
    round (:mod:`deniable.server._refusal_counts`; None where not given).
    """
    limit = survey.policy.rate_limit
    return {
        "invite_only": survey.invite_only,
        "rate_limit": None if limit is None or survey.invite_only else limit.to_json(),
        "max_responses": survey.policy.max_responses,
        "n_responses": n_responses,
        "detection_alpha": DETECTION_ALPHA,
        "refusals": None if refusals is None else refusals_json(refusals),
    }
