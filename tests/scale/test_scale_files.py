"""Dask reads what ``deniable privatize`` writes: a column of report text in CSV or Parquet files.

``scale.estimate(m, dd.read_csv(private)["answer"])``, ``scale.aggregate_files(m, glob)`` and
``deniable estimate GLOB --dask`` give the aggregate of the files read one by one, bit for bit.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import deniable as dn

dask = pytest.importorskip("dask", reason="needs the deniable[dask] extra")
pytest.importorskip("typer", reason="privatizes with the command line (deniable[cli])")
dd = pytest.importorskip("dask.dataframe")
pd = pytest.importorskip("pandas")

from typer.testing import CliRunner  # noqa: E402

from deniable import scale  # noqa: E402
from deniable.cli import app  # noqa: E402

CASES = {  # mechanism option -> (extra privatize options, answers)
    "grr": (["--categories", "A,B,C"], list("ABCAB")),
    "oue": (["--categories", "A,B,C"], list("ABCAB")),
    "olh": (["--categories", "A,B,C"], list("ABCAB")),
    "binary-rr": ([], ["Yes", "no", "yes", "No", "yes"]),
    "laplace": (["--low", "0", "--high", "10"], ["1.5", "2", "9.25", "0", "7"]),
}


def _cli(*args: object) -> str:
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.stdout


def _privatize(tmp_path: Path, name: str, suffix: str, copies: int, rows: int = 400) -> list[Path]:
    options, answers = CASES[name]
    data = tmp_path / f"answers{suffix}"
    frame = pd.DataFrame({"id": np.arange(rows), "answer": (answers * rows)[:rows]})
    frame.to_csv(data, index=False) if suffix == ".csv" else frame.to_parquet(data, index=False)
    out = []
    for i in range(copies):
        path = tmp_path / "reports" / f"{name}-{i}{suffix}"
        path.parent.mkdir(exist_ok=True)
        _cli("privatize", data, "-c", "answer", "-m", name, "-e", 2, *options, "-o", path, "--seed", i)
        out.append(path)
    return out


def _mechanism(path: Path):
    return dn.from_config(path.with_name(path.name + ".deniable.json").read_text())


def _local(m, path: Path):
    """The aggregate through the command line's own reader (the reference)."""
    from deniable.cli import _data as cli_data

    return cli_data.aggregate_file(m, cli_data.ColumnReader(path, "answer", 1_000, only_column=True))


@pytest.mark.parametrize("name", list(CASES))
def test_read_csv_of_a_privatized_file(tmp_path: Path, name: str) -> None:
    """The new user's line: ``scale.estimate(m, dd.read_csv("private.csv")["answer"])`` (hex bit
    vectors such as ``10`` need ``dtype=str``, else Dask reads some partitions as numbers)."""
    (path,) = _privatize(tmp_path, name, ".csv", 1)
    m = _mechanism(path)
    text = {"dtype": str} if m.report_kind == "bits" else {}
    got = scale.aggregate(m, dd.read_csv(path, blocksize=2_000, **text)["answer"], scheduler="sync")
    assert got == _local(m, path)
    est = scale.estimate(m, dd.read_csv(path, **text)["answer"], scheduler="sync")
    assert est.n == 400


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_aggregate_files_of_a_glob(tmp_path: Path, suffix: str) -> None:
    paths = _privatize(tmp_path, "oue", suffix, 3)
    m = _mechanism(paths[0])
    total = _local(m, paths[0]) + _local(m, paths[1]) + _local(m, paths[2])
    assert scale.aggregate_files(m, str(tmp_path / "reports" / f"*{suffix}"), "answer", scheduler="sync") == total
    assert scale.aggregate_files(m, paths, "answer", scheduler="threads") == total


