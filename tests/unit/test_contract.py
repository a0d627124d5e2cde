"""The one mechanism contract: identity, configs, reports (JSON, checked once), the first bad report.

Seeded reports; every assertion is an exact identity, so no statistical
tolerance is involved.
"""

from __future__ import annotations

import json
import pickle
from typing import Any

import numpy as np
import pytest
from mechanism_grid import N_REPORTS, Case, params, reports_for, sample_values

import deniable as dn
from deniable.errors import DeniableError, ReportError
from deniable.mechanisms import CheckedReports, Mechanism

CASES: list[tuple[Any, list[Any], Any]] = [
    # (mechanism, values to privatize, a JSON report it can never produce)
    (dn.BinaryRR(epsilon=1.0), [True, False, True], "yes"),
    (dn.GRR(["A", "B", "C"], epsilon=1.0), ["A", "C", "B"], "D"),
    (dn.SUE(10, epsilon=1.0), [1, 9, 0], "zz"),
    (dn.OUE(10, epsilon=1.0), [2, 3, 4], "ffffff"),
    (dn.BLH(8, epsilon=1.0), [0, 7, 3], {"seed": 1}),
    (dn.OLH(8, epsilon=2.0), [0, 7, 3], {"seed": 1, "value": 10**6}),
    (dn.HadamardResponse(6, epsilon=1.0), [0, 5, 3], 99),
    (dn.SubsetSelection(8, epsilon=1.0), [0, 7, 3], [5, 1]),
    (dn.RAPPOR(["a", "b", "c"], epsilon=2.0), ["a", "b", "c"], {"cohort": -1, "bits": 0}),
    (dn.Laplace(0, 10, epsilon=1.0), [0.0, 5.0, 10.0], 1e9),
    (dn.Duchi(0, 10, epsilon=1.0), [0.0, 5.0, 10.0], 3.0),
    (dn.SquareWave(0, 10, epsilon=1.0), [0.0, 5.0, 10.0], "x"),
]
IDS = [type(c[0]).__name__ for c in CASES]


@pytest.mark.parametrize(("m", "values", "bad"), CASES, ids=IDS)
def test_one_base_for_every_mechanism(m: Any, values: list[Any], bad: Any) -> None:
    assert isinstance(m, Mechanism)
    assert dn.from_config(m.to_config()) == m
    assert hash(dn.from_config(m.to_config())) == hash(m)
    assert len(m.fingerprint) == 16 and m.fingerprint == dn.from_config(m.to_config()).fingerprint
    assert isinstance(m.report_bits, int) and m.report_bits >= 1


@pytest.mark.parametrize(("m", "values", "bad"), CASES, ids=IDS)
def test_reports_from_json_checks_once(m: Any, values: list[Any], bad: Any) -> None:
    reports = m.privatize_many(values, rng=np.random.default_rng(3))
    items = m.reports_to_json(reports)
    checked = m.reports_from_json(items)
    assert type(checked) is CheckedReports
    assert not checked.flags.writeable
    assert m.reports_to_json(checked) == items
    assert m.aggregate(checked) == m.aggregate(reports)
    # checked reports are taken as they are: no validation runs again
    calls = []
    original = m._validate
    m._validate = lambda r: calls.append(1) or original(r)  # instance attribute shadows the method
    try:
        m.aggregate(checked)
        m.reports_to_json(checked)
        assert calls == []
        # a slice or copy is a plain array again, checked when used
        m.aggregate(checked[1:])
        assert calls == [1]
    finally:
        del m._validate


@pytest.mark.parametrize(("m", "values", "bad"), CASES, ids=IDS)
def test_first_bad_report_is_named(m: Any, values: list[Any], bad: Any) -> None:
    items = m.reports_to_json(m.privatize_many(values, rng=np.random.default_rng(4)))
    with pytest.raises(ReportError) as info:
        m.reports_from_json([*items[:2], bad, *items[2:]])
    assert info.value.index == 2
    assert isinstance(info.value, ValueError) and isinstance(info.value, DeniableError)
    assert "index 0" not in info.value.reason and " report 0" not in info.value.reason
    with pytest.raises(ReportError, match="JSON array"):
        m.reports_from_json("not a list")


def test_checked_reports_of_another_configuration_are_checked_again() -> None:
    a, b = dn.GRR(["A", "B", "C"], epsilon=1.0), dn.GRR(["A", "B"], epsilon=1.0)
    checked = a.reports_from_json(["A", "C"])
    with pytest.raises(ValueError, match="not in the domain"):
        b.aggregate(checked)


