"""Survey definitions: the examples, mechanism building, the budget check, bad definitions."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

import deniable as dn
from deniable.server._surveys import SurveyError, load_survey


def test_honor_code_example_is_the_two_coin_design(examples: Path) -> None:
    survey = load_survey(examples / "honor-code.yaml")
    (q,) = survey.questions
    assert q.mechanism == dn.BinaryRR.forced_response(p_truth=0.5, p_yes=0.5)
    assert q.categories == [False, True]
    assert survey.epsilon_total == math.log(3) <= survey.budget == 1.1


def test_messaging_example_uses_best_mechanism_on_its_categories(examples: Path) -> None:
    survey = load_survey(examples / "messaging.yaml")
    app, encrypted = survey.questions
    assert len(app.categories) >= 8 and app.type == "categorical"
    best = dn.best_mechanism(len(app.categories), 1.0).mechanism
    assert type(app.mechanism) is type(best)
    assert app.mechanism.to_config()["params"] == best.to_config()["params"]
    assert list(app.mechanism.domain) == app.categories
    assert encrypted.mechanism == dn.BinaryRR(prob=0.75)
    assert survey.epsilon_total <= survey.budget


def test_stored_form_rebuilds_the_identical_configuration(examples: Path) -> None:
    survey = load_survey(examples / "messaging.yaml")
    again = load_survey(json.loads(survey.canonical()))
    assert again.canonical() == survey.canonical()
    assert [q.mechanism for q in again.questions] == [q.mechanism for q in survey.questions]


def test_json_file_loads_like_yaml(tmp_path: Path, examples: Path) -> None:
    survey = load_survey(examples / "honor-code.yaml")
    path = tmp_path / "s.json"
    path.write_text(survey.canonical())
    assert load_survey(path).canonical() == survey.canonical()


@pytest.mark.parametrize(
    "mechanism, params, cls",
    [
        ("grr", {"epsilon": 1.0}, dn.GRR),
        ("grr", {"prob": 0.5}, dn.GRR),
        ("sue", {"epsilon": 1.0}, dn.SUE),
        ("oue", {"epsilon": 1.0}, dn.OUE),
        ("blh", {"epsilon": 1.0}, dn.BLH),
        ("olh", {"epsilon": 2.0, "g": 4}, dn.OLH),
        ("hadamard", {"epsilon": 1.0}, dn.HadamardResponse),
        ("subset", {"epsilon": 1.0, "omega": 3}, dn.SubsetSelection),
        ("dbitflip", {"epsilon": 1.0, "d": 2}, dn.DBitFlip),
        ("dbitflip", {"epsilon": 1.0}, dn.DBitFlip),
        ("l-grr", {"epsilon_perm": 3.0, "epsilon_1": 1.0}, dn.LGRR),
        ("l-osue", {"epsilon_perm": 3.0, "epsilon_1": 1.0}, dn.LOSUE),
    ],
)
def test_every_mechanism_builds(mechanism: str, params: dict[str, Any], cls: type) -> None:
    survey = load_survey({
        "id": "s", "title": "t", "budget": 5,
        "questions": [{"id": "q", "text": "?", "type": "categorical",
                       "categories": ["a", "b", "c", "d", "e", "f"], "mechanism": mechanism,
                       **params}],
    })
    m = survey.questions[0].mechanism
    assert type(m) is cls and list(m.domain) == ["a", "b", "c", "d", "e", "f"]


def test_documented_mechanisms_are_the_registry_recipes() -> None:
    """The module's table of ``mechanism:`` names is the registry's frequency recipes plus auto."""
    import re

    from deniable.mechanisms import registry
    from deniable.server import _surveys as surveys

    table = re.search(r"^=+  =+  =+\n.*?\n=+  =+  =+\n(.*?)\n=+  =+  =+$", surveys.__doc__ or "",
                      re.DOTALL | re.MULTILINE)
    assert table is not None
    names = {n.strip() for row in table.group(1).splitlines() for n in row.split("  ")[0].split(",")}
    assert names == {*registry.recipes("frequency"), surveys.AUTO}


def test_budget_refusal_names_the_numbers() -> None:
    definition = {
        "id": "over", "title": "t", "budget": 1.5,
        "questions": [
            {"id": "a", "text": "?", "type": "yes-no", "mechanism": "binary-rr", "epsilon": 1.0},
            {"id": "b", "text": "?", "type": "categorical", "categories": ["x", "y", "z"],
             "mechanism": "grr", "epsilon": 0.75},
        ],
    }
    with pytest.raises(SurveyError) as info:
        load_survey(definition)
    assert info.value.field == "budget"
    message = info.value.message
    for number in ("1.75", "1.5", "0.75 (b)", "(a)"):
        assert number in message, message
    definition["budget"] = 1.75  # exactly enough is accepted
    assert load_survey(definition).epsilon_total <= 1.75


_YES_NO = {"id": "q", "text": "?", "type": "yes-no", "mechanism": "binary-rr", "epsilon": 1.0}


@pytest.mark.parametrize(
    "change, field",
    [
        ({"id": "bad id!"}, "id"),
        ({"title": 3}, "title"),
        ({"budget": -1}, "budget"),
        ({"budget": "1"}, "budget"),
        ({"questions": []}, "questions"),
        ({"extra": 1}, "extra"),
        ({"invite_only": "yes"}, "invite_only"),
        ({"questions": [{**_YES_NO, "mechanism": "magic"}]}, "questions[0].mechanism"),
        ({"questions": [{**_YES_NO, "type": "numeric"}]}, "questions[0].type"),
        ({"questions": [{k: v for k, v in _YES_NO.items() if k != "text"}]}, "questions[0].text"),
        ({"questions": [{**_YES_NO, "p_truth": 0.5}]}, "questions[0].p_truth"),
        ({"questions": [{**_YES_NO, "epsilon": "1"}]}, "questions[0].epsilon"),
        ({"questions": [{**_YES_NO, "epsilon": -2.0}]}, "questions[0].mechanism"),
        ({"questions": [{**_YES_NO, "mechanism": "forced-response"}]}, "questions[0].epsilon"),
        ({"questions": [{"id": "q", "text": "?", "type": "yes-no", "mechanism": "forced-response",
                         "p_truth": 0.5}]}, "questions[0].p_yes"),
        ({"questions": [_YES_NO, _YES_NO]}, "questions[1].id"),
        ({"questions": [{**_YES_NO, "categories": ["a", "b"]}]}, "questions[0].categories"),
        ({"questions": [{"id": "q", "text": "?", "type": "categorical", "categories": ["a", "b"],
                         "mechanism": "forced-response", "p_truth": .5, "p_yes": .5}]},
         "questions[0].mechanism"),
        ({"questions": [{"id": "q", "text": "?", "type": "categorical", "categories": [True, False],
                         "mechanism": "grr", "epsilon": 1}]}, "questions[0].categories[0]"),
        ({"questions": [{"id": "q", "text": "?", "type": "categorical", "categories": ["a", "a"],
                         "mechanism": "grr", "epsilon": 1}]}, "questions[0].categories"),
        ({"questions": [{"id": "q", "text": "?", "type": "categorical", "categories": ["a"],
                         "mechanism": "grr", "epsilon": 1}]}, "questions[0].categories"),
    ],
)
def test_bad_definitions_name_the_field(change: dict[str, Any], field: str) -> None:
    definition = {"id": "s", "title": "t", "budget": 10, "questions": [_YES_NO], **change}
    with pytest.raises(SurveyError) as info:
        load_survey(definition)
    assert info.value.field == field, info.value


def test_stored_config_must_match_the_categories(examples: Path) -> None:
    stored = json.loads(load_survey(examples / "messaging.yaml").canonical())
    stored["questions"][0]["categories"] = ["other", "names", "entirely", "x", "y", "z", "w", "v"]
    with pytest.raises(SurveyError) as info:
        load_survey(stored)
    assert info.value.field == "questions[0].mechanism.domain"


@pytest.mark.parametrize(("change", "field", "message"), [
    ({"mechanism": None, "mechansim": "grr"}, "questions[0].mechansim",
     "is not a known field; did you mean 'mechanism'? (mechanism is required)"),
    ({"epsilon": None, "epsilno": 1.0}, "questions[0].epsilno",
     "is not a parameter of mechanism grr (allowed: ['epsilon', 'prob']); did you mean 'epsilon'?"),
    ({"categoires": ["x", "y"]}, "questions[0].categoires", "did you mean 'categories'?"),
])
def test_a_misspelt_key_is_named_with_the_closest_known_one(change, field, message) -> None:
    """Once ``mechansim:`` gave "questions[0].mechanism: is required", naming neither the typo nor the fix."""
    question = {"id": "q", "text": "?", "type": "categorical", "categories": ["a", "b"], "mechanism": "grr",
                "epsilon": 1.0, **change}
    question = {k: v for k, v in question.items() if v is not None}
    with pytest.raises(SurveyError) as info:
        load_survey({"id": "s", "title": "T", "budget": 2, "questions": [question]})
    assert info.value.field == field and message in info.value.message


def test_a_misspelt_survey_field_is_named_with_the_closest_known_one() -> None:
    with pytest.raises(SurveyError, match=r"^budgte: is not a survey field \(allowed: .*\); did you mean 'budget'\?$"):
        load_survey({"id": "s", "title": "T", "budgte": 2, "questions": []})
