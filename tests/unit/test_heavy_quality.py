"""The discovery workload and its scores (recall, precision, count error)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from deniable.heavy.quality import score, zipf_strings
from deniable.heavy.results import Discovery


def discovery(values: list[str], counts: list[float]) -> Discovery:
    k = len(values)
    c = np.array(counts, dtype=float)
    return Discovery(tuple(values), np.zeros(k, bool), c, np.ones(k), c - 1, c + 1, 100, 0.95)


def test_score_counts_hits_against_the_true_top() -> None:
    values = ["a"] * 50 + ["b"] * 30 + ["c"] * 15 + ["d"] * 5
    got = score(values, discovery(["a", "x", "c"], [55.0, 9.0, 12.0]), top=3)  # true top 3: a, b, c
    assert got["recall"] == pytest.approx(2 / 3) and got["precision"] == pytest.approx(2 / 3)
    assert got["relative_error"] == pytest.approx(np.median([5 / 50, 3 / 15]))
    empty = score(values, discovery([], []), top=2)
    assert empty == {"recall": 0.0, "precision": 1.0, "relative_error": empty["relative_error"]}
    assert np.isnan(empty["relative_error"])


def test_zipf_strings_body_and_unique_tail() -> None:
    rng = np.random.default_rng(7)
    values = zipf_strings(20_000, rng, words=100, tail=0.25, max_length=6)
    counts = Counter(values)
    assert len(values) == 20_000 and all(v.isalpha() and v.islower() and len(v) <= 6 for v in values)
    singles = [v for v, c in counts.items() if c == 1 and len(v) == 6]
    assert 4_800 <= len(singles) <= 5_100  # the 5,000 tail words (a body word may also be seen once)
    shares = sorted(counts.values(), reverse=True)[:2]
    # Zipf(1.1) over 100 words: the top word holds 1 / H = 23.1% of the body (15,000 devices); 6 sd: 2e-9
    top = 1 / np.sum(1 / np.arange(1, 101) ** 1.1)
    assert abs(shares[0] - top * 15_000) < 6 * np.sqrt(top * (1 - top) * 15_000)
    assert shares[0] / shares[1] == pytest.approx(2**1.1, rel=0.15)
    with pytest.raises(ValueError, match="tail < 1"):
        zipf_strings(10, rng, tail=1.0)