def test_checked_reports_pickle_and_compute_as_plain_arrays() -> None:
    m = dn.Duchi(0, 1, epsilon=1.0)
    items = m.reports_to_json(m.privatize_many([0.25, 0.5], rng=np.random.default_rng(6)))
    checked = m.reports_from_json(items)
    restored = pickle.loads(pickle.dumps(checked))
    assert type(restored) is np.ndarray and restored.tolist() == checked.tolist()
    assert type(checked + 1) is np.ndarray
    assert m.aggregate(checked) == m.aggregate(items)


@pytest.mark.parametrize(("m", "values", "bad"), CASES, ids=IDS)
def test_aggregate_from_json_goes_through_the_mechanism(m: Any, values: list[Any], bad: Any) -> None:
    stat = m.aggregate(m.privatize_many(values, rng=np.random.default_rng(5)))
    assert m.aggregate_from_json(stat.to_json()) == stat
    with pytest.raises(ValueError, match="another mechanism configuration"):
        m.aggregate_from_json(stat.to_json() | {"fingerprint": "0" * 16})


@params()
def test_reports_json_round_trip(case: Case) -> None:
    m, reports = reports_for(case)
    items = m.reports_to_json(reports)
    assert len(items) == N_REPORTS
    text = json.dumps(items)  # plain JSON types only
    back = m.reports_from_json(json.loads(text))
    assert m.aggregate(back) == m.aggregate(reports)
    assert m.reports_to_json(back) == items
    assert m.reports_from_json([]).shape[0] == 0


@params()
def test_single_reports_fit_the_batch_shape(case: Case) -> None:
    """A report from ``privatize`` is accepted wherever a batch report is, and serializes alike."""
    m = case.make()
    values = list(m.domain[:3])
    singles = [m.privatize(v) for v in values]
    seeded = [m.privatize(v, rng=7) for v in values]
    for reports in (singles, seeded):
        stat = m.aggregate(reports)
        assert stat.n == len(values)
        items = m.reports_to_json(reports)
        assert json.loads(json.dumps(items)) == items
        assert m.aggregate(m.reports_from_json(items)) == stat
        assert m.report_to_json(reports[0]) == items[0]


@params()
def test_seeded_batches_are_reproducible(case: Case) -> None:
    m = case.make()
    values = sample_values(m, 50, np.random.default_rng(1))
    a = m.privatize_many(values, rng=99)
    b = m.privatize_many(values, rng=np.random.default_rng(99))
    assert m.reports_to_json(a) == m.reports_to_json(b)
    assert m.privatize_many([], rng=1).shape[0] == 0


def test_supports_public_helper() -> None:
    m = dn.OUE(["a", "b", "c"], epsilon=1.0)
    reports = np.array([[1, 0, 1], [0, 1, 0]], dtype=np.uint8)
    np.testing.assert_array_equal(m.supports(reports, "a"), [True, False])
    np.testing.assert_array_equal(m.supports(reports, "b"), [False, True])
    with pytest.raises(ValueError, match="not in the domain"):
        m.supports(reports, "z")


@params()
def test_fast_decode_equals_definition(case: Case) -> None:
    """The support counts of ``aggregate`` (bit sums, Walsh-Hadamard transforms) equal the
    definition ``C_v = #{reports y : v in S(y)}`` evaluated report by report."""
    m, reports = reports_for(case)
    direct = [int(m.supports(reports, v).sum()) for v in m.domain]
    assert m.aggregate(reports).counts.tolist() == direct


def test_select_keeps_rows_checked() -> None:
    m = dn.GRR(["A", "B", "C"], epsilon=1.0)
    checked = m.reports_from_json(["A", "C", "B", "C"])
    picked = checked.select([1, 3])
    assert type(picked) is CheckedReports and picked.tolist() == ["C", "C"]
    assert picked.checked is not None and picked.checked.tolist() == [2, 2]
    assert m.aggregate(picked) == m.aggregate(["C", "C"])
    with pytest.raises(ValueError, match="checked by a mechanism"):
        checked[1:].select([0])


OLH10 = dn.OLH(10, epsilon=1.0)
OUE5 = dn.OUE(5, epsilon=1.0)


OUE12 = dn.OUE(12, epsilon=1.0)


SS6 = dn.SubsetSelection(6, epsilon=0.5)  # omega = 2


HR5 = dn.HadamardResponse(5, epsilon=1.0)  # K = 8


