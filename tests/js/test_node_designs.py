"""One validation of a survey design's channels, shared by the server and the browser.

Regression: CDM with ``p = [0, x]`` and UQTknown with ``p = [1, x]`` were
accepted by the server but their channel configs (denominator 1: a group that
always tells the truth) were refused by deniable.js, so the survey page sent
nothing. Every design the server accepts, over a grid of ``p`` that includes
the boundaries 0 and 1, must build in deniable.js; and deniable.js must refuse
exactly the channel configs that ``dn.from_config`` refuses.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from node_env import ROOT, run_node

import deniable as dn
from deniable.server._design_questions import load_design_question
from deniable.server._surveys import SurveyError
from deniable.survey import MODELS

pytestmark = pytest.mark.browser

GRID = ["0", "1/4", "1/2", "3/4", "1"]
COUNTS = {"Warner": 1, "Crosswise": 1, "Triangular": 1, "Mangat": 1, "UQTknown": 2, "Kuk": 2, "FR": 2,
          "UQTunknown": 2, "SLD": 2, "CDM": 2, "CDMsym": 4}


def _accepted_channels() -> list[dict[str, Any]]:
    """The channel configs of every design over the grid that the server's survey loader accepts."""
    assert set(COUNTS) == set(MODELS)
    configs = []
    for model, count in COUNTS.items():
        for p in itertools.product(GRID, repeat=count):
            data = {"id": "q", "text": "?", "type": "yes-no", "design": {"model": model, "p": list(p)},
                    "allow_infinite_epsilon": True}
            if model == "UQTunknown":
                data["unrelated_question"] = "Born in spring?"
            try:
                question = load_design_question(data, "q", "?", "")
            except SurveyError:
                continue
            configs.extend(question.public_json()["channels"])
    return configs


def test_every_channel_the_server_accepts_runs_in_the_browser() -> None:
    configs = _accepted_channels()
    assert any(c["params"]["denominator"] == 1 for c in configs)  # the boundary cases are in the grid
    answers = run_node(ROOT / "tests" / "js" / "channels_cli.mjs", {"configs": configs, "values": [False, True] * 4})
    refused = [(c, a["error"]) for c, a in zip(configs, answers, strict=True) if "error" in a]
    assert not refused, refused[:3]
    for config, answer in zip(configs, answers, strict=True):
        assert all(type(r) is bool for r in answer["reports"])
        if config["params"]["denominator"] == 1:  # no randomization: the truth, or its negation
            yes_if_false, yes_if_true = config["params"]["yes_numerators"]
            assert answer["reports"] == [bool(yes_if_false), bool(yes_if_true)] * 4


@pytest.mark.parametrize(
    "params",
    [{"denominator": 0, "yes_numerators": [0, 0]}, {"denominator": 1, "yes_numerators": [1, 1]},
     {"denominator": 1, "yes_numerators": [0, 2]}, {"denominator": 4, "yes_numerators": [3, 3]},
     {"denominator": 1, "yes_numerators": [0, 1]}, {"denominator": 4, "yes_numerators": [4, 0]}],
)
def test_the_browser_refuses_what_python_refuses(params: dict[str, Any]) -> None:
    config = {"format": "deniable.mechanism", "version": 1, "mechanism": "binary-rr",
              "domain": [False, True], "params": params}
    try:
        dn.from_config(config)
        python_ok = True
    except ValueError:
        python_ok = False
    (answer,) = run_node(ROOT / "tests" / "js" / "channels_cli.mjs", {"configs": [config], "values": [True]})
    assert ("error" not in answer) == python_ok, answer
