"""Number questions: a numeric answer in a range, randomized by a numeric or a range mechanism.

A question of ``type: number`` asks for a number in ``[low, high]`` and
collects it with a numeric or range mechanism the browser client implements
(the registry's numeric and range entries marked ``browser``: 1BitMean for a
mean; ``hierarchical`` and ``haar`` for ranges, the CDF and quantiles)::

    - id: minutes
      text: How many minutes did you spend on the app today?
      type: number
      low: 0
      high: 600
      units: minutes          # optional, shown beside the answer and in the results
      mechanism: one-bit-mean
      epsilon: 1.0
      gamma: 0.1              # optional: output perturbation (1BitMean)

    - id: latency
      text: How long did the page take to load?
      type: number
      low: 0
      high: 2000
      units: ms
      mechanism: hierarchical # or haar
      epsilon: 1.0
      bins: 256               # equal bins of [low, high]: a power of branching (haar: of 2); default 1024
      branching: 4            # hierarchical only; default 4

A range mechanism (:class:`~deniable.HierarchicalHistogram` with level
sampling and constrained inference, :class:`~deniable.HaarHRR`) puts the
answer in its bin exactly as Python does and reports one level's node (or
Haar coefficient); its results are the CDF with its pointwise band and
quantiles with intervals inverted from it
(:mod:`deniable.server._range_results`).

Each device randomizes its answer with the question's exact mechanism
configuration (``m.to_config()``, which the question stores) and sends one
report in the mechanism's JSON form (1BitMean: ``0.0`` or ``1.0``). A
memoizing mechanism (1BitMean) answers through the device's kept client
(the survey page's IndexedDB state, :class:`deniable.client.Client` with
``state=``), so the same answer reported again reveals at most its lifetime
bound (:mod:`deniable._accounting`). The question's epsilon in the budget is
one report's (``m.epsilon``; with ``gamma`` below the memoized bits'
``epsilon_perm``).

**Aggregate.** The mechanism's mergeable :class:`~deniable._aggregates.MeanStat`
(``n``, sum and sum of squares of the standardized reports) for a mean, its
:class:`~deniable.SupportCounts` per level for a range mechanism, stored and
merged like every other question's aggregate.

**Results** (:mod:`deniable.server._question_results`).
:meth:`NumericMechanism.estimate_from <deniable.mechanisms._numeric.base.NumericMechanism.estimate_from>` on the
merged aggregate: the unbiased mean of the answers (clamped to the range),
its standard error for the inference target, and the normal interval
``mean ± z std_error`` at the results' level; undefined (``None``) with fewer
than two reports.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from deniable.errors import ConfigError
from deniable.mechanisms import registry
from deniable.server._errors import SurveyError
from deniable.server._questions import Question
from deniable.wire import from_config

__all__ = ["NUMBER", "load_number_question", "number_mechanisms", "MAX_UNITS_LENGTH", "answer_range", "units_of"]

NUMBER = "number"
MAX_UNITS_LENGTH = 40
"""Longest ``units`` text of a number question."""

_DEFINITION_KEYS = frozenset({"id", "text", "type", "low", "high", "units", "mechanism", "randomized"})
_STORED_KEYS = frozenset({"id", "text", "type", "units", "mechanism"})


def number_mechanisms() -> dict[str, registry.Recipe]:
    """The recipes a number question may name: numeric and range mechanisms the browser client implements."""
    found = {**registry.recipes("numeric"), **registry.recipes("range")}
    return {name: r for name, r in found.items() if registry.entry(r.wire_id).browser}


# -------------------------------------------------------------------- loading
def _number(data: Mapping[str, Any], key: str, where: str, what: str, owner: str = "a number question") -> float:
    if key not in data:
        raise SurveyError(f"{where}{key}", f"is required by {owner} ({what})")
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise SurveyError(f"{where}{key}", f"must be a finite number ({what}); got {value!r:.60}")
    return float(value)


def answer_range(data: Mapping[str, Any], where: str, owner: str = "a number question") -> tuple[float, float]:
    """The finite ``low < high`` of a question's answers; :class:`SurveyError` names the field."""
    low = _number(data, "low", where, "the smallest answer", owner)
    high = _number(data, "high", where, "the largest answer", owner)
    if not low < high:
        raise SurveyError(f"{where}high", f"must be above low ({low:g}); got {high:g}")
    return low, high


def units_of(data: Mapping[str, Any], where: str) -> str | None:
    """A question's optional ``units`` text, stripped; :class:`SurveyError` names the field."""
    units = data.get("units")
    if units is None:
        return None
    if not isinstance(units, str) or not 1 <= len(units.strip()) <= MAX_UNITS_LENGTH:
        raise SurveyError(
            f"{where}units", f"must be a text of 1 to {MAX_UNITS_LENGTH} characters (e.g. 'minutes'); got {units!r:.60}"
        )
    return units.strip()


def _stored(data: Mapping[str, Any], qid: str, text: str, where: str) -> Question:
    extra = sorted(set(data) - _STORED_KEYS)
    if extra:
        raise SurveyError(f"{where}{extra[0]}", "is not a field of a number question with a mechanism config")
    try:
        mechanism = from_config(data["mechanism"])
    except (ConfigError, ValueError, TypeError) as exc:
        raise SurveyError(f"{where}mechanism", str(exc)) from None
    if type(mechanism).wire_id not in {r.wire_id for r in number_mechanisms().values()}:
        raise SurveyError(
            f"{where}mechanism.mechanism",
            f"a number question's mechanism is one of {sorted(number_mechanisms())}; got {type(mechanism).wire_id!r}",
        )
    return Question(qid, text, NUMBER, mechanism, units=units_of(data, where))


def load_number_question(data: Mapping[str, Any], qid: str, text: str, where: str) -> Question:
    """A number question from its definition or its stored form (``where``: the path prefix)."""
    if data.get("randomized", True) is not True:
        raise SurveyError(f"{where}randomized", "a number question is always randomized")
    if isinstance(data.get("mechanism"), dict):
        return _stored(data, qid, text, where)
    recipes = number_mechanisms()
    name = data.get("mechanism")
    if name not in recipes:
        raise SurveyError(
            f"{where}mechanism", f"a number question needs a mechanism, one of {sorted(recipes)}; got {name!r:.60}"
        )
    recipe = recipes[name]
    params = {k: v for k, v in data.items() if k not in _DEFINITION_KEYS}
    for key in sorted(params):
        if key not in recipe.allowed:
            raise SurveyError(
                f"{where}{key}", f"is not a field of a number question with mechanism {name} "
                f"(allowed: {sorted(_DEFINITION_KEYS | recipe.allowed)})"
            )
        value = params[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise SurveyError(f"{where}{key}", f"must be a number; got {value!r:.60}")
    for key in sorted(recipe.required - set(params)):
        raise SurveyError(f"{where}{key}", f"is required by mechanism {name}")
    low, high = answer_range(data, where)
    units = units_of(data, where)
    try:
        mechanism = recipe.build((low, high), params)
    except (ValueError, TypeError) as exc:
        message = str(exc)
        named = sorted(params, key=lambda k: (not message.startswith(k), -len(k)))  # the one it starts with
        field = next((k for k in named if k in message), "mechanism")
        raise SurveyError(f"{where}{field}", f"{name}: {message}") from None
    return Question(qid, text, NUMBER, mechanism, units=units)