@pytest.mark.parametrize(
    ("m", "reports", "message"),
    [
        (dn.BinaryRR(prob=0.75), [True, 1], "booleans"),
        (dn.BinaryRR(prob=0.75), ["true"], "booleans"),
        (dn.BinaryRR(prob=0.75), [[True], [False]], "1-D"),
        (dn.BinaryRR(prob=0.75), np.array([0.0, 1.0]), "booleans"),
        (dn.GRR(["A", "B"], epsilon=1.0), ["A", "C"], "GRR report rejected: value 'C'"),
        (dn.GRR(4, epsilon=1.0), [0, 4], "GRR report rejected"),
        (dn.GRR(4, epsilon=1.0), np.array([0.0, 1.0]), "GRR report rejected"),
        (OUE5, np.zeros((2, 2), dtype=np.uint8), "1 packed bytes"),
        (OUE5, np.zeros(5, dtype=np.uint8), "2-D"),
        (OUE5, np.array([[0b00000100]], dtype=np.uint8), "padding bits"),
        (OUE5, np.array([[1, 0, 2, 0, 0]]), "only 0 and 1"),
        (OUE5, np.array([[1.0, 0, 0, 0, 0]]), "dtype float64"),
        (OUE12, np.array([[0, 0b00000001]], dtype=np.uint8), "report 0 sets padding bits"),
        (OLH10, [{"seed": 1}], "value must be a non-negative integer"),
        (OLH10, [{"seed": -1, "value": 0}], "seed must be a non-negative integer"),
        (OLH10, [{"seed": 1.0, "value": 0}], "seed must be a non-negative integer"),
        (OLH10, [{"seed": True, "value": 0}], "seed must be a non-negative integer"),
        (OLH10, [{"seed": 1, "value": OLH10.g}], f"value must be in 0..{OLH10.g - 1}"),
        (OLH10, [{"seed": 1 << OLH10.seed_bits, "value": 0}], f"seed must be below 2\\*\\*{OLH10.seed_bits}"),
        (OLH10, [[1, 2, 3]], "must be"),
        (OLH10, ["1,2"], "must be"),
        (OLH10, np.zeros(2, dtype=[("seed", "<u8"), ("val", "<u4")]), "fields 'seed' and 'value'"),
        (SS6, [[0, 0]], "distinct positions in ascending order"),
        (SS6, [[3, 1]], "distinct positions in ascending order"),
        (SS6, [[0, 6]], "outside 0..5"),
        (SS6, [[-1, 2]], "outside 0..5"),
        (SS6, [[0, 1, 2]], "each be 2 sorted category positions"),
        (SS6, np.array([[0.0, 1.0]]), "each be 2 sorted category positions"),
        (HR5, [0, 8], "not in 0..7"),
        (HR5, [-1], "not in 0..7"),
        (HR5, np.array([1.0, 2.0]), "integers in 0..7"),
        (HR5, np.array([True, False]), "integers in 0..7"),
        (HR5, [[1, 2]], "integers in 0..7"),
    ],
)
def test_malformed_reports_rejected(m, reports, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=message):
        m.aggregate(reports)
    with pytest.raises(ValueError):
        m.estimate(reports)


@pytest.mark.parametrize(
    ("m", "items", "message"),
    [
        (dn.BinaryRR(prob=0.75), [True, "false"], "booleans"),
        (dn.BinaryRR(prob=0.75), {"a": 1}, "JSON array"),
        (dn.GRR(["A", "B"], epsilon=1.0), ["A", 0], "GRR report rejected"),
        (OUE5, ["0"], "hex string of 2 characters"),
        (OUE5, ["zz"], "not valid hex"),
        (OUE5, [5], "hex string"),
        (OUE5, ["04"], "padding bits"),
        (OLH10, [{"seed": "1", "value": 0}], "seed must be a non-negative integer"),
        (OLH10, [{"seed": 1, "value": -1}], "value must be a non-negative integer"),
        (SS6, [[1]], "2 sorted category positions|2 integers"),
        (SS6, [[1, 2], [3]], "report 1|2 integers"),
        (SS6, [[1, 2.0]], "list of 2 integers"),
        (SS6, ["1,2"], "list of 2 integers"),
        (SS6, [[2, 1]], "ascending"),
        (HR5, [1, 9], "not in 0..7"),
        (HR5, [1, "2"], "integers"),
        (HR5, [True], "integers"),
    ],
)
def test_malformed_json_reports_rejected(m, items, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=message):
        m.reports_from_json(items)