def test_aggregate_files_on_a_distributed_cluster(tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    paths = _privatize(tmp_path, "binary-rr", ".parquet", 2)
    m = _mechanism(paths[0])
    with distributed.LocalCluster(processes=False, n_workers=2, threads_per_worker=1,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        got = scale.aggregate_files(m, paths, "answer", scheduler=client)
    assert got == _local(m, paths[0]) + _local(m, paths[1])


def test_bad_files_are_refused(tmp_path: Path) -> None:
    m = dn.GRR(["A", "B"], epsilon=1.0)
    with pytest.raises(ValueError, match="must all be .csv or all .parquet"):
        scale.aggregate_files(m, [tmp_path / "a.csv", tmp_path / "b.parquet"], "answer")
    bad = tmp_path / "bad.csv"
    pd.DataFrame({"answer": ["A", "B", "0"]}).to_csv(bad, index=False)
    with pytest.raises(dn.ReportError, match="report '0' rejected"):
        scale.aggregate_files(m, bad, "answer", scheduler="sync")
    oue = dn.OUE(3, epsilon=1.0)
    digits = tmp_path / "digits.csv"
    pd.DataFrame({"answer": ["40", "20"]}).to_csv(digits, index=False)
    with pytest.raises(ValueError, match="hex text"):
        scale.aggregate(oue, dd.read_csv(digits)["answer"], scheduler="sync")
    assert scale.aggregate_files(oue, digits, "answer", scheduler="sync").n == 2  # read as text


def test_small_pieces_share_a_task_in_order() -> None:
    """Consecutive files or row groups are cut into runs of at least the target size (the last short)."""
    from deniable.scale import _batches

    assert _batches(list("abcdef"), [3, 3, 3, 10, 1, 1], 6) == [["a", "b"], ["c", "d"], ["e", "f"]]
    assert _batches(list("ab"), [10, 10], 6) == [["a"], ["b"]]
    assert _batches([], [], 6) == []


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_any_dask_scheduler_runs_the_file_tasks(tmp_path: Path, suffix: str) -> None:
    """The file tasks run as a graph of their own on whatever Dask would run: a named scheduler, an
    executor, the configured one, or threads when none is: the same aggregate each way."""
    from concurrent.futures import ThreadPoolExecutor

    m = dn.GRR(16, epsilon=1.0)
    paths = []
    for i in range(3):
        path = tmp_path / f"part-{i}{suffix}"
        frame = pd.DataFrame({"answer": (np.arange(500) * (i + 1)) % 16})
        frame.to_csv(path, index=False) if suffix == ".csv" else frame.to_parquet(path)
        paths.append(path)
    want = m.aggregate(np.concatenate([(np.arange(500) * (i + 1)) % 16 for i in range(3)]))
    class Counting(ThreadPoolExecutor):
        submitted = 0

        def submit(self, *args, **kwargs):
            Counting.submitted += 1
            return super().submit(*args, **kwargs)

    with Counting(2) as pool:
        assert scale.aggregate_files(m, paths, "answer", scheduler=pool) == want
    assert Counting.submitted >= 1  # the tasks went to the executor given
    assert scale.aggregate_files(m, paths, "answer", scheduler="sync") == want
    assert scale.aggregate_files(m, paths, "answer") == want
    with dask.config.set(scheduler="synchronous"):
        assert scale.aggregate_files(m, paths, "answer") == want


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
@pytest.mark.parametrize("target", [1, 10**9])
def test_the_first_bad_row_of_the_first_bad_file_whatever_the_tasks(tmp_path: Path, suffix: str, target: int,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Five files, the third and fifth with a bad row: each Parquet row group its own task (target 1) or
    all in one task (a target no file reaches); each CSV file its own task; on threads: the error is the
    third file's, its row in that file; without the bad files the aggregate is the files' sum."""
    monkeypatch.setattr(scale, "_TASK_ROWS", target)
    m = dn.GRR(16, epsilon=1.0)
    paths = []
    for i in range(5):
        values = np.arange(300) % 16
        if i in (2, 4):
            values[[120 + i, 200]] = 99
        path = tmp_path / f"part-{i}{suffix}"
        frame = pd.DataFrame({"answer": values})
        frame.to_csv(path, index=False) if suffix == ".csv" else frame.to_parquet(path, row_group_size=100)
        paths.append(path)
    with pytest.raises(dn.ReportError, match="report '99' rejected") as exc:
        scale.aggregate_files(m, paths, "answer", scheduler="threads")
    assert exc.value.index == 122
    good = [paths[0], paths[1], paths[3]]
    one = m.aggregate(np.arange(300) % 16)
    assert scale.aggregate_files(m, good, "answer", scheduler="threads") == one + one + one


@pytest.mark.parametrize("whole", [True, False])
def test_a_csv_file_in_blocks_names_its_first_bad_row(tmp_path: Path, whole: bool,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A CSV file of several blocks (read at once: 1 MiB blocks parsed side by side; or streamed, here
    in blocks of 64 KiB): the aggregate is every row's, and a bad row in a later block is named by its
    row in the file."""
    if not whole:
        monkeypatch.setattr(scale, "_CSV_WHOLE", 0)
        monkeypatch.setattr(scale, "_CSV_BLOCK", 1 << 16)
    m = dn.GRR(16, epsilon=1.0)
    n = 600_000
    values = np.arange(n) % 16
    path = tmp_path / "reports.csv"
    pd.DataFrame({"answer": values}).to_csv(path, index=False)
    assert len(list(scale._csv_blocks(str(path), "answer"))) >= 2
    assert scale.aggregate_files(m, path, "answer", scheduler="sync") == m.aggregate(values)
    values[[n - 7, n - 3]] = 99
    pd.DataFrame({"answer": values}).to_csv(path, index=False)
    with pytest.raises(dn.ReportError, match="report '99' rejected") as exc:
        scale.aggregate_files(m, path, "answer", scheduler="sync")
    assert exc.value.index == n - 7


@pytest.mark.parametrize("data,breaks", [
    (b'"answer"\n1\n2\n', False),  # pyarrow's header: its quotes pair up
    (b"answer\r\n1\r\n2\r\n", False),
    (b'"an""swer"\n1\n', False),  # a doubled quote inside a quoted name
    (b"answer\n", False),
    (b'"answer,\nx"\n1\n', True),  # a line break in the header's quoted name
    (b'answer\n"a\nb"\n', True),
    (b'answer\r"a\rb"\r', True),  # line breaks of one CR
])
def test_a_csv_file_without_quoted_cells_is_parsed_line_by_line(data: bytes, breaks: bool, tmp_path: Path) -> None:
    """Only a quoted cell can hold a line break: a file with no quote past a header line whose quotes pair
    up is parsed with rows ending at every line break, and gives the rows it gives read the careful way."""
    from pyarrow import csv

    from deniable.wire._arrow import csv_parse_options

    assert scale._may_break_cells(data) is breaks
    path = tmp_path / "cells.csv"
    path.write_bytes(data)
    careful = csv.read_csv(path, parse_options=csv_parse_options(),
                           read_options=csv.ReadOptions(autogenerate_column_names=True))
    column = careful.column(0)[0].as_py() if careful.num_rows else None
    if column is not None:
        got = sum(len(cells) for cells in scale._csv_blocks(str(path), column))
        assert got == careful.num_rows - 1


def test_estimate_dask_on_the_command_line(tmp_path: Path) -> None:
    """``deniable estimate GLOB --dask`` is in the help, and equals the estimate of the summed aggregates;
    files privatized with another mechanism are refused, naming the file."""
    assert "--dask" in _cli("estimate", "--help")
    paths = _privatize(tmp_path, "binary-rr", ".csv", 3)
    m = _mechanism(paths[0])
    pattern = str(tmp_path / "reports" / "*.csv")
    out = json.loads(_cli("estimate", pattern, "-c", "answer", "--dask", "--scheduler", "sync", "--json"))
    est = m.estimate_from(sum((_local(m, p) for p in paths[1:]), _local(m, paths[0])))
    assert out["n"] == 1200
    assert [r["category"] for r in out["categories"]] == ["No", "Yes"]
    np.testing.assert_array_equal([r["estimate"] for r in out["categories"]], est.frequencies)
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(processes=False, n_workers=1, dashboard_address=None) as cluster:
        on_cluster = _cli("estimate", pattern, "-c", "answer", "--dask", "--scheduler", cluster.scheduler_address,
                          "--json")
    assert json.loads(on_cluster) == out
    other = dn.BinaryRR(epsilon=1.0)
    paths[2].with_name(paths[2].name + ".deniable.json").write_text(json.dumps(other.to_config()))
    result = CliRunner().invoke(app, ["estimate", pattern, "-c", "answer", "--dask"])
    assert result.exit_code == 1 and "was privatized with another mechanism" in result.stderr
    assert str(paths[2]) in result.stderr


@pytest.mark.slow
def test_line_breaks_in_cells_across_read_blocks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A quoted cell with line breaks in another column, in a file of several of the readers' blocks
    (1 MiB read at once, 8 MiB streamed): ``aggregate_files``, reading the file at once or block by
    block, and ``deniable privatize`` then ``estimate`` read every row as written (a reader splitting
    blocks at any line break would cut rows in two)."""
    m = dn.GRR(["A", "B", "C"], epsilon=1.0)
    n = 150_000
    reports = np.array(["A", "B", "C"])[np.arange(n) % 3]
    path = tmp_path / "notes.csv"
    pd.DataFrame({"note": ['x, "y"\n' * 8] * n, "answer": reports}).to_csv(path, index=False)
    assert path.stat().st_size > 1 << 23  # two blocks
    assert scale.aggregate_files(m, path, "answer") == m.aggregate(reports)
    monkeypatch.setattr(scale, "_CSV_WHOLE", 0)
    assert len(list(scale._csv_blocks(str(path), "answer"))) >= 2
    assert scale.aggregate_files(m, path, "answer") == m.aggregate(reports)
    private = tmp_path / "private.csv"
    _cli("privatize", path, "-c", "answer", "-m", "grr", "-e", 1, "--categories", "A,B,C", "-o", private)
    assert pd.read_csv(private, dtype=str)["note"].eq('x, "y"\n' * 8).sum() == n
