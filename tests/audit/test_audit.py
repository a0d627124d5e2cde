"""Layer C: black-box privacy audits of the real client path.

``dn.audit`` gives a lower confidence bound on epsilon from 10^5 reports per
input (Clopper-Pearson, Bonferroni over its comparisons); a correct mechanism
exceeds its claim with probability < alpha = 1e-6 per audit.

Mutation checks (each must fail the audit):

* a mechanism that samples at 1.2 x epsilon but claims epsilon (caught when
  the claim is >= 1: over 8 seeds the bound sat 12 to 50 standard deviations
  above the claim; at epsilon 0.5 a 20% gap is 0.1 and the margin shrinks to
  ~5 sd, so those cells are not used for the power check);
* one that forgets to randomize one category (reports it truthfully);
* one that reuses a fixed seed for every respondent, so equal values give
  equal reports.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from liars import claiming
from mechanism_grid import CASES, Case, by_name, params

import deniable as dn
from deniable import testing

pytestmark = pytest.mark.audit

ALPHA = 1e-6
TRIALS = 100_000


@params()
def test_correct_mechanisms_pass(case: Case, rng: np.random.Generator) -> None:
    """alpha 1e-6 (inside dn.audit) on the seeded batch path."""
    m = case.make()
    result = dn.audit(m, trials=TRIALS, rng=rng, alpha=ALPHA)
    assert result.passed, str(result)
    assert result.epsilon_claimed == m.epsilon
    assert result.comparisons == len(result.details)


@params(by_name("GRR-k10-eps1", "OUE-k130-eps2", "OLH-k1000-eps1", "HadamardResponse-k100-eps1",
                "SubsetSelection-k20-eps1", "BinaryRR-prob0.75", "SUE-k70-eps1", "BLH-k100-eps2"))
def test_secure_path_passes(case: Case) -> None:
    """alpha 1e-6; the OS CSPRNG path (rng=None) is what devices run."""
    result = dn.audit(case.make(), trials=TRIALS, rng=None, alpha=ALPHA)
    assert result.passed, str(result)


BIT_SAMPLED = by_name("OUE-k12-eps0.5", "OUE-str9-eps1", "SUE-k12-eps3", "SUE-str5-eps0.5")


@params(BIT_SAMPLED)
def test_bit_samplers_pass_with_each_backend(case: Case, rng: np.random.Generator, accelerator: str) -> None:
    """alpha 1e-6; OUE/SUE through the numpy and the numba run decoder, seeded and secure paths
    (power: test_audit_catches_understated_epsilon_with_each_backend)."""
    m = case.make()
    for source in (rng, None):
        result = dn.audit(m, trials=TRIALS, rng=source, alpha=ALPHA / 2)
        assert result.passed, str(result)


@params([c for c in BIT_SAMPLED if c.requested is not None and c.requested >= 1.0])
def test_audit_catches_understated_epsilon_with_each_backend(
    case: Case, rng: np.random.Generator, accelerator: str
) -> None:
    m = case.make()
    liar = claiming(rebuilt(m, m.epsilon * 1.2), m.epsilon)
    assert not dn.audit(liar, trials=TRIALS, rng=rng, alpha=ALPHA / 2).passed


# ------------------------------------------------------------------ mutants
def rebuilt(m: Any, epsilon: float) -> Any:
    """The same family and structure (omega, g) at another epsilon."""
    name, dom = type(m).__name__, list(m.domain)
    if name == "BinaryRR":
        return dn.BinaryRR(epsilon=epsilon)
    if name == "SubsetSelection":
        return dn.SubsetSelection(dom, epsilon=epsilon, omega=m.omega)
    if name == "OLH":
        return dn.OLH(dom, epsilon=epsilon, g=m.g)
    return type(m)(dom, epsilon=epsilon)


POWER_CASES = [c for c in CASES if c.requested is not None and c.requested >= 1.0] + by_name(
    "BinaryRR-prob0.75", "GRR-ABCD-prob0.75"
)


@params(POWER_CASES)
def test_audit_catches_understated_epsilon(case: Case, rng: np.random.Generator) -> None:
    """Power: sampling at 1.2 x epsilon while claiming epsilon fails the audit."""
    m = case.make()
    liar = claiming(rebuilt(m, m.epsilon * 1.2), m.epsilon)
    assert liar.epsilon == m.epsilon and liar.privatize_many([m.domain[0]] * 3, rng=1).shape[0] == 3
    result = dn.audit(liar, trials=TRIALS, rng=rng, alpha=ALPHA)
    assert not result.passed, str(result)
    assert result.epsilon_lower > m.epsilon


def forgetful(m: Any, category: Any) -> Any:
    """``m`` with a bug: reports of ``category`` are (all but) unrandomized.

    They come from the same family at epsilon 30 (randomized with
    probability about e^-30), i.e. the truth, in the same report format.
    OUE keeps the true bit with probability 1/2 at any epsilon, so it borrows
    SUE's (same-format) reports instead; subset selection reports a fixed set.
    """
    truthful = dn.SUE(list(m.domain), epsilon=30.0) if type(m).__name__ == "OUE" else rebuilt(m, 30.0)
    position = m.domain_obj.encode_one(category)
    cls = type(m)

    def _sample(self: Any, idx: np.ndarray, source: Any) -> Any:
        reports = cls._sample(self, idx, source)
        hit = idx == position
        if hit.any():
            if cls is dn.SubsetSelection:  # a fixed set: the category and the next omega - 1
                fixed = sorted((position + i) % m.k for i in range(m.omega))
                reports["subset"][hit] = fixed
            else:
                reports[hit] = truthful._sample(idx[hit], source)
        return reports

    bug_cls = type(f"Forgetful{cls.__name__}", (cls,), {"_sample": _sample})
    bug = bug_cls.__new__(bug_cls)
    bug.__dict__.update(m.__dict__)
    return bug


@params()
def test_audit_catches_unrandomized_category(case: Case, rng: np.random.Generator) -> None:
    """Power: a client that reports one category truthfully fails (bound far above the claim)."""
    m = case.make()
    bug = forgetful(m, m.domain[0])
    result = dn.audit(bug, trials=TRIALS, rng=rng, alpha=ALPHA)
    assert not result.passed, str(result)


class ReusedSeedGRR(dn.GRR):
    """A broken client: every respondent's device seeds its generator with the same constant."""

    SEED = 2024

    def privatize(self, value: Any, rng: Any = None) -> Any:
        return super().privatize(value, rng=np.random.default_rng(self.SEED))

    def privatize_many(self, values: Any, rng: Any = None) -> np.ndarray:
        positions = self.domain_obj.encode(values)
        per_value = np.array([self.privatize(v) for v in self.domain])  # one fixed report per value
        return per_value[positions]