@pytest.mark.parametrize("m", [dn.GRR(["a", "b"], epsilon=1.0), dn.OUE(3, epsilon=1.0), dn.OLH(3, epsilon=1.0),
                               dn.SubsetSelection(4, epsilon=1.0), dn.Laplace(0, 1, epsilon=1.0)],
                         ids=lambda m: m.name)
def test_a_rejected_numpy_scalar_is_shown_as_its_value(m: Any) -> None:
    """Reports given as numpy scalars (``list(array)``) are named as the values they hold:
    ``'0'``, not ``np.str_('0')``, in the message and the reason."""
    good = m.reports_to_json(m.privatize_many([0.5] if m.name == "Laplace" else [m.domain[0]], rng=1))
    with pytest.raises(ReportError) as caught:
        m.reports_from_json([*good, np.str_("0")])
    assert caught.value.index == 1
    for text in (str(caught.value), caught.value.reason):
        assert "np." not in text and "'0'" in text, text


def test_checked_reports_reduce_to_scalars_as_plain_arrays() -> None:
    """Regression: ``checked.sum()`` was a 0-d array, where a plain array's is a numpy scalar."""
    m = dn.Duchi(0, 1, epsilon=1.0)
    checked = m.reports_from_json(m.reports_to_json(m.privatize_many([0.25, 0.5], rng=np.random.default_rng(6))))
    total = checked.sum()
    assert type(total) is np.float64 and total == np.asarray(checked).sum()
    grr = dn.GRR(3, epsilon=1.0).reports_from_json([0, 2, 1])
    assert type(grr.max()) is np.int64 and grr.max() == 2
    assert type(grr == 1) is np.ndarray and (grr == 1).tolist() == [False, False, True]
    assert type(np.sin(checked)) is np.ndarray
    # a 0-d result NumPy does not ask to be a scalar (an ``out=`` array) stays a 0-d array, as for a plain array
    out = checked[..., 0].copy()
    result = np.add(out, 1.0, out=out)
    assert type(result) is np.ndarray and result.shape == () and result == np.asarray(checked)[0] + 1.0


def test_checked_reports_fields_and_select_in_whole_messages() -> None:
    m = dn.GRR(["A", "B", "C"], epsilon=1.0)
    checked = m.reports_from_json(["A", "C", "B"])
    assert (checked.fingerprint, checked.flags.writeable) == (m.fingerprint, False)
    assert checked.checked is not None and not checked.checked.flags.writeable
    picked = checked.select([2, 0])
    assert (picked.fingerprint, picked.flags.writeable, picked.checked.flags.writeable) == (m.fingerprint, False, False)
    derived = checked[1:]
    assert type(derived) is CheckedReports and derived.fingerprint is None and derived.checked is None
    message = r"^select needs reports checked by a mechanism \(reports_from_json\)$"
    with pytest.raises(ValueError, match=message):
        derived.select([0])
    unnamed = m.reports_from_json(["A", "B"])
    unnamed.fingerprint = None  # checked, but by no named configuration
    with pytest.raises(ValueError, match=message):
        unnamed.select([0])


def test_identity_config_and_report_errors_in_whole_messages() -> None:
    g = dn.Gaussian(0, 1, epsilon=1.0, delta=1e-6)
    assert g.to_config()["delta"] == g.delta and 0 < g.delta <= 1e-6
    assert "delta" not in dn.Laplace(0, 1, epsilon=1.0).to_config()
    a, b = dn.GRR(["A", "B"], epsilon=1.0), dn.GRR(["A", "B"], epsilon=1.0)
    assert a == b and hash(a) == hash(b) and a != dn.GRR(["A", "B", "C"], epsilon=1.0)
    assert a != dn.GRR(["A", "B"], epsilon=2.0) and a != "GRR" and hash(a) != hash(dn.GRR(["B", "A"], epsilon=1.0))
    assert len({a, b, dn.GRR(["A", "B"], epsilon=2.0)}) == 2
    for bad, name in (({"a": 1}, "dict"), ("AB", "str"), (None, "NoneType")):
        with pytest.raises(ReportError, match=rf"^reports must be a JSON array; got {name}$"):
            a.reports_from_json(bad)  # type: ignore[arg-type]
    assert a.estimate(["A", "B", "A"]).target == "population"
    assert a.estimate(["A", "B", "A"], target="respondents").target == "respondents"
    assert a.validate(["B"]).tolist() == [1]


