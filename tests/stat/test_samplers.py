"""Layer B: each sampler draws from exactly the distribution its mechanism claims.

For every input row tested, reports are drawn through three code paths:

* ``batch``  -- ``privatize_many(values, rng=<seeded Generator>)`` (simulation),
* ``secure`` -- ``privatize_many(values, rng=None)`` (the OS CSPRNG; not
  reproducible, but the test is calibrated so a correct sampler fails with
  probability below alpha anyway),
* ``single`` -- ``privatize(value)`` one report at a time (the device path).

The expected distribution of each row is written out here from the
definitions in MECHANISMS.md (independently of the mechanism's own
``transition_matrix``), and compared with a chi-square goodness-of-fit test
(bins merged to >= 5 expected) or, for unary encodings, per-bit Wilson
intervals plus pairwise 2x2 independence tests.

Alpha: each test function spends at most 1e-6 in total, split by Bonferroni
over its rows, paths and assertions. Power: each family's check is rerun on a
sampler whose epsilon is 20% larger than claimed (and, for unary encoding, on
bits made 20% correlated), and must reject. The unary-encoding tests and the
threaded secure batches run once per run decoder of the Bernoulli sampler
(``accelerator`` fixture: numpy, and numba when installed).
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest
from mechanism_grid import Case, by_name, params

import deniable as dn
from deniable import testing
from deniable.testing import CheckResult

pytestmark = pytest.mark.stat

ALPHA = 1e-6
N_BATCH = 50_000
N_SINGLE = 2_000
PATHS = ("batch", "secure", "single")


def draw(m: Any, value: Any, n: int, path: str, rng: np.random.Generator) -> Any:
    """``n`` reports of ``value`` through one code path."""
    if path == "batch":
        return m.privatize_many([value] * n, rng=rng)
    if path == "secure":
        return m.privatize_many([value] * n)
    return [m.privatize(value) for _ in range(n)]


def rows_for(m: Any) -> list[int]:
    """Input rows to test: all of a small domain, the extremes and the middle of a large one."""
    return list(range(m.k)) if m.k <= 4 else sorted({0, 1, m.k // 2, m.k - 1})


# ------------------------------------------------------- expected distributions
def _parity(x: np.ndarray) -> np.ndarray:
    return np.bitwise_count(x) & 1


def reference_hash(m: Any, seeds: np.ndarray, x: int) -> np.ndarray:
    """``H_seed(x)`` from the wire description: Toeplitz rows ``(seed >> j) & (2**L - 1)``
    and the offset ``(seed >> (L + m - 1)) & (g - 1)``, one output bit per row."""
    seeds = np.asarray(seeds, dtype=np.uint64)
    L = max(1, (m.k - 1).bit_length())
    out = (seeds >> np.uint64(L + m.m - 1)) & np.uint64(m.g - 1)
    for j in range(m.m):
        row = (seeds >> np.uint64(j)) & np.uint64((1 << L) - 1)
        out ^= (_parity(row & np.uint64(x)).astype(np.uint64)) << np.uint64(j)
    return out


class Model:
    """Maps reports to output cells and gives each input row's exact cell probabilities."""

    def __init__(self, m: Any) -> None:
        self.m = m
        name = type(m).__name__
        self.name = name
        if name == "SubsetSelection":
            subsets = list(itertools.combinations(range(m.k), m.omega))
            self.masks = np.array([sum(1 << v for v in s) for s in subsets], dtype=np.int64)
            self.order = np.argsort(self.masks)
            self.subsets = subsets
        if name in ("BLH", "OLH"):
            self.seeds = np.arange(1 << m.seed_bits, dtype=np.uint64)

    def cells(self, reports: Any) -> np.ndarray:
        m, name = self.m, self.name
        if name == "BinaryRR":
            return m.validate(reports).astype(np.int64)
        if name == "GRR":
            return m.validate(reports)  # positions
        if name == "HadamardResponse":
            return m.validate(reports)
        if name == "SubsetSelection":
            arr = m.validate(reports)
            masks = (np.int64(1) << arr).sum(axis=1)
            return self.order[np.searchsorted(self.masks[self.order], masks)]
        if name in ("BLH", "OLH"):
            arr = m.validate(reports)
            return (arr["seed"].astype(np.int64) << m.m) + arr["value"].astype(np.int64)
        raise AssertionError(name)

    def row(self, x: int) -> np.ndarray:
        m, name = self.m, self.name
        if name == "BinaryRR":
            yes = float(m.p_yes_given_yes if x == 1 else m.p_yes_given_no)
            return np.array([1 - yes, yes])
        if name == "GRR":
            e = math.exp(m.epsilon)
            out = np.full(m.k, 1 / (e + m.k - 1))
            out[x] = e / (e + m.k - 1)
            return out
        if name == "HadamardResponse":
            e, K = math.exp(m.epsilon), m.K
            inside = _parity(np.arange(K, dtype=np.uint64) & np.uint64(x + 1)) == 0
            return np.where(inside, 2 * e / (e + 1) / K, 2 / (e + 1) / K)
        if name == "SubsetSelection":
            e = math.exp(m.epsilon)
            weight = np.array([e if x in s else 1.0 for s in self.subsets])
            return weight / weight.sum()
        if name in ("BLH", "OLH"):
            e, g, s = math.exp(m.epsilon), m.g, self.seeds.size
            h = reference_hash(m, self.seeds, x).astype(np.int64)
            block = np.full((s, g), 1 / (e + g - 1))
            block[np.arange(s), h] = e / (e + g - 1)
            return block.ravel() / s
        raise AssertionError(name)


