"""Survey definitions: questions, their mechanisms, and the privacy budget check.

A survey is written in YAML or JSON (see ``examples/honor-code.yaml``)::

    id: honor-code
    title: Honor code survey
    budget: 1.1
    questions:
      - id: violated
        text: Have you broken the honor code this term?
        type: yes-no
        mechanism: forced-response
        p_truth: 0.5
        p_yes: 0.5

Each question's mechanism is built once, when the definition is loaded, and
the survey keeps its exact configuration (``m.to_config()``): devices
randomize with it, and results are decoded with it, so the two always agree.

Budget (basic sequential composition): a respondent answers every question
once, so the survey's privacy loss per respondent is the sum of the
questions' epsilons (each the epsilon realised by the mechanism's integer
probabilities, rounded up). A survey whose sum exceeds ``budget`` is refused.

``allocation: sample`` (the default is ``split``, the above) has each
respondent's device draw one question uniformly at random (its own CSPRNG,
an exact uniform integer) and answer only that one, so each question may
use the whole budget: the privacy loss per respondent is the largest
question epsilon (:mod:`deniable._allocation`; ``deniable plan --questions``
compares the two). A response then carries one report; each question is
estimated from its own reports. A sampled survey's questions are all
mechanism questions (no designs, no plain questions).

Mechanisms and their parameters:

=================  =============  ==========================================
``mechanism``      question type  parameters
=================  =============  ==========================================
forced-response    yes-no         ``p_truth``, ``p_yes`` (two-coin design)
binary-rr          yes-no         ``prob`` or ``epsilon`` (Warner)
grr                any            ``epsilon`` or ``prob``
sue, oue, blh      any            ``epsilon``
olh                any            ``epsilon``, optional ``g``
hadamard           any            ``epsilon``
subset             any            ``epsilon``, optional ``omega``
dbitflip           any            ``epsilon``, optional ``d`` (default 1) and ``gamma``
l-grr, l-osue      any            ``epsilon_perm``, ``epsilon_1``
auto               any            ``epsilon``: ``best_mechanism(k, epsilon)``
=================  =============  ==========================================

A yes-no question has the categories ``[false, true]``; ``auto`` there is
Warner's design, which for two categories is GRR.

dbitflip, l-grr and l-osue memoize: a device that keeps its state (the
survey page, in IndexedDB; :class:`deniable.client.Client` with ``state=``)
reuses its permanent randomization on every response, so answering again
reveals at most the lifetime bound of each distinct answer. The budget adds
up one response's epsilons (L-GRR's and L-OSUE's ``epsilon_1``).

A yes-no question may instead name a classic survey design with RRreg's
model name and ``p`` (``design: {model: FR, p: [1/6, 1/6]}``), and a question
marked ``randomized: false`` is a plain question (an integer in ``min..max``
or a category), stored as given: see :mod:`deniable.server._design_questions`. Plain
questions add nothing to the budget; a design whose epsilon is infinite is
refused unless the question says ``allow_infinite_epsilon: true``, and is
then left out of the budget sum (the survey's ``epsilon_total`` is infinite).

A question of ``type: free-text`` (``max_length``, ``epsilon``, optional
``alphabet``: the characters answers are made of) discovers the frequent
answers nobody listed (heavy hitters); its epsilon counts in the budget like
a mechanism's: see :mod:`deniable.server._discovery`.

A question of ``type: number`` (``low``, ``high``, ``mechanism:
one-bit-mean``, ``epsilon``, optional ``gamma``, ``points`` and ``units``)
collects a number whose mean is estimated; with ``mechanism: hierarchical``
or ``haar`` (optional ``bins``, and ``branching`` for ``hierarchical``) its
CDF, ranges and quantiles; one report's epsilon counts in the budget: see
:mod:`deniable.server._numeric_questions`.

A question of ``type: multiple`` (``options``, ``max_choices``, ``epsilon``,
optional ``ell`` and ``oracle``) lets a respondent choose several options,
randomized by padding and sampling: see :mod:`deniable.server._set_questions`.

A question of ``type: keyvalue`` (``keys``, ``low``, ``high``, ``max_pairs``,
``epsilon``, optional ``units``, ``ell`` and ``mechanism: ue | grr | auto``)
collects a value for each key a respondent has, randomized by PCKV: see
:mod:`deniable.server._keyvalue_questions`.

Beside its questions a survey has settings against flooding and for its
results (``rate_limit``, ``max_responses``, ``results``:
:mod:`deniable.server._policy`); unlike the questions they may change.

A survey may run in ``rounds`` (``rounds: {every: 1d, lifetime_epsilon: 6}``,
:mod:`deniable.server._rounds`): devices answer once per round, identified by
a pseudonymous key, and the server refuses a report that would take a
device over ``lifetime_epsilon``. One round must fit in it (checked here).
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from deniable._accounting import ReportCost
from deniable._allocation import Allocation, check_allocation
from deniable._plan import best_mechanism
from deniable._privacy import PrivacyBudget
from deniable.mechanisms import BinaryRR, FrequencyOracle, registry
from deniable.server._design_questions import load_design_question, load_plain_question
from deniable.server._discovery import FREE_TEXT, load_free_text_question
from deniable.server._errors import SurveyError, closest, did_you_mean, is_text, printable
from deniable.server._joint_questions import load_joint_question
from deniable.server._keyvalue_questions import load_keyvalue_question
from deniable.server._list_questions import load_list_question
from deniable.server._numeric_questions import NUMBER, load_number_question
from deniable.server._policy import POLICY_FIELDS, Policy, load_policy
from deniable.server._questions import (
    DESIGN,
    FREQUENCY,
    HEAVY,
    JOINT,
    KEYVALUE,
    LIST,
    NUMERIC,
    PLAIN,
    RANGE,
    SET,
    SKETCH,
    AnyQuestion,
    PlainQuestion,
    Question,
    kind_of,
)
from deniable.server._rounds import Rounds, check_round_cost, load_rounds, question_costs
from deniable.server._set_questions import MULTIPLE, load_multiple_question
from deniable.wire import from_config

__all__ = ["SurveyError", "Question", "AnyQuestion", "Survey", "load_survey", "load_surveys", "ID_PATTERN"]

ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
"""Survey and question ids: 1..64 characters, letters, digits, ``_ . -``."""

QUESTION_TYPES = ("yes-no", "categorical")
YES_NO = (False, True)


@dataclass(frozen=True)
class Survey:
    """A loaded survey: every mechanism built, the budget checked."""

    id: str
    title: str
    budget: float
    questions: tuple[AnyQuestion, ...]
    invite_only: bool = False
    allocation: Allocation = "split"
    policy: Policy = Policy()
    rounds: Rounds | None = None

    @property
    def epsilon_total(self) -> float:
        """Privacy loss per respondent: the sum of the randomized questions' epsilons.

        Infinite if a design question whose answer reveals the truth was allowed
        (``allow_infinite_epsilon``); plain questions are disclosed as given and
        carry no epsilon. Under ``allocation: sample`` the largest question
        epsilon (a respondent answers one question, drawn independently of the answers).
        """
        if self.allocation == "sample":
            return max(q.epsilon for q in self.questions)
        return math.fsum(q.epsilon for q in self.questions)

    @functools.cached_property
    def costs(self) -> dict[str, ReportCost]:
        """What a device's reports to each question cost (:mod:`deniable._accounting`), by question id."""
        return question_costs(self.questions)

    def question(self, question_id: str) -> AnyQuestion:
        for q in self.questions:
            if q.id == question_id:
                return q
        raise KeyError(question_id)

    def to_json(self) -> dict[str, Any]:
        """The stored (canonical) form: mechanisms as exact configs.

        ``load_survey(s.to_json())`` rebuilds an equal survey with the same
        configurations, without re-running ``auto``. ``allocation`` is
        written only when it is ``sample`` (``rounds`` only when set), so
        surveys stored before they existed keep their canonical text.
        """
        sampled = {"allocation": self.allocation} if self.allocation == "sample" else {}
        rounds = {} if self.rounds is None else {"rounds": self.rounds.to_json()}
        return {
            "id": self.id,
            "title": self.title,
            "budget": self.budget,
            "invite_only": self.invite_only,
            **sampled,
            **rounds,
            "questions": [q.to_json() for q in self.questions],
            **self.policy.to_json(),
        }

    def canonical(self, *, settings: bool = True) -> str:
        """``to_json`` as canonical text (identical definitions compare equal).

        ``settings=False`` leaves out the :class:`~deniable.server._policy.Policy`
        (what may change between runs without changing what a report means).
        """
        data = self.to_json()
        if not settings:
            data = {k: v for k, v in data.items() if k not in POLICY_FIELDS}
        return json.dumps(data, sort_keys=True, separators=(",", ":"))