class _DroppingGRR(dn.GRR):
    """A GRR whose JSON check loses the last report: the alignment guard must refuse the batch."""

    def _reports_from_json(self, items: list[Any]) -> Any:
        return super()._reports_from_json(items)[:-1]


class _PairwiseGRR(dn.GRR):
    """A GRR that refuses batches of two or more, while each report alone passes."""

    def _reports_from_json(self, items: list[Any]) -> Any:
        if len(items) > 1:
            raise ValueError("GRR reports rejected together")
        return super()._reports_from_json(items)


def test_report_errors_name_the_first_bad_report_in_whole() -> None:
    cases = [
        (dn.OUE(12, epsilon=1.0), ["0000", "0001"], 1,
         "OUE report 1 sets padding bits beyond the k=12 categories",
         "OUE report sets padding bits beyond the k=12 categories"),
        (dn.HadamardResponse(5, epsilon=1.0), [1, 9], 1,
         "HadamardResponse report 1 is 9, not in 0..7", "HadamardResponse report is 9, not in 0..7"),
        (dn.Laplace(0, 1, epsilon=1.0), [0.0, float("nan")], 1,
         "report nan at index 1 is not a possible Laplace report (finite, in [-24, 25])",
         "report nan is not a possible Laplace report (finite, in [-24, 25])"),
        (dn.Laplace(0, 1, epsilon=1.0), ["x"], 0,
         "report 'x' at index 0 is not a number (Laplace)", "report 'x' is not a number (Laplace)"),
        # numpy scalars only: the message is worded from the plain values
        (dn.OUE(3, epsilon=1.0), [np.str_("0")], 0,
         "OUE report 0 must be a hex string of 2 characters (3 bits); got '0'",
         "OUE report must be a hex string of 2 characters (3 bits); got '0'"),
        (_PairwiseGRR(["a", "b"], epsilon=1.0), ["a", "b"], 0,
         "GRR reports rejected together", "the reports are rejected together but not one by one"),
        (_DroppingGRR(["a", "b"], epsilon=1.0), ["a", "b", "a"], 0, "3 reports checked into 2", "is not a report"),
        # a report whose own text holds the index's wording is quoted as sent: only the index is dropped
        (dn.OUE(3, epsilon=1.0), ["00", "x report 0"], 1,
         "OUE report 1 must be a hex string of 2 characters (3 bits); got 'x report 0'",
         "OUE report must be a hex string of 2 characters (3 bits); got 'x report 0'"),
        (dn.OUE(3, epsilon=1.0), ["x at index 0"], 0,
         "OUE report 0 must be a hex string of 2 characters (3 bits); got 'x at index 0'",
         "OUE report must be a hex string of 2 characters (3 bits); got 'x at index 0'"),
        (dn.Laplace(0, 1, epsilon=1.0), [0.0, "x at index 0"], 1,
         "report 'x at index 0' at index 1 is not a number (Laplace)",
         "report 'x at index 0' is not a number (Laplace)"),
        (dn.Laplace(0, 1, epsilon=1.0), [" report 0"], 0,
         "report ' report 0' at index 0 is not a number (Laplace)", "report ' report 0' is not a number (Laplace)"),
    ]
    for m, items, index, message, reason in cases:
        with pytest.raises(ReportError) as caught:
            m.reports_from_json(items)
        assert (str(caught.value), caught.value.index, caught.value.reason) == (message, index, reason)


def test_the_base_aggregate_estimate_and_domain_key_of_sketches() -> None:
    """The sketches keep ``Mechanism``'s own ``aggregate``, ``estimate`` and ``_domain_key``."""
    m = dn.CountMeanSketch(["a", "b", "c"], epsilon=2.0, rows=4, width=64, seed=b"0" * 32)
    reports = m.privatize_many(["a", "a", "b", "c", "a"], rng=np.random.default_rng(3))
    stat = m.aggregate(reports)
    assert stat == m._aggregate_checked(m.validate(reports)) and stat.n == 5
    assert m.aggregate(m.reports_from_json(m.reports_to_json(reports))) == stat
    est = m.estimate(reports)
    assert est.target == "population"
    np.testing.assert_array_equal(est.frequencies, m.estimate_from(stat).frequencies)
    assert m.estimate(reports, target="respondents").target == "respondents"
    other = dn.CountMeanSketch(["a", "b", "d"], epsilon=2.0, rows=4, width=64, seed=b"0" * 32)
    same = dn.CountMeanSketch(["a", "b", "c"], epsilon=2.0, rows=4, width=64, seed=b"0" * 32)
    assert m == same and hash(m) == hash(same) and m != other
