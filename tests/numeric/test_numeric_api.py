"""Numeric mechanisms: API shape, validation, wire format and aggregates."""

from __future__ import annotations

import json
import math
import re
import warnings

import numpy as np
import pytest
from numeric_cases import ALL, HIGH, LOW, PURE, VALUES
from scripted import Scripted

import deniable as dn
from deniable._randomness import GeneratorSource
from deniable.mechanisms._numeric import MeanStat, NumericMechanism


@pytest.mark.parametrize("name", list(ALL))
def test_shape_of_a_numeric_mechanism(name: str) -> None:
    m = ALL[name](1.0)
    assert (m.low, m.high) == (LOW, HIGH)
    assert 0 < m.epsilon <= 1.0
    r = m.privatize(12.5)
    assert isinstance(r, float) and math.isfinite(r)
    rs = m.privatize_many([LOW, 0.0, HIGH, 1e9, -1e9], rng=1)
    assert rs.dtype == np.float64 and rs.shape == (5,)
    lo, hi = m.report_range
    assert ((rs >= lo) & (rs <= hi)).all()
    np.testing.assert_array_equal(rs, m.privatize_many([LOW, 0.0, HIGH, 1e9, -1e9], rng=1))
    est = m.estimate(m.privatize_many(np.full(1000, 30.0), rng=2))
    assert isinstance(est, dn.MeanEstimate) and est.n == 1000
    assert est.ci(0.95)[0] < est.mean < est.ci(0.95)[1]
    assert est.ci(0.99)[1] - est.ci(0.99)[0] > est.ci(0.9)[1] - est.ci(0.9)[0]
    assert "MeanEstimate" in repr(est) and m.name in repr(m)
    assert m.variance(100) >= m.variance(100, 30.0) > 0


@pytest.mark.parametrize("name", list(ALL))
def test_config_round_trip_and_tampering(name: str) -> None:
    m = ALL[name](0.8)
    cfg = json.loads(json.dumps(m.to_config()))
    again = dn.from_config(cfg)
    assert again == m and again.fingerprint == m.fingerprint and hash(again) == hash(m)
    assert type(again) is type(m) and again.epsilon == m.epsilon
    cfg["epsilon"] = m.epsilon * 0.9
    with pytest.raises(ValueError, match="epsilon"):
        dn.from_config(cfg)
    cfg = m.to_config()
    cfg["domain"] = [5, 5]
    with pytest.raises(ValueError, match="low must be < high"):
        dn.from_config(cfg)


def test_from_config_rejects_malformed_params() -> None:
    cfg = dn.Duchi(0, 1, epsilon=1).to_config()
    cfg["params"]["beta_numerator"] = 0
    with pytest.raises(ValueError, match="beta_numerator"):
        dn.from_config(cfg)
    cfg = dn.Laplace(0, 1, epsilon=1).to_config()
    cfg["params"]["requested_epsilon"] = "one"
    with pytest.raises(ValueError, match="requested_epsilon"):
        dn.from_config(cfg)
    cfg = dn.Gaussian(0, 1, epsilon=1, delta=1e-6).to_config()
    cfg["params"]["lattice_steps"] += 1
    with pytest.raises(ValueError, match="lattice_steps"):
        dn.from_config(cfg)
    for bad in ([1.0], [0.0, "1"], "0,1", None):
        cfg = dn.Duchi(0, 1, epsilon=1).to_config()
        cfg["domain"] = bad
        with pytest.raises((ValueError, TypeError)):
            dn.from_config(cfg)


@pytest.mark.parametrize(
    ("low", "high", "error", "match"),
    [
        (1.0, 1.0, ValueError, "low must be < high"),
        (2.0, 1.0, ValueError, "low must be < high"),
        (float("nan"), 1.0, ValueError, "low must be a finite"),
        (0.0, float("inf"), ValueError, "high must be a finite"),
        (-1e308, 1e308, ValueError, "high - low must be finite"),
        ("0", 1.0, TypeError, "low must be a finite"),
        (True, 2.0, TypeError, "low must be a finite"),
        (0.0, None, TypeError, "high must be a finite"),
    ],
)
@pytest.mark.parametrize("name", list(ALL))
def test_bad_ranges_are_rejected(name, low, high, error, match) -> None:
    kwargs = {"delta": 1e-5} if name == "Gaussian" else {}
    cls = getattr(dn, name)
    with pytest.raises(error, match=match):
        cls(low, high, epsilon=1.0, **kwargs)


@pytest.mark.parametrize("name", list(ALL))
def test_bad_values_are_rejected(name: str) -> None:
    m = ALL[name](1.0)
    for bad in (float("nan"), float("inf"), -float("inf")):
        with pytest.raises(ValueError, match=rf"finite numbers; got {bad!r} at index 1"):
            m.privatize_many([1.0, bad, 2.0])
        with pytest.raises(ValueError, match="finite"):
            m.privatize(bad)
    with pytest.raises(ValueError, match="real numbers; got 'x'"):
        m.privatize_many([1.0, "x"])
    with pytest.raises(TypeError, match="real number"):
        m.privatize("3")
    with pytest.raises(TypeError, match="real number"):
        m.privatize(True)
    with pytest.raises(ValueError, match="1-D"):
        m.privatize_many([[1.0, 2.0]])
    with pytest.raises(ValueError, match="real numbers"):
        m.privatize_many([1.0, 10**400])
    assert m.privatize_many([]).shape == (0,)
    assert m.aggregate([]).n == 0


