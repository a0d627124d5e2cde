"""Confidence sequences: the boundary against reference widths (the normal mixture of Waudby-Smith, Wu &
Ramdas 2023 as the nprr package computes it, and their predictable Hoeffding sequence), the result shape,
looks, and refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest

import deniable as dn
from deniable._sequences import best_beta, mixture_boundary

# Reference half-widths for binary randomized response at epsilon = 1 (NPRR's r = tanh(1/2)), alpha = 0.05,
# tuned for 10,000 reports. nprr's nprr_twosided_runningmean_cs writes log(sqrt(t beta^2) / alpha) where the
# mixture gives log(sqrt(1 + t beta^2) / alpha): the same to 0.7% at t = 10,000. Its tuning (confseq's
# rho2_opt) gives beta = 0.02817 where the exact minimum is 0.02866. NPRR-H-CS (predictable plug-in
# Hoeffding, lambda_t = min(1, sqrt(8 log(2/alpha) / (t log(t + 1))))): 0.0532 at t = 10,000.
REFERENCE = {1000: 0.12265, 10_000: 0.032609, 100_000: 0.011101}
HOEFFDING = {1000: 0.13230, 10_000: 0.053198, 100_000: 0.020641}


def test_widths_against_the_references() -> None:
    r, alpha = math.tanh(0.5), 0.05
    beta = best_beta(10_000, alpha)
    assert beta == pytest.approx(0.028657, rel=1e-3)
    assert beta == pytest.approx(math.sqrt((-2 * math.log(alpha) + math.log(1 - 2 * math.log(alpha))) / 10_000),
                                 rel=0.02)
    for t, reference in REFERENCE.items():
        ours = float(mixture_boundary(t, beta, alpha)) / r
        assert reference <= ours <= reference * 1.07, t  # the +1 in the log: wider, never narrower
        assert ours < HOEFFDING[t], t


def test_sequence_of_binary_rr_is_the_mixture_interval(rng: np.random.Generator) -> None:
    m = dn.BinaryRR(epsilon=1.0)
    rounds = [m.privatize_many(rng.random(400) < 0.3, rng=rng) for _ in range(5)]
    cs = m.confidence_sequence(rounds, alpha=0.1, planned_n=2000)
    assert cs.n.tolist() == [400, 800, 1200, 1600, 2000] and cs.labels == (False, True)
    pooled = m.estimate(np.concatenate(rounds))
    np.testing.assert_allclose(cs.estimate[-1], pooled.frequencies)
    half = mixture_boundary(2000, cs.beta, 0.1) / math.tanh(0.5)
    np.testing.assert_allclose(cs.high[-1, 1] - cs.estimate[-1, 1], half)
    assert cs.confidence_interval().low[1] == cs.low[-1, 1]
    frame = cs.to_frame()
    assert list(frame.columns) == ["look", "n", "category", "estimate", "ci_low", "ci_high"] and len(frame) == 10
    assert cs.to_dict()["alpha"] == 0.1 and cs.to_dict()["confidence_level"] == pytest.approx(0.9)
    with pytest.raises(ValueError, match="confidence_level must be 1 - alpha = 0.9"):
        cs.confidence_interval(0.95)
    # the same reports as one array looked at after each round
    flat = m.confidence_sequence(np.concatenate(rounds), alpha=0.1, planned_n=2000, looks=[400, 800, 1200, 1600, 2000])
    np.testing.assert_allclose(flat.low, cs.low)
    simultaneous = m.confidence_sequence(rounds, alpha=0.1, planned_n=2000, simultaneous=True)
    assert np.all(simultaneous.high - simultaneous.low >= cs.high - cs.low)


def test_default_looks_and_means(rng: np.random.Generator) -> None:
    m = dn.Duchi(0, 10, epsilon=2.0)
    cs = m.confidence_sequence(m.privatize_many(rng.uniform(2, 4, 5000), rng=rng))
    assert len(cs.n) == 50 and cs.n[-1] == 5000 and cs.labels == ("mean",)
    assert np.all(np.diff(cs.high - cs.low)[10:] < 0) and bool(cs.covers(3.0)[0])
    assert np.all((cs.low >= 0) & (cs.high <= 10))


def test_refusals(rng: np.random.Generator) -> None:
    m = dn.GRR(3, epsilon=1.0)
    reports = m.privatize_many([0] * 100, rng=rng)
    with pytest.raises(ValueError, match="alpha must be in"):
        m.confidence_sequence(reports, alpha=1.5)
    with pytest.raises(ValueError, match="planned_n must be a positive int"):
        m.confidence_sequence(reports, planned_n=0)
    with pytest.raises(ValueError, match="looks must be increasing report counts in 1..100"):
        m.confidence_sequence(reports, looks=[50, 20])
    with pytest.raises(ValueError, match="needs at least one report"):
        m.confidence_sequence(reports[:0])
    with pytest.raises(ValueError, match="looks applies to one array"):
        m.confidence_sequence([reports, reports], looks=[1])
    with pytest.raises(TypeError, match="needs a frequency oracle or a numeric mechanism"):
        d = dn.survey.design("Warner", 0.7)
        d.confidence_sequence(d.privatize_many([True] * 10, rng=rng))
