"""Key-value questions (``type: keyvalue``): a value for each declared key a respondent has, by PCKV.

"For each site you visited, how long did it take?": a respondent holds some
of the declared ``keys`` (at most ``max_pairs`` of them), each with a value
in ``[low, high]``; the device randomizes the pairs with
:class:`deniable.PCKV` (Gu et al., USENIX Security 2020)::

    - id: load-time
      text: For each site you visited today, how long did its first page take to load?
      type: keyvalue
      keys: [mail, maps, news, video]
      low: 0
      high: 10
      units: seconds   # optional, shown beside the boxes and in the results
      max_pairs: 2     # the most keys one respondent may give values for
      epsilon: 2.0
      mechanism: auto  # optional: ue or grr (PCKV-UE, PCKV-GRR); auto: the lower variance of a share
      ell: 2           # optional: pad and sample to ell pairs (default max_pairs: unbiased)

**On the device** each value ``x`` becomes ``v = 2 (x - low) / (high - low) - 1``
in ``[-1, 1]`` (the same floating-point operations in Python and the page),
then PCKV pads the pairs with dummies to ``ell``, samples one, discretizes
its value to ``+1`` with probability ``(1 + v) / 2`` and perturbs key and
value together at ``epsilon`` (the paper's budget split; the realised epsilon
is computed from the integer probabilities, never below the truth). Only the
report is sent; none is an answer too. ``mechanism: auto`` takes the variant
whose share estimate of a key nobody holds has the smaller variance
(:meth:`PCKV.variance <deniable.PCKV.variance>`): GRR for few keys, UE for many, as the paper finds.

The stored form keeps the keys, the range, ``max_pairs`` and the exact PCKV
configuration.

**Results** (:func:`keyvalue_json`): for each key, the share of respondents
holding it, ``f^_k`` (unbiased when no respondent holds more than ``ell``
keys), and the mean of their values, ``low + (m^_k + 1) (high - low) / 2``
from PCKV's mean ``m^_k`` on ``[-1, 1]``, each with its standard error (the
mean's by the delta method) and normal interval at the results' level (the
mean's clipped to the range).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from deniable._results import jsonable
from deniable.mechanisms._key_value import PCKV, VARIANTS
from deniable.mechanisms._key_value_estimate import COLUMNS, columns_on_range
from deniable.server._errors import SurveyError
from deniable.server._numeric_questions import answer_range, units_of
from deniable.server._questions import KEYVALUE, Question
from deniable.server._set_questions import count_field, distinct_values, required_epsilon, stored_mechanism

__all__ = ["KEYVALUE", "load_keyvalue_question", "keyvalue_json", "auto_variant"]

_KEYS = frozenset({"id", "text", "type", "keys", "low", "high", "units", "max_pairs", "epsilon", "ell", "mechanism",
                   "randomized"})
_STORED_KEYS = frozenset({"id", "text", "type", "keys", "low", "high", "units", "max_pairs", "mechanism"})
_OWNER = "a keyvalue question"


def auto_variant(keys: list[Any], epsilon: float, max_pairs: int, ell: int) -> PCKV:
    """The PCKV variant whose share estimate of a key nobody holds has the smaller variance."""
    zero = np.zeros(len(keys))
    built = [PCKV(keys, epsilon=epsilon, max_pairs=max_pairs, ell=ell, variant=v) for v in VARIANTS]
    return min(built, key=lambda m: float(m.variance(1, zero, zero)["frequency"][0]))


def load_keyvalue_question(data: Mapping[str, Any], qid: str, text: str, where: str) -> Question:
    """A key-value question from its definition or its stored form (``where``: the path prefix)."""
    if data.get("randomized", True) is not True:
        raise SurveyError(f"{where}randomized", "a keyvalue question is always randomized")
    stored = isinstance(data.get("mechanism"), Mapping)
    allowed = _STORED_KEYS if stored else _KEYS
    extra = sorted(set(data) - allowed)
    if extra:
        raise SurveyError(f"{where}{extra[0]}", f"is not a field of a keyvalue question (allowed: {sorted(allowed)})")
    keys = distinct_values(data.get("keys"), where, "keys")
    low, high = answer_range(data, where, _OWNER)
    units = units_of(data, where)
    max_pairs = count_field(data, "max_pairs", where, len(keys))
    if stored:
        m = stored_mechanism(data, where)
        if not isinstance(m, PCKV) or list(m.keys) != keys or m.max_pairs != max_pairs:
            raise SurveyError(f"{where}mechanism", "must be the exact PCKV configuration of the keys and max_pairs")
        return Question(qid, text, KEYVALUE, m, units=units, bounds=(low, high))
    epsilon = required_epsilon(data, where)
    ell = count_field(data, "ell", where, max_pairs) if "ell" in data else max_pairs
    variant = data.get("mechanism", "auto")
    if variant not in ("auto", *VARIANTS):
        raise SurveyError(f"{where}mechanism", f"must be one of {['auto', *VARIANTS]}; got {variant!r:.60}")
    try:
        if variant == "auto":
            m = auto_variant(keys, epsilon, max_pairs, ell)
        else:
            m = PCKV(keys, epsilon=epsilon, max_pairs=max_pairs, ell=ell, variant=variant)
    except (ValueError, TypeError) as exc:
        raise SurveyError(f"{where}epsilon", str(exc)) from None
    return Question(qid, text, KEYVALUE, m, units=units, bounds=(low, high))


def keyvalue_json(q: Question, aggregate: Any, view: Any) -> dict[str, Any]:
    """A key-value question's results: each key's share of respondents and the mean of its values."""
    m: PCKV = q.randomizer
    low, high = q.value_range
    n = 0 if aggregate is None else aggregate.n
    out: dict[str, Any] = {
        "id": q.id, "text": q.text, "type": KEYVALUE, "kind": KEYVALUE, "mechanism": m.name, "epsilon": q.epsilon,
        "n": n, "target": "population", "level": view.level, "keys": list(m.keys), "low": low, "high": high,
        "max_pairs": m.max_pairs, "ell": m.ell, **({} if q.units is None else {"units": q.units}),
    }
    if not n:
        return {**out, **dict.fromkeys(COLUMNS)}
    return jsonable({**out, **columns_on_range(m.estimate_from(aggregate), view.level, low, high)})