def test_bad_privacy_parameters_are_rejected() -> None:
    for bad in (0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="epsilon"):
            dn.Laplace(0, 1, epsilon=bad)
        with pytest.raises(ValueError, match="epsilon"):
            dn.Piecewise(0, 1, epsilon=bad)
    for bad in (0.0, 1.0, -1e-5, float("nan")):
        with pytest.raises(ValueError, match="delta must be in"):
            dn.Gaussian(0, 1, epsilon=1.0, delta=bad)
    with pytest.raises(TypeError, match="epsilon"):
        dn.Duchi(0, 1, epsilon="1")
    with pytest.raises(TypeError):
        dn.Duchi(0, 1, 1.0)  # epsilon is keyword-only
    with pytest.raises(ValueError, match="bins must be a divisor of 1024"):
        dn.SquareWave(0, 1, epsilon=1.0, bins=100)


@pytest.mark.parametrize("name", list(ALL))
def test_reports_json_round_trip_and_validation(name: str) -> None:
    m = ALL[name](1.0)
    rs = m.privatize_many(np.linspace(LOW, HIGH, 50), rng=3)
    items = json.loads(json.dumps(m.reports_to_json(rs)))
    np.testing.assert_array_equal(m.reports_from_json(items), rs)
    lo, hi = m.report_range
    for bad, match in [
        ([1.0, "2"], "report '2' at index 1 is not a number"),
        ([True], "report True at index 0 is not a number"),
        ([None], "not a number"),
        ([float("nan")], "not a possible"),
        ([hi + (hi - lo)], "not a possible"),
    ]:
        with pytest.raises(ValueError, match=match):
            m.reports_from_json(bad)
    with pytest.raises(ValueError, match="JSON array"):
        m.reports_from_json({"a": 1})
    with pytest.raises(ValueError, match="not a possible"):
        m.aggregate(np.array([lo - (hi - lo)]))


@pytest.mark.parametrize("name", list(ALL))
def test_reports_that_no_input_can_produce_are_rejected(name: str) -> None:
    """In range but off the mechanism's output values (between lattice points or cells)."""
    m = ALL[name](1.0)
    good = m.privatize_many([LOW, 30.0, HIGH], rng=1)
    m.aggregate(good)
    off = good.copy()
    inward = 1.0 if good[1] < 30.0 else -1.0  # stay inside the report range
    off[1] = good[1] + inward * 0.37 * (m.step if hasattr(m, "step") else 1e-4)
    with pytest.raises(ValueError, match=r"at index 1 is not a possible .*not one of its output values"):
        m.aggregate(off)
    with pytest.raises(ValueError, match="not one of its output values"):
        m.reports_from_json(m.reports_to_json(good)[:1] + [float(off[1])])


@pytest.mark.parametrize("name", ["Laplace", "Gaussian"])
def test_lattice_reports_are_checked_to_a_thousandth_of_a_step(name: str) -> None:
    """A lattice report may be off its lattice point by rounding in transit: up to a thousandth of a step
    passes; half a step (between two outputs) and two thousandths do not. On ``[0, N]`` for ``N`` lattice
    steps (the lattice depends on epsilon and delta only) the step is exactly 1."""
    steps = ALL[name](1.0)._lattice.steps
    m = dn.Laplace(0, steps, epsilon=1.0) if name == "Laplace" else dn.Gaussian(0, steps, epsilon=1.0, delta=1e-5)
    assert m.step == 1.0
    m.aggregate([0.0, 1e-3, 7 - 5e-4, float(steps)])  # 1e-3 - 0 is exactly the allowance
    for off in (0.5, 7.5, 2e-3, 7 + 2e-3):
        with pytest.raises(ValueError, match="not one of its output values"):
            m.aggregate([off])


@pytest.mark.parametrize("name", list(ALL))
def test_bad_reports_past_the_first_chunk_are_named_by_index(name: str) -> None:
    """Reports are checked a chunk at a time: a bad one in a later chunk (or at the very end)
    is still refused with its own index, whether it is off the range, NaN or between outputs."""
    m = ALL[name](1.0)
    good = m.privatize_many(np.linspace(LOW, HIGH, 150_000), rng=2)
    lo, hi = m.report_range
    stat = m.aggregate(good)
    yt = (good - (LOW + HIGH) / 2) / ((HIGH - LOW) / 2)
    assert stat.total == pytest.approx(yt.sum(), rel=1e-12, abs=1e-9)
    assert stat.total_sq == pytest.approx(np.dot(yt, yt), rel=1e-12)
    for index in (70_001, good.size - 1):
        for bad, match in [
            (hi + (hi - lo), "finite, in"), (float("nan"), "finite, in"), (float("-inf"), "finite, in"),
            (good[index] + (0.37 * m.step if hasattr(m, "step") else 1e-4) * (1 if good[index] < hi else -1),
             "not one of its output values"),
        ]:
            off = good.copy()
            off[index] = bad
            with pytest.raises(ValueError, match=rf"at index {index} is not a possible .*{match}"):
                m.aggregate(off)