def row_check(claimed: Any, sampler: Any, x: int, n: int, path: str,
              rng: np.random.Generator, alpha: float) -> CheckResult:
    """Chi-square test of ``sampler``'s reports for input row ``x`` against ``claimed``'s row."""
    model = Model(claimed)
    reports = draw(sampler, claimed.domain[x], n, path, rng)
    expected = model.row(x)
    observed = np.bincount(model.cells(reports), minlength=expected.size)
    return testing.chi_square_gof(observed, expected, alpha, label=f"{claimed!r} row {x} via {path}")


DISCRETE = by_name(
    "BinaryRR-prob0.75", "BinaryRR-eps3", "BinaryRR-forced-0.3-0.8",
    "GRR-ABCD-prob0.75", "GRR-k2-eps1", "GRR-bool-eps0.5", "GRR-k10-eps1", "GRR-str3-eps5", "GRR-k100-eps3",
    "HadamardResponse-k2-eps1", "HadamardResponse-str3-eps0.5", "HadamardResponse-k8-eps2",
    "HadamardResponse-k100-eps1",
    "SubsetSelection-k3-eps1", "SubsetSelection-str6-eps0.5", "SubsetSelection-k10-w1-eps1",
    "SubsetSelection-k12-w5-eps2",
    "BLH-k2-eps1", "BLH-str6-eps0.5", "OLH-k2-eps1", "OLH-str6-eps2", "OLH-k10-g4-eps1",
)


def _cells(m: Any) -> list[tuple[int, str, int, float]]:
    """(input row, path, draws, alpha) for every cell; alpha 1e-6 split over rows x paths."""
    rows = rows_for(m)
    alpha = ALPHA / (len(rows) * len(PATHS))
    return [(x, path, N_SINGLE if path == "single" else N_BATCH, alpha) for x in rows for path in PATHS]


@params(DISCRETE)
def test_discrete_sampler_matches_distribution(case: Case, rng: np.random.Generator) -> None:
    """Chi-square GOF per input row and path; alpha 1e-6 split over rows x paths."""
    m = case.make()
    failures = [str(res) for x, path, n, alpha in _cells(m)
                if not (res := row_check(m, m, x, n, path, rng, alpha)).passed]
    assert not failures, "\n".join(failures)


def _stronger(m: Any) -> Any:
    """The same mechanism family and structure at 1.2 times the epsilon."""
    cfg = m.to_config()
    name = type(m).__name__
    eps = m.epsilon * 1.2
    dom = m.domain
    if name == "BinaryRR":
        if m.p_yes_given_yes + m.p_yes_given_no != 1:  # forced response: skew the yes numerators
            params = dict(cfg["params"])
            d = params["denominator"]
            yf, yt = params["yes_numerators"]
            params["yes_numerators"] = [round(yf / 1.2), min(d - 1, round(yt * 1.2))]
            return dn.BinaryRR._from_params(None, params)
        return dn.BinaryRR(epsilon=eps)
    if name == "SubsetSelection":
        return dn.SubsetSelection(dom, epsilon=eps, omega=m.omega)
    if name == "OLH":
        return dn.OLH(dom, epsilon=eps, g=m.g)
    return type(m)(dom, epsilon=eps)


