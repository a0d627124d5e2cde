"""The browser client's sampler (deniable.js) under node, checked from the Python side.

* the node test suite (``node --test tests/js/``: calibrated chi-square and
  per-bit tests, alpha = 1e-6 in all, and deterministic unit tests) passes;
* the checked-in fixture it uses is what the generator builds now;
* reports made by deniable.js are accepted by ``m.reports_from_json`` and
  ``m.estimate`` estimates the truth: every estimate lies in its exact band
  (support_bands.py: the support count is a sum of two binomials) at
  alpha = 1e-6 split (Bonferroni) over every category of every mechanism; the
  same bands reject a wrong truth (power check).
"""

from __future__ import annotations

import subprocess
import sys
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from node_env import ROOT, node, run_node
from support_bands import outside_bands

import deniable as dn

pytestmark = pytest.mark.browser

HERE = ROOT / "tests" / "js"
ALPHA = 1e-6
N = 2000

MECHANISMS: list[tuple[str, Any, list[float]]] = [
    ("forced-response", dn.BinaryRR.forced_response(0.5, 0.5), [0.7, 0.3]),
    ("warner-2^63", dn.BinaryRR(prob=Fraction(5 * 2**60 + 3, 2**63)), [0.25, 0.75]),
    ("grr", dn.GRR(["WhatsApp", "Signal", "Telegram", "Other"], epsilon=1.5), [0.5, 0.3, 0.15, 0.05]),
    ("sue", dn.SUE(5, epsilon=2.0), [0.4, 0.3, 0.1, 0.1, 0.1]),
    ("oue", dn.OUE(list("abcdefghi"), epsilon=1.5), [0.3, 0.2, 0.1, 0.1, 0.1] + [0.05] * 4),
    ("blh", dn.BLH(6, epsilon=2.0), [0.5, 0.2, 0.1, 0.1, 0.05, 0.05]),
    ("olh", dn.OLH(12, epsilon=2.5), [0.4, 0.2] + [0.04] * 10),
    ("hadamard", dn.HadamardResponse(7, epsilon=2.0), [0.4, 0.3, 0.1, 0.1, 0.05, 0.05, 0.0]),
    ("subset", dn.SubsetSelection(10, epsilon=1.0), [0.35, 0.25] + [0.05] * 8),
    ("l-grr", dn.LGRR(["a", "b", "c", "d"], epsilon_perm=4.0, epsilon_1=2.0), [0.5, 0.3, 0.15, 0.05]),
    ("l-osue", dn.LOSUE(6, epsilon_perm=4.0, epsilon_1=2.0), [0.4, 0.3, 0.1, 0.1, 0.05, 0.05]),
    ("dbitflip", dn.DBitFlip(8, d=3, epsilon=2.0), [0.4, 0.2, 0.1, 0.1, 0.1, 0.05, 0.05, 0.0]),
]
ALPHA_EACH = ALPHA / (len(MECHANISMS) + 1)  # and 1BitMean; then split over the k categories by outside_bands


def _counts(truth: list[float]) -> np.ndarray:
    """How many of the N answers hold each category (a fixed population)."""
    counts = np.round(np.asarray(truth) * N).astype(int)
    counts[0] += N - counts.sum()
    return counts


