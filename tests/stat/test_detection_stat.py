"""Fake reports, calibrated: the random attacks' gains, the detections' false alarms and power, recovery.

Setting (every test): k = 16 categories, epsilon = 1, n = 20,000 genuine
reports per round with shares (0.3, 0.2, 0.15, 0.1, 0.1, 0.05, 0.05, 0.05)
on the first 8 categories and 0 on the rest; the attacker's r = 3 targets
are categories 10, 12, 14 (nobody holds them) and the fakes are 5% of the
reports (beta = 0.05, m = 1,053). The memoizing mechanisms: DBitFlip with
d = 2 (a report supports at most two of the three targets, so
``supporting_all_test`` counts the reports holding two, honest rate 0.0051)
and RAPPOR with 16 bits, 2 hashes and 8 cohorts at epsilon_infinity = 4
(``repeated_reports_test``: its wrong version omits the correction for the
``8 x 2^16`` vectors that could recur, and alarmed on 300/300 honest rounds).

* **Gains.** One fake report of the random-item or random-value attack adds
  ``sum_t (1[t in S(y)] - q*)/(p* - q*)`` to the targets' summed estimate;
  its mean over 20,000 fakes is the per-report gain of
  :func:`deniable.attacks.expected_gain` (Student t, alpha 5e-7). Power:
  the other attack's gain is rejected (at least 8 standard errors beyond the
  band for every mechanism; the miss is below 1e-12).
* **False alarms.** Each detection at ``alpha = 0.01`` on R = 300 honest
  rounds: the rounds without an alarm are at least the one-sided exact
  binomial band of level 0.99 (alpha 4e-7): a test whose false-alarm rate
  exceeds 1% by much fails. Power: the same test computed wrongly (each of
  the k categories at the one-sided level alpha: no Bonferroni correction
  and no halving for two sides; a wrong null law; no honest rate) alarms on
  22% to 100% of the rounds and is rejected (estimated miss below 1e-7,
  tools/stat_rates.py).
* **Power against the attacks.** Where a detection is claimed to catch an
  attack (measured 100/100 rounds when this file was written), R = 60 attacked
  rounds must alarm at least as often as a detector of power 0.9 would
  (one-sided exact band, alpha 4e-7; a power of 1 passes always).
* **Recovery.** With N_RECOVERY = 200,000 genuine reports and 5% fakes of the
  maximal-gain attack, :func:`deniable.recover`
  (the attack's support rates, the true beta, no projection) puts every
  target within ``z_{alpha/r}`` standard errors of its true share
  (alpha 5e-7); the poisoned estimate is rejected (power: GRR's targets
  are 23 standard errors away, the others' more; miss below 1e-12).

Each test function spends at most 1e-6 (Bonferroni over its checks).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import deniable as dn
from deniable import attacks, testing

pytestmark = pytest.mark.stat

K, EPS, N, BETA = 16, 1.0, 20_000, 0.05
SHARES = np.r_[[0.3, 0.2, 0.15, 0.1, 0.1, 0.05, 0.05, 0.05], np.zeros(8)]
TARGETS = [10, 12, 14]
M_FAKE = round(BETA * N / (1 - BETA))
R_HONEST, R_ATTACKED = 300, 60
N_RECOVERY = 200_000
DETECTION_ALPHA = 0.01


def _mechanism(name: str) -> dn.FrequencyOracle:
    if name == "DBitFlip":  # d = 2 < r = 3: a report supports at most two targets
        return dn.DBitFlip(K, d=2, epsilon=EPS)
    if name == "RAPPOR":  # one report at epsilon 0.99
        return dn.RAPPOR(K, epsilon=4.0, num_bits=16, num_hashes=2, num_cohorts=8)
    built: dn.FrequencyOracle = getattr(dn, name)(K, epsilon=EPS)
    return built


def _fakes(mechanism: dn.FrequencyOracle, attack: str, m: int, rng: np.random.Generator) -> np.ndarray:
    if attack == "maximal-gain":
        return attacks.maximal_gain(mechanism, TARGETS, m, rng=rng)
    if attack == "random-item":
        return attacks.random_item(mechanism, TARGETS, m, rng=rng)
    return attacks.random_value(mechanism, m, rng=rng)


def _round(mechanism: dn.FrequencyOracle, rng: np.random.Generator) -> np.ndarray:
    return mechanism.privatize_many(rng.choice(K, N, p=SHARES), rng=rng)


@pytest.mark.parametrize("name", ["GRR", "OUE", "SUE", "OLH", "HadamardResponse", "SubsetSelection"])
@pytest.mark.parametrize("attack", ["random-item", "random-value"])
def test_random_attacks_add_their_stated_gain(name: str, attack: str, rng: np.random.Generator) -> None:
    mechanism = _mechanism(name)
    fakes = _fakes(mechanism, attack, 20_000, rng)
    p, q = (float(x[0]) for x in mechanism.support_rates())
    contribution = sum((mechanism.supports(fakes, t) - q) / (p - q) for t in TARGETS)
    stated = attacks.expected_gain(mechanism, attack, TARGETS, 1.0)
    other = attacks.expected_gain(mechanism, "random-value" if attack == "random-item" else "random-item",
                                  TARGETS, 1.0)
    assert testing.mean_check(contribution, stated, 5e-7)
    assert not testing.mean_check(contribution, other, 5e-7)  # power


def _honest_and_wrong(name: str, detection: str, rng: np.random.Generator) -> tuple[int, int]:
    """Alarms of the detection, and of a wrong version of it, over R_HONEST honest rounds."""
    mechanism = _mechanism(name)
    wrong_law = dn.OUE(K, epsilon=1.2 * EPS) if name == "OUE" else None
    alarms = wrong = 0
    for _ in range(R_HONEST):
        reports = _round(mechanism, rng)
        if detection == "frequency":
            found = dn.frequency_test(mechanism.estimate(reports), DETECTION_ALPHA)
            wrong += bool(np.any(np.abs(found.detail["z"]) > stats.norm.isf(DETECTION_ALPHA)))
        elif detection == "change":
            found = dn.change_test(mechanism.estimate(_round(mechanism, rng)), mechanism.estimate(reports),
                                   DETECTION_ALPHA)
            wrong += bool(np.any(np.abs(found.detail["z"]) > stats.norm.isf(DETECTION_ALPHA)))
        elif detection == "unary-count":
            found = dn.unary_count_test(mechanism, reports, DETECTION_ALPHA)
            wrong += dn.unary_count_test(wrong_law, reports, DETECTION_ALPHA).flagged
        elif detection == "repeated-reports":
            found = dn.repeated_reports_test(mechanism, reports, DETECTION_ALPHA)
            wrong += found.detail["tail"] <= DETECTION_ALPHA  # no correction for the vectors that could recur
        else:
            found = dn.supporting_all_test(mechanism, reports, TARGETS, DETECTION_ALPHA)
            wrong += found.statistic > 0  # no honest rate: any report supporting every target alarms
        alarms += found.flagged
    return alarms, wrong


CALIBRATED = [("frequency", "GRR"), ("frequency", "OUE"), ("frequency", "OLH"),
              ("change", "GRR"), ("change", "OUE"), ("change", "OLH"),
              ("unary-count", "OUE"),
              ("supporting-all", "OUE"), ("supporting-all", "OLH"), ("supporting-all", "HadamardResponse"),
              ("change", "DBitFlip"), ("change", "RAPPOR"), ("supporting-all", "DBitFlip"),
              ("repeated-reports", "RAPPOR")]


@pytest.mark.parametrize(("detection", "name"), CALIBRATED)
def test_false_alarm_rate_on_honest_rounds(detection: str, name: str, rng: np.random.Generator) -> None:
    alarms, wrong = _honest_and_wrong(name, detection, rng)
    level = 1 - DETECTION_ALPHA
    assert testing.coverage_check(R_HONEST - alarms, R_HONEST, level, 4e-7, conservative=True)
    assert not testing.coverage_check(R_HONEST - wrong, R_HONEST, level, 4e-7, conservative=True)  # power


CAUGHT = [("change", "GRR", "maximal-gain"), ("change", "OUE", "maximal-gain"), ("change", "OLH", "maximal-gain"),
          ("change", "OUE", "random-value"),
          ("unary-count", "OUE", "maximal-gain"), ("unary-count", "OUE", "random-value"),
          ("supporting-all", "OUE", "maximal-gain"), ("supporting-all", "OLH", "maximal-gain"),
          ("change", "DBitFlip", "maximal-gain"), ("change", "RAPPOR", "maximal-gain"),
          ("supporting-all", "DBitFlip", "maximal-gain"), ("repeated-reports", "RAPPOR", "maximal-gain")]


@pytest.mark.parametrize(("detection", "name", "attack"), CAUGHT)
def test_power_against_the_attacks(detection: str, name: str, attack: str, rng: np.random.Generator) -> None:
    mechanism = _mechanism(name)
    alarms = 0
    for _ in range(R_ATTACKED):
        before = _round(mechanism, rng)
        reports = np.concatenate([_round(mechanism, rng), _fakes(mechanism, attack, M_FAKE, rng)])
        if detection == "change":
            found = dn.change_test(mechanism.estimate(before), mechanism.estimate(reports), DETECTION_ALPHA)
        elif detection == "unary-count":
            found = dn.unary_count_test(mechanism, reports, DETECTION_ALPHA)
        elif detection == "repeated-reports":
            found = dn.repeated_reports_test(mechanism, reports, DETECTION_ALPHA)
        else:
            found = dn.supporting_all_test(mechanism, reports, TARGETS, DETECTION_ALPHA)
        alarms += found.flagged
    assert testing.coverage_check(alarms, R_ATTACKED, 0.9, 4e-7, conservative=True)


@pytest.mark.parametrize("name", ["GRR", "OUE", "OLH", "SubsetSelection"])
def test_recovery_puts_the_targets_back(name: str, rng: np.random.Generator) -> None:
    """The recovered targets sit within their standard errors of the truth; the poisoned ones do not.

    The standard error of a recovered target adds the fakes' own spread (GRR's
    and subset selection's fakes spread over the targets:
    ``m s (1 - s) / (N^2 (p* - q*)^2)`` with ``s`` the support rate) to the
    plug-in one over ``(1 - beta)``.
    """
    mechanism = _mechanism(name)
    truth = rng.choice(K, N_RECOVERY, p=SHARES)
    m_fake = round(BETA * N_RECOVERY / (1 - BETA))
    reports = np.concatenate([mechanism.privatize_many(truth, rng=rng),
                              attacks.maximal_gain(mechanism, TARGETS, m_fake, rng=rng)])
    poisoned = mechanism.estimate(reports, target="respondents")
    support = attacks.fake_support(mechanism, "maximal-gain", TARGETS)
    beta = m_fake / (N_RECOVERY + m_fake)
    recovered = dn.recover(poisoned, support, beta, project=False)
    gap = poisoned.p_star - poisoned.q_star
    fake_var = m_fake * support * (1 - support) / ((N_RECOVERY + m_fake) * gap) ** 2
    se = np.sqrt(recovered.std_errors**2 + fake_var / (1 - beta) ** 2)[TARGETS]
    shares = np.bincount(truth, minlength=K)[TARGETS] / N_RECOVERY
    assert testing.estimate_check(recovered.frequencies[TARGETS], shares, se, 5e-7)
    assert not testing.estimate_check(poisoned.frequencies[TARGETS], shares, se, 5e-7)  # power