@params(DISCRETE)
def test_discrete_check_has_power(case: Case, rng: np.random.Generator) -> None:
    """Power: a sampler 20% stronger in epsilon (or 20% skewed) fails the same check.

    The check is run at the same per-row alpha as above on one row of the
    batch path, with 4 x N_BATCH draws: the noncentrality is then at least
    458 (at epsilon 0.5), against critical values of 27 to 1017, and the
    wrong sampler passes with probability below 1e-37 (noncentral chi-square).
    At N_BATCH draws it passed 0.4% of the time (BLH at epsilon 0.5).
    """
    m = case.make()
    wrong = _stronger(m)
    alpha = ALPHA / (len(rows_for(m)) * len(PATHS))
    res = row_check(m, wrong, 0, 4 * N_BATCH, "batch", rng, alpha)
    assert not res.passed, str(res)


def test_duplicated_reports_are_rejected(rng: np.random.Generator) -> None:
    """Power: 250 reports each repeated 200 times (an RNG reused per respondent) fail the check."""
    m = dn.GRR(10, epsilon=1.0)
    model = Model(m)
    reports = np.repeat(m.privatize_many([0] * 250, rng=rng), 200)
    observed = np.bincount(model.cells(reports), minlength=m.k)
    assert not testing.chi_square_gof(observed, model.row(0), ALPHA).passed


# ------------------------------------------------------------ local hashing
LARGE_LH = by_name("OLH-k100-eps3", "OLH-k1000-eps1", "BLH-k100-eps2")


def lh_joint_check(claimed: Any, sampler: Any, x: int, other: int, n: int, path: str,
                   rng: np.random.Generator, alpha: float) -> list[CheckResult]:
    """Cells ``(H(x) == y, H(x') == y)`` and the uniformity of the seeds, via the reference hash.

    With a pairwise independent family ``H(x)`` and ``H(x')`` are independent
    uniforms, so given input ``x`` the four cells have probabilities
    ``p/g, p(1-1/g), (1-p)/g, (1-p)(1-1/g)`` with ``p = e/(e+g-1)``.
    """
    reports = sampler.validate(draw(sampler, claimed.domain[x], n, path, rng))
    seeds, y = reports["seed"], reports["value"].astype(np.uint64)
    hit_x = reference_hash(claimed, seeds, x) == y
    hit_o = reference_hash(claimed, seeds, other) == y
    e, g = math.exp(claimed.epsilon), claimed.g
    p = e / (e + g - 1)
    cells = np.bincount(2 * hit_x + hit_o, minlength=4)
    probs = np.array([(1 - p) * (1 - 1 / g), (1 - p) / g, p * (1 - 1 / g), p / g])
    label = f"{claimed!r} x={x} x'={other} via {path}"
    top = (seeds >> np.uint64(claimed.seed_bits - 6)).astype(np.int64)  # top 6 bits of the seed
    low = (seeds & np.uint64(63)).astype(np.int64)
    uniform = np.full(64, 1 / 64)
    a = alpha / 3
    return [
        testing.chi_square_gof(cells, probs, a, label=label + " joint cells"),
        testing.chi_square_gof(np.bincount(top, minlength=64), uniform, a, label=label + " seed top bits"),
        testing.chi_square_gof(np.bincount(low, minlength=64), uniform, a, label=label + " seed low bits"),
    ]


