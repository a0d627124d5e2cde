"""Report columns read by their distinct cells (deniable.wire._arrow): the same reports, aggregates and
first-bad-cell errors as parsing every row's text (``from_text``), from CSV and Parquet files.

The reference is ``m.aggregate(from_text(m, text))`` with one string per row, which parses each cell as
the readers did before they worked on distinct cells; for bit vectors, the per-cell ``hex_from_json``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import deniable as dn
from deniable.errors import ReportError
from deniable.wire._arrow import aggregate_codes, distinct_codes, reports_from_codes
from deniable.wire._codecs import hex_from_json, hex_matrix
from deniable.wire._text import from_text, to_text

pa = pytest.importorskip("pyarrow")
pytest.importorskip("pandas")

KINDS = ["str", "int", "bool", "bits", "structured", "numbers"]


def _mechanism(kind: str) -> Any:
    return {"str": dn.GRR(["A", "B", "C"], epsilon=1.0), "int": dn.GRR(16, epsilon=1.0),
            "bool": dn.BinaryRR(epsilon=1.0), "bits": dn.OUE(11, epsilon=1.0),
            "structured": dn.OLH(8, epsilon=1.0), "numbers": dn.Laplace(0, 10, epsilon=1.0)}[kind]


def _column(kind: str, m: Any, n: int) -> tuple[Any, np.ndarray]:
    """``n`` reports as a file column holds them (an Arrow array) and as one string per row."""
    rng = np.random.default_rng(7)
    if kind == "bool":
        reports = m.privatize_many(rng.random(n) < 0.3, rng=rng)
        return pa.array(reports), np.where(reports, "true", "false")
    if kind == "numbers":
        reports = m.privatize_many(rng.uniform(0, 10, n), rng=rng)
    else:
        reports = m.privatize_many(rng.choice(list(m.domain), n), rng=rng)
    if kind == "int":
        return pa.array(reports), reports.astype(str)
    text = np.asarray(to_text(m, reports), dtype=str)
    return pa.array(text), text


@pytest.mark.parametrize("kind", KINDS)
def test_distinct_cells_give_the_reports_of_every_row(kind: str) -> None:
    m = _mechanism(kind)
    column, text = _column(kind, m, 3_000)
    distinct, codes = distinct_codes(column)
    np.testing.assert_array_equal(distinct[codes], text)
    reference = from_text(m, text)
    got = reports_from_codes(m, distinct, codes)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(reference))
    assert m.aggregate(got) == m.aggregate(reference) == aggregate_codes(m, distinct, codes)
    if kind == "bits":
        assert m.aggregate(m.reports_from_json(text.tolist())) == m.aggregate(got)


def test_integer_columns_stay_integers() -> None:
    """A narrow range is coded by offset, a wide one through Arrow's dictionary; the text is ``str(int)``."""
    for values in ([5, -3, 5, 7], [0, 2**40, 3, 0]):
        distinct, codes = distinct_codes(pa.array(values, pa.int64()))
        assert distinct[codes].tolist() == [str(v) for v in values]
    distinct, codes = distinct_codes(pa.array([True, False, True]))
    assert distinct[codes].tolist() == ["true", "false", "true"]
    distinct, codes = distinct_codes(pa.array([1, None, 2]))  # a null is the empty cell, as before
    assert distinct[codes].tolist() == ["1", "", "2"]


@pytest.mark.parametrize("values", [
    [0, 3, 15, 3, 0, 7, 15],  # cells 0..15 are reports 0..15: the codes are counted as they are
    [3, 5, 5, 3, 9],  # an offset range, some cells of it unused
    [15, 0, 15],  # cells 1..14 unused
    [2, 2, 2],
])
def test_integer_cells_aggregate_as_every_row(values: list[int]) -> None:
    m = _mechanism("int")
    distinct, codes = distinct_codes(pa.array(values, pa.int64()))
    assert aggregate_codes(m, distinct, codes) == m.aggregate(from_text(m, np.array([str(v) for v in values])))
    words = dn.GRR(["b", "a", "c"], epsilon=1.0)  # text cells in another order than the domain's
    distinct, codes = distinct_codes(pa.array(["a", "b", "c", "a"]))
    assert aggregate_codes(words, distinct, codes) == words.aggregate(["a", "b", "c", "a"])