# ------------------------------------------------------------------ loading
def _require(data: Mapping[str, Any], key: str, where: str, kind: type | tuple[type, ...]) -> Any:
    if key not in data:
        typo = closest(key, data)  # a misspelt key names itself, not the key it misses
        if typo is not None:
            raise SurveyError(f"{where}{typo}", f"is not a known field; did you mean {key!r}? ({key} is required)")
        raise SurveyError(f"{where}{key}", "is required")
    value = data[key]
    if not isinstance(value, kind) or isinstance(value, bool) and bool not in _as_tuple(kind):
        raise SurveyError(
            f"{where}{key}", f"must be {_kind_name(kind)}; got {type(value).__name__} {value!r:.60}"
        )
    return value


def _as_tuple(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def _kind_name(kind: type | tuple[type, ...]) -> str:
    names = {str: "a string", int: "a number", float: "a number", bool: "true or false",
             list: "a list", dict: "an object"}
    return " or ".join(dict.fromkeys(names.get(k, k.__name__) for k in _as_tuple(kind)))


def _check_id(value: str, field: str) -> str:
    if not ID_PATTERN.fullmatch(value):
        raise SurveyError(
            field, f"must be 1-64 characters of letters, digits, '_', '.', '-' "
            f"(starting with a letter or digit); got {value!r:.80}"
        )
    return value


_NUMBER = (int, float)
AUTO = "auto"  # best_mechanism(k, epsilon) for the question's categories
_QUESTION_KEYS = frozenset({"id", "text", "type", "categories", "mechanism"})


def _auto(categories: list[Any], epsilon: float) -> FrequencyOracle:
    """``best_mechanism(k, epsilon)``, rebuilt on the question's own categories."""
    if list(categories) == list(YES_NO):
        return BinaryRR(epsilon=epsilon)
    chosen = best_mechanism(len(categories), epsilon).mechanism
    config = chosen.to_config()
    config["domain"] = list(categories)
    mechanism: FrequencyOracle = from_config(config)
    return mechanism


def _load_question(data: Any, where: str) -> AnyQuestion:
    if not isinstance(data, dict):
        raise SurveyError(where.rstrip("."), f"must be an object; got {type(data).__name__}")
    qid = _check_id(_require(data, "id", where, str), f"{where}id")
    text = _require(data, "text", where, str)
    qtype = _require(data, "type", where, str)
    if qtype == LIST:  # deniable.server._list_questions: answered as given, never randomized
        return load_list_question(data, qid, text, where)
    randomized = data.get("randomized", True)
    if not isinstance(randomized, bool):
        raise SurveyError(f"{where}randomized", f"must be true or false; got {randomized!r:.60}")
    if qtype == FREE_TEXT:  # deniable.server._discovery
        if not randomized:
            raise SurveyError(f"{where}randomized", "a free-text question is always randomized")
        return load_free_text_question(data, qid, text, where)
    if qtype == NUMBER:  # deniable.server._numeric_questions
        return load_number_question(data, qid, text, where)
    if qtype == JOINT:  # deniable.server._joint_questions
        if not randomized:
            raise SurveyError(f"{where}randomized", "a joint question is always randomized")
        return load_joint_question(data, qid, text, where)
    if qtype == MULTIPLE:  # deniable.server._set_questions
        return load_multiple_question(data, qid, text, where)
    if qtype == KEYVALUE:  # deniable.server._keyvalue_questions
        return load_keyvalue_question(data, qid, text, where)
    if not randomized:
        return load_plain_question(data, qid, text, where)
    if "design" in data:
        if "mechanism" in data:
            raise SurveyError(f"{where}mechanism", "a question has a mechanism or a design, not both")
        return load_design_question(data, qid, text, where)
    if qtype not in QUESTION_TYPES:
        raise SurveyError(f"{where}type", f"must be one of {list(QUESTION_TYPES)}; got {qtype!r}")
    if isinstance(data.get("mechanism"), dict):
        # an exact mechanism configuration (the stored form of a survey)
        extra = sorted(set(data) - _QUESTION_KEYS)
        if extra:
            raise SurveyError(f"{where}{extra[0]}", "is not a field of a question with a mechanism config")
        try:
            mechanism: FrequencyOracle = from_config(data["mechanism"])
        except (ValueError, TypeError) as exc:
            raise SurveyError(f"{where}mechanism", str(exc)) from None
        if kind_of(mechanism) not in (FREQUENCY, SKETCH):
            raise SurveyError(f"{where}mechanism.mechanism", f"a {qtype} question's mechanism is a frequency "
                              f"oracle; got {type(mechanism).wire_id!r} (a survey design is written design:)")
        expected = list(YES_NO) if qtype == "yes-no" else data.get("categories")
        if expected is not None and list(mechanism.domain) != list(expected):
            raise SurveyError(
                f"{where}mechanism.domain", f"must be the question's categories {expected!r:.200}"
            )
        return Question(qid, text, qtype, mechanism)

    if qtype == "yes-no":
        if "categories" in data and data["categories"] not in (None, list(YES_NO)):
            raise SurveyError(
                f"{where}categories", "a yes-no question has the categories [false, true]; "
                "use type: categorical for other answers"
            )
        categories: list[Any] = list(YES_NO)
    else:
        categories = _require(data, "categories", where, list)
        if len(categories) < 2:
            raise SurveyError(f"{where}categories", f"needs at least 2 categories; got {categories!r}")
        for i, c in enumerate(categories):
            if isinstance(c, bool) or not isinstance(c, (str, int)):
                raise SurveyError(
                    f"{where}categories[{i}]", f"must be a string or an integer; got {c!r:.60}"
                )
        if len({type(c) for c in categories}) != 1:
            raise SurveyError(
                f"{where}categories", f"must be all strings or all integers; got {categories!r:.200}"
            )
        if len(set(categories)) != len(categories):
            raise SurveyError(f"{where}categories", f"has duplicates: {categories!r:.200}")

    name = _require(data, "mechanism", where, str)
    recipes = registry.recipes("frequency")
    if name not in recipes and name != AUTO:
        raise SurveyError(f"{where}mechanism", f"must be one of {sorted([*recipes, AUTO])}; got {name!r}")
    required: frozenset[str]
    optional: frozenset[str]
    build: registry.Builder
    if name == AUTO:
        required, optional = frozenset({"epsilon"}), frozenset()
        build = lambda cats, p: _auto(cats, p["epsilon"])  # noqa: E731
    else:
        recipe = recipes[name]
        if recipe.binary_only and qtype != "yes-no":
            raise SurveyError(f"{where}mechanism", f"{name} needs a yes-no question; this one is {qtype}")
        required, optional, build = recipe.required, recipe.optional, recipe.build
    params = {key: value for key, value in data.items() if key not in _QUESTION_KEYS}
    for key in sorted(params):
        if key not in required | optional:
            allowed = sorted(required | optional)
            raise SurveyError(
                f"{where}{key}", f"is not a parameter of mechanism {name} (allowed: {allowed})"
                f"{did_you_mean(key, [*allowed, *_QUESTION_KEYS, 'randomized'])}"
            )
        value = params[key]
        if isinstance(value, bool) or not isinstance(value, _NUMBER):
            raise SurveyError(f"{where}{key}", f"must be a number; got {value!r:.60}")
    for key in sorted(required - set(params)):
        raise SurveyError(f"{where}{key}", f"is required by mechanism {name}")
    try:
        mechanism = build(categories, params)
    except (ValueError, TypeError) as exc:
        raise SurveyError(f"{where}mechanism", f"{name}: {exc}") from None
    return Question(qid, text, qtype, mechanism)


def _refused_infinite(question: Question) -> bool:
    """A design question whose epsilon is infinite without ``allow_infinite_epsilon``."""
    return question.kind == DESIGN and math.isinf(question.epsilon) and not question.allow_infinite_epsilon


def load_survey(source: str | Path | Mapping[str, Any] | Survey) -> Survey:
    """Build a survey from a YAML/JSON file, a dict, or return a Survey unchanged.

    Raises :class:`SurveyError` (a ValueError) naming the offending field,
    including when the questions' epsilons add up to more than ``budget``.
    """
    if isinstance(source, Survey):
        return source
    if isinstance(source, (str, Path)):
        data = _read_file(Path(source))
    else:
        data = dict(source)
    if not isinstance(data, dict):
        raise SurveyError("$", f"a survey must be an object; got {type(data).__name__}")
    _check_text(data, "")
    known = {"id", "title", "budget", "questions", "invite_only", "description", "allocation", "rounds",
             *POLICY_FIELDS}
    extra = sorted(set(data) - known)
    if extra:
        raise SurveyError(extra[0], f"is not a survey field (allowed: {sorted(known)}){did_you_mean(extra[0], known)}")
    sid = _check_id(_require(data, "id", "", str), "id")
    title = _require(data, "title", "", str)
    budget_value = _require(data, "budget", "", _NUMBER)
    invite_only = data.get("invite_only", False)
    if not isinstance(invite_only, bool):
        raise SurveyError("invite_only", f"must be true or false; got {invite_only!r:.60}")
    try:
        allocation = check_allocation(data.get("allocation", "split"))
    except ValueError:
        raise SurveyError(
            "allocation", f"must be 'split' or 'sample'; got {data.get('allocation')!r:.60}"
        ) from None
    try:
        budget = PrivacyBudget(budget_value)
    except (ValueError, TypeError) as exc:
        raise SurveyError("budget", str(exc)) from None
    policy = load_policy(data)
    rounds = None if data.get("rounds") is None else load_rounds(data["rounds"])
    raw_questions = _require(data, "questions", "", list)
    if not raw_questions:
        raise SurveyError("questions", "needs at least one question")
    questions: list[AnyQuestion] = []
    for i, raw in enumerate(raw_questions):
        question = _load_question(raw, f"questions[{i}].")
        if any(q.id == question.id for q in questions):
            raise SurveyError(f"questions[{i}].id", f"duplicate question id {question.id!r}")
        if question.randomized and _refused_infinite(question):
            model = question.design.model
            raise SurveyError(
                "budget",
                f"question {question.id!r} (questions[{i}]) uses the {model} design, whose "
                "epsilon is infinite: an answer reveals the truth. Choose a design with a finite epsilon, "
                "or set allow_infinite_epsilon: true on the question to accept it knowingly",
            )
        questions.append(question)
    # design questions keep their counts by category of every plain categorical question
    by = tuple(
        (q.id, len(q.categories)) for q in questions if isinstance(q, PlainQuestion) and q.type == "categorical"
    )
    questions = [replace(q, by=by) if q.randomized and q.kind == DESIGN else q for q in questions]
    if rounds is not None:
        check_round_cost(rounds, question_costs(questions), allocation)
    if allocation == "sample":
        _check_sampled(questions, float(budget.total))
        return Survey(sid, title, float(budget.total), tuple(questions), invite_only, allocation, policy, rounds)
    for q in questions:
        if not q.randomized or math.isinf(q.epsilon):
            continue
        try:
            budget.spend(q.epsilon, f"question {q.id!r}")
        except ValueError:
            counted = [p for p in questions if p.randomized and math.isfinite(p.epsilon)]
            parts = " + ".join(f"{p.epsilon:.6g} ({p.id})" for p in counted)
            raise SurveyError(
                "budget",
                f"the questions' epsilons add up to {parts} = "
                f"{math.fsum(p.epsilon for p in counted):.6g}, above the budget "
                f"{budget.total:.6g}; raise the budget or lower the epsilons",
            ) from None
    return Survey(sid, title, float(budget.total), tuple(questions), invite_only, allocation, policy, rounds)


def _check_sampled(questions: Sequence[AnyQuestion], budget: float) -> None:
    """``allocation: sample``: mechanism questions only, each within the whole budget."""
    for i, q in enumerate(questions):
        if q.kind not in (FREQUENCY, SKETCH):
            kind = _KIND_NAMES[q.kind]
            raise SurveyError(
                f"questions[{i}]", f"is {kind}; allocation: sample takes mechanism questions only "
                "(each respondent answers one of them, drawn at random)"
            )
        if q.epsilon > budget * (1 + 1e-12):
            raise SurveyError(
                "budget", f"question {q.id!r} has epsilon {q.epsilon:.6g}, above the budget {budget:.6g}; "
                "under allocation: sample each question may use at most the whole budget"
            )


_KIND_NAMES = {DESIGN: "a survey design", NUMERIC: "a number question", HEAVY: "a free-text question",
               PLAIN: "a plain question", JOINT: "a joint question", RANGE: "a number question",
               SET: "a multiple question", LIST: "a list experiment", KEYVALUE: "a keyvalue question"}


def load_surveys(sources: Iterable[str | Path | Mapping[str, Any] | Survey]) -> list[Survey]:
    """Load several surveys; ids must be distinct."""
    out: list[Survey] = []
    for source in sources:
        survey = load_survey(source)
        if any(s.id == survey.id for s in out):
            raise SurveyError("id", f"two surveys share the id {survey.id!r}")
        out.append(survey)
    return out


def _check_text(value: Any, path: str) -> None:
    """SurveyError naming the first string of a definition that is not valid Unicode text.

    A lone surrogate (JSON ``"\\ud800"``) could be stored but never answered as UTF-8.
    """
    items: Iterable[tuple[Any, Any]]
    if isinstance(value, Mapping):
        items = value.items()
    elif isinstance(value, list):
        items = ((None, v) for v in value)
    else:
        if isinstance(value, str) and not is_text(value):
            raise SurveyError(path or "$", f"is not valid Unicode text (a lone surrogate); got {value!r:.80}")
        return
    for i, (key, item) in enumerate(items):
        if key is None:
            where = f"{path}[{i}]"
        else:
            where = f"{path}.{printable(str(key))}" if path else printable(str(key))
            if isinstance(key, str) and not is_text(key):
                raise SurveyError(where, "is not valid Unicode text (a lone surrogate)")
        _check_text(item, where)


def _read_file(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SurveyError("$", f"cannot read survey file {str(path)!r}: {exc.strerror}") from None
    if path.suffix.lower() == ".json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise SurveyError("$", f"{path.name} is not valid JSON: {exc}") from None
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise SurveyError("$", f"{path.name} is not valid YAML: {exc}") from None