@pytest.mark.parametrize("name", ["Laplace", "SquareWave", "Hybrid"])
def test_aggregates_merge_and_serialize(name: str) -> None:
    m = ALL[name](1.0)
    rs = m.privatize_many(np.linspace(LOW, HIGH, 3000), rng=4)
    a, b, c = m.aggregate(rs[:1000]), m.aggregate(rs[1000:2500]), m.aggregate(rs[2500:])
    whole = m.aggregate(rs)
    for merged in ((a + b) + c, a + (b + c), c + b + a, sum([a, b, c])):
        assert merged.n == whole.n
        assert merged.total == pytest.approx(whole.total, rel=1e-12, abs=1e-9)
        assert merged.total_sq == pytest.approx(whole.total_sq, rel=1e-12)
        if whole.cell_counts is not None:
            np.testing.assert_array_equal(merged.cell_counts, whole.cell_counts)
    assert a + m.aggregate([]) == a
    assert MeanStat.from_json(json.loads(json.dumps(whole.to_json()))) == whole
    est = m.estimate_from(a + b + c)
    assert est.mean == pytest.approx(m.estimate(rs).mean, rel=1e-12, abs=1e-9)
    other = ALL[name](2.0)
    with pytest.raises(ValueError, match="different mechanisms"):
        a + other.aggregate(other.privatize_many([1.0, 2.0], rng=1))
    with pytest.raises(ValueError, match="another mechanism configuration"):
        other.estimate_from(a)
    with pytest.raises(TypeError, match="MeanStat"):
        m.estimate_from(dn.GRR(3, epsilon=1).aggregate([0, 1]))
    with pytest.raises(ValueError, match="at least 2 reports"):
        m.estimate(rs[:1])
    with pytest.raises(ValueError, match="inconsistent"):
        MeanStat.from_json({**whole.to_json(), "total_sq": -1.0})


def test_square_wave_estimate_carries_a_histogram() -> None:
    m = dn.SquareWave(0, 10, epsilon=2.0, bins=16)
    est = m.estimate(m.privatize_many(np.full(20_000, 2.5), rng=5))
    h = est.histogram
    assert isinstance(h, dn.HistogramEstimate) and h.probabilities.shape == (16,)
    assert h.probabilities.sum() == pytest.approx(1.0)
    assert h.edges[0] == 0 and h.edges[-1] == 10
    # the reconstructed median of 20,000 reports at 2.5 is within 0.01 of it (measured over seeds,
    # spread about 0.003); 0.1 is a sixth of a bin, and values one bin higher (3.125) fall outside
    assert float(h.quantile(0.5)[()]) == pytest.approx(2.5, abs=0.1)
    shifted = m.estimate(m.privatize_many(np.full(20_000, 3.125), rng=5)).histogram
    assert shifted is not None and float(shifted.quantile(0.5)[()]) != pytest.approx(2.5, abs=0.1)
    assert m.distribution(m.privatize_many([1.0, 2.0], rng=1), bins=4, method="em").method == "em"
    with pytest.raises(ValueError, match="'ems' or 'em'"):
        m.distribution(m.privatize_many([1.0, 2.0], rng=1), method="mle")
    stat = m.aggregate(m.privatize_many([1.0, 2.0], rng=1))
    broken = MeanStat(stat.fingerprint, stat.n, stat.total, stat.total_sq, stat.cell_counts[:-1])
    with pytest.raises(ValueError, match="cell counts"):
        m.distribution(broken)
    with pytest.raises(AttributeError):
        m.bins = 8  # part of the configuration (and fingerprint)


def test_square_wave_distribution_passes_its_settings_on() -> None:
    """``distribution`` takes the mechanism's ``bins`` by default, gives edges in original units,
    runs EMS or plain EM as named, and passes ``tolerance`` and ``max_iterations`` on (default
    10,000: with ``tolerance=0`` the log-likelihood never changes by less, so the run stops at
    the cap, unconverged). The EMS kernel (1/4, 1/2, 1/4) caps every bin at 3/4 of the mass; plain
    EM on 20,000 reports at one value puts 0.998 of it in one bin (seed 5)."""
    m = dn.SquareWave(LOW, HIGH, epsilon=2.0, bins=16)
    stat = m.aggregate(m.privatize_many(np.full(20_000, 2.5), rng=5))
    ems, em = m.distribution(stat), m.distribution(stat, method="em")
    assert ems.probabilities.shape == em.probabilities.shape == (16,)
    np.testing.assert_allclose(ems.edges, np.linspace(LOW, HIGH, 17), rtol=0, atol=1e-12)
    assert (ems.method, em.method) == ("ems", "em") and ems.converged is True and em.converged is True
    assert type(ems.iterations) is int and 1 < ems.iterations < 10_000
    assert ems.probabilities.max() <= 0.75 < 0.9 < em.probabilities.max()
    few = m.distribution(stat, bins=1, tolerance=0.0, max_iterations=5)
    assert (few.iterations, few.converged) == (5, False)
    capped = m.distribution(stat, bins=1, tolerance=0.0)
    assert (capped.iterations, capped.converged) == (10_000, False)