@pytest.mark.parametrize("m", [
    dn.GRR(16, epsilon=1.0), dn.GRR(["b", "a", "c"], epsilon=1.0), dn.BinaryRR(epsilon=1.0),
    dn.survey.design("FR", p=["1/6", "1/6"]), dn.OUE(11, epsilon=1.0), dn.OLH(8, epsilon=1.0),
], ids=lambda m: m.name)
def test_rows_given_by_code_aggregate_as_the_rows(m: Any) -> None:
    """``_aggregate_coded(cells, codes)`` (GRR, BinaryRR and the survey designs add up the cells' tallies;
    the others take the rows) equals the aggregate of the rows ``cells[codes]``: cells repeated (two
    cells of one report), cells no row uses, one row, no row."""
    rng = np.random.default_rng(11)
    values = rng.choice(list(m.domain), 40) if hasattr(m, "domain") else rng.random(40) < 0.4
    checked = m._checked(m.privatize_many(values, rng=rng))
    cells = checked[[0, 1, 2, 0, 3, 1, 5]]
    for codes in (rng.integers(0, 5, 2_000), np.array([6]), np.zeros(0, dtype=np.intp), np.arange(7)):
        assert m._aggregate_coded(cells, codes) == m._aggregate_checked(cells[codes])


@pytest.mark.parametrize("cells,codes,size", [
    ([3, 1, 3, 0], [0, 1, 2, 2, 2, 3, 0], 5),  # two cells are 3; count 4 has no cell
    ([2], [0, 0, 0], 3),
    ([0, 1], [], 2),
    ([4, 0, 2], [1], 6),  # cells no row uses
])
def test_tallied_counts_are_the_bincount_of_the_rows(cells: list[int], codes: list[int], size: int) -> None:
    from deniable._aggregates import tallied_counts

    cells_, codes_ = np.array(cells, dtype=np.int64), np.array(codes, dtype=np.intp)
    got = tallied_counts(cells_, codes_, size)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, np.bincount(cells_[codes_], minlength=size))


def test_unused_cells_do_not_change_how_the_used_ones_read() -> None:
    """Quoted cells are read as JSON when every row's cell is quoted (a server export): a dictionary cell
    no row uses must not make them read as plain text."""
    m = dn.GRR(['"x"', "x", "y"], epsilon=1.0)
    distinct, codes = np.array(['"x"', "y"]), np.zeros(3, dtype=np.intp)
    reference = m.aggregate(from_text(m, distinct[codes]))
    assert reference.counts.tolist() == [0, 3, 0]
    assert aggregate_codes(m, distinct, codes) == reference
    np.testing.assert_array_equal(np.asarray(reports_from_codes(m, distinct, codes)), ["x"] * 3)


@pytest.mark.parametrize(("kind", "cells", "index"), [
    ("int", ["3", "17", "2", "-1", "17"], 1),
    ("str", ["A", "B", "D", "A", "E"], 2),
    ("bool", ["true", "false", "maybe", "nope"], 2),
    ("bits", ["7f00", "7f00", "7fzz", "7f0", "0001"], 2),
    ("bits", ["7f00", "0001", "7f00"], 1),  # padding bits set: refused by the mechanism, not the hex
    ("structured", ['{"seed":1,"value":0}', '{"seed":1}', "[1]"], 1),
])
def test_the_error_names_the_first_bad_row(kind: str, cells: list[str], index: int) -> None:
    """The same ReportError (index, reason and message) as the row-by-row parse, also when a later bad
    cell comes first in the dictionary and when an unused dictionary cell is bad."""
    m = _mechanism(kind)
    text = np.asarray(cells, dtype=str)
    with pytest.raises(ReportError) as expected:
        from_text(m, text)
    assert expected.value.index == index
    order = np.unique(text)[::-1]  # a dictionary out of the order of the rows
    codes = np.array([int(np.flatnonzero(order == c)[0]) for c in text])
    for distinct in (order, text):
        got_codes = codes if distinct is order else np.arange(text.size)
        with pytest.raises(ReportError) as got:
            aggregate_codes(m, distinct, got_codes)
        assert (got.value.index, got.value.reason, str(got.value)) == (
            expected.value.index, expected.value.reason, str(expected.value))
    good = np.asarray([c for c in cells if c != cells[index]][:1] * 3, dtype=str)
    unused = np.append(good[:1], cells[index])  # the bad cell is in the dictionary, no row uses it
    assert aggregate_codes(m, unused, np.zeros(3, dtype=np.intp)) == m.aggregate(from_text(m, good))


def test_hex_matrix_decodes_or_defers() -> None:
    cells = np.array(["00ff", "A0b1", "7f00"])
    np.testing.assert_array_equal(hex_matrix(cells, 2), hex_from_json(cells.tolist(), 2, "OUE", 16))
    for bad in (["00ff", "0f"], ["00ff", "00fg"], ["00ff", "00é0"], ["00ff0"], ["0a  "]):
        assert hex_matrix(np.array(bad), 2) is None
    assert hex_matrix(np.zeros(0, dtype=str), 2).shape == (0, 2)



def test_yes_no_reports_are_written_as_json_booleans_or_the_columns_words() -> None:
    """``to_text`` of BinaryRR reports: each report's JSON (``true``/``false``), or the column's own words."""
    m = dn.BinaryRR(epsilon=1.0)
    reports = m.privatize_many(np.arange(200) % 3 == 0, rng=np.random.default_rng(3))
    assert to_text(m, reports).tolist() == [json.dumps(m.report_to_json(r)) for r in reports]
    assert to_text(m, reports, ("No", "Yes")).tolist() == ["Yes" if r else "No" for r in reports]
    np.testing.assert_array_equal(np.asarray(from_text(m, to_text(m, reports))), reports)


