"""Survey designs randomized by the browser client (designs.js) decode and estimate in Python.

For every model (the eleven RRreg designs and Custom), a fixed population of
N respondents answers through ``fromConfig(d.to_config()).privatizeMany`` under
node; then

* ``d.reports_from_json`` accepts the reports and ``d.reports_to_json`` writes
  them back byte for byte (the canonical wire form);
* each answer cell's count lies in its exact band: the count is a sum of
  binomials, one per kind of respondent (truth, and UQTunknown's unrelated
  answer) with the cell's probability from ``d.transition_matrix()`` (a
  two-group design's times 1/2, the uniform group), so its distribution is
  their convolution; alpha = 1e-6 in all, split (Bonferroni) over the cases
  and then over each case's cells;
* ``d.estimate`` (the prevalence fit of the aggregate) lies between its values
  at the corners of the box of cell bands: the estimate is monotone in each
  count, so this holds whenever every count is in its band (no further alpha).

Power: the bands of a wrong population (the shares of the states reversed)
reject the counts, and its corners exclude the estimate.
"""

from __future__ import annotations

import functools
import itertools
import sys
from typing import Any

import numpy as np
import pytest
from node_env import ROOT, run_node
from scipy import stats

from deniable import survey as sv

sys.path.insert(0, str(ROOT / "tests" / "js" / "fixtures"))
from make_design_fixtures import report_distribution  # noqa: E402

pytestmark = pytest.mark.browser

HERE = ROOT / "tests" / "js"
ALPHA = 1e-6
N = 4000

UQT = [{"answer": a, "unrelated": u} for a in (False, True) for u in (False, True)]
CUSTOM = [["7/10", "1/5", "1/10"], ["1/10", "7/10", "1/5"], ["1/5", "1/10", "7/10"]]
# (name, design, the kinds of respondent, how many of each: the population, then a wrong one)
CASES: list[tuple[str, sv.Design, list[Any], list[int], list[int]]] = [
    ("warner", sv.Warner("3/10"), [False, True], [2800, 1200], [1200, 2800]),
    ("crosswise", sv.Crosswise("1/4"), [False, True], [2800, 1200], [1200, 2800]),
    ("triangular", sv.Triangular("1/3"), [False, True], [2800, 1200], [1200, 2800]),
    ("mangat", sv.Mangat("7/10"), [False, True], [2800, 1200], [1200, 2800]),
    ("uqt-known", sv.UnrelatedQuestion(["2/3", "1/2"]), [False, True], [2800, 1200], [1200, 2800]),
    ("kuk-1-card", sv.Kuk(["1/3", "2/3"]), [False, True], [2800, 1200], [1200, 2800]),
    ("kuk-3-cards", sv.Kuk(["3/5", "1/5"], cards=3), [False, True], [2800, 1200], [1200, 2800]),
    ("fr", sv.ForcedResponse(["1/6", "1/6"]), [False, True], [2800, 1200], [1200, 2800]),
    ("fr-3-categories", sv.ForcedResponse(["1/10", "1/10", "1/10"]), [0, 1, 2], [2000, 1200, 800],
     [800, 1200, 2000]),
    # the unrelated answer: half the respondents, independently of the truth
    ("uqt-unknown", sv.UnrelatedQuestionUnknown(["1/5", "4/5"]), UQT, [1400, 1400, 600, 600], [600, 600, 1400, 1400]),
    ("sld", sv.StochasticLieDetector(["3/10", "7/10"]), [False, True], [2800, 1200], [1200, 2800]),
    ("cdm", sv.CheatingDetection(["3/10", "3/5"]), [False, True], [2800, 1200], [1200, 2800]),
    ("cdm-sym", sv.SymmetricCheatingDetection(["1/4", "1/4", "1/2", "1/4"]), [False, True], [2800, 1200],
     [1200, 2800]),
    ("custom-3x3", sv.Custom(CUSTOM), [0, 1, 2], [2000, 1200, 800], [800, 1200, 2000]),
    ("custom-2x3", sv.Custom([["1/2", "1/4", "1/4"], ["1/4", "1/2", "1/4"]]), [False, True], [2800, 1200],
     [1200, 2800]),
]
ALPHA_EACH = ALPHA / len(CASES)


def count_band(sizes: list[int], probs: list[float], alpha: float) -> tuple[int, int]:
    """``[low, high]`` of ``sum_i Binomial(sizes[i], probs[i])``, leaving at most alpha/2 in each tail."""
    pmfs = (stats.binom.pmf(np.arange(n + 1), n, p) for n, p in zip(sizes, probs, strict=True))
    pmf = functools.reduce(np.convolve, pmfs)
    cdf = np.cumsum(pmf)
    low = int(np.searchsorted(cdf, alpha / 2, side="right"))  # smallest c with P(C <= c) > alpha/2
    survival = np.cumsum(pmf[::-1])[::-1]  # P(C >= c)
    high = int(np.flatnonzero(survival > alpha / 2)[-1])
    return low, high


def bands(d: sv.Design, kinds: list[Any], sizes: list[int]) -> list[tuple[int, int]]:
    """The band of each answer cell ``(g - 1) * R + r`` for the population, at ALPHA_EACH over the cells."""
    cells = np.array([report_distribution(d, kind)[1] for kind in kinds])  # [kind, cell]
    return [count_band(sizes, list(cells[:, c]), ALPHA_EACH / cells.shape[1]) for c in range(cells.shape[1])]


def corner_range(d: sv.Design, box: list[tuple[int, int]]) -> dict[str, tuple[float, float]]:
    """Each parameter's smallest and largest estimate over the corners of the box of cell counts."""
    fits = [sv.prevalence_from_counts(np.array(c, dtype=np.int64).reshape(d.groups, -1), d).params
            for c in itertools.product(*({low, high} for low, high in box))]
    return {k: (min(f[k] for f in fits), max(f[k] for f in fits)) for k in fits[0]}


def outside(counts: np.ndarray, box: list[tuple[int, int]]) -> list[str]:
    return [f"cell {c}: {n} outside [{low}, {high}]" for c, (n, (low, high)) in enumerate(zip(counts, box, strict=True))
            if not low <= n <= high]


@pytest.mark.parametrize(("name", "d", "kinds", "sizes", "wrong"), CASES, ids=[c[0] for c in CASES])
def test_js_design_reports_decode_and_estimate_in_python(
    name: str, d: sv.Design, kinds: list[Any], sizes: list[int], wrong: list[int]
) -> None:
    assert sum(sizes) == sum(wrong) == N
    values = [kind for kind, n in zip(kinds, sizes, strict=True) for _ in range(n)]
    reports = run_node(HERE / "privatize_cli.mjs", {"config": d.to_config(), "values": values, "seed": name})
    assert len(reports) == N
    parsed = d.reports_from_json(reports)
    assert d.reports_to_json(parsed) == reports  # the canonical wire form
    counts = d.aggregate(parsed).counts
    box = bands(d, kinds, sizes)
    assert outside(counts, box) == []
    fit = d.estimate(parsed)
    assert fit.n == N
    for k, (low, high) in corner_range(d, box).items():
        assert low - 1e-9 <= fit.params[k] <= high + 1e-9, f"{k} = {fit.params[k]} outside [{low}, {high}]"
    # power: a wrong population's bands reject the counts, its corners exclude the estimate
    wrong_box = bands(d, kinds, wrong)
    assert outside(counts, wrong_box) != []
    first = d.param_names[0]
    low, high = corner_range(d, wrong_box)[first]
    assert not low <= fit.params[first] <= high