def test_gaussian_from_sigma_and_repr() -> None:
    g = dn.Gaussian.from_sigma(0, 100, sigma=30.0, delta=1e-6)
    assert g.sigma == pytest.approx(30.0, rel=0.01)
    assert g.delta <= 1e-6 and "sigma=" in repr(g)
    assert g.to_config()["delta"] == g.delta
    with pytest.raises(ValueError, match="sigma must be positive"):
        dn.Gaussian.from_sigma(0, 1, sigma=-1.0, delta=1e-6)
    with pytest.raises(ValueError, match="too small to give any epsilon"):
        dn.Gaussian.from_sigma(0, 100, sigma=0.01, delta=1e-6)
    with pytest.raises(ValueError, match="supports epsilon up to about 20"):
        dn.Gaussian(0, 1, epsilon=60.0, delta=1e-6)


def test_secure_default_and_single_path_agree_in_kind() -> None:
    for name in PURE:
        m = PURE[name](1.0)
        secure = m.privatize_many(np.linspace(LOW, HIGH, 100))
        assert secure.dtype == np.float64
        m.validate(secure)
        m.validate([m.privatize(v) for v in (LOW, 0.0, HIGH)])


@pytest.mark.parametrize("name", list(ALL))
def test_the_range_is_bounds_and_the_config_keeps_its_domain_field(name: str) -> None:
    """``domain`` means a frequency oracle's categories only; the wire field keeps its name."""
    m = ALL[name](1.0)
    assert m.bounds == (m.low, m.high) == (LOW, HIGH)
    assert not hasattr(m, "domain")
    assert m.to_config()["domain"] == [LOW, HIGH]
    assert dn.from_config(m.to_config()).bounds == (LOW, HIGH)


def test_a_stored_numeric_config_still_loads() -> None:
    stored = {"format": "deniable.mechanism", "version": 1, "mechanism": "laplace", "domain": [0.0, 10.0],
              "epsilon": 0.9999999043786933, "params": {"requested_epsilon": 1.0, "lattice_steps": 1310}}
    assert dn.from_config(stored) == dn.Laplace(0, 10, epsilon=1.0)


def test_default_audit_pairs_are_the_range_endpoints() -> None:
    from deniable.audit import default_pairs

    assert default_pairs(dn.Laplace(0, 10, epsilon=1.0)) == [(0.0, 10.0), (10.0, 0.0)]


@pytest.mark.parametrize("bad", ["0.1", True, None, [1e-5]])
def test_a_delta_that_is_not_a_number_is_a_type_error(bad: object) -> None:
    """A string, a bool or a list is refused by type (a bool is not read as 1, a string not parsed)."""
    message = rf"^delta must be a number in \(0, 1\) for Gaussian; got {re.escape(repr(bad))}$"
    with pytest.raises(TypeError, match=message):
        dn.Gaussian(0, 1, epsilon=1.0, delta=bad)


def test_config_errors_name_the_field_and_the_mechanism() -> None:
    cfg = dn.Duchi(0, 1, epsilon=1).to_config()
    cfg["domain"] = [0.0]
    with pytest.raises(ValueError, match=r"^config field 'domain' must be \[low, high\] for Duchi; got \[0\.0\]$"):
        dn.from_config(cfg)
    cfg["domain"] = [2.0, 1.0]
    with pytest.raises(ValueError, match=r"^low must be < high for Duchi; got low=2\.0, high=1\.0$"):
        dn.from_config(cfg)


class _Counting(GeneratorSource):
    """A seeded source that counts the bytes it hands out."""

    def __init__(self, seed: int) -> None:
        super().__init__(np.random.default_rng(seed))
        self.read = 0

    def random_bytes(self, n: int) -> bytes:
        self.read += n
        return super().random_bytes(n)


@pytest.mark.parametrize("name", list(ALL))
def test_one_report_is_the_one_report_sampler_at_the_clamped_value(name: str) -> None:
    """``privatize(v)`` maps ``v`` as the batch path does (clamped ``t``), reading the same bytes.

    Where a mechanism keeps the shared one-report path, that path is the batch
    sampler with full-width comparisons (``lazy=False``): a fixed number of
    bytes whatever the draws.
    """
    m = ALL[name](1.0)
    shared = type(m)._sample_one is NumericMechanism._sample_one
    for v in VALUES:
        t = float(m._unit(np.array([v]))[0])
        for seed in range(4):
            a, b = _Counting(seed), _Counting(seed)
            assert m.privatize(v, rng=a) == m._sample_one(t, b), (v, seed)
            assert a.read == b.read
            if shared:
                c, d = _Counting(seed), _Counting(seed)
                assert m._sample_one(t, c) == float(m._sample(np.array([t]), d, False)[0])
                assert c.read == d.read
    if name == "Laplace":  # many outputs: ten draws from one seed repeat only from the seed
        assert [m.privatize(12.5, rng=s) for s in range(10)] == [m.privatize(12.5, rng=s) for s in range(10)]
        assert len({m.privatize(12.5, rng=s) for s in range(10)}) > 5


@pytest.mark.parametrize("name", list(ALL))
def test_estimate_passes_its_target_on(name: str) -> None:
    m = ALL[name](1.0)
    reports = m.privatize_many(np.linspace(LOW, HIGH, 40), rng=6)
    mine = m.estimate(reports, target="respondents")
    assert mine.target == "respondents"
    assert mine.std_error == m.estimate_from(m.aggregate(reports), target="respondents").std_error
    assert m.estimate(reports).target == "population"