def test_number_reports_are_written_as_each_reports_json() -> None:
    """``to_text`` of numeric and integer reports (converted at once) is each report's ``json.dumps``, over
    magnitudes from 1e-30 to 1e30, and reads back as the same reports."""
    values = np.concatenate([np.linspace(0, 10, 2_000), 10.0 ** np.arange(-30, 31)])
    for m in (dn.Laplace(0, 10, epsilon=1.0), dn.Duchi(0, 10, epsilon=1.0), dn.Piecewise(0, 10, epsilon=1.0),
              dn.SquareWave(0, 10, epsilon=1.0), dn.Gaussian(0, 10, epsilon=1.0, delta=1e-6)):
        reports = m.privatize_many(np.clip(values, 0, 10), rng=np.random.default_rng(4))
        for r in (reports, reports * 10.0 ** np.resize(np.arange(-30, 31), reports.size)):
            assert to_text(m, r).tolist() == [json.dumps(x) for x in r.tolist()]
        np.testing.assert_array_equal(np.asarray(from_text(m, to_text(m, reports))), reports)
    grr = dn.GRR(16, epsilon=1.0)
    reports = grr.privatize_many(np.arange(100) % 16, rng=np.random.default_rng(5))
    assert to_text(grr, reports).tolist() == [json.dumps(grr.report_to_json(r)) for r in reports]


@pytest.mark.parametrize("k", [2, 8, 9, 16, 33, 1024])
def test_bit_vectors_are_written_as_each_reports_hex(k: int) -> None:
    """``to_text`` of unary-encoding reports (their hex made at once) is each report's own JSON hex, and
    reads back as the same reports."""
    for m in (dn.OUE(k, epsilon=1.0), dn.SUE(k, epsilon=1.0)):
        reports = m.privatize_many(np.arange(200) % k, rng=np.random.default_rng(k))
        text = to_text(m, reports)
        assert text.tolist() == [m.report_to_json(r) for r in reports]
        np.testing.assert_array_equal(np.asarray(from_text(m, text)), reports)
        assert to_text(m, reports[:0]).size == 0


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
@pytest.mark.parametrize("kind", KINDS)
def test_files_give_the_aggregate_of_every_row(tmp_path: Path, kind: str, suffix: str) -> None:
    """The command line's reader and ``scale.aggregate_files`` give the row-by-row aggregate, in small
    chunks, from CSV and Parquet (several row groups), bit for bit: the reference adds the aggregates of
    the same pieces (chunks of 700 rows; row groups of 1,400 rows, a CSV file whole), since a float sum
    depends on its order."""
    import pyarrow.parquet as pq
    from pyarrow import csv

    from deniable.cli import _data as cli_data

    m = _mechanism(kind)
    column, text = _column(kind, m, 2_500)
    path = tmp_path / f"reports{suffix}"
    table = pa.table({"id": np.arange(len(text)), "answer": column})
    if suffix == ".csv":
        csv.write_csv(table, path)
    else:
        pq.write_table(table, path, row_group_size=1_400)

    def by(step: int) -> Any:
        return sum((m.aggregate(from_text(m, text[i:i + step])) for i in range(step, len(text), step)),
                   m.aggregate(from_text(m, text[:step])))

    assert cli_data.aggregate_file(m, cli_data.ColumnReader(path, "answer", 700, only_column=True)) == by(700)
    pytest.importorskip("dask")
    from deniable import scale

    expected = by(len(text) if suffix == ".csv" else 1_400)
    assert scale.aggregate_files(m, [path, path], "answer", scheduler="sync") == expected + expected


def test_files_name_the_first_bad_row(tmp_path: Path) -> None:
    """An integer Parquet column with a report out of the domain: the command line names the row, and
    ``aggregate_files`` the cell and its row in the file, as the row-by-row parse does."""
    import pyarrow.parquet as pq

    from deniable.cli import _data as cli_data
    from deniable.cli._common import CLIError

    m = _mechanism("int")
    values = np.arange(3_000) % 16
    values[[1_500, 2_200]] = [16, 40]
    path = tmp_path / "reports.parquet"
    pq.write_table(pa.table({"answer": values}), path, row_group_size=1_000)
    with pytest.raises(CLIError, match=r"row 1501: report '16' rejected: .*column 'answer'"):
        cli_data.aggregate_file(m, cli_data.ColumnReader(path, "answer", 700, only_column=True))
    pytest.importorskip("dask")
    from deniable import scale

    with pytest.raises(ReportError, match="column 'answer': report '16' rejected") as exc:
        scale.aggregate_files(m, path, "answer", scheduler="sync")
    assert exc.value.index == 1_500