@params(LARGE_LH)
def test_local_hashing_joint_cells(case: Case, rng: np.random.Generator) -> None:
    """alpha 1e-6 over pairs x paths x 3 checks; the reference hash is the documented wire hash."""
    m = case.make()
    pairs = [(0, 1), (0, m.k - 1), (m.k // 2, 3)]
    alpha = ALPHA / (len(pairs) * len(PATHS))
    failures = []
    for x, other in pairs:
        for path in PATHS:
            n = N_SINGLE if path == "single" else N_BATCH
            failures += [str(r) for r in lh_joint_check(m, m, x, other, n, path, rng, alpha) if not r.passed]
    assert not failures, "\n".join(failures)


@params(LARGE_LH)
def test_local_hashing_joint_cells_power(case: Case, rng: np.random.Generator) -> None:
    """Power: epsilon 20% stronger with the same g fails the joint-cell check."""
    m = case.make()
    wrong = dn.OLH(m.domain, epsilon=m.epsilon * 1.2, g=m.g) if m.g > 2 else dn.BLH(m.domain, epsilon=m.epsilon * 1.2)
    res = lh_joint_check(m, wrong, 0, 1, N_BATCH, "batch", rng, ALPHA / 9)[0]
    assert not res.passed, str(res)


# ---------------------------------------------------------- subset selection
N_SS = 20_000  # large omega uses the slower Fisher-Yates draw
LARGE_SS = by_name("SubsetSelection-k100-eps1", "SubsetSelection-k60-eps0.1", "SubsetSelection-k20-eps1")


def ss_marginal_checks(claimed: Any, sampler: Any, x: int, n: int, path: str,
                       rng: np.random.Generator, alpha: float) -> list[CheckResult]:
    """Inclusion rates of every item and of three item pairs against their exact values.

    ``P(x in Y) = p``, ``P(v in Y) = q*`` for ``v != x`` and
    ``P(u, v in Y) = [p (w-1)(w-2) + (1-p) w (w-1)] / ((k-1)(k-2))`` for ``u, v != x``.
    """
    k, w = claimed.k, claimed.omega
    e = math.exp(claimed.epsilon)
    p = w * e / (w * e + k - w)
    q = (p * (w - 1) + (1 - p) * w) / (k - 1)
    pair = (p * (w - 1) * (w - 2) + (1 - p) * w * (w - 1)) / ((k - 1) * (k - 2))
    arr = sampler.validate(draw(sampler, claimed.domain[x], n, path, rng))
    member = np.zeros((arr.shape[0], k), dtype=bool)
    member[np.arange(arr.shape[0])[:, None], arr] = True
    others = [v for v in range(k) if v != x]
    pairs = [(others[0], others[1]), (others[0], others[-1]), (others[len(others) // 2], others[-2])]
    a = alpha / (k + len(pairs))
    label = f"{claimed!r} x={x} via {path}"
    out = [testing.proportion_check(int(member[:, v].sum()), n, p if v == x else q, a, label=f"{label} item {v}")
           for v in range(k)]
    out += [testing.proportion_check(int((member[:, u] & member[:, v]).sum()), n, pair, a,
                                     label=f"{label} pair {u},{v}") for u, v in pairs]
    return out


@params(LARGE_SS)
def test_subset_selection_marginals(case: Case, rng: np.random.Generator) -> None:
    """Item and pair inclusion rates (Wilson), alpha 1e-6 over rows x paths x items."""
    m = case.make()
    rows = [0, m.k - 1]
    alpha = ALPHA / (len(rows) * len(PATHS))
    failures = []
    for x in rows:
        for path in PATHS:
            n = N_SINGLE // 2 if path == "single" else N_SS  # a single large-omega report takes ~1 ms
            failures += [str(r) for r in ss_marginal_checks(m, m, x, n, path, rng, alpha) if not r.passed]
    assert not failures, "\n".join(failures)


@params(LARGE_SS)
def test_subset_selection_marginals_power(case: Case, rng: np.random.Generator) -> None:
    """Power: a sampler whose weight for sets containing x is 20% too large is caught.

    (At epsilon 0.1 a 20% larger epsilon changes P(x in Y) by only 0.005, which
    no sample of this size resolves; the skewed weight is the 20%-off probability.)
    The odds of x in Y grow by 1.2: P(x in Y) moves by 0.045 or more; in 2 x N_SS draws
    the count lands 10 standard deviations beyond its band (a miss below 1e-20). The
    assertion is the check of item x; the other items' checks are not (hidden from recording).
    """
    m = case.make()
    params = dict(m.to_config()["params"])
    params["inside_weight"] = params["inside_weight"] * 6 // 5
    wrong = dn.SubsetSelection._from_params(list(m.domain), params)
    with testing.recording(hide=True):
        res = ss_marginal_checks(m, wrong, 0, 2 * N_SS, "batch", rng, ALPHA / 6)[0]
    assert not testing.family([res]), str(res)


# ------------------------------------------------------------ unary encoding
UNARY = by_name("SUE-k2-eps1", "SUE-str5-eps0.5", "SUE-k70-eps1", "OUE-bool-eps2", "OUE-str9-eps1",
                "OUE-k130-eps2")


def bit_pairs(k: int, x: int) -> list[tuple[int, int]]:
    """Bit pairs for independence tests: the true bit with a neighbour, a byte boundary,
    a 64-bit word boundary, and the two ends."""
    pairs = {(x, (x + 1) % k), (0, k - 1)}
    if k > 8:
        pairs.add((7, 8))
    if k > 64:
        pairs.add((63, 64))
    return sorted(p for p in pairs if p[0] != p[1])


def unary_checks(claimed: Any, bits: np.ndarray, x: int, alpha: float, label: str) -> list[CheckResult]:
    k = claimed.k
    pairs = bit_pairs(k, x)
    a = alpha / (k + len(pairs))
    n = bits.shape[0]
    p, q = float(claimed.p), float(claimed.q)
    ones = bits.sum(axis=0)
    out = [testing.proportion_check(int(ones[v]), n, p if v == x else q, a, label=f"{label} bit {v}")
           for v in range(k)]
    out += [testing.independence_2x2(bits[:, u], bits[:, v], a, label=f"{label} bits {u},{v}")
            for u, v in pairs]
    return out


@params(UNARY)
def test_unary_bits(case: Case, rng: np.random.Generator, accelerator: str) -> None:
    """Per-bit Wilson intervals and pairwise independence; alpha 1e-6 over rows x paths x checks."""
    m = case.make()
    failures = []
    for x, path, n, alpha in _cells(m):
        bits = m.unpack(draw(m, m.domain[x], n, path, rng))
        failures += [str(r) for r in unary_checks(m, bits, x, alpha, f"{m!r} x={x} via {path}")
                     if not r.passed]
    assert not failures, "\n".join(failures)


@params(UNARY)
def test_unary_bits_power(case: Case, rng: np.random.Generator, accelerator: str) -> None:
    """Power: epsilon 20% stronger fails the per-bit checks in 4 x N_BATCH reports (SUE at
    epsilon 0.5: each bit's rate moves 0.012, 11 standard deviations, against z = 5.8; in
    N_BATCH reports, 5.5, and all 5 bits passed 8% of the time); bits copied 20% of the
    time fail the independence check."""
    m = case.make()
    alpha = ALPHA / (len(rows_for(m)) * len(PATHS))
    wrong = type(m)(m.domain, epsilon=m.epsilon * 1.2)
    bits = m.unpack(wrong.privatize_many([m.domain[0]] * (4 * N_BATCH), rng=rng))
    assert not testing.family(unary_checks(m, bits, 0, alpha, "stronger")), "epsilon*1.2 was not detected"
    bits = m.unpack(m.privatize_many([m.domain[0]] * N_BATCH, rng=rng))
    u, v = bit_pairs(m.k, 0)[0]
    copy = rng.random(N_BATCH) < 0.2
    bits[:, v] = np.where(copy, bits[:, u], bits[:, v])
    with testing.recording(hide=True):  # the rates of these bits are right: not an assertion here
        results = unary_checks(m, bits, 0, alpha, "correlated")
    independence = [r for r in results if r.name == "independence"]
    assert not testing.family(independence), "correlated bits were not detected"


# --------------------------------------------------------- threaded secure path
N_THREADED = 1 << 17  # above the size from which secure batches are split over threads


@params(by_name("GRR-k10-eps1", "HadamardResponse-k8-eps2", "SubsetSelection-k12-w5-eps2", "OLH-k10-g4-eps1",
                "OUE-str9-eps1"))
def test_large_secure_batches(case: Case, accelerator: str) -> None:
    """Secure batches big enough to be split over threads: each half matches the distribution
    and the halves are not copies of each other; alpha 1e-6 over the two halves (power of
    the same checks: test_discrete_check_has_power, test_unary_bits_power)."""
    m = case.make()
    reports = m.privatize_many([m.domain[0]] * N_THREADED)
    half = N_THREADED // 2
    first, second = reports[:half], reports[half:]
    assert m.reports_to_json(first[:200]) != m.reports_to_json(second[:200])
    failures = []
    for label, part in (("first half", first), ("second half", second)):
        if isinstance(m, dn.OUE):
            results = unary_checks(m, m.unpack(part), 0, ALPHA / 2, f"{m!r} secure {label}")
        else:
            model = Model(m)
            expected = model.row(0)
            observed = np.bincount(model.cells(part), minlength=expected.size)
            results = [testing.chi_square_gof(observed, expected, ALPHA / 2, label=f"{m!r} secure {label}")]
        failures += [str(r) for r in results if not r.passed]
    assert not failures, "\n".join(failures)
