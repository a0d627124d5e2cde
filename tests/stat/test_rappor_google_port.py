"""Reports of google/rappor's client decode here with ``hashing="google"``.

The client below is a port, written for this test from the algorithm google/rappor
publishes for its Python client (``client/python/rappor.py``), step by step as it
does them:

* Bloom filter: byte ``i`` of MD5(cohort as 4 big-endian bytes + the word) mod
  ``num_bits`` for hash ``i``;
* PRR keyed by the Bloom filter: ``d = HMAC-SHA256(secret, filter as 4 big-endian
  bytes)``; for bit ``i`` the low bit of byte ``d[i]`` is the uniform bit and
  ``(d[i] >> 1) < 128 f`` the noise mask; ``prr = (bloom & ~mask) | (uniform & mask)``;
* IRR: one uniform float per bit, ``bit = u < p`` (resp. ``q``);
  ``irr = (p_bits & ~prr) | (q_bits & prr)``.

Each of 24,000 simulated users has its own secret, a uniform cohort and one
value; their IRRs travel in Google's two forms (ints and MSB-first bit strings).

Alpha: the decoded frequencies (respondents target: the values are fixed) must lie
within z standard errors of the truth, z at 1e-6 / k two-sided (Bonferroni over the
k candidates), so a correct decoder fails < 1e-6. Power: the same reports decoded
with deniable's own hashing (the mistake that decoded Google's reports to wrong
numbers without an error) miss the truth by many standard errors.
"""

from __future__ import annotations

import hashlib
import hmac

import numpy as np
import pytest

from deniable.mechanisms._rappor import RAPPOR
from deniable.testing import estimate_check

pytestmark = pytest.mark.stat

F, P, Q = 0.5, 0.5, 0.75
NUM_BITS, NUM_HASHES, NUM_COHORTS = 32, 2, 16
CANDIDATES = ["apple", "banana", "cherry", "date", "elderberry", "fig", "grape", "kiwi"]
SHARES = [0.3, 0.2, 0.15, 0.1, 0.1, 0.08, 0.07, 0.0]
N = 24_000


class GoogleClientPort:
    """One user of google/rappor's Python client (ported from its published algorithm)."""

    def __init__(self, cohort: int, secret: bytes, rng: np.random.Generator) -> None:
        self.cohort, self.secret, self.rng = cohort, secret, rng

    def bloom(self, word: str) -> int:
        digest = hashlib.md5(self.cohort.to_bytes(4, "big") + word.encode()).digest()
        out = 0
        for i in range(NUM_HASHES):
            out |= 1 << (digest[i] % NUM_BITS)
        return out

    def prr(self, bloom: int) -> int:
        digest = hmac.new(self.secret, bloom.to_bytes(4, "big"), hashlib.sha256).digest()
        uniform = mask = 0
        for i in range(NUM_BITS):
            uniform |= (digest[i] & 1) << i
            mask |= int((digest[i] >> 1) < F * 128) << i
        return (bloom & ~mask) | (uniform & mask)

    def _bits(self, prob: float) -> int:
        out = 0
        for i, u in enumerate(self.rng.random(NUM_BITS)):
            out |= int(u < prob) << i
        return out

    def encode(self, word: str) -> int:
        prr = self.prr(self.bloom(word))
        p_bits, q_bits = self._bits(P), self._bits(Q)
        return (p_bits & ~prr) | (q_bits & prr)


def _google_reports(rng: np.random.Generator) -> tuple[list[int], list[int], np.ndarray]:
    counts = np.round(np.array(SHARES) * N).astype(int)
    words = np.repeat(np.arange(len(CANDIDATES)), counts)
    cohorts, irrs = [], []
    for w in words:
        cohort = int(rng.integers(NUM_COHORTS))
        client = GoogleClientPort(cohort, rng.bytes(32), rng)
        cohorts.append(cohort)
        irrs.append(client.encode(CANDIDATES[w]))
    return cohorts, irrs, counts / counts.sum()


def test_reports_of_googles_client_decode_to_the_truth() -> None:
    cohorts, irrs, truth = _google_reports(np.random.default_rng(20141103))
    params = dict(f=F, p=P, q=Q, num_bits=NUM_BITS, num_hashes=NUM_HASHES, num_cohorts=NUM_COHORTS)
    m = RAPPOR(CANDIDATES, hashing="google", **params)
    strings = [format(irr, f"0{NUM_BITS}b") for irr in irrs]  # the simulation CSV form, MSB first
    as_ints, as_strings = m.reports_from_google(cohorts, irrs), m.reports_from_google(cohorts, strings)
    assert m.aggregate(as_ints) == m.aggregate(as_strings)
    est = m.estimate(as_strings, target="respondents")
    assert (res := estimate_check(est.frequencies, truth, est.std_errors, 1e-6)), res.message
    ours = RAPPOR(CANDIDATES, **params)  # power: deniable's own hashing on Google's reports
    wrong = ours.estimate(ours.reports_from_json(m.reports_to_json(as_ints)), target="respondents")
    assert not estimate_check(wrong.frequencies, truth, wrong.std_errors, 1e-6)


@pytest.mark.parametrize("num_bits", [128, 256])
def test_wide_google_filters_decode_to_the_truth(num_bits: int) -> None:
    """deniable's own sampler with 128/256-bit Google filters (beyond one 64-bit word): same check."""
    m = RAPPOR(CANDIDATES, f=F, p=P, q=Q, num_bits=num_bits, num_hashes=4, num_cohorts=8, hashing="google")
    counts = np.round(np.array(SHARES) * N).astype(int)
    values = m.domain_obj.decode(np.repeat(np.arange(len(CANDIDATES)), counts))
    est = m.estimate(m.privatize_many(values, rng=num_bits), target="respondents")
    truth = counts / counts.sum()
    assert (res := estimate_check(est.frequencies, truth, est.std_errors, 1e-6 / 2)), res.message  # 2 widths
