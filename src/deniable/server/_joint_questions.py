"""Several questions answered jointly in a survey (``type: joint``): one report for the tuple of answers.

A survey's ``joint`` question groups two or more categorical questions whose
answers are randomized together by :class:`deniable.Joint` (one oracle on
their product, one epsilon for the group)::

    - id: device
      text: About your device this week
      type: joint
      epsilon: 3
      mechanism: auto          # or grr, oue, sue
      questions:
        - {id: platform, text: Which platform?, categories: [android, ios, web]}
        - {id: crashed, text: Did the app crash?, type: yes-no}

A device answers with the list of its answers, in the questions' order
(``[ "ios", false ]``); the report is the oracle's. The stored form keeps the
exact :class:`~deniable.Joint` configuration and the parts' ids and texts
(:mod:`deniable.server._questions`).
The results give each part's shares (a marginal of the joint estimate, with
its standard errors and intervals) and, for every pair of parts, the Wald
test of independence and Cramér's V (:mod:`deniable._marginals`).
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import combinations
from typing import Any

from deniable._joint import JOINT_MECHANISMS, Joint
from deniable._results import jsonable
from deniable.server._errors import SurveyError
from deniable.server._questions import JOINT, Question
from deniable.wire import from_config

__all__ = ["JOINT", "MAX_CELLS", "load_joint_question", "joint_json"]

MAX_CELLS = 4096
"""The largest product of the parts' numbers of answers a joint question may have."""
_KEYS = frozenset({"id", "text", "type", "epsilon", "mechanism", "questions"})
_PART_KEYS = frozenset({"id", "text", "type", "categories"})


def _parts(value: Any, where: str) -> list[tuple[str, str, list[Any]]]:
    """The parts ``(id, text, categories)``; SurveyError naming the field."""
    if not isinstance(value, list) or len(value) < 2:
        raise SurveyError(f"{where}questions", f"must be a list of two or more questions; got {value!r:.60}")
    out = []
    for i, part in enumerate(value):
        at = f"{where}questions[{i}]."
        if not isinstance(part, Mapping):
            raise SurveyError(at.rstrip("."), f"must be an object {{id, text, categories}}; got {part!r:.60}")
        extra = sorted(set(part) - _PART_KEYS)
        if extra:
            raise SurveyError(f"{at}{extra[0]}", f"is not a field of a joint question's part ({sorted(_PART_KEYS)})")
        pid, text = part.get("id"), part.get("text")
        if not isinstance(pid, str) or not pid or not isinstance(text, str):
            raise SurveyError(f"{at}id", "each part needs an id and a text (strings)")
        kind = part.get("type", "categorical")
        if kind == "yes-no":
            categories: Any = [False, True]
        elif kind == "categorical":
            categories = part.get("categories")
            if not isinstance(categories, list) or len(categories) < 2:
                raise SurveyError(f"{at}categories", f"must list two or more answers; got {categories!r:.60}")
        else:
            raise SurveyError(f"{at}type", f"must be 'categorical' or 'yes-no'; got {kind!r:.60}")
        out.append((pid, text, categories))
    ids = [p[0] for p in out]
    if len(set(ids)) != len(ids):
        raise SurveyError(f"{where}questions", f"the parts' ids must differ; got {ids!r:.120}")
    return out


def load_joint_question(data: Mapping[str, Any], qid: str, text: str, where: str) -> Question:
    """A joint question from its definition or its stored form (``where``: the path prefix)."""
    extra = sorted(set(data) - _KEYS)
    if extra:
        raise SurveyError(f"{where}{extra[0]}", f"is not a field of a joint question (allowed: {sorted(_KEYS)})")
    parts = _parts(data.get("questions"), where)
    cells = 1
    for _, _, categories in parts:
        cells *= len(categories)
    if cells > MAX_CELLS:
        raise SurveyError(f"{where}questions", f"the parts' answers make {cells} combinations; at most {MAX_CELLS}")
    stored = data.get("mechanism")
    try:
        if isinstance(stored, Mapping):
            joint = from_config(dict(stored))
            if not isinstance(joint, Joint) or [list(q) for q in joint.questions] != [p[2] for p in parts]:
                raise SurveyError(f"{where}mechanism", "must be the exact joint configuration of the parts' answers")
        else:
            name = "auto" if stored is None else stored
            if name not in ("auto", *JOINT_MECHANISMS):
                allowed = ["auto", *JOINT_MECHANISMS]
                raise SurveyError(f"{where}mechanism", f"must be one of {allowed}; got {name!r:.60}")
            epsilon = data.get("epsilon")
            if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)):
                raise SurveyError(f"{where}epsilon", f"must be a number > 0; got {epsilon!r:.60}")
            joint = Joint(*(p[2] for p in parts), epsilon=float(epsilon), mechanism=name)
    except SurveyError:
        raise
    except (ValueError, TypeError) as exc:
        raise SurveyError(f"{where}mechanism" if isinstance(stored, Mapping) else f"{where}epsilon", str(exc)) from None
    return Question(qid, text, JOINT, joint, parts=tuple((p[0], p[1]) for p in parts))


def joint_json(q: Question, aggregate: Any, view: Any) -> dict[str, Any]:
    """A joint question's results: each part's shares, and per pair of parts independence and Cramér's V."""
    j: Joint = q.randomizer
    n = 0 if aggregate is None else aggregate.n
    out: dict[str, Any] = {"id": q.id, "text": q.text, "type": JOINT, "kind": JOINT, "mechanism": j.mechanism.name,
                           "epsilon": q.epsilon, "n": n, "target": "population", "level": view.level}
    parts = []
    pairs = []
    est = j.estimate_from(aggregate) if n else None
    for i, ((pid, ptext), categories) in enumerate(zip(q.parts, j.questions, strict=True)):
        part: dict[str, Any] = {"id": pid, "text": ptext, "categories": list(categories)}
        if est is None:
            part.update(dict.fromkeys(("estimate", "std_error", "ci_low", "ci_high")))
        else:
            data = est.marginal(i).to_dict(view.level)
            part.update({k: data[k] for k in ("estimate", "std_error", "ci_low", "ci_high")})
        parts.append(part)
    if est is not None:
        for a, b in combinations(range(len(q.parts)), 2):
            test, v = est.independence(a, b), est.association(a, b)
            pairs.append({"first": q.parts[a][0], "second": q.parts[b][0], "statistic": test.statistic,
                          "df": test.df, "p_value": test.p_value, "cramers_v": v.cramers_v,
                          "cramers_v_std_error": v.std_error})
    return jsonable({**out, "questions": parts, "pairs": pairs})