def test_an_estimate_needs_two_reports_and_a_mean_stat() -> None:
    m = dn.Duchi(LOW, HIGH, epsilon=1.0)
    two = m.privatize_many([1.0, 2.0], rng=1)
    assert m.estimate(two).n == 2
    with pytest.raises(ValueError, match=r"^an estimate needs at least 2 reports; got n=1$"):
        m.estimate(two[:1])
    with pytest.raises(TypeError, match=r"^estimate_from needs a MeanStat aggregate; got dict$"):
        m.estimate_from({"n": 2})


def test_report_checks_name_the_mechanism_and_allow_rounding_at_the_range_ends() -> None:
    """Reports within ``1e-9`` of the report range's width outside it pass the range check
    (a Laplace report is then matched to its lattice point); beyond, the message gives the range."""
    m = dn.Laplace(LOW, HIGH, epsilon=1.0)
    shape = r"^reports for Laplace must be a 1-D sequence of numbers; got shape \(1, 2\)$"
    with pytest.raises(ValueError, match=shape):
        m.aggregate([[1.0, 2.0]])
    lo, hi = m.report_range
    width = hi - lo
    assert m.aggregate([hi + 0.5e-9 * width, lo - 0.5e-9 * width]).n == 2
    assert m.aggregate([hi + 1e-9 * width, lo - 1e-9 * width]).n == 2  # the bounds themselves
    edges = [hi + 1e-9 * width, lo - 1e-9 * width, lo, hi]  # the bounds, then a bad report in the same chunk
    for bad in (hi + 2e-9 * width, lo - 2e-9 * width):
        message = rf"^report {re.escape(repr(bad))} at index 1 is not a possible Laplace report \(finite, in \["
        with pytest.raises(ValueError, match=message):
            m.aggregate([hi, bad])
        with pytest.raises(ValueError, match=message.replace("index 1", "index 4")):
            m.aggregate([*edges, bad])


def test_lattice_config_errors_in_whole_messages() -> None:
    cfg = dn.Laplace(LOW, HIGH, epsilon=1.0).to_config()
    cfg["params"]["requested_epsilon"] = True
    with pytest.raises(ValueError, match=r"^config params\.requested_epsilon must be a number for Laplace; got True$"):
        dn.from_config(cfg)
    cfg = dn.Gaussian(LOW, HIGH, epsilon=1.0, delta=1e-5).to_config()
    cfg["params"]["requested_delta"] = "1e-5"
    with pytest.raises(ValueError, match=r"^config params\.requested_delta must be a number for Gaussian; got '1e-5'$"):
        dn.from_config(cfg)
    cfg = dn.Gaussian(LOW, HIGH, epsilon=1.0, delta=1e-5).to_config()
    steps = cfg["params"]["lattice_steps"]
    cfg["params"]["lattice_steps"] = steps + 1
    message = rf"^config params\.lattice_steps is {steps + 1} but this Gaussian builds {steps} steps from the same"
    with pytest.raises(ValueError, match=message):
        dn.from_config(cfg)
    assert dn.from_config({**cfg, "params": {**cfg["params"], "lattice_steps": steps}}).delta <= 1e-5


RECORD = np.array([("x", 1.0)], dtype=[("a", "U1"), ("b", "f8")])[0]  # a NumPy scalar that is iterable


def test_value_and_argument_errors_in_whole_messages() -> None:
    m = dn.Duchi(LOW, HIGH, epsilon=1.0)
    cases = [
        (lambda: m.privatize_many([1.0, "x"]), ValueError, r"values for Duchi must be real numbers; got 'x'"),
        (lambda: m.privatize_many("12"), TypeError, r"values for Duchi must be numbers; got '12'"),
        (lambda: m.privatize_many(10**400), ValueError, r"values for Duchi must be real numbers; got 10{400}"),
        (lambda: m.privatize_many([1.0, True]), ValueError,
         r"values for Duchi must be real numbers, not booleans; got True at index 1"),
        (lambda: m.privatize_many(np.array([False, True])), ValueError,
         r"values for Duchi must be real numbers, not booleans; got False at index 0"),
        (lambda: m.privatize_many((2.0, np.True_)), ValueError,
         r"values for Duchi must be real numbers, not booleans; got True at index 1"),
        (lambda: m.aggregate([0.5, False]), ValueError,
         r"reports for Duchi must be real numbers, not booleans; got False at index 1"),
        (lambda: m.aggregate(np.array([0.5, True], dtype=object)), ValueError,
         r"reports for Duchi must be real numbers, not booleans; got True at index 1"),
        (lambda: m.privatize_many(object()), ValueError,
         r"values for Duchi must be real numbers; got <object object at 0x[0-9a-f]+>"),
        (lambda: m.privatize_many(RECORD), ValueError,  # a scalar named whole, though its fields iterate
         r"values for Duchi must be real numbers; got "
         r"np\.void\(\('x', 1\.0\), dtype=\[\('a', '<U1'\), \('b', '<f8'\)\]\)"),
        (lambda: m.privatize_many([1.0, np.nan]), ValueError,
         r"values for Duchi must be finite numbers; got nan at index 1"),
        (lambda: m.privatize_many([1e308, 1e308, -np.inf]), ValueError,
         r"values for Duchi must be finite numbers; got -inf at index 2"),
        (lambda: m.privatize_many([[1.0]]), ValueError,
         r"values for Duchi must be a 1-D sequence of numbers; got shape \(1, 1\)"),
        (lambda: m.privatize("3"), TypeError, r"value for Duchi must be a real number; got '3'"),
        (lambda: m.privatize(np.inf), ValueError, r"values for Duchi must be finite numbers; got inf at index 0"),
        (lambda: m.variance(0), ValueError, r"n must be a positive int; got 0"),
        (lambda: m.variance(1, np.nan), ValueError, r"values for Duchi must be finite numbers; got nan at index 0"),
        (lambda: m.variance(True), ValueError, r"n must be a positive int; got True"),
        (lambda: m.variance(2.0), ValueError, r"n must be a positive int; got 2\.0"),
        (lambda: m.reports_from_json([1.0, "2"]), ValueError, r"report '2' at index 1 is not a number \(Duchi\)"),
    ]
    for call, error, message in cases:
        with pytest.raises(error, match=f"^{message}$"):
            call()
    assert m.privatize_many(np.array([1.0, 2], dtype=object), rng=1).shape == (2,)  # numbers, no booleans
    assert repr(m) == "Duchi(low=-20, high=80, epsilon=1)"
    assert m.variance(np.int64(4)) == m.variance(4) == m.variance(1) / 4