@pytest.mark.parametrize("generator", ["make_fixtures.py", "make_design_fixtures.py"])
def test_fixture_is_current(generator: str) -> None:
    proc = subprocess.run(
        [sys.executable, str(HERE / "fixtures" / generator), "--check"], capture_output=True, text=True, cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("suite", sorted(p.name for p in HERE.glob("*.test.mjs")))
def test_node_suite_passes(suite: str) -> None:
    """``node --test tests/js/``, a file per test (so a parallel run shares them out): alpha 1e-6 for its
    calibrated tests (see mechanisms.test.mjs)."""
    proc = subprocess.run(
        [node(), "--test", f"tests/js/{suite}"], capture_output=True, text=True, cwd=ROOT, timeout=300
    )
    failed = [line for line in proc.stdout.splitlines() if line.startswith("not ok")]
    assert proc.returncode == 0, "\n".join(failed) + "\n" + proc.stdout[-6000:] + proc.stderr[-2000:]
    assert "# fail 0" in proc.stdout


@pytest.mark.parametrize(("name", "m", "truth"), MECHANISMS, ids=[c[0] for c in MECHANISMS])
def test_js_reports_decode_in_python(name: str, m: Any, truth: list[float]) -> None:
    """JS reports pass ``reports_from_json`` and estimate the truth (alpha 1e-6 over all cases)."""
    counts = _counts(truth)
    values = [v for v, c in zip(m.domain, counts, strict=True) for _ in range(c)]
    reports = run_node(HERE / "privatize_cli.mjs", {"config": m.to_config(), "values": values, "seed": name})
    assert len(reports) == N
    parsed = m.reports_from_json(reports)
    assert m.reports_to_json(parsed) == reports  # the canonical wire form, byte for byte
    est = m.estimate(parsed)
    assert est.n == N
    # the bands are of the support counts; dBitFlip's estimate also divides by how often each
    # bucket was sampled, so its support counts are checked through the pure-oracle estimate
    p, q = (np.array(x, dtype=float) for x in m.support_probabilities())
    freqs = (est.support_counts / N - q) / (p - q) if isinstance(m, dn.DBitFlip) else est.frequencies
    assert outside_bands(m, counts, freqs, ALPHA_EACH) == []
    # power: the bands of a wrong truth (the answers rotated by one category) reject it
    assert outside_bands(m, np.roll(counts, 1), freqs, ALPHA_EACH) != []


def test_js_one_bit_mean_reports_decode_in_python() -> None:
    """1BitMean reports from deniable.js decode: their number of ones lies in its exact band
    (a sum of two binomials), a wrong truth's band rejects it, the estimate debiases it."""
    from support_bands import support_count_band

    m = dn.OneBitMean(0, 100, epsilon=1.0, points=11)
    values = [12.5] * (N // 2) + [87.0] * (N // 2)  # each between two rounding points
    reports = run_node(HERE / "privatize_cli.mjs", {"config": m.to_config(), "values": values, "seed": "1bm"})
    parsed = m.reports_from_json(reports)
    ones = int(np.sum(parsed))
    pi = [float(m.report_distribution(v)[1][1]) for v in (12.5, 87.0)]
    low, high = support_count_band(N // 2, N, pi[0], pi[1], ALPHA_EACH)
    assert low <= ones <= high
    # power: the band of values 25 higher (the second clipped to the range's end) rejects them
    wrong = [float(m.report_distribution(v)[1][1]) for v in (37.5, 100.0)]
    w_low, w_high = support_count_band(N // 2, N, wrong[0], wrong[1], ALPHA_EACH)
    assert not w_low <= ones <= w_high
    est = m.estimate(parsed)
    # the estimate is the debiased share of ones: pi(x) = pi(low) + (x - low) / (high - low) slope
    at_low, at_high = (float(m.report_distribution(v)[1][1]) for v in (0.0, 100.0))
    assert est.n == N and est.mean == pytest.approx(100 * (ones / N - at_low) / (at_high - at_low), rel=1e-9)


def test_exact_band_of_a_single_binomial() -> None:
    """With nobody holding v the support count is Binomial(n, q*): the band is its quantiles."""
    from scipy import stats
    from support_bands import support_count_band

    for n, q, alpha in ((300, 0.12, 1e-7), (2000, 0.5, 1e-6), (50, 0.02, 0.01)):
        assert support_count_band(0, n, 0.9, q, alpha) == (
            int(stats.binom.ppf(alpha / 2, n, q)), int(stats.binom.isf(alpha / 2, n, q))
        )


def test_wide_seeds_survive_the_wire() -> None:
    """55-bit OLH seeds (above 2^53) reach Python exactly (JSON integers, not rounded floats)."""
    m = dn.OLH(2**16, epsilon=8.0, g=2**20)
    assert m.seed_bits == 55
    reports = run_node(HERE / "privatize_cli.mjs", {"config": m.to_config(), "values": [0, 65535] * 50, "seed": "wide"})
    parsed = m.reports_from_json(reports)
    assert int(parsed["seed"].max()) >= 2**53  # P(all 100 seeds < 2^53) = 2^-200
    assert [int(s) for s in parsed["seed"]] == [r["seed"] for r in reports]
