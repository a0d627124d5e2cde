"""A list experiment in a survey (``type: list-experiment``): the item count technique.

A list question shows each respondent ``J`` control items, and to a random
half (the treatment group) the sensitive item too, and asks only *how many*
of them apply (Blair & Imai 2012; :class:`deniable.survey.ListExperiment`)::

    - id: anger
      text: How many of these things make you angry?
      type: list-experiment
      items:
        - the federal government increasing the tax on gasoline
        - professional athletes getting million-dollar contracts
        - large corporations polluting the environment
      sensitive: a black family moving next door to you
      allow_infinite_epsilon: true

The device (the survey page or :mod:`deniable.client`) draws the list from
the OS CSPRNG and sends ``{"treat": 0 | 1, "count": k}`` with ``k`` at most
``J + treat``. Nothing is randomized beyond the assignment: a respondent of
the treatment group who answers 0 (the floor) has said "no" to the sensitive
item and one who answers ``J + 1`` (the ceiling) "yes", so the local-DP
epsilon of a list question is **infinite**, and a survey states that it
accepts this with ``allow_infinite_epsilon: true`` (as for the survey
designs that reveal the truth). The results give the difference in means
(the estimated share holding the sensitive item) with its standard error
and interval, the respondents in each list, and how many answered at the
floor or the ceiling of the longer list.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from deniable.server._errors import SurveyError
from deniable.server._questions import LIST, ListQuestion, Tally
from deniable.survey._list import list_difference_from_counts

__all__ = ["LIST", "ListQuestion", "load_list_question", "list_json", "MAX_ITEMS"]

MAX_ITEMS = 20
"""The most control items a list may have."""
_KEYS = frozenset({"id", "text", "type", "items", "sensitive", "allow_infinite_epsilon", "randomized"})


def load_list_question(data: Mapping[str, Any], qid: str, text: str, where: str) -> ListQuestion:
    """A ``type: list-experiment`` question; SurveyError naming the field."""
    extra = sorted(set(data) - _KEYS)
    if extra:
        allowed = sorted(_KEYS - {"randomized"})
        raise SurveyError(f"{where}{extra[0]}", f"is not a field of a list experiment ({allowed})")
    if data.get("randomized", False) is not False:
        raise SurveyError(f"{where}randomized", "a list experiment is answered as given (randomized: false); "
                          "its lists, not a randomizer, hide the answer")
    items = data.get("items")
    if not isinstance(items, list) or not 1 <= len(items) <= MAX_ITEMS or not all(
            isinstance(item, str) and item.strip() for item in items):
        raise SurveyError(f"{where}items", f"must be a list of 1 to {MAX_ITEMS} control items (texts); "
                          f"got {items!r:.80}")
    if len(set(items)) != len(items):
        raise SurveyError(f"{where}items", "repeats an item")
    sensitive = data.get("sensitive")
    if not isinstance(sensitive, str) or not sensitive.strip():
        raise SurveyError(f"{where}sensitive", f"must be the text of the sensitive item; got {sensitive!r:.60}")
    if sensitive in items:
        raise SurveyError(f"{where}sensitive", "is also one of the control items")
    if data.get("allow_infinite_epsilon") is not True:
        raise SurveyError(
            f"{where}allow_infinite_epsilon",
            "must be true: a list experiment's epsilon is infinite (a respondent of the longer list who "
            f"answers 0 or {len(items) + 1} reveals the sensitive answer); set it to accept this knowingly",
        )
    return ListQuestion(qid, text, tuple(items), sensitive)


def list_json(q: ListQuestion, tally: Tally, view: Any) -> dict[str, Any]:
    """The difference in means of the two lists (``deniable.survey.list_difference``), its standard error
    and interval at ``view.level``; ``None`` each with fewer than 2 respondents in a list."""
    counts = tally.arrays["counts"]
    n0, n1 = (int(counts[t].sum()) for t in (0, 1))
    out: dict[str, Any] = {
        "id": q.id, "text": q.text, "type": LIST, "kind": LIST, "randomized": False, "epsilon": None,
        "reveals_truth": True, "items": list(q.items), "sensitive": q.sensitive, "J": q.J,
        "n": n0 + n1, "n_control": n0, "n_treatment": n1,
        "floor": int(counts[1, 0]), "ceiling": int(counts[1, q.J + 1]),
        "counts": {"control": counts[0, : q.J + 1].tolist(), "treatment": counts[1].tolist()},
        "estimate": None, "std_error": None, "ci_low": None, "ci_high": None, "level": view.level,
    }
    if n0 < 2 or n1 < 2:
        return out
    fit = list_difference_from_counts(counts)
    low, high = fit.confidence_interval(view.level)
    out.update(estimate=fit.estimate, std_error=fit.std_error, ci_low=low, ci_high=high)
    return out
