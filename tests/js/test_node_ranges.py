"""The browser client's range and set-valued samplers (ranges.js under node) against their exact laws.

For each mechanism (HierarchicalHistogram with OUE and with OLH, HaarHRR, SetValued with GRR, and the
SetValued of a survey's ``type: multiple`` question with OUE and with OLH, from its exact configuration),
node makes 20,000 reports of each of three values (seeded byte stream; a choose-several answer may be
empty: all padding); Python reads them back (``reports_from_json``: the JSON is the wire's) and compares
their counts with the exact law of ``transition_matrix`` (chi-square, alpha 1e-6 split over the 18
checks). Power: the same counts against the law of the mechanism at a 25% larger epsilon fail
(chi-square far beyond its critical value: a miss below 1e-12 in every case).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from node_env import ROOT, run_node
from range_outputs import output_index

import deniable as dn
from deniable import testing

pytestmark = pytest.mark.browser

CLI = ROOT / "tests" / "js" / "privatize_cli.mjs"
ALPHA = 1e-6 / 18
N = 20_000
ITEMS = ["a", "b", "c", "d"]


def _multiple(oracle: str) -> Any:
    """The randomizer of a survey's choose-several question (its exact configuration, as devices get it)."""
    from deniable.server._surveys import load_survey

    def build(eps: float) -> Any:
        question = {"id": "apps", "text": "Which?", "type": "multiple", "options": ITEMS, "max_choices": 3, "ell": 2,
                    "epsilon": eps, "oracle": oracle}
        return load_survey({"id": "s", "title": "S", "budget": eps, "questions": [question]}).questions[0].randomizer

    return build


CASES: dict[str, Any] = {
    "hh-oue": (lambda eps: dn.HierarchicalHistogram(0, 8, bins=4, branching=2, epsilon=eps, oracle="oue"),
               [0.5, 3.0, 7.9]),
    "hh-olh": (lambda eps: dn.HierarchicalHistogram(0, 8, bins=4, branching=2, epsilon=eps, oracle="olh"),
               [0.5, 3.0, 8.0]),
    "haar": (lambda eps: dn.HaarHRR(0, 8, bins=8, epsilon=eps), [0.0, 3.5, 7.9]),
    "set-grr": (lambda eps: dn.SetValued(ITEMS, epsilon=eps, max_items=3, ell=2, oracle="grr"),
                [["a"], ["b", "d"], ["a", "c", "d"]]),
    "multiple-oue": (_multiple("oue"), [[], ["b", "d"], ["a", "c", "d"]]),
    "multiple-olh": (_multiple("olh"), [[], ["c"], ["a", "b", "d"]]),
}


def _set_outputs(m: Any, reports: Any) -> Any:
    """Each set-valued report's column in its oracle's ``transition_matrix`` (GRR: the reported position)."""
    if m.mechanism.report_kind == "category":
        return np.asarray(reports, dtype=np.int64)
    outputs, _ = m.mechanism.transition_matrix()
    where = {o: i for i, o in enumerate(outputs)}
    if reports.dtype.names:  # OLH: (seed, bucket)
        return np.array([where[(int(r["seed"]), int(r["value"]))] for r in reports])
    k = m.mechanism.k  # OUE: the bits, unpacked
    return np.array([where[tuple(int(b) for b in np.unpackbits(r, count=k))] for r in reports])


@pytest.mark.parametrize("name", sorted(CASES))
def test_browser_reports_follow_the_exact_law(name: str) -> None:
    build, values = CASES[name]
    m, wrong = build(1.0), build(1.25)
    for i, value in enumerate(values):
        items = run_node(CLI, {"config": m.to_config(), "values": [value] * N, "seed": f"{name}-{i}"})
        reports = m.reports_from_json(items)
        if isinstance(m, dn.SetValued):
            law, wrong_law = m.transition_matrix([value])[0], wrong.transition_matrix([value])[0]
            counts = np.bincount(_set_outputs(m, reports), minlength=law.size)
        else:
            row = int(m.bin_of([value])[0])
            law, wrong_law = m.transition_matrix()[1][row], wrong.transition_matrix()[1][row]
            counts = np.bincount(output_index(m, reports), minlength=law.size)
        r = testing.chi_square_gof(counts, law, ALPHA, label=f"{name} value {value!r}")
        assert r.passed, r.message
        assert not testing.chi_square_gof(counts, wrong_law, ALPHA).passed


def test_bad_values_are_refused_naming_the_value() -> None:
    m = dn.HaarHRR(0, 8, bins=8, epsilon=1.0)
    with pytest.raises(Exception, match="domain"):
        run_node(CLI, {"config": m.to_config(), "values": [9.0]})
    s = dn.SetValued(ITEMS, epsilon=1.0, max_items=2)
    with pytest.raises(Exception, match="max_items=2"):
        run_node(CLI, {"config": s.to_config(), "values": [["a", "b", "c"]]})


def test_a_set_valued_olh_claim_is_bounded_by_its_oracle() -> None:
    """OLH's exact amplified epsilon is the server's search; the device accepts a claim up to its oracle's
    epsilon (a configuration of this amplified case) and refuses one above it."""
    m = dn.SetValued(ITEMS[:3], epsilon=1.0, max_items=3, oracle="olh")
    assert m.epsilon < 1.0 < m.oracle_epsilon  # 3 items padded to 3: the oracle runs above epsilon 1
    config = m.to_config()
    assert len(run_node(CLI, {"config": config, "values": [["a"]], "seed": "olh-claim"})) == 1
    with pytest.raises(Exception, match="epsilon"):
        run_node(CLI, {"config": {**config, "epsilon": m.oracle_epsilon * 1.01}, "values": [["a"]]})