def _output_events(m: Any, reports: Any, x: Any, other: Any) -> np.ndarray:
    """Event = the reported category itself (k events)."""
    return m.validate(reports)


def test_audit_catches_reused_seed(rng: np.random.Generator) -> None:
    """A reused seed makes each report a fixed function of the value.

    For GRR that function separates the pair (first, last category) for every
    seed: with ``r`` the shared draw, either ``r < a`` (both report the truth)
    or both report "the j-th other category", which is ``j + 1`` for the first
    and ``j`` for the last. The audit on the full output therefore fails for
    any constant seed, and the chi-square test of Layer B rejects the
    degenerate output distribution as well. The honest GRR passes the same
    audit (alpha 1e-6).
    """
    m = ReusedSeedGRR(6, epsilon=1.0)
    reports = m.privatize_many([0] * 10_000)
    assert np.unique(reports).size == 1
    result = dn.audit(m, trials=TRIALS, rng=rng, alpha=ALPHA, events=_output_events, n_events=m.k)
    assert not result.passed, str(result)
    e = np.exp(m.epsilon)
    row = np.full(m.k, 1 / (e + m.k - 1))
    row[0] = e / (e + m.k - 1)
    check = testing.chi_square_gof(np.bincount(reports, minlength=m.k), row, ALPHA)
    assert not check.passed, str(check)
    # the same audit passes the honest mechanism
    honest = dn.GRR(6, epsilon=1.0)
    ok = dn.audit(honest, trials=TRIALS, rng=rng, alpha=ALPHA, events=_output_events, n_events=honest.k)
    assert ok.passed, str(ok)


def test_audit_result_reports() -> None:
    """The result object and its text: PASS for a correct GRR, FAIL for one understating its epsilon
    (audits at alpha 1e-6)."""
    m = dn.GRR(4, epsilon=1.0)
    result = dn.audit(m, trials=1000, rng=3)
    text = str(result)
    assert text.startswith("PASS") and "claimed epsilon 1" in text
    assert result.trials == 1000 and result.alpha == 1e-6
    assert result.worst is not None and result.worst[0] in m.domain
    # power: the same 1,000-trial audit of a GRR sampling at epsilon 2 while claiming 1 fails
    lying = dn.audit(claiming(rebuilt(m, 2.0), 1.0), trials=1000, rng=3)
    assert not lying.passed and str(lying).startswith("FAIL: claimed epsilon 1, measured lower bound")
    assert lying.epsilon_lower > 1.0
