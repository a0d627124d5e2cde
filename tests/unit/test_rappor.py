"""RAPPOR: Google's numbers, exact privacy, memoization, unbiased regression decode."""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest

import deniable as dn
from deniable import testing
from deniable._client_state import MemoryStore
from deniable.mechanisms._rappor import RAPPOR


def test_google_default_parameters() -> None:
    """f=0.5, p=0.5, q=0.75, h=2: q*=0.6875, p*=0.5625, eps_1=1.074, eps_inf=ln 81."""
    m = RAPPOR(list("abcd"), f=0.5, p=0.5, q=0.75, num_hashes=2)
    assert (m.q_star, m.p_star) == (0.6875, 0.5625)
    assert m.epsilon == pytest.approx(1.0743, abs=1e-4)
    assert m.epsilon_infinity == pytest.approx(math.log(81), rel=1e-12)
    assert m.epsilon_infinity >= math.log(81)


def test_defaults_are_googles_16_bits_2_hashes_64_cohorts_p_half_q_three_quarters_sha256() -> None:
    m = RAPPOR(["a", "b"], f=0.5)
    assert (m.num_bits, m.num_hashes, m.num_cohorts, m.hashing) == (16, 2, 64, "sha256")
    assert (m._p, m._q) == (1 << 31, 3 << 30)
    with pytest.raises(ValueError, match=r"^domain for RAPPOR needs at least 2 categories; got \['a'\]$"):
        RAPPOR(["a"], f=0.5)