def test_finite_values_whose_sum_overflows_pass_without_a_warning() -> None:
    m = dn.Duchi(LOW, HIGH, epsilon=1.0)
    with warnings.catch_warnings():  # the sum overflows, the values are fine: no RuntimeWarning
        warnings.simplefilter("error")
        assert m.privatize_many(np.array([1e308, 1e308, -1e308]), rng=1).shape == (3,)
        with pytest.raises(ValueError, match="got inf at index 1"):
            m.privatize_many([1.0, np.inf, -np.inf])


@pytest.mark.parametrize("name", list(ALL))
def test_a_batch_reads_few_random_bytes_per_value(name: str) -> None:
    """The batch path compares byte by byte (a tie, 1 in 256, reads the next byte): under 5 bytes
    per value for every mechanism here (full-width comparisons read 8 per comparison: 18 for Laplace,
    8.4 for Duchi)."""
    m = ALL[name](1.0)
    source = _Counting(1)
    m.privatize_many(np.linspace(LOW, HIGH, 10_000), rng=source)
    assert source.read < 5 * 10_000


@pytest.mark.parametrize(
    ("name", "largest"), [("Laplace", 11.2), ("Duchi", 21.4), ("Piecewise", 28), ("Hybrid", 28), ("SquareWave", 28)]
)
def test_each_mechanism_names_its_largest_realisable_epsilon(name: str, largest: float) -> None:
    cls = getattr(dn, name)
    assert cls(0, 1, epsilon=largest).epsilon >= 0.99 * largest
    message = (rf"^{name} realises epsilon to within 1% only up to {largest:g} \(its integer probabilities "
               rf"run out of bits\); got epsilon={largest + 0.5!r}$")
    with pytest.raises(ValueError, match=message):
        cls(0, 1, epsilon=largest + 0.5)


@pytest.mark.parametrize("name", list(ALL))
def test_a_bad_epsilon_names_the_mechanism(name: str) -> None:
    kwargs = {"delta": 1e-5} if name == "Gaussian" else {}
    with pytest.raises(ValueError, match=rf"^epsilon must be a positive finite number for {name}; got 0$"):
        getattr(dn, name)(0, 1, epsilon=0, **kwargs)


def test_lattice_noise_compares_full_width_when_asked() -> None:
    """The one-report path's noise reads a fixed 10 bytes per draw (a 16-bit column, a 64-bit
    comparison); the batch path's byte-lazy comparison reads about 3."""
    lattice = dn.Laplace(LOW, HIGH, epsilon=1.0)._lattice
    full, lazy = _Counting(2), _Counting(2)
    lattice.sample(1000, full, False)
    lattice.sample(1000, lazy, True)
    assert full.read == 10 * 1000
    assert lazy.read < 4 * 1000


@pytest.mark.parametrize("name", ["Laplace", "Gaussian"])
def test_lattice_one_report_reads_18_bytes_and_clamps_the_extreme_noise(name: str) -> None:
    """The one-report path reads a fixed 18 bytes: the random rounding's full-width comparison (8), the
    noise table's 16-bit column word (2) and its full-width comparison (8). Scripted: at the range's ends
    (nothing to round) the table's extreme outcomes ``-K`` and ``+K`` (columns 0 and ``2K``, kept with
    ``U = 0``) land beyond the far clamp, so on the report range's ends."""
    m = ALL[name](1.0)
    for seed in range(20):
        source = _Counting(seed)
        m.privatize(30.0, rng=source)
        assert source.read == 18
    K = m._lattice.K
    for value, column, end in ((LOW, 0, 0), (HIGH, 2 * K, 1)):
        data = bytes(8) + np.array([column], dtype=np.uint16).tobytes() + bytes(8)
        assert m.privatize(value, rng=Scripted(data)) == m.report_range[end]


