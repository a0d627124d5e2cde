"""Design and plain question definitions: a yes/no question randomized by a survey design; a plain one.

A **design question** is a yes/no question randomized by one of the classic
survey designs of :mod:`deniable.survey` (RRreg's model names and ``p``)::

    - id: used
      text: Have you used a study drug this term?
      type: yes-no
      design: {model: FR, p: [1/6, 1/6]}

Each group of the design is one exact :meth:`BinaryRR.channel
<deniable.mechanisms._binary.BinaryRR.channel>`; devices get those channel
configs and randomize with them. A one-group design's report is ``true`` /
``false``; a two-group design's device draws its group (1 or 2, uniformly,
with the same exact sampler) and reports ``{"group": g, "answer": bool}``.
UQTunknown asks the respondent the unrelated question
(``unrelated_question:`` text) and feeds that answer to the device's
randomizer; it is never sent. A design whose epsilon is infinite (an answer
reveals the truth: Mangat, triangular, SLD, CDM, UQTunknown) is refused
unless the question says ``allow_infinite_epsilon: true``: a deliberate
choice, for designs whose protection is the respondents' trust rather than
a local-DP guarantee.

A **plain question** (``randomized: false``) is asked and stored as given,
not privatized: ``type: integer`` with ``min`` and ``max``, or ``type:
categorical`` with ``categories``. Its answers are aggregated as counts per
value, and every design question keeps, per category of each plain
categorical question, its counts of answers per group, so results can show
the prevalence by category from the aggregates alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from deniable.server._errors import SurveyError
from deniable.server._questions import PlainQuestion, Question
from deniable.survey._designs import MODELS, Design, design
from deniable.wire import from_config

__all__ = ["load_design_question", "load_plain_question", "MAX_INTEGER_RANGE", "PLAIN_TYPES"]

MAX_INTEGER_RANGE = 10_000
"""Most distinct values of a plain integer question (``max - min + 1``): its aggregate counts each."""


# ---------------------------------------------------------- design questions
def _check_channels(d: Design, field: str) -> None:
    """Each group's device channel must be one that every device builds from its config.

    The one rule, shared by the server, the Python client and the browser
    (deniable.js): a channel config is accepted exactly when
    ``dn.from_config`` accepts it, which refuses a channel whose answer never
    depends on the truth (e.g. UQTunknown's coin with ``p_g = 0``).
    """
    for g in range(1, d.groups + 1):
        channel = d.channel(g)
        try:
            from_config(channel.to_config())
        except ValueError as exc:
            where = f"group {g}'s" if d.groups > 1 else "its"
            raise SurveyError(
                field, f"{d.model}: {where} device channel (P(yes | non-carrier), P(yes | carrier)) = "
                       f"({channel.p_yes_given_no}, {channel.p_yes_given_yes}) is refused by every "
                       f"device: {exc}",
            ) from None


_DESIGN_KEYS = frozenset({"id", "text", "type", "design", "allow_infinite_epsilon", "unrelated_question"})


def load_design_question(data: Mapping[str, Any], qid: str, text: str, where: str) -> Question:
    """A design question from its definition (``where`` is the path prefix, e.g. ``questions[0].``)."""
    extra = sorted(set(data) - _DESIGN_KEYS)
    if extra:
        raise SurveyError(
            f"{where}{extra[0]}", f"is not a field of a design question (allowed: {sorted(_DESIGN_KEYS)})"
        )
    if data.get("type") != "yes-no":
        raise SurveyError(f"{where}type", f"a design question is yes-no; got {data.get('type')!r:.60}")
    spec = data["design"]
    if not isinstance(spec, dict):
        raise SurveyError(f"{where}design", f"must be an object {{model: ..., p: [...]}}; got {spec!r:.60}")
    unknown = sorted(set(spec) - {"model", "p"})
    if unknown:
        raise SurveyError(f"{where}design.{unknown[0]}", "is not a field of a design (allowed: model, p)")
    model = spec.get("model")
    if model not in MODELS:
        raise SurveyError(f"{where}design.model", f"must be one of {sorted(MODELS)}; got {model!r:.60}")
    if "p" not in spec:
        raise SurveyError(f"{where}design.p", f"is required ({model}'s randomization probabilities, as RRreg's p)")
    p = spec["p"]
    values = p if isinstance(p, list) else [p]
    for i, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, (int, float, str)):
            raise SurveyError(f"{where}design.p[{i}]", f"must be a number or a fraction like '1/6'; got {v!r:.60}")
    try:
        d = design(model, p)
    except (ValueError, TypeError, ZeroDivisionError) as exc:
        raise SurveyError(f"{where}design.p", f"{model}: {exc}") from None
    if d.m != 2:
        raise SurveyError(
            f"{where}design.p", f"{model}: a design question is yes/no; {len(d.p)} values of p give {d.m} categories"
        )
    _check_channels(d, f"{where}design.p")
    allow = data.get("allow_infinite_epsilon", False)
    if not isinstance(allow, bool):
        raise SurveyError(f"{where}allow_infinite_epsilon", f"must be true or false; got {allow!r:.60}")
    unrelated = data.get("unrelated_question")
    if model == "UQTunknown":
        if not isinstance(unrelated, str) or not unrelated.strip():
            raise SurveyError(
                f"{where}unrelated_question",
                "is required by UQTunknown: the text of the unrelated question the respondent answers "
                "on the device (its answer is never sent)",
            )
    elif unrelated is not None:
        raise SurveyError(f"{where}unrelated_question", f"applies to UQTunknown only; this design is {model}")
    return Question(qid, text, "yes-no", d, allow, unrelated)



# ----------------------------------------------------------- plain questions
_PLAIN_KEYS = frozenset({"id", "text", "type", "randomized", "categories", "min", "max"})
PLAIN_TYPES = ("integer", "categorical")


def load_plain_question(data: Mapping[str, Any], qid: str, text: str, where: str) -> PlainQuestion:
    """A plain (not randomized) question from its definition."""
    extra = sorted(set(data) - _PLAIN_KEYS)
    if extra:
        raise SurveyError(
            f"{where}{extra[0]}",
            f"is not a field of a plain question (randomized: false; allowed: {sorted(_PLAIN_KEYS)})",
        )
    qtype = data.get("type")
    if qtype not in PLAIN_TYPES:
        raise SurveyError(f"{where}type", f"a plain question is one of {list(PLAIN_TYPES)}; got {qtype!r:.60}")
    if qtype == "integer":
        bounds = []
        for key in ("min", "max"):
            v = data.get(key)
            if type(v) is not int:
                raise SurveyError(f"{where}{key}", f"an integer question needs an integer {key}; got {v!r:.60}")
            bounds.append(v)
        low, high = bounds
        if not 0 <= high - low < MAX_INTEGER_RANGE:
            raise SurveyError(
                f"{where}max", f"must be at least min and give at most {MAX_INTEGER_RANGE} values; got {low}..{high}"
            )
        if "categories" in data:
            raise SurveyError(f"{where}categories", "an integer question has min and max, not categories")
        return PlainQuestion(qid, text, "integer", min=low, max=high)
    categories = data.get("categories")
    if not isinstance(categories, list) or len(categories) < 2:
        raise SurveyError(f"{where}categories", f"needs a list of at least 2 categories; got {categories!r:.60}")
    for i, c in enumerate(categories):
        if isinstance(c, bool) or not isinstance(c, (str, int)):
            raise SurveyError(f"{where}categories[{i}]", f"must be a string or an integer; got {c!r:.60}")
    if len(set(categories)) != len(categories):
        raise SurveyError(f"{where}categories", f"has duplicates: {categories!r:.200}")
    for key in ("min", "max"):
        if key in data:
            raise SurveyError(f"{where}{key}", "applies to integer questions only")
    return PlainQuestion(qid, text, "categorical", categories=tuple(categories))
