"""Layer C for the longitudinal mechanisms: black-box audits of each part separately.

* one report (the chain, or dBitFlip / 1BitMean's single report, with and
  without output perturbation): ``dn.audit`` of the real ``privatize_many``
  path against ``epsilon`` (L-GRR / L-OSUE's ``epsilon_1``), seeded and on
  the OS CSPRNG;
* the memoized part: the first round of L-GRR / L-OSUE alone against
  ``epsilon_perm`` (the mechanism's own ``_permanent`` sampler, and the
  device client's secret-derived first round over 20000 fresh clients);
  for dBitFlip and 1BitMean the whole report is memoized, so fresh clients'
  reports are audited against ``epsilon``;
* the fresh part: the second round alone, fed one-hot inputs, against
  ``epsilon_irr`` (its loss between two one-hot inputs).

Each audit is a 1 - 1e-6 lower confidence bound (``dn.audit``, Bonferroni
inside). Power: the same randomizers claiming epsilon / 1.2 are caught.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from liars import claiming

import deniable as dn
from deniable import _randomness as randomness

pytestmark = pytest.mark.audit

ALPHA = 1e-6
TRIALS = 100_000
CLIENT_TRIALS = 20_000

CASES = {
    "LGRR-k4": lambda: dn.LGRR(["A", "B", "C", "D"], epsilon_perm=3.0, epsilon_1=1.0),
    "LGRR-k10": lambda: dn.LGRR(10, epsilon_perm=4.0, epsilon_1=1.5),
    "LOSUE-k6": lambda: dn.LOSUE(6, epsilon_perm=3.0, epsilon_1=1.0),
    "DBitFlip-k6-d2": lambda: dn.DBitFlip(6, d=2, epsilon=2.0),
    "DBitFlip-k4-d1": lambda: dn.DBitFlip(4, d=1, epsilon=1.0),
    "OneBitMean": lambda: dn.OneBitMean(0.0, 10.0, epsilon=1.0, points=5),
    # output perturbation: one report is the perturbed channel, audited against its (smaller) epsilon
    "DBitFlip-k6-d2-gamma": lambda: dn.DBitFlip(6, d=2, epsilon=2.0, gamma=0.1),
    "OneBitMean-gamma": lambda: dn.OneBitMean(0.0, 10.0, epsilon=1.0, points=5, gamma=0.1),
}
CHAINED = ["LGRR-k4", "LGRR-k10", "LOSUE-k6"]


@pytest.mark.parametrize("name", list(CASES))
def test_one_report_passes(name: str, rng: np.random.Generator) -> None:
    m = CASES[name]()
    result = dn.audit(m, trials=TRIALS, rng=rng, alpha=ALPHA)
    assert result.passed, str(result)


@pytest.mark.parametrize("name", ["LGRR-k4", "LOSUE-k6", "DBitFlip-k6-d2", "OneBitMean"])
def test_one_report_passes_on_the_secure_path(name: str) -> None:
    result = dn.audit(CASES[name](), trials=TRIALS, rng=None, alpha=ALPHA)
    assert result.passed, str(result)


@pytest.mark.parametrize("name", ["LGRR-k4", "LOSUE-k6", "DBitFlip-k6-d2", "OneBitMean", "DBitFlip-k6-d2-gamma",
                                  "OneBitMean-gamma"])
def test_an_understated_one_report_epsilon_is_caught(name: str, rng: np.random.Generator) -> None:
    m = CASES[name]()
    result = dn.audit(claiming(m, m.epsilon / 1.2), trials=TRIALS, rng=rng, alpha=ALPHA)
    assert not result.passed, str(result)


class Round:
    """One round of L-GRR / L-OSUE as an auditable randomizer of category values.

    ``"permanent"``: the first round of the value; ``"instantaneous"``: the
    second round of the value's one-hot encoding (a position for L-GRR,
    packed bits for L-OSUE). Reports are the mechanism's internal form.
    """

    def __init__(self, m: Any, which: str, epsilon: float | None = None) -> None:
        self.m, self.which = m, which
        self.domain = m.domain
        self.epsilon = epsilon if epsilon is not None else (m.epsilon_perm if which == "permanent" else m.epsilon_irr)

    def privatize_many(self, values: Any, rng: Any = None) -> Any:
        m, source = self.m, randomness.resolve(rng)
        idx = m.domain_obj.encode(values)
        if self.which == "permanent":
            return m._permanent(idx, source)
        if isinstance(m, dn.LOSUE):
            return m._instantaneous(np.packbits(np.eye(m.k, dtype=bool)[idx], axis=1), source)
        return m._instantaneous(idx, source)

    def supports(self, reports: Any, value: Any) -> Any:
        return self.m._supports(reports, self.m.domain_obj.encode_one(value))


@pytest.mark.parametrize("which", ["permanent", "instantaneous"])
@pytest.mark.parametrize("name", CHAINED)
def test_each_round_alone_passes(name: str, which: str, rng: np.random.Generator) -> None:
    """The memoized round against epsilon_perm, the fresh round against epsilon_irr."""
    result = dn.audit(Round(CASES[name](), which), trials=TRIALS, rng=rng, alpha=ALPHA)
    assert result.passed, str(result)


@pytest.mark.parametrize("which", ["permanent", "instantaneous"])
@pytest.mark.parametrize("name", ["LGRR-k4", "LOSUE-k6"])
def test_an_understated_round_epsilon_is_caught(name: str, which: str, rng: np.random.Generator) -> None:
    m = CASES[name]()
    honest = Round(m, which)
    result = dn.audit(Round(m, which, honest.epsilon / 1.2), trials=TRIALS, rng=rng, alpha=ALPHA)
    assert not result.passed, str(result)


class ClientReports:
    """Fresh device clients (one per value), each giving its memoized first round
    (L-GRR / L-OSUE) or its first report (dBitFlip, 1BitMean: wholly memoized)."""

    def __init__(self, m: Any, rng: np.random.Generator) -> None:
        self.m, self.rng = m, rng
        self.epsilon = getattr(m, "epsilon_perm", m.epsilon)
        self.domain = getattr(m, "domain", None)

    def privatize_many(self, values: Any, rng: Any = None) -> Any:
        m, fresh = self.m, self.rng
        if isinstance(m, (dn.LGRR, dn.LOSUE)):
            return np.concatenate([m.client(secret=fresh.bytes(32)).permanent(v) for v in values])
        return np.array([m.client(secret=fresh.bytes(32)).privatize(v) for v in values])

    def supports(self, reports: Any, value: Any) -> Any:
        return self.m._supports(reports, self.m.domain_obj.encode_one(value))


def _client_events(name: str, m: Any) -> dict[str, Any]:
    if isinstance(m, dn.OneBitMean):
        return {"pairs": [(m.low, m.high)],
                "events": lambda a, reports, x, o: m.audit_events(reports, x, o), "n_events": 2}
    if isinstance(m, dn.DBitFlip):
        return {"events": lambda a, reports, x, o: m.audit_events(reports, x, o), "pairs": [(0, 1)]}
    return {"pairs": [(m.domain[0], m.domain[1])]}


@pytest.mark.parametrize("name", ["LGRR-k4", "LOSUE-k6", "DBitFlip-k6-d2", "OneBitMean"])
def test_the_clients_memoized_part_passes(name: str, rng: np.random.Generator) -> None:
    """20000 fresh clients per value: the secret-derived memoized part keeps its claim."""
    m = CASES[name]()
    result = dn.audit(ClientReports(m, rng), trials=CLIENT_TRIALS, alpha=ALPHA, **_client_events(name, m))
    assert result.passed, str(result)