def test_sha256_bloom_bits_are_big_endian_words_of_the_digest_of_cohort_type_and_value() -> None:
    """``hashing="sha256"``: hash ``j`` sets bit ``word_j mod num_bits``, ``word_j`` the ``j``-th 4-byte
    big-endian word of SHA-256 of ``cohort NUL type NUL value`` (the module docstring), for string and
    int categories, every hash up to 8 and filters of one and two words."""
    import hashlib

    from deniable.mechanisms._rappor_bloom import _sha256_bloom_bits

    assert _sha256_bloom_bits("a", 0, 8, 256) == [125, 102, 182, 255, 112, 232, 238, 133]  # known answers
    assert _sha256_bloom_bits(7, 3, 2, 16) == [10, 7]
    for categories, bits, hashes in ((["a", "b", "c"], 16, 2), ([7, 8, 9], 100, 8)):
        m = RAPPOR(categories, f=0.5, num_bits=bits, num_hashes=hashes, num_cohorts=3)
        for c in range(3):
            for i, value in enumerate(categories):
                digest = hashlib.sha256(f"{c}\x00{type(value).__name__}\x00{value}".encode()).digest()
                want = {int.from_bytes(digest[4 * j : 4 * j + 4], "big") % bits for j in range(hashes)}
                words = m._bloom3[c, i]
                assert {b for b in range(bits) if int(words[b // 64]) >> (b % 64) & 1} == want


@pytest.mark.parametrize("cohorts,hashes", [(4, 2), (8, 1), (2, 3)])
def test_transition_matrix_privacy_is_exact(cohorts: int, hashes: int) -> None:
    m = RAPPOR(list("abcdef"), f=0.25, p=0.25, q=0.75, num_bits=8, num_hashes=hashes, num_cohorts=cohorts)
    _, matrix = m.transition_matrix()
    np.testing.assert_allclose(matrix.sum(axis=1), 1.0, rtol=1e-12)
    worst = np.log(matrix.max(axis=0) / matrix.min(axis=0)).max()
    assert worst <= m.epsilon * (1 + 1e-12)
    disjoint = any(
        bin(int(m.bloom[c, i])).count("1") == hashes
        and bin(int(m.bloom[c, j])).count("1") == hashes
        and not m.bloom[c, i] & m.bloom[c, j]
        for c in range(cohorts) for i in range(6) for j in range(6)
    )
    if disjoint:  # the bound is attained
        assert worst == pytest.approx(m.epsilon, rel=1e-9)


def test_epsilon_sets_the_lifetime_guarantee() -> None:
    m = RAPPOR(list("abc"), epsilon=4.0)
    assert 4.0 - 1e-6 < m.epsilon_infinity <= 4.0
    assert m.epsilon < m.epsilon_infinity


def test_memoized_client_repeats_its_permanent_response() -> None:
    """With an identity IRR (p=0, q=1) a client's reports of one value are identical."""
    m = RAPPOR(list("abc"), f=0.5, p=0.0, q=1.0, num_bits=32, num_cohorts=4)
    client = m.client(secret=b"s" * 32, cohort=1)
    reports = {int(client.privatize("b")["bits"]) for _ in range(20)}
    assert len(reports) == 1
    other = m.client(secret=b"t" * 32, cohort=1)
    fresh = {int(other.privatize("b")["bits"]) for _ in range(1)}
    assert client.privatize("b")["cohort"] == 1 and fresh  # a different secret is another PRR draw


@pytest.mark.stat
def test_regression_decode_is_unbiased_with_honest_standard_errors() -> None:
    """R=200 surveys of n=20,000.

    Unbiasedness: |mean - f| <= z sd/sqrt(R) and variance: (R-1)s^2/SE^2 in the
    chi-square band, each at alpha = 1e-6 / (2 k) (Bonferroni over k categories
    and the two checks), so a correct decoder fails < 1e-6. Power: reading
    the raw bit rates without the p*/q* debias is off by many standard errors.
    """
    m = RAPPOR(list("abcdef"), f=0.5, num_cohorts=16)
    truth = np.array([0.4, 0.2, 0.15, 0.1, 0.1, 0.05])
    n, reps, k = 20_000, 200, 6
    values = m.domain_obj.decode(np.repeat(np.arange(k), (truth * n).astype(int)))
    estimates = np.array([m.estimate(m.privatize_many(values, rng=r)).frequencies for r in range(reps)])
    se = np.sqrt(m.variance(n, truth, "respondents"))  # the values are fixed
    assert (res := testing.mean_check(estimates, truth, 1e-6 / 2, sd=se)), res.message
    assert (res := testing.variance_ratio_check(estimates, se**2, 1e-6 / 2)), res.message
    undebiased = estimates.mean(axis=0) * (m.q_star - m.p_star)  # power: a missing debias
    assert not testing.estimate_check(undebiased, truth, se / np.sqrt(reps), 1e-6 / 2)


@pytest.mark.audit
def test_audit_passes_and_catches_a_weaker_randomizer() -> None:
    """Audit at alpha=1e-6; a client that secretly uses f=0.3 while claiming f=0.5 is caught."""
    claimed = RAPPOR(list("abcdefgh"), f=0.5)
    assert dn.audit(claimed, trials=100_000, rng=11).passed

    class Leaky(RAPPOR):
        @property
        def epsilon(self) -> float:
            return claimed.epsilon

    leaky = Leaky(list("abcdefgh"), f=0.3)
    assert leaky.epsilon == claimed.epsilon
    result = dn.audit(leaky, trials=100_000, rng=12)
    assert not result.passed, str(result)


def test_config_round_trip_and_validation() -> None:
    m = RAPPOR(["x", "y", "z"], f=0.5, num_bits=16, num_cohorts=8)
    assert dn.from_config(m.to_config()) == m
    reports = m.privatize_many(["x", "y", "z", "x"], rng=1)
    assert m.aggregate(m.reports_from_json(m.reports_to_json(reports))) == m.aggregate(reports)
    with pytest.raises(ValueError, match="cohort"):
        m.reports_from_json([{"cohort": 8, "bits": 1}])
    with pytest.raises(ValueError, match="bits"):
        m.reports_from_json([{"cohort": 0, "bits": 1 << 16}])
    with pytest.raises(ValueError, match="must be"):
        m.reports_from_json(["nope"])
    with pytest.raises(ValueError, match="num_bits"):
        RAPPOR(["x", "y"], f=0.5, num_bits=257)
    with pytest.raises(ValueError, match="q must exceed p"):
        RAPPOR(["x", "y"], f=0.5, p=0.75, q=0.5)
    with pytest.raises(TypeError, match="exactly one"):
        RAPPOR(["x", "y"])
    with pytest.raises(dn.ConfigError, match=r"^domain for RAPPOR has duplicate category 'x'$"):
        dn.from_config(dict(m.to_config(), domain=["x", "x", "z"]))


def _dense_decode(m: RAPPOR, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The decode written out densely with the pseudo-inverse (the reference)."""
    table = counts.reshape(m.num_cohorts, m.num_bits + 1).astype(float)
    sizes, ones = table[:, 0], table[:, 1:]
    ps, qs = float(m.p_star), float(m.q_star)
    t = ((ones - ps * sizes[:, None]) / (qs - ps)).ravel()
    bits = (m.bloom[:, :, None] >> np.arange(m.num_bits, dtype=np.uint64)) & np.uint64(1)
    design = (bits.transpose(0, 2, 1).astype(float) * sizes[:, None, None]).reshape(-1, m.k)
    gram_inv = np.linalg.pinv(design.T @ design)
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.nan_to_num(np.clip(ones / sizes[:, None], 0, 1))
    noise = (sizes[:, None] * rate * (1 - rate) / (qs - ps) ** 2).ravel()
    cov = gram_inv @ (design.T * noise) @ design @ gram_inv
    return gram_inv @ design.T @ t, np.sqrt(np.clip(np.diag(cov), 0, None))


@pytest.mark.parametrize(
    ("k", "bits", "cohorts"),
    # full rank x2, rank-deficient x2 (colliding filters, no more candidates than equations: more
    # go through the selection, below); full rank with the last cohort's last bit in no filter
    [(40, 16, 8), (200, 32, 16), (14, 8, 2), (6, 2, 3), (2, 32, 2)],
)
def test_sparse_decode_equals_dense_pseudo_inverse(k: int, bits: int, cohorts: int, rng: np.random.Generator) -> None:
    """The sparse Cholesky decode gives the dense pseudo-inverse's estimates and standard errors
    (to rounding: 1e-9 relative), also where the design is rank-deficient (pseudo-inverse path),
    where a cohort received no report and where no filter sets the last bit."""
    m = dn.RAPPOR(range(k), epsilon=4.0, num_bits=bits, num_cohorts=cohorts)
    counts = m.aggregate(m.privatize_many(rng.integers(0, k, 5_000), rng=rng)).counts.copy()
    if cohorts > 2:
        counts.reshape(cohorts, bits + 1)[1] = 0  # an empty cohort
    stat = dn.SupportCounts(m.fingerprint, counts, int(counts.reshape(cohorts, -1)[:, 0].sum()))
    est = m.estimate_from(stat, target="respondents")  # the dense formula is the fixed respondents' variance
    freqs, errors = _dense_decode(m, counts)
    scale = np.abs(freqs).max()
    np.testing.assert_allclose(est.frequencies, freqs, rtol=0, atol=1e-9 * scale)
    np.testing.assert_allclose(est.std_errors, errors, rtol=0, atol=1e-9 * errors.max())
    full = np.linalg.matrix_rank(_design_dense(m)) == k
    assert full == ((k, bits, cohorts) in [(40, 16, 8), (200, 32, 16), (2, 32, 2)])
    assert np.any(m.bloom[-1] >> np.uint64(bits - 1)) == (k > 2)


def _design_dense(m: RAPPOR) -> np.ndarray:
    bits = (m.bloom[:, :, None] >> np.arange(m.num_bits, dtype=np.uint64)) & np.uint64(1)
    return bits.transpose(0, 2, 1).astype(float).reshape(-1, m.k)


def test_decode_limits_blas_and_only_blas_to_one_thread_while_it_runs() -> None:
    """Inside the decode's block every BLAS library runs one thread; other thread pools keep theirs, and
    BLAS gets its own count back after. (On a one-core machine BLAS has one thread anyway.)"""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from deniable.mechanisms._rappor_decode import one_blas_thread

    def counts() -> list[tuple[str, str, int]]:
        return [(lib["user_api"], lib["filepath"], lib["num_threads"]) for lib in threadpoolctl.threadpool_info()]

    before = counts()
    with one_blas_thread():
        inside = counts()
    assert [n for api, _, n in inside if api == "blas"] == [1] * sum(api == "blas" for api, _, _ in before)
    assert [c for c in inside if c[0] != "blas"] == [c for c in before if c[0] != "blas"]
    assert counts() == before


def test_variance_equals_dense_formula() -> None:
    """``variance`` through the sparse solve equals the dense pseudo-inverse formula."""
    m = dn.RAPPOR(range(60), epsilon=4.0, num_bits=16, num_cohorts=8)
    f = np.full(60, 1 / 60)
    x = _design_dense(m)
    sizes = np.full(8, 1000 / 8)
    design = x * np.repeat(sizes, 16)[:, None]
    ps, qs = float(m.p_star), float(m.q_star)
    rate = ps + (qs - ps) * (x @ f)
    noise = np.repeat(sizes, 16) * rate * (1 - rate) / (qs - ps) ** 2
    gram_inv = np.linalg.pinv(design.T @ design)
    expected = np.diag(gram_inv @ (design.T * noise) @ design @ gram_inv)
    np.testing.assert_allclose(m.variance(1000, f, "respondents"), expected, rtol=1e-9)


# ------------------------------------------------------------- report checks


def test_report_checks_name_the_row_and_the_bound() -> None:
    """Dict reports: exactly ``cohort`` and ``bits``, non-negative ints, the cohort below the number
    of cohorts and the bits below ``2**num_bits``; structured reports: the two fields, one word."""
    m = RAPPOR(["a", "b", "c"], epsilon=2.0, num_bits=8, num_cohorts=4)
    assert m.aggregate([{"cohort": 3, "bits": 255}, {"cohort": 0, "bits": 0}]).n == 2  # the largest values
    cases = [
        ({"cohort": 4, "bits": 0}, r"^RAPPOR report 1: cohort must be below 4 and bits below 2\*\*8; got "
                                   r"\{'cohort': 4, 'bits': 0\}$"),
        ({"cohort": 0, "bits": 256}, r"^RAPPOR report 1: cohort must be below 4 and bits below 2\*\*8; got "),
        ({"cohort": -1, "bits": 0}, r"^RAPPOR report 1: cohort and bits must be non-negative ints$"),
        ({"cohort": 0, "bits": -1}, r"^RAPPOR report 1: cohort and bits must be non-negative ints$"),
        ({"cohort": 0, "bits": 1.0}, r"^RAPPOR report 1: cohort and bits must be non-negative ints$"),
        ({"cohort": True, "bits": 1}, r"^RAPPOR report 1: cohort and bits must be non-negative ints$"),
        ({"cohort": 0}, r"^RAPPOR report 1 must be \{'cohort': int, 'bits': int\}; got \{'cohort': 0\}$"),
        ({"cohort": 0, "bits": 1, "x": 2}, r"^RAPPOR report 1 must be \{'cohort': int, 'bits': int\}; got "),
        ((0, 1), r"^RAPPOR report 1 must be \{'cohort': int, 'bits': int\}; got \(0, 1\)$"),
    ]
    for item, message in cases:
        with pytest.raises(ValueError, match=message):
            m.aggregate([{"cohort": 0, "bits": 1}, item])
    good = m.privatize_many(["a", "b"], rng=1)
    arr = good.copy()
    arr["cohort"][1] = 4
    with pytest.raises(ValueError, match=r"^RAPPOR report cohort must be below 4$"):
        m.aggregate(arr)
    arr = good.copy()
    arr["bits"][0] = 256
    with pytest.raises(ValueError, match=r"^RAPPOR report bits must be below 2\*\*8$"):
        m.aggregate(arr)
    wrong = np.zeros(2, dtype=[("cohort", "<u4"), ("bits", "<u8", (2,))])
    with pytest.raises(ValueError, match=r"^RAPPOR reports need fields 'cohort' and 'bits' \(1 64-bit word\(s\)\); "
                       r"got "):
        m.aggregate(wrong)
    with pytest.raises(ValueError, match=r"^RAPPOR reports need fields 'cohort' and 'bits'"):
        m.aggregate(np.zeros((2, 2), dtype=good.dtype))


def test_wide_reports_split_into_words() -> None:
    """100 bits: two 64-bit words, least significant first, on the wire one integer."""
    m = RAPPOR(["a", "b"], epsilon=2.0, num_bits=100, num_cohorts=2)
    bits = (1 << 99) | (1 << 64) | 5
    checked = m.reports_from_json([{"cohort": 1, "bits": bits}])
    assert m.reports_to_json(checked) == [{"cohort": 1, "bits": bits}]
    counts = m.aggregate([{"cohort": 1, "bits": bits}]).counts.reshape(2, 101)
    assert counts[1, 0] == 1 and np.flatnonzero(counts[1, 1:]).tolist() == [0, 2, 64, 99] and counts[0].sum() == 0
    with pytest.raises(ValueError, match=r"^RAPPOR report 0: cohort must be below 2 and bits below 2\*\*100; got "):
        m.aggregate([{"cohort": 0, "bits": 1 << 100}])
    assert m.report_bits == 100 + 1 and RAPPOR(["a", "b"], epsilon=1.0, num_cohorts=64).report_bits == 16 + 6


@pytest.mark.parametrize(("bits", "cohorts"), [(2, 1), (16, 64), (63, 3), (64, 64), (100, 8), (128, 1)])
@pytest.mark.parametrize("n", [0, 1, 3_001])
def test_bit_counts_are_each_cohorts_reports_with_each_bit_set(bits: int, cohorts: int, n: int,
                                                                rng: np.random.Generator) -> None:
    """The statistic ``[N_j, c_j0 .. c_j(b-1)]`` per cohort, from the words' bytes grouped by cohort, equals
    the count bit by bit of Python integers, for filters of one and two words and every bit's byte."""
    m = RAPPOR([str(v) for v in range(8)], epsilon=2.0, num_bits=bits, num_cohorts=cohorts)
    reports = [{"cohort": int(c), "bits": int.from_bytes(rng.bytes(16), "little") & ((1 << bits) - 1)}
               for c in rng.integers(0, cohorts, n)]
    want = np.zeros((cohorts, bits + 1), dtype=np.int64)
    for r in reports:
        want[r["cohort"], 0] += 1
        for i in range(bits):
            want[r["cohort"], i + 1] += r["bits"] >> i & 1
    np.testing.assert_array_equal(m.aggregate(reports).counts, want.ravel())


# ------------------------------------------------ supports, audit, exact view


def _every_report(m: RAPPOR) -> list[dict[str, int]]:
    """Every (cohort, bits) report of a small configuration."""
    return [{"cohort": c, "bits": w} for c in range(m.num_cohorts) for w in range(1 << m.num_bits)]


def test_supports_means_every_bloom_bit_of_the_category_in_the_reports_cohort() -> None:
    """``supports(reports, v)``: ``bits & B(c, v) == B(c, v)`` with ``c`` the report's own cohort, for
    every report of 8 bits in 4 cohorts (whose filters differ) and every category."""
    m = RAPPOR(list("abcdefgh"), epsilon=2.0, num_bits=8, num_hashes=2, num_cohorts=4)
    items = _every_report(m)
    for position, value in enumerate(m.domain):
        want = [item["bits"] & int(m.bloom[item["cohort"], position]) == int(m.bloom[item["cohort"], position])
                for item in items]
        got = m.supports(items, value)
        assert got.dtype == bool and got.tolist() == want
    wide = RAPPOR(list("ab"), epsilon=2.0, num_bits=100, num_cohorts=2)  # two words: all of them must hold
    filters = [sum(int(w) << (64 * i) for i, w in enumerate(wide.bloom[1, v])) for v in range(2)]
    items = [{"cohort": 1, "bits": filters[0]}, {"cohort": 1, "bits": filters[1]},
             {"cohort": 1, "bits": filters[0] | filters[1]}, {"cohort": 0, "bits": filters[0]}]
    expected = [(b & filters[0]) == filters[0] for b in (filters[0], filters[1], filters[0] | filters[1])]
    assert wide.supports(items, "a").tolist()[:3] == expected and expected == [True, False, True]


@pytest.mark.audit
def test_audit_events_follow_their_definition_in_every_cohort() -> None:
    """``2 [all bits of B(x) - B(x') set] + [no bit of B(x') - B(x) set]`` in the cohorts where the pair's
    differences ``(a, b)`` carry its largest loss ``a ln(q*/p*) + b ln((1-p*)/(1-q*))`` (> 0), 0 elsewhere;
    the configuration has cohorts of each kind (disjoint filters, overlapping ones, a filter whose two
    hashes collide)."""
    m = RAPPOR(list("abcdefgh"), epsilon=2.0, num_bits=8, num_hashes=2, num_cohorts=4)
    items = _every_report(m)
    kinds = set()
    ps, qs = m.p_star, m.q_star

    def loss(c: int, x: int, o: int) -> float:
        bx, bo = int(m.bloom[c, x]), int(m.bloom[c, o])
        return math.log((qs / ps) ** (bx & ~bo).bit_count() * ((1 - ps) / (1 - qs)) ** (bo & ~bx).bit_count())

    for x in range(8):
        for o in range(8):
            want = []
            best = max(loss(c, x, o) for c in range(4))
            for item in items:
                bx, bo = int(m.bloom[item["cohort"], x]), int(m.bloom[item["cohort"], o])
                only_x, only_o = bx & ~bo, bo & ~bx
                pure = best > 0 and loss(item["cohort"], x, o) == pytest.approx(best, rel=1e-12)
                kinds.add((bin(only_x).count("1") == 2, bin(only_o).count("1") == 2))
                hit = item["bits"] & only_x == only_x
                miss = item["bits"] & only_o == 0
                want.append((2 * hit + miss) * pure)
            events = m.audit_events(items, m.domain[x], m.domain[o])
            assert events.dtype == np.int64  # cell numbers, as the audit counts them
            np.testing.assert_array_equal(events, want)  # a short diff
    assert kinds == {(True, True), (True, False), (False, True), (False, False)}


def test_transition_matrix_entries_are_the_product_over_bits() -> None:
    """``P[x, (c, w)] = (1/m) prod_i P(S_i = w_i | B_i)`` with ``q*`` where ``B(c, x)`` has bit ``i``."""
    m = RAPPOR(list("abcd"), f=0.25, p=0.25, q=0.75, num_bits=4, num_hashes=2, num_cohorts=2)
    outputs, matrix = m.transition_matrix()
    assert outputs == [(c, w) for c in range(2) for w in range(16)]
    qs, ps = float(m.q_star), float(m.p_star)
    for x in range(4):
        for j, (c, w) in enumerate(outputs):
            want = 0.5
            for i in range(4):
                one = qs if int(m.bloom[c, x]) >> i & 1 else ps
                want *= one if w >> i & 1 else 1 - one
            assert matrix[x, j] == pytest.approx(want, rel=1e-12)


def test_transition_matrix_refuses_more_than_ten_bits_or_2_16_outputs() -> None:
    """Allowed up to 10 bits and ``cohorts 2**bits <= 2**16`` (64 cohorts of 10 bits); refused past either."""
    message = r"^transition_matrix enumerates every \(cohort, bits\); too many$"
    outputs, matrix = RAPPOR(["a", "b"], f=0.5, num_bits=10, num_cohorts=64).transition_matrix()
    assert len(outputs) == matrix.shape[1] == 1 << 16
    for bits, cohorts in ((11, 1), (10, 65)):
        with pytest.raises(NotImplementedError, match=message):
            RAPPOR(["a", "b"], f=0.5, num_bits=bits, num_cohorts=cohorts).transition_matrix()
    with pytest.raises(NotImplementedError, match=r"^RAPPOR is decoded by regression, not by support counts$"):
        RAPPOR(["a", "b"], f=0.5).support_probabilities()


# -------------------------------------------------------- estimate, variance


def test_population_target_adds_the_sampling_term() -> None:
    """``population`` (the default of ``estimate_from`` and ``variance``) is ``respondents`` plus
    ``f (1 - f) / n`` at the clipped estimate; ``n`` is the aggregate's; no reports give zeros."""
    m = RAPPOR(list("abcd"), epsilon=4.0, num_bits=16, num_cohorts=4)
    stat = m.aggregate(m.privatize_many(list("aabcdd") * 500, rng=2))
    fixed, population = m.estimate_from(stat, "respondents"), m.estimate_from(stat)
    f = np.clip(fixed.frequencies, 0, 1)
    assert population.n == fixed.n == 3000 and population.target == "population"
    np.testing.assert_allclose(population.std_errors**2, fixed.std_errors**2 + f * (1 - f) / 3000, rtol=1e-12)
    truth = np.array([1 / 3, 1 / 6, 1 / 6, 1 / 3])
    np.testing.assert_allclose(
        m.variance(3000, truth), m.variance(3000, truth, "respondents") + truth * (1 - truth) / 3000, rtol=1e-12
    )
    empty = m.estimate([])
    assert empty.n == 0 and empty.frequencies.tolist() == empty.std_errors.tolist() == [0.0] * 4


def test_bit_rates_of_empty_cohorts_are_silent_and_rates_are_clipped_to_0_1() -> None:
    """A cohort with no reports gives ``0/0`` bit rates, silently read as 0 (also in a hand-made
    aggregate with set bits but no reports there); a hand-made aggregate with more set bits than
    reports, or a negative count, has its bit rate clipped to 1 or 0 (noise 0), as at equality."""
    import warnings

    m = RAPPOR(list("abcd"), epsilon=4.0, num_bits=8, num_cohorts=4)
    counts = m.aggregate(m.privatize_many(list("abcd") * 100, rng=3)).counts.copy()
    table = counts.reshape(4, 9)

    def std_errors() -> np.ndarray:
        stat = dn.SupportCounts(m.fingerprint, counts.copy(), int(table[:, 0].sum()))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            return m.estimate_from(stat, "respondents").std_errors

    table[2] = 0
    std_errors()
    table[2, 1] = 3  # set bits in a cohort without reports
    std_errors()
    for bound, beyond in ((table[0, 0], table[0, 0] + 5), (0, -5)):
        table[0, 1] = bound
        at_bound = std_errors()
        table[0, 1] = beyond
        np.testing.assert_allclose(std_errors(), at_bound, rtol=1e-12)


# --------------------------------------------------------------- clients


def test_client_keeps_the_given_cohort_and_checks_it() -> None:
    m = RAPPOR(["a", "b"], f=0.5, num_cohorts=1000)
    assert [m.client(secret=b"s" * 32, cohort=c).cohort for c in (999, 999, 0)] == [999, 999, 0]  # both ends
    drawn = m.client()
    assert len(drawn.secret) == 32 and 0 <= drawn.cohort < 1000
    small = RAPPOR(["a", "b"], f=0.5, num_cohorts=4)
    for cohort in (4, -1, True, 1.0, "1"):
        with pytest.raises(ValueError, match=rf"^cohort must be an int in 0\.\.3; got {cohort!r}$"):
            small.client(secret=b"s" * 32, cohort=cohort)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^pass either state or secret/cohort to RAPPOR\.client, not both$"):
        small.client(state=MemoryStore(), cohort=1)


def test_repr_names_the_parameters_and_a_google_hashing() -> None:
    m = RAPPOR(list("abc"), f=0.5, num_bits=8, num_hashes=2, num_cohorts=2)
    g = RAPPOR(list("abc"), f=0.5, num_bits=8, num_hashes=2, num_cohorts=2, hashing="google")
    def tail(r: RAPPOR) -> str:
        return f"epsilon={r.epsilon:.6g}, epsilon_infinity={r.epsilon_infinity:.6g})"

    assert repr(m) == f"RAPPOR(k=3, bits=8, hashes=2, cohorts=2, {tail(m)}"
    assert repr(g) == f"RAPPOR(k=3, bits=8, hashes=2, cohorts=2, hashing='google', {tail(g)}"


def test_estimate_fields_and_the_clipped_sampling_term() -> None:
    """The estimate names the mechanism, its epsilon, domain, n and target; the support-count fields
    are NaN (float) and zero counts (int64): RAPPOR is decoded by regression. The sampling term
    ``f (1 - f) / n`` is taken at ``f`` clipped to [0, 1]: 0 for estimates above 1 or below 0."""
    m = RAPPOR(list("abc"), epsilon=4.0, num_bits=8, num_cohorts=2)
    est = m.estimate(m.privatize_many(list("abcc") * 50, rng=4), target="respondents")
    assert (est.mechanism, est.epsilon, est.domain, est.n, est.target) == ("RAPPOR", m.epsilon, ("a", "b", "c"),
                                                                           200, "respondents")
    for field in (est.observed, est.p_star, est.q_star):
        assert field.dtype == float and field.shape == (3,) and np.isnan(field).all()
    assert est.support_counts.dtype == np.int64 and est.support_counts.tolist() == [0, 0, 0]
    for full in (True, False):  # 97 of 100 reports set every bit: estimates above 1; 2 of 100: below 0
        table = np.zeros((2, 9), dtype=np.int64)
        table[:, 0] = 100
        table[:, 1:] = 97 if full else 2
        stat = dn.SupportCounts(m.fingerprint, table.ravel(), 200)
        population, fixed = m.estimate_from(stat), m.estimate_from(stat, "respondents")
        assert np.all(population.frequencies > 1) if full else np.all(population.frequencies < 0)
        assert np.all(fixed.std_errors > 0)
        np.testing.assert_array_equal(population.std_errors, fixed.std_errors)


# ------------------------------------------------------- parameters, integers


def test_integer_probabilities_round_f_up_and_p_q_to_nearest() -> None:
    """``f/2``, ``p``, ``q`` in units of 2**-32: ``f/2`` rounded up (more noise), ``p`` and ``q`` to the
    nearest (floats read as the decimals they print as); with ``epsilon``, ``f/2 = ceil(2**32 b/(a+b))``
    for ``a/b = exp_ratio(epsilon / 2h)``; ``f/2 = 0`` (a config) has no lifetime bound."""
    from deniable import _privacy as privacy

    params = RAPPOR(list("ab"), f=0.3, p=0.3, q=0.7).to_config()["params"]
    assert params["half_f_numerator"] == math.ceil(Fraction(3, 20) * 2**32) == 644_245_095  # 644,245,094.4
    assert params["p_numerator"] == 1_288_490_189  # 1,288,490,188.8
    assert params["q_numerator"] == 3_006_477_107  # 3,006,477,107.2
    for eps, h in ((4.0, 2), (1.0, 3), (0.1, 1)):  # at 0.1 a ratio for 3 outcomes would round f/2 one unit lower
        a, b = privacy.exp_ratio(eps / (2 * h), 1)
        m = RAPPOR(list("ab"), epsilon=eps, num_hashes=h)
        assert m.to_config()["params"]["half_f_numerator"] == math.ceil(Fraction(b * 2**32, a + b))
    config = RAPPOR(list("ab"), f=0.5).to_config()
    del config["epsilon"]
    config["params"]["half_f_numerator"] = 0
    assert dn.from_config(config).epsilon_infinity == math.inf
    for change in ({"p_numerator": 0}, {"q_numerator": 1 << 32}):  # without f, p* = 0 or q* = 1: no signal
        bad = {**config, "params": {**config["params"], **change}}
        with pytest.raises(ValueError, match=r"^RAPPOR parameters give no signal: need 0 < p\* < q\* < 1 "
                                             r"\(f < 1, p < q\)$"):
            dn.from_config(bad)


def test_size_and_probability_checks_at_their_bounds() -> None:
    for kwargs in (dict(num_bits=2, num_hashes=1, num_cohorts=2), dict(num_bits=4, num_hashes=4),
                   dict(num_bits=256, num_hashes=8), dict(num_cohorts=1 << 16), dict(p=0.0, q=1.0)):
        RAPPOR(["a", "b"], f=0.5, **kwargs)  # type: ignore[arg-type]
    refused = [
        (dict(num_bits=0), r"^num_bits must be an int in 1\.\.256 for RAPPOR; got 0$"),
        (dict(num_bits=1, num_hashes=1), r"^RAPPOR's categories have one Bloom filter in every cohort \(num_bits=1, "
         r"num_hashes=1, num_cohorts=64\): reports would carry nothing about them; use more bits or cohorts$"),
        (dict(num_bits=257), r"^num_bits must be an int in 1\.\.256 for RAPPOR; got 257$"),
        (dict(num_bits=True), r"^num_bits must be an int in 1\.\.256 for RAPPOR; got True$"),
        (dict(num_bits=16.0), r"^num_bits must be an int in 1\.\.256 for RAPPOR; got 16\.0$"),
        (dict(num_hashes=0), r"^num_hashes must be an int in 1\.\.8 for RAPPOR; got 0$"),
        (dict(num_cohorts=0), r"^num_cohorts must be an int in 1\.\.65536 for RAPPOR; got 0$"),
        (dict(num_cohorts=65537), r"^num_cohorts must be an int in 1\.\.65536 for RAPPOR; got 65537$"),
        (dict(num_bits=4, num_hashes=5), r"^num_hashes \(5\) cannot exceed num_bits \(4\)$"),
        (dict(hashing="md5"), r"^hashing must be one of \['google', 'sha256'\] for RAPPOR; got 'md5'$"),
        (dict(f=1.0), r"^RAPPOR parameters give no signal: need 0 < p\* < q\* < 1 \(f < 1, p < q\)$"),
        (dict(p=0.5, q=0.5), r"^q must exceed p for RAPPOR; got p=0\.5, q=0\.5$"),
        (dict(p=1.0, q=1.0), r"^q must exceed p for RAPPOR; got p=1\.0, q=1\.0$"),
        (dict(f=0.0), r"^f must be in \(0, 1\) for RAPPOR; got 0\.0$"),
        (dict(f=1.5), r"^f must be in \(0, 1\) for RAPPOR; got 1\.5$"),
        # f up to 1 + 2**-32 (exclusive) passes the check, and f = 1 has no signal
        (dict(f=Fraction(2**32 + 1, 2**32)),
         r"^f must be in \(0, 1\) for RAPPOR; got Fraction\(4294967297, 4294967296\)$"),
        (dict(p=-0.1), r"^p must be in \[0, 1\] for RAPPOR; got -0\.1$"),
        (dict(q=1.5), r"^q must be in \[0, 1\] for RAPPOR; got 1\.5$"),
    ]
    for kwargs, message in refused:
        with pytest.raises(ValueError, match=message):
            RAPPOR(["a", "b"], **{"f": 0.5, **kwargs})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^RAPPOR needs exactly one of epsilon \(lifetime, epsilon_infinity\) or f$"):
        RAPPOR(["a", "b"], f=0.5, epsilon=1.0)
    with pytest.raises(ValueError, match=r"^epsilon must be a positive finite number for RAPPOR; got -1$"):
        RAPPOR(["a", "b"], epsilon=-1)
    with pytest.raises(ValueError, match=r"^RAPPOR with hashing='google' needs string categories \(hashed as UTF-8\)$"):
        RAPPOR([1, 2], f=0.5, hashing="google")


def test_underdetermined_decode_selects_candidates_and_says_so() -> None:
    """More candidates than equations: select (NNLS, refit, Bonferroni), not the minimum-norm spread.

    300 candidates, 8 bits x 16 cohorts = 128 equations, the truth on 5 of
    them (shares 0.3 ... 0.1, standard errors about 0.0105: the smallest is
    9.5 SE from 0 against a Bonferroni threshold of 3.6, so missing one has
    probability about 1e-8; their sum, about 1 with SE 0.03, falls under
    0.9 with probability below 1e-6). The minimum-norm least
    squares puts well under half of the mass on the truth; the selection
    keeps the 5 and their estimates carry nearly all of it.
    """
    m = RAPPOR(300, epsilon=4.0, num_bits=8, num_cohorts=16)
    rng = np.random.default_rng(11)
    shares = np.array([0.3, 0.25, 0.2, 0.15, 0.1])
    reports = m.privatize_many(rng.choice(5, 100_000, p=shares), rng=rng)
    with pytest.warns(dn.DeniableWarning, match=r"300 candidates exceed the 128 equations .* selected"):
        est = m.estimate(reports)
    assert est.selected is not None and est.selected[:5].all()
    assert np.all(est.frequencies[~est.selected] == 0) and np.isnan(est.std_errors[~est.selected]).all()
    assert est.frequencies[:5].sum() > 0.9
    # the minimum-norm solution this replaces: the mass spread over the candidates
    from deniable.mechanisms._rappor_decode import least_squares

    table = m.aggregate(reports).counts.reshape(m.num_cohorts, m.num_bits + 1)
    sizes, ones = table[:, 0].astype(float), table[:, 1:].astype(float)
    t = (ones - float(m.p_star) * sizes[:, None]) / float(m.q_star - m.p_star)
    spread, _ = least_squares(m._design(sizes), t.ravel(), np.ones(t.size))
    assert spread[:5].sum() < 0.6


def test_determined_decode_selects_nothing() -> None:
    m = RAPPOR(50, epsilon=4.0, num_bits=8, num_cohorts=16)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = m.estimate(m.privatize_many(np.arange(50).repeat(20), rng=1))
    assert est.selected is None and np.isfinite(est.std_errors).all()
