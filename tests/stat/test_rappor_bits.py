"""RAPPOR's samplers bit by bit: one-time reports and the instantaneous response.

A one-time report (``privatize_many``) sets each bit independently with
probability ``q*`` where the value's Bloom filter has a 1 and ``p*`` where it
has a 0 (a fresh PRR then an IRR; the sampler draws each bit once from that
law). A client's IRR sets a bit with probability ``q`` where its PRR has a 1
and ``p`` where it has a 0. Checks: per-bit Wilson intervals and 2x2
independence of bit pairs (within a word, across the word boundary of a
two-word report, and across consecutive reports), through the seeded and the
secure paths, with each sampler backend (``accelerator`` fixture). A client's
PRR keeps a Bloom bit with probability ``1 - f`` and otherwise sets it to a
fair coin: 1 w.p. ``1 - f/2`` where the filter has a 1 and ``f/2`` where it
has a 0, drawn from each client's secret.

Alpha: each test function spends at most 1e-6, split by Bonferroni over its
configurations, paths and checks. Power: the same checks reject a sampler
with f = 0.4 claimed as f = 0.5 (one-time and PRR) and an IRR with p and q swapped.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from deniable import testing
from deniable._randomness import GeneratorSource, resolve
from deniable.mechanisms._rappor import RAPPOR
from deniable.testing import CheckResult

pytestmark = pytest.mark.stat

ALPHA = 1e-6
N = 40_000
CONFIGS = [dict(num_bits=64, num_hashes=2), dict(num_bits=100, num_hashes=3)]  # one word; two words
PATHS = ("seeded", "secure")


def make(f: float = 0.5, **kw: Any) -> RAPPOR:
    return RAPPOR(list("abcdefgh"), f=f, p=0.25, q=0.75, num_cohorts=1, **kw)


def lanes(m: RAPPOR, words: np.ndarray) -> np.ndarray:
    """``(n, num_bits)`` booleans: bit ``j`` of each report (word ``j // 64``, bit ``j % 64``)."""
    words = words.reshape(len(words), -1)
    j = np.arange(m.num_bits)
    return ((words[:, j // 64] >> (j % 64).astype(np.uint64)) & np.uint64(1)).astype(bool)


def bit_checks(bits: np.ndarray, rates: np.ndarray, alpha: float, label: str) -> list[CheckResult]:
    """Per-bit rates, and independence of neighbours, of the first bit with bit 64, and of bit 0 in
    consecutive reports."""
    n, width = bits.shape
    pairs = [(bits[:, 0], bits[:, 1]), (bits[:, width // 2], bits[:, width // 2 + 1]),
             (bits[:-1, width - 1], bits[1:, 0]), (bits[:-1, 0], bits[1:, 0])]
    if width > 64:
        pairs.append((bits[:, 63], bits[:, 64]))
    a = alpha / (width + len(pairs))
    out = [testing.proportion_check(int(bits[:, j].sum()), n, float(rates[j]), a, label=f"{label} bit {j}")
           for j in range(width)]
    out += [testing.independence_2x2(x, y, a, label=f"{label} pair {i}") for i, (x, y) in enumerate(pairs)]
    return out


def one_time(m: RAPPOR, path: str, rng: np.random.Generator) -> np.ndarray:
    reports = m.privatize_many(["c"] * N, rng=rng if path == "seeded" else None)
    assert np.all(reports["cohort"] == 0)
    return lanes(m, m._bit_words(reports))


def bloom(m: RAPPOR) -> np.ndarray:
    """The Bloom filter of "c" in cohort 0, as ``num_bits`` booleans."""
    return lanes(m, m._bloom3[0, m.domain_obj.encode_one("c")][None, :])[0]


def one_time_rates(m: RAPPOR) -> np.ndarray:
    return np.where(bloom(m), float(m.q_star), float(m.p_star))


def test_one_time_bits_follow_p_star_and_q_star(rng: np.random.Generator, accelerator: str) -> None:
    """Bits with rate q* on the Bloom filter, p* off it, independent; alpha 1e-6 over configs x paths."""
    alpha = ALPHA / (len(CONFIGS) * len(PATHS))
    failures = []
    for kw in CONFIGS:
        m = make(**kw)
        for path in PATHS:
            results = bit_checks(one_time(m, path, rng), one_time_rates(m), alpha, f"{m!r} {path}")
            failures += [str(r) for r in results if not r.passed]
    assert not failures, "\n".join(failures)


def test_one_time_check_has_power(rng: np.random.Generator, accelerator: str) -> None:
    """Power: reports of f = 0.4 checked against the rates of the claimed f = 0.5 fail."""
    alpha = ALPHA / (len(CONFIGS) * len(PATHS))
    for kw in CONFIGS:
        claimed, actual = make(**kw), make(f=0.4, **kw)
        results = bit_checks(one_time(actual, "seeded", rng), one_time_rates(claimed), alpha, "f=0.4")
        assert not testing.family(results), kw


def irr_bits(m: RAPPOR, prr: np.ndarray, source: Any) -> np.ndarray:
    return lanes(m, m._irr(np.repeat(prr[None, :], N, axis=0), source))


def test_irr_bits_follow_p_and_q(rng: np.random.Generator, accelerator: str) -> None:
    """A fixed PRR through the IRR: rate q where it has a 1, p where it has a 0; alpha 1e-6 over
    configs x paths."""
    alpha = ALPHA / (len(CONFIGS) * len(PATHS))
    failures = []
    for kw in CONFIGS:
        m = make(**kw)
        prr = m.client(secret=b"k" * 32, cohort=0)._permanent(m.domain_obj.encode_one("c"))[0]
        rates = np.where(lanes(m, prr[None, :])[0], m._q / 2**32, m._p / 2**32)
        for path, source in (("seeded", GeneratorSource(rng)), ("secure", resolve(None))):
            results = bit_checks(irr_bits(m, prr, source), rates, alpha, f"{m!r} IRR {path}")
            failures += [str(r) for r in results if not r.passed]
    assert not failures, "\n".join(failures)
    swapped = np.where(lanes(m, prr[None, :])[0], m._p / 2**32, m._q / 2**32)  # power: p and q swapped
    assert not testing.family(bit_checks(irr_bits(m, prr, GeneratorSource(rng)), swapped, alpha, "swapped"))


N_CLIENTS = 4_000  # one PRR per client (its own secret); 0.3 s per configuration


def prr_bits(m: RAPPOR, rng: np.random.Generator, clients: int = N_CLIENTS) -> np.ndarray:
    position = m.domain_obj.encode_one("c")
    return lanes(m, np.array([m.client(secret=rng.bytes(32), cohort=0)._permanent(position)[0]
                              for _ in range(clients)]))


def prr_rates(m: RAPPOR) -> np.ndarray:
    half_f = m._half_f / 2**32
    return np.where(bloom(m), 1 - half_f, half_f)


def test_prr_bits_follow_f(rng: np.random.Generator) -> None:
    """The PRRs of clients with seeded secrets: rate 1 - f/2 on the Bloom filter, f/2 off it, independent;
    alpha 1e-6 over configs. Power: the PRRs of 12,000 clients at f = 0.4 fail the rates of f = 0.5
    (each bit's rate is 0.05 off, 13.7 standard deviations, against z = 5.8; with 4,000 clients
    it was 7.9, and a bit missed 2% of the time)."""
    alpha = ALPHA / len(CONFIGS)
    failures = []
    for kw in CONFIGS:
        m = make(**kw)
        results = bit_checks(prr_bits(m, rng), prr_rates(m), alpha, f"{m!r} PRR")
        failures += [str(r) for r in results if not r.passed]
    assert not failures, "\n".join(failures)
    wrong = prr_bits(make(f=0.4, **kw), rng, 3 * N_CLIENTS)
    assert not testing.family(bit_checks(wrong, prr_rates(m), alpha, "f=0.4"))
