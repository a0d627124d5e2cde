"""Choose-several questions (``type: multiple``): a set of options, randomized by padding and sampling.

A survey's ``multiple`` question lists its ``options`` and lets a respondent
choose up to ``max_choices`` of them (none is an answer too); the device
randomizes the chosen set with :class:`deniable.SetValued`::

    - id: apps
      text: Which of these apps did you use this week?
      type: multiple
      options: [mail, maps, chat, games, news]
      max_choices: 3
      epsilon: 1.0
      ell: 2          # optional: pad and sample to ell entries (default max_choices: unbiased)
      oracle: auto    # optional: grr, oue or olh over the options and the ell dummies (auto: lowest variance)

**Padding and sampling** (Wang et al., S&P 2018): the set is padded with
dummy entries to ``max(|set|, ell)`` entries, one entry is drawn uniformly
(an exact uniform integer), and the frequency oracle over the ``k + ell``
options and dummies reports it. ``epsilon`` is the privacy loss of the whole
report: the oracle runs at the largest budget that keeps it (GRR at
``ln(ell (e^epsilon - 1) + 1)``, the amplification of sampling), and the
question's epsilon (what the page shows and the survey's budget counts) is
the report's exact loss, :attr:`deniable.SetValued.epsilon`. A device answers
with the list of its choices (``["mail", "chat"]``); the report is the
oracle's.

The stored form keeps the options, ``max_choices`` and the exact
:class:`~deniable.SetValued` configuration; one stored before the oracle ran
at the amplified budget (its configuration claims the oracle's epsilon) loads
and counts its true, amplified epsilon.

**Results** (:func:`items_json`): each option's share of respondents who
chose it, ``f^_x = ell pi^_x``, unbiased when no set is longer than ``ell``
(always so with the default ``ell = max_choices``), with its standard error
and normal interval at the results' level; the shares need not add up to 1.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from deniable._results import jsonable
from deniable.mechanisms._set_valued import SET_ORACLES, SetValued
from deniable.server._errors import SurveyError
from deniable.server._questions import Question
from deniable.wire import from_config

__all__ = ["MULTIPLE", "MAX_OPTIONS", "load_multiple_question", "items_json", "distinct_values", "count_field",
           "stored_mechanism", "required_epsilon"]

MULTIPLE = "multiple"
MAX_OPTIONS = 1000
"""The most options a choose-several question may list."""
_KEYS = frozenset({"id", "text", "type", "options", "max_choices", "epsilon", "ell", "oracle", "mechanism",
                   "randomized"})
_STORED_KEYS = frozenset({"id", "text", "type", "options", "max_choices", "mechanism"})


def distinct_values(value: Any, where: str, name: str = "options") -> list[Any]:
    """A question's 2 to :data:`MAX_OPTIONS` distinct strings or integers (its ``options``, a key-value
    question's ``keys``); :class:`SurveyError` names the field."""
    if not isinstance(value, list) or not 2 <= len(value) <= MAX_OPTIONS:
        raise SurveyError(f"{where}{name}", f"must list 2 to {MAX_OPTIONS} {name}; got {value!r:.60}")
    for i, option in enumerate(value):
        if isinstance(option, bool) or not isinstance(option, (str, int)):
            raise SurveyError(f"{where}{name}[{i}]", f"must be a string or an integer; got {option!r:.60}")
    if len({type(v) for v in value}) != 1:
        raise SurveyError(f"{where}{name}", f"must be all strings or all integers; got {value!r:.200}")
    if len(set(value)) != len(value):
        raise SurveyError(f"{where}{name}", f"has duplicates: {value!r:.200}")
    return list(value)


def count_field(data: Mapping[str, Any], key: str, where: str, most: int) -> int:
    """The integer ``data[key]`` in ``1..most``; :class:`SurveyError` names the field."""
    value = data.get(key)
    if type(value) is not int or not 1 <= value <= most:
        raise SurveyError(f"{where}{key}", f"must be an integer from 1 to {most}; got {value!r:.60}")
    return value


def stored_mechanism(data: Mapping[str, Any], where: str) -> Any:
    """The mechanism of a question's stored form, ``from_config(data["mechanism"])``; :class:`SurveyError`
    names the field."""
    try:
        return from_config(dict(data["mechanism"]))
    except (ValueError, TypeError) as exc:
        raise SurveyError(f"{where}mechanism", str(exc)) from None


def required_epsilon(data: Mapping[str, Any], where: str) -> float:
    """A question definition's ``epsilon`` (a number; its range is the mechanism's to check)."""
    epsilon = data.get("epsilon")
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)):
        raise SurveyError(f"{where}epsilon", f"is required: a number > 0; got {epsilon!r:.60}")
    return float(epsilon)


def load_multiple_question(data: Mapping[str, Any], qid: str, text: str, where: str) -> Question:
    """A choose-several question from its definition or its stored form (``where``: the path prefix)."""
    if data.get("randomized", True) is not True:
        raise SurveyError(f"{where}randomized", "a multiple question is always randomized")
    stored = isinstance(data.get("mechanism"), Mapping)
    allowed = _STORED_KEYS if stored else _KEYS - {"mechanism"}
    extra = sorted(set(data) - allowed)
    if extra:
        raise SurveyError(f"{where}{extra[0]}", f"is not a field of a multiple question (allowed: {sorted(allowed)})")
    options = distinct_values(data.get("options"), where)
    max_choices = count_field(data, "max_choices", where, len(options))
    if stored:
        m = stored_mechanism(data, where)
        if not isinstance(m, SetValued) or list(m.domain) != options or m.max_items != max_choices:
            raise SurveyError(f"{where}mechanism", "must be the exact set-valued configuration of the options "
                              "and max_choices")
        return Question(qid, text, MULTIPLE, m)
    epsilon = required_epsilon(data, where)
    ell = count_field(data, "ell", where, max_choices) if "ell" in data else max_choices
    oracle = data.get("oracle", "auto")
    if oracle not in ("auto", *SET_ORACLES):
        raise SurveyError(f"{where}oracle", f"must be one of {['auto', *SET_ORACLES]}; got {oracle!r:.60}")
    try:
        m = SetValued(options, epsilon=epsilon, max_items=max_choices, ell=ell, oracle=oracle)
    except (ValueError, TypeError) as exc:
        raise SurveyError(f"{where}epsilon", str(exc)) from None
    return Question(qid, text, MULTIPLE, m)


def items_json(q: Question, aggregate: Any, view: Any) -> dict[str, Any]:
    """A choose-several question's results: each option's share of respondents with its interval."""
    m: SetValued = q.randomizer
    n = 0 if aggregate is None else aggregate.n
    out: dict[str, Any] = {
        "id": q.id, "text": q.text, "type": MULTIPLE, "kind": "items", "mechanism": m.mechanism.name,
        "epsilon": q.epsilon, "n": n, "target": "population", "level": view.level, "options": list(m.domain),
        "max_choices": m.max_items, "ell": m.ell,
    }
    if not n:
        return {**out, **dict.fromkeys(("estimate", "std_error", "ci_low", "ci_high"))}
    est = m.estimate_from(aggregate)
    low, high = est.confidence_interval(view.level)
    return jsonable({**out, "estimate": est.frequencies, "std_error": est.std_errors, "ci_low": low,
                     "ci_high": high})
