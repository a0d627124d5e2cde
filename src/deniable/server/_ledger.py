"""The rules of rounds and budgets: may a device answer now, and what has it spent.

Pure (no I/O): :mod:`deniable.server._devices` reads the accounts of a
request's devices, a :class:`Ledger` charges each response to its device and
refuses what the rules refuse, and the storage writes the accounts back in
the same transaction (a refusal rolls the whole request back).

The rules (:mod:`deniable.server._rounds`): a response counts in the round
of the server's clock, and none is taken before ``rounds.start``; a device
answers at most once per round (a second response, or one after a response
in a later round, is a :class:`~deniable.server._errors.Conflict`); and a
device's spent epsilon (:func:`deniable._accounting.spent`: per question a
report costs its epsilon, a memoizing mechanism at most its lifetime bound)
stays within the survey's ``lifetime_epsilon`` (beyond it,
:class:`~deniable.server._errors.Forbidden`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from deniable._accounting import TOLERANCE, spent, spent_fresh
from deniable.server._errors import Conflict, Forbidden
from deniable.server._rounds import MAX_ROUND, iso_utc
from deniable.server._surveys import Survey

__all__ = ["Account", "Ledger", "current_round", "questions_answered"]


@dataclass(frozen=True)
class Account:
    """What the server keeps of one device of a survey with rounds (never its key, never a report).

    ``reports`` is the device's number of reports per question id as
    canonical JSON text (``{"q1": 2}``: compact, keys sorted), the form it is
    stored in; ``spent`` its spent epsilon with the memoization cap (what is
    enforced) and ``spent_fresh`` without it (every report counted).
    """

    last_round: int = -1
    reports: str = "{}"
    spent: float = 0.0
    spent_fresh: float = 0.0


def current_round(survey: Survey, now: float) -> int:
    """The round a response to ``survey`` at ``now`` counts in; :class:`Conflict` before ``rounds.start``."""
    rounds = survey.rounds
    assert rounds is not None
    current = rounds.round_at(now)
    if current < 0:
        raise Conflict(
            "id", f"survey {survey.id!r} runs in rounds from {iso_utc(rounds.start or 0)} (rounds.start); "
            "it accepts responses from then on"
        )
    if current > MAX_ROUND:
        raise Conflict(
            "rounds", f"survey {survey.id!r} has run all its {MAX_ROUND + 1} rounds (rounds.every: {rounds.every} s "
            f"from {iso_utc(rounds.start or 0)}); it accepts no more responses"
        )
    return current


def questions_answered(
    question_ids: Sequence[str], answered: Mapping[str, Sequence[int]] | None, responses: Iterable[int]
) -> dict[int, list[str]]:
    """The questions each of ``responses`` answered: every question, or under ``allocation: sample``
    the one it drew (``answered``: the responses answering each question)."""
    if answered is None:
        return {i: list(question_ids) for i in responses}
    out: dict[int, list[str]] = {i: [] for i in responses}
    for qid, mine in answered.items():
        for i in mine:
            if i in out:
                out[i].append(qid)
    return out


class Ledger:
    """The accounts of one request's devices in round ``current`` of ``survey``.

    ``accounts`` holds the stored account of each device that has one;
    :meth:`charge` each response in request order, then :attr:`accounts`
    holds every charged device's new account.
    """

    def __init__(self, survey: Survey, current: int, accounts: Mapping[str, Account]) -> None:
        assert survey.rounds is not None
        self.survey = survey
        self.current = current
        self.accounts: dict[str, Account] = dict(accounts)
        self._lifetime = survey.rounds.lifetime_epsilon
        rounds = survey.rounds
        self._next = iso_utc((rounds.start or 0) + (current + 1) * rounds.every)
        self._encode = json.JSONEncoder(sort_keys=True, separators=(",", ":")).encode
        # devices share few distinct (reports so far, questions answered): compute each step once
        self._steps: dict[tuple[str, tuple[str, ...]], tuple[str, float, float]] = {}

    def _step(self, reports: str, questions: tuple[str, ...]) -> tuple[str, float, float]:
        """The reports text and spent epsilons after answering ``questions`` with ``reports`` so far."""
        key = (reports, questions)
        step = self._steps.get(key)
        if step is None:
            counts: dict[str, int] = json.loads(reports)
            for qid in questions:
                counts[qid] = counts.get(qid, 0) + 1
            costs = self.survey.costs
            step = self._steps[key] = (self._encode(counts), spent(costs, counts), spent_fresh(costs, counts))
        return step

    def charge(self, device: str, questions: Sequence[str], where: str) -> None:
        """Charge one response of ``device`` (a key's hash) answering ``questions``.

        Raises :class:`Conflict` if the device already answered this round
        or a later one, :class:`Forbidden` if the response would take it over
        ``lifetime_epsilon``; ``where`` is the response's path prefix.
        """
        before = self.accounts.get(device, Account())
        if before.last_round >= self.current:
            raise Conflict(
                f"{where}device",
                f"this device already answered round {before.last_round} of survey {self.survey.id!r}; a device "
                f"answers once per round (this is round {self.current}, the next starts at {self._next})",
            )
        reports, after, after_fresh = self._step(before.reports, tuple(questions))
        if after > self._lifetime * (1 + TOLERANCE):
            raise Forbidden(
                f"{where}device",
                f"this report would take the device over the lifetime budget of survey {self.survey.id!r}: "
                f"lifetime_epsilon is {self._lifetime:.6g} and this device has spent {before.spent:.6g}; this "
                f"round's report would cost {after - before.spent:.6g} more ({after:.6g} in all)",
            )
        self.accounts[device] = Account(self.current, reports, after, after_fresh)
