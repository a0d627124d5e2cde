"""Fuzz the server's submission check: any JSON request is stored or refused with Invalid.

:func:`deniable.server._submissions.prepare` is what every request goes through
before the storage writes; a device controls all of it, so anything but
:class:`~deniable.server._errors.Invalid` (a 422 naming the field) would be a
500. The survey has a question of every report format (every survey-capable
mechanism, a design question, plain questions).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("sqlalchemy", reason="the submission check is part of the 'server' extra")

from deniable.server._errors import Invalid  # noqa: E402
from deniable.server._submissions import prepare  # noqa: E402
from deniable.server._surveys import load_survey  # noqa: E402

CATS = [f"c{i}" for i in range(10)]
SURVEY = load_survey({
    "id": "fuzz", "title": "Every report format", "budget": 30,
    "questions": [
        {"id": "yn", "text": "?", "type": "yes-no", "mechanism": "forced-response", "p_truth": 0.5, "p_yes": 0.5},
        {"id": "grr", "text": "?", "type": "categorical", "categories": ["a", "b", "c"], "mechanism": "grr",
         "epsilon": 1},
        {"id": "sue", "text": "?", "type": "categorical", "categories": CATS, "mechanism": "sue", "epsilon": 1},
        {"id": "oue", "text": "?", "type": "categorical", "categories": CATS, "mechanism": "oue", "epsilon": 1},
        {"id": "blh", "text": "?", "type": "categorical", "categories": CATS, "mechanism": "blh", "epsilon": 1},
        {"id": "olh", "text": "?", "type": "categorical", "categories": CATS, "mechanism": "olh", "epsilon": 1},
        {"id": "had", "text": "?", "type": "categorical", "categories": CATS, "mechanism": "hadamard",
         "epsilon": 1},
        {"id": "sub", "text": "?", "type": "categorical", "categories": CATS, "mechanism": "subset",
         "epsilon": 1, "omega": 3},
        {"id": "fr", "text": "?", "type": "yes-no", "design": {"model": "FR", "p": ["1/6", "1/6"]}},
        {"id": "sld", "text": "?", "type": "yes-no", "design": {"model": "SLD", "p": [0.3, 0.7]},
         "allow_infinite_epsilon": True},
        {"id": "age", "text": "?", "type": "integer", "randomized": False, "min": 16, "max": 99},
        {"id": "year", "text": "?", "type": "categorical", "randomized": False, "categories": ["1", "2"]},
    ],
})
VALID = {"yn": True, "grr": "a", "sue": "0900", "oue": "0900", "blh": {"seed": 5, "value": 1},
         "olh": {"seed": 5, "value": 1}, "had": 3, "sub": [0, 4, 7], "fr": True,
         "sld": {"group": 1, "answer": False}, "age": 30, "year": "1"}

STRINGS = st.one_of(st.text(max_size=10), st.sampled_from(["", "\ud800", "a\x00", "0900", "yes", "c1"]))
JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.integers(-(2**70), 2**70), st.floats(), STRINGS),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(STRINGS, inner, max_size=4)),
    max_leaves=10,
)
FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _valid_body(i: int) -> dict[str, Any]:
    return {"idempotency_key": f"fuzz-key-{i:04d}", "reports": dict(VALID)}


def _prepare(bodies: list[Any]) -> None:
    try:
        p = prepare(SURVEY, bodies, lambda i: f"responses[{i}].")
    except Invalid as exc:
        json.dumps({"field": exc.field, "message": exc.message}, ensure_ascii=False).encode()
        return
    assert len(p.keys) == len(p.texts) == len(p.hashes) == len(bodies)


def test_the_valid_body_is_valid() -> None:
    p = prepare(SURVEY, [_valid_body(0)], lambda i: "")
    assert json.loads(p.texts[0]).keys() == VALID.keys()


@FUZZ
@given(qid=st.sampled_from(sorted(VALID)), junk=JSON, at=st.integers(0, 2))
def test_one_bad_report_in_a_batch(qid: str, junk: Any, at: int) -> None:
    bodies = [_valid_body(i) for i in range(3)]
    bodies[at]["reports"][qid] = junk
    _prepare(bodies)


@FUZZ
@given(field=st.sampled_from(["idempotency_key", "invite_token", "reports", "extra"]), junk=JSON,
       report_key=STRINGS)
def test_bad_fields(field: str, junk: Any, report_key: str) -> None:
    body: dict[str, Any] = _valid_body(0)
    body[field] = junk
    _prepare([body])
    other = _valid_body(1)
    other["reports"][report_key] = 1
    _prepare([_valid_body(2), other])


@pytest.mark.parametrize("text", ["\ud800", "a\udfff"])
def test_unencodable_strings_are_refused_by_name(text: str) -> None:
    """A lone surrogate cannot be stored or answered as UTF-8: 422 naming the field."""
    cases = {
        "responses[0].invite_token": {**_valid_body(0), "invite_token": "tok" + text},
        f"responses[0].{text}": {**_valid_body(0), text: 1},
        f"responses[0].reports.{text}": {**_valid_body(0), "reports": {**VALID, text: 1}},
    }
    for field, body in cases.items():
        with pytest.raises(Invalid) as caught:
            prepare(SURVEY, [body], lambda i: f"responses[{i}].")
        assert caught.value.field.encode("utf-8", "backslashreplace").decode() == \
            field.encode("utf-8", "backslashreplace").decode()
