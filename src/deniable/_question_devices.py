"""Each survey question's device on the respondent's side (:mod:`deniable.client`): what turns an answer into
the report that is sent.

A plain question's answer is sent as given (:class:`PlainDevice`); a free-text question's is randomized by
its exact :class:`~deniable.HeavyHitters` configuration (:class:`FreeTextDevice`); a key-value question's
values are mapped from the question's ``[low, high]`` onto ``[-1, 1]`` (as the survey page does) and the pairs
randomized by its exact :class:`~deniable.PCKV` configuration (:class:`KeyValueDevice`); a list experiment's
device draws the list (:class:`~deniable.survey.ListExperiment`); every other question, survey designs
included, is its randomizer, ``from_config(question["mechanism"])``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from deniable import _randomness as randomness
from deniable.heavy import HeavyHitters
from deniable.mechanisms._contract import Mechanism
from deniable.survey._designs import design
from deniable.survey._list import ListExperiment
from deniable.wire import from_config

__all__ = ["Device", "PlainDevice", "FreeTextDevice", "KeyValueDevice", "question_device"]


class PlainDevice:
    """A plain question (``randomized: false``): the answer is sent as given."""

    def __init__(self, question: Mapping[str, Any]) -> None:
        pass

    def reports(self, values: Sequence[Any], source: randomness.Source) -> list[Any]:
        return list(values)


class FreeTextDevice:
    """A free-text question: the answer randomized by heavy-hitter discovery (its exact config)."""

    def __init__(self, question: Mapping[str, Any]) -> None:
        self.hitters = HeavyHitters.from_config(question["discovery"])

    def reports(self, values: Sequence[Any], source: randomness.Source) -> list[Any]:
        return self.hitters.reports_to_json(self.hitters.privatize_many(values, rng=source))


class KeyValueDevice:
    """A key-value question: each value in ``[low, high]`` mapped onto ``[-1, 1]`` (as the survey page does),
    then the pairs randomized by the question's exact :class:`~deniable.PCKV` configuration."""

    def __init__(self, question: Mapping[str, Any]) -> None:
        self.mechanism = from_config(question["mechanism"])
        self.low, self.high = float(question["low"]), float(question["high"])

    def _unit(self, key: Any, x: Any) -> float:
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not self.low <= x <= self.high:
            raise ValueError(f"the value of key {key!r} must be a number in [{self.low:g}, {self.high:g}]; "
                             f"got {x!r:.60}")
        return min(1.0, max(-1.0, 2 * (x - self.low) / (self.high - self.low) - 1))

    def reports(self, values: Sequence[Any], source: randomness.Source) -> list[Any]:
        users = []
        for value in values:
            pairs = value.items() if isinstance(value, Mapping) else value
            if isinstance(pairs, (str, bytes)) or not hasattr(pairs, "__iter__"):
                raise ValueError(f"a keyvalue answer is a dict {{key: value}}; got {value!r:.60}")
            users.append([(k, self._unit(k, x)) for k, x in pairs])
        m = self.mechanism
        return list(m.reports_to_json(m.privatize_many(users, rng=source)))


Device = Mechanism | PlainDevice | FreeTextDevice | ListExperiment | KeyValueDevice


BY_TYPE: dict[str, Callable[[Mapping[str, Any]], Device]] = {
    # the device draws the list; answers {control, sensitive}
    "list-experiment": lambda question: ListExperiment(len(question["items"])),
    # values in the question's range, onto PCKV's [-1, 1]
    "keyvalue": KeyValueDevice,
}
"""The question types whose device is not their mechanism's: ``{type: device of a question}``."""


def question_device(question: Mapping[str, Any]) -> Device:
    """A question's device: its type's (:data:`BY_TYPE`), a plain question's, a free-text
    question's discovery, or (every other question, survey designs included) the question's
    randomizer, ``from_config(question["mechanism"])``."""
    typed = BY_TYPE.get(question.get("type", ""))
    if typed is not None:
        return typed(question)
    if question.get("randomized") is False:
        return PlainDevice(question)
    if question.get("discovery"):
        return FreeTextDevice(question)
    if "mechanism" not in question and question.get("design"):  # a server older than rr-design configs
        spec = question["design"]
        return design(spec["model"], spec["p"])
    return from_config(question["mechanism"])