@pytest.mark.parametrize("lazy", [False, True])
def test_duchi_batch_reads_a_comparison_a_beta_bit_and_a_fair_bit_per_value(lazy: bool) -> None:
    """Duchi's batch sampler reads exactly: the ``(1 + t) / 2`` comparisons (8 bytes a value at
    full width), the ``beta`` Bernoulli bits, and ``ceil(n / 8)`` bytes of fair coins."""
    from deniable import _randomness as randomness

    m = dn.Duchi(0.0, 1.0, epsilon=1.0)
    for n in (8, 16, 17):
        t = np.linspace(-1.0, 1.0, n)
        source, reference = _Counting(n), _Counting(n)
        m._sample(t.copy(), source, lazy)
        follow = randomness.below(randomness.fixed_point((t + 1.0) * 0.5), reference, lazy)
        if not lazy:
            assert reference.read == 8 * n
        randomness.bernoulli_bits(int(m.beta.numerator), 32, n, reference)
        randomness.uniform_words((n + 7) // 8, np.uint8, reference)
        assert follow.size == n and source.read == reference.read


@pytest.mark.parametrize("lazy", [False, True])
def test_hybrid_up_to_epsilon_star_samples_as_its_duchi(lazy: bool) -> None:
    """At or below ``EPSILON_STAR`` Hybrid is its Duchi part: the same reports from the same bytes,
    byte-lazy or full width as asked."""
    m = dn.Hybrid(LOW, HIGH, epsilon=0.5)
    t = np.linspace(-1.0, 1.0, 1000)
    source, reference = _Counting(3), _Counting(3)
    np.testing.assert_array_equal(m._sample(t.copy(), source, lazy), m._duchi._sample(t.copy(), reference, lazy))
    assert source.read == reference.read


def test_range_errors_name_the_bound_and_the_mechanism() -> None:
    for low, high, error, message in [
        ("0", 1.0, TypeError, r"low must be a finite real number for Piecewise; got '0'"),
        (0.0, np.nan, ValueError, r"high must be a finite real number for Piecewise; got nan"),
        (1.0, 1.0, ValueError, r"low must be < high for Piecewise; got low=1\.0, high=1\.0"),
        (-1e308, 1e308, ValueError, r"high - low must be finite for Piecewise; got low=-1e\+308, high=1e\+308"),
    ]:
        with pytest.raises(error, match=f"^{message}$"):
            dn.Piecewise(low, high, epsilon=1.0)


def test_the_first_bad_report_is_named_whether_off_the_range_or_between_outputs() -> None:
    m = dn.Duchi(0, 1, epsilon=1.0)  # two outputs, inside its report range
    with pytest.raises(dn.ReportError, match=r"^report 0\.0 at index 0 is not a possible Duchi report "
                                             r"\(not one of its output values\)$") as caught:
        m.reports_from_json([0.0, 3.0])  # 3.0 is off the range, but 0.0 comes first
    assert caught.value.index == 0
    with pytest.raises(dn.ReportError, match=r"^report 3\.0 at index 0 is not a possible Duchi report \(finite, in "):
        m.reports_from_json([3.0, 0.0])
    with pytest.raises(dn.ReportError, match=r"^report 3\.0 at index 1 is not a possible Duchi report \(finite, in "):
        m.reports_from_json([m.report_range[0], 3.0])


def test_gaussian_from_sigma_errors_in_whole_messages_and_a_range_off_zero() -> None:
    for (low, high, sigma, delta), error, message in [
        ((1, 0, 1.0, 1e-6), ValueError, r"low must be < high for Gaussian; got low=1, high=0"),
        ((0, 1, "1", 1e-6), TypeError, r"sigma must be a finite real number for Gaussian; got '1'"),
        ((0, 1, 1.0, 2.0), ValueError, r"delta must be in \(0, 1\) for Gaussian; got 2\.0"),
        ((0, 1, 0.0, 1e-6), ValueError, r"sigma must be positive for Gaussian; got 0\.0"),
        ((0, 100, 0.01, 1e-6), ValueError, r"sigma=0\.01 is too small to give any epsilon at delta=1e-06"),
    ]:
        with pytest.raises(error, match=f"^{message}$"):
            dn.Gaussian.from_sigma(low, high, sigma=sigma, delta=delta)
    # the sensitivity is high - low (here 100, where high + low is 60)
    assert dn.Gaussian.from_sigma(LOW, HIGH, sigma=30.0, delta=1e-6).sigma == pytest.approx(30.0, rel=0.01)
    cfg = dn.Gaussian(LOW, HIGH, epsilon=1.0, delta=1e-5).to_config()
    cfg["params"]["requested_epsilon"] = True
    with pytest.raises(ValueError, match=r"^config params\.requested_epsilon must be a number for Gaussian; got True$"):
        dn.from_config(cfg)


def test_two_level_gaussian_mean_errors_in_whole_messages() -> None:
    from deniable.mechanisms._numeric import two_level_gaussian_mean

    owner = "two_level_gaussian_mean"
    for (values, low, high), kwargs, error, message in [
        (([1.0, 2.0], 1, 0), {}, ValueError, rf"low must be < high for {owner}; got low=1, high=0"),
        (([1.0, 2.0], 0, 1), {"delta": 2.0}, ValueError, rf"delta must be in \(0, 1\) for {owner}; got 2\.0"),
        (([1.0, 2.0], 0, 1), {"sigma1": "a"}, TypeError, rf"sigma1 must be a finite real number for {owner}; got 'a'"),
        (([1.0, 2.0], 0, 1), {"sigma2": "b"}, TypeError, rf"sigma2 must be a finite real number for {owner}; got 'b'"),
        (([1.0, 2.0], 0, 1), {"sigma2": 0.0}, ValueError,
         rf"sigma1 and sigma2 must be positive for {owner}; got \[1\.0, 0\.0\]"),
        (([np.nan, 2.0], 0, 1), {}, ValueError, rf"values for {owner} must be finite numbers; got nan at index 0"),
        (([1.0], 0, 1), {}, ValueError, rf"{owner} needs at least 2 values; got 1"),
    ]:
        with pytest.raises(error, match=f"^{message}$"):
            two_level_gaussian_mean(values, low, high, **kwargs)


def test_two_level_gaussian_mean_fields_clamp_and_seed() -> None:
    """Every field of the estimate: the name, the range, ``delta`` (default ``1e-6``), the analytic-Gaussian
    epsilon of ``sqrt(sigma1^2 + sigma2^2)`` (default sigmas 1 and 1; infinite on a range of 100) for
    sensitivity ``high - low``, the
    target; two values are enough (a finite sample standard error); values beyond the range are clamped
    to it (1000 values, standard error 0.045: the bound 1 is 22 of them); one seed, one estimate."""
    from deniable.mechanisms._numeric import two_level_gaussian_mean
    from deniable.mechanisms._numeric.lattice import gaussian_epsilon

    est = two_level_gaussian_mean([LOW, HIGH], LOW, HIGH, rng=1)
    assert (est.mechanism, est.low, est.high, est.delta, est.n, est.target) == (
        "two-level Gaussian", LOW, HIGH, 1e-6, 2, "population")
    assert est.epsilon == gaussian_epsilon(math.sqrt(2.0) / (HIGH - LOW), 1e-6)
    assert math.isfinite(est.sample_std_error) and est.std_error == est.sample_std_error
    unit = two_level_gaussian_mean([0.2, 0.8], 0, 1, rng=1)  # a range where the default sigmas give an epsilon
    assert unit.epsilon == gaussian_epsilon(math.sqrt(2.0), 1e-6) < math.inf
    other = two_level_gaussian_mean([1.0, 2.0, 3.0], LOW, HIGH, sigma1=3.0, sigma2=4.0, delta=1e-3, rng=2,
                                    target="respondents")
    assert (other.epsilon, other.delta, other.target) == (gaussian_epsilon(5.0 / (HIGH - LOW), 1e-3), 1e-3,
                                                          "respondents")
    for beyond, end in ((HIGH + 1e4, HIGH), (LOW - 1e4, LOW)):
        assert abs(two_level_gaussian_mean(np.full(1000, beyond), LOW, HIGH, rng=3).mean - end) < 1.0
    values = np.linspace(LOW, HIGH, 50)
    first, again = (two_level_gaussian_mean(values, LOW, HIGH, rng=5) for _ in range(2))
    assert (first.mean, first.std_error) == (again.mean, again.std_error)


def test_two_level_gaussian_mean_respondent_error_is_the_noise_and_rounding_variance() -> None:
    """``target="respondents"``: ``sqrt(((c1^2 + c2^2) Var Z + c1^2 mean f(1 - f)) / n)`` for the lattice
    steps ``c = sigma / 256``, the noise variance ``Var Z`` in steps squared and the values' fractional
    lattice positions ``f``. With ``sigma1 = 256`` (step 1) the positions' fractions are the values':
    0.5 and 0.25, so ``mean f(1 - f) = 0.21875``."""
    from deniable.mechanisms._numeric import two_level_gaussian_mean
    from deniable.mechanisms._numeric.lattice import gaussian_noise

    var_z = gaussian_noise(256)[1]
    values = np.array([10.5, 11.5, 20.25, 30.25])
    est = two_level_gaussian_mean(values, 0, 100, sigma1=256.0, sigma2=128.0, rng=4, target="respondents")
    assert est.std_error == pytest.approx(math.sqrt(((1.0 + 0.25) * var_z + 0.21875) / 4), rel=1e-12)


@pytest.mark.parametrize("table", [
    np.linspace(-1.5, 2.5, 1024),  # an even table: every valid report found by the O(1) guess
    np.sort(np.random.default_rng(3).uniform(-2, 3, 200)),  # uneven: the binary search takes over
    np.array([0.25]),
    np.array([-0.5, 1.5]),
])
def test_table_membership_is_exact(table: np.ndarray) -> None:
    """The report check's table lookup agrees with ``np.isin`` on entries, neighbours and values between."""
    from deniable.mechanisms._numeric.base import NumericMechanism

    rng = np.random.default_rng(4)
    y = np.concatenate([
        rng.choice(table, 500), np.nextafter(rng.choice(table, 100), np.inf),
        np.nextafter(rng.choice(table, 100), -np.inf), rng.uniform(table[0], table[-1], 100),
    ])
    found = NumericMechanism._in_table(y, table)
    assert np.array_equal(found, np.isin(y, table))
