"""The browser client's PCKV sampler (keyvalue.js under node) against the exact law.

For PCKV-UE and PCKV-GRR, node makes 20,000 reports of each of three users (fewer pairs than ``ell``,
``ell`` pairs, more; seeded byte stream); Python reads them back (``reports_from_json``: the JSON is the
wire's) and compares their counts with ``transition_matrix`` (chi-square, alpha 1e-6 split over the 8
checks). A survey's ``type: keyvalue`` question the same way from its exact configuration (one user per
variant), its values mapped onto ``[-1, 1]`` by the survey page's ``unitValue``, which gives Python's
client's numbers bit for bit. The browser's epsilon is the configuration's (``fromConfig`` refuses a
mismatch). Power: the same counts against the law of the user's pairs with the opposite values fail.
"""

from __future__ import annotations

import numpy as np
import pytest
from node_env import ROOT, run_node

import deniable as dn
from deniable import testing

pytestmark = pytest.mark.browser

CLI = ROOT / "tests" / "js" / "privatize_cli.mjs"
ALPHA = 1e-6 / 8
N = 20_000
KEYS = ["a", "b", "c", "d"]
USERS = [[["c", 0.4]], [["a", 1.0], ["d", -0.6]], [["a", -1.0], ["b", 0.2], ["d", 0.9]]]


def _codes(m: dn.PCKV, reports: np.ndarray) -> np.ndarray:
    if m.variant == "grr":
        return np.asarray(reports, dtype=np.int64)
    return (m.unpack(reports).astype(np.int64) + 1) @ (3 ** np.arange(m.cells)[::-1])


@pytest.mark.parametrize("variant", ["ue", "grr"])
def test_browser_reports_follow_the_exact_law(variant: str) -> None:
    m = dn.PCKV(KEYS, epsilon=1.0, max_pairs=3, ell=2, variant=variant)
    for i, user in enumerate(USERS):
        items = run_node(CLI, {"config": m.to_config(), "values": [user] * N, "seed": f"pckv-{variant}-{i}"})
        counts = np.bincount(_codes(m, m.reports_from_json(items)), minlength=3**m.cells if variant == "ue" else 0)
        law = m.transition_matrix([user])[1][0]
        counts = np.pad(counts, (0, law.size - counts.size))
        r = testing.chi_square_gof(counts, law, ALPHA, label=f"{variant} {user}")
        assert r.passed, r.message
        flipped = [[k, -v] for k, v in user]
        if any(v != 0 for _, v in user):
            assert not testing.chi_square_gof(counts, m.transition_matrix([flipped])[1][0], ALPHA).passed


def test_bad_values_are_refused_naming_the_value() -> None:
    m = dn.PCKV(KEYS, epsilon=1.0, max_pairs=2)
    for value, message in [
        ([["a", 0.1], ["b", 0.1], ["c", 0.1]], "max_pairs=2"),
        ([["z", 0.1]], "declared keys"),
        ([["a", 1.5]], r"\[-1, 1\]"),
        ([["a", 0.1], ["a", 0.2]], "twice"),
        ("a", "pairs"),
    ]:
        with pytest.raises(Exception, match=message):
            run_node(CLI, {"config": m.to_config(), "values": [value]})


def _question(variant: str) -> dict:
    from deniable.server._surveys import load_survey

    question = {"id": "load", "text": "How long?", "type": "keyvalue", "keys": KEYS, "low": -3.5, "high": 12.0,
                "max_pairs": 3, "ell": 2, "epsilon": 1.0, "mechanism": variant}
    survey = load_survey({"id": "s", "title": "S", "budget": 1, "questions": [question]})
    return survey.questions[0].public_json()


def test_the_pages_mapping_onto_minus_one_to_one_is_pythons() -> None:
    from deniable._question_devices import KeyValueDevice

    device = KeyValueDevice(_question("ue"))
    values = [-3.5, 12.0, 0.0, 4.25, *np.random.default_rng(5).uniform(-3.5, 12.0, 200).tolist()]
    mapped = run_node(ROOT / "tests" / "js" / "unit_value_cli.mjs", {"low": -3.5, "high": 12.0, "values": values})
    assert mapped == [device._unit("k", x) for x in values]  # bit for bit (JSON round-trips doubles exactly)
    assert mapped[:2] == [-1.0, 1.0]


@pytest.mark.parametrize("variant", ["ue", "grr"])
def test_a_survey_questions_reports_follow_the_exact_law(variant: str) -> None:
    from deniable._question_devices import KeyValueDevice

    question = _question(variant)
    device = KeyValueDevice(question)
    m = device.mechanism
    user = [[k, device._unit(k, x)] for k, x in (("b", 10.0), ("d", -1.0), ("a", 3.0))]
    items = run_node(CLI, {"config": question["mechanism"], "values": [user] * N, "seed": f"survey-{variant}"})
    counts = np.bincount(_codes(m, m.reports_from_json(items)), minlength=3**m.cells if variant == "ue" else 0)
    law = m.transition_matrix([user])[1][0]
    r = testing.chi_square_gof(np.pad(counts, (0, law.size - counts.size)), law, ALPHA, label=f"survey {variant}")
    assert r.passed, r.message
