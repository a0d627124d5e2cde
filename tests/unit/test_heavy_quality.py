"""The discovery workload and its scores (recall, precision, count error)."""

from __future__ import annotations

import inspect
import time
import warnings
from collections import Counter

import numpy as np
import pytest

import deniable as dn
from deniable.heavy._quality import discovery_sweep, score, zipf_strings
from deniable.heavy._results import Discovery


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


def test_score_of_one_value_and_of_nothing_found() -> None:
    values = ["a"] * 3 + ["b"]
    assert score(values, discovery(["a"], [2.0]), top=1) == {"recall": 1.0, "precision": 1.0,
                                                              "relative_error": pytest.approx(1 / 3)}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no median of an empty list (numpy would warn)
        assert np.isnan(score(values, discovery(["x"], [1.0]), top=1)["relative_error"])


def test_defaults_are_the_documented_workload() -> None:
    """1,000 words, Zipf(1.1), a 25% tail, 6 letters; the sweep keeps 32 prefixes (BENCHMARKS.md's workload).

    Checked by what they do as well as by the signature: every one of the 1,000 words is seen among
    400,000 devices (the rarest's share is 9e-5: 36 expected), and the tail's words have 6 letters. The
    sweep's 32 prefixes: with 48 words of equal share it scores as 32 kept by hand do (32 of the 48 found;
    33 find 33).
    """
    z = inspect.signature(zipf_strings).parameters
    assert (z["words"].default, z["s"].default, z["tail"].default, z["max_length"].default) == (1000, 1.1, 0.25, 6)
    d = inspect.signature(discovery_sweep).parameters
    assert (d["max_length"].default, d["top_k"].default) == (6, 32)
    rng = np.random.default_rng(12)
    assert len(set(zipf_strings(400_000, rng, tail=0.0))) == 1000
    assert max(map(len, zipf_strings(1000, rng))) == 6
    workload = {"words": 48, "s": 0.0, "tail": 0.0}
    sweep = discovery_sweep(["pem"], [8.0], [20_000], 48, np.random.default_rng(6), **workload)  # type: ignore[arg-type]

    def by_hand(top_k: int) -> dict[str, float]:
        rng = np.random.default_rng(6)
        values = zipf_strings(20_000, rng, **workload)  # type: ignore[arg-type]
        hh = dn.HeavyHitters(epsilon=8.0, method="pem", max_length=6, top_k=top_k, seed=rng.bytes(32))
        return score(values, hh.identify(hh.aggregate(hh.privatize_many(values, rng=rng)), top=48), 48)

    want = by_hand(32)
    assert {k: sweep[0][k] for k in want} == pytest.approx(want, nan_ok=True)
    assert want["recall"] == 32 / 48 and by_hand(33)["recall"] == 33 / 48


def test_zipf_strings_limits() -> None:
    rng = np.random.default_rng(3)
    for args in ({"n": 1}, {"n": 5, "tail": 0.0}, {"n": 5, "words": 1}, {"n": 5, "max_length": 3}):
        assert len(zipf_strings(rng=rng, **args)) == args["n"]  # type: ignore[arg-type]
    message = "^zipf_strings needs n >= 1, 0 <= tail < 1, words >= 1 and max_length >= 3$"
    for bad in ({"n": 0}, {"n": 5, "tail": 1.0}, {"n": 5, "tail": -0.1}, {"n": 5, "words": 0},
                {"n": 5, "max_length": 2}):
        with pytest.raises(ValueError, match=message):
            zipf_strings(rng=rng, **bad)  # type: ignore[arg-type]


def test_vocabulary_is_distinct_words_of_every_length_and_letter() -> None:
    """Every one of the 17,576 three-letter words when ``words`` asks for all of them (so no word twice);
    body words' lengths uniform over 3..max_length (6 sd), and every letter used."""
    rng = np.random.default_rng(11)
    every = zipf_strings(400_000, rng, words=26**3, s=0.0, tail=0.0, max_length=3)
    assert len(set(every)) == 26**3  # each word's share 1/17,576: all seen, but for a chance of 2e-6
    words = set(zipf_strings(200_000, rng, words=2000, s=0.0, tail=0.0, max_length=6))
    assert len(words) == 2000
    lengths = Counter(len(w) for w in words)
    sd = np.sqrt(2000 * 0.25 * 0.75)
    assert set(lengths) == {3, 4, 5, 6} and all(abs(c - 500) < 6 * sd for c in lengths.values())
    assert set("".join(words)) == set("abcdefghijklmnopqrstuvwxyz")


def test_discovery_sweep_records_one_seeded_run_each() -> None:
    """Each record is the score of the run the same seeded steps give, with its method, epsilon, n, top, and
    CPU seconds that add up to at most the sweep's own."""
    kw = {"max_length": 4, "top_k": 8, "words": 20}
    start = time.process_time()
    records = discovery_sweep(["pem", "sfp"], [8.0], [3000], 3, np.random.default_rng(5),
                              **kw)  # type: ignore[arg-type]
    spent = time.process_time() - start
    rng = np.random.default_rng(5)
    values = zipf_strings(3000, rng, max_length=4, words=20)
    assert [(r["method"], r["n"], r["top"]) for r in records] == [("pem", 3000, 3), ("sfp", 3000, 3)]
    for record in records:
        hh = dn.HeavyHitters(epsilon=8.0, method=record["method"], max_length=4, top_k=8, seed=rng.bytes(32))
        found = hh.identify(hh.aggregate(hh.privatize_many(values, rng=rng)), top=3)
        want = score(values, found, 3)
        assert record["epsilon"] == hh.epsilon  # the realised epsilon (at most 8)
        assert set(record) == {"method", "epsilon", "n", "top", "recall", "precision", "relative_error",
                               "device_seconds", "server_seconds"}
        assert {k: record[k] for k in want} == pytest.approx(want, nan_ok=True)
        assert record["device_seconds"] >= 0 and record["server_seconds"] >= 0
    assert sum(r["device_seconds"] + r["server_seconds"] for r in records) <= spent  # each run's own CPU time
    assert records[0]["recall"] == 1.0 and records[0]["relative_error"] < 0.5  # the check can see a wrong run

