"""``deniable privatize`` -> ``deniable estimate`` on CSV and Parquet files.

Round trips use the secure default randomness, so the estimates are checked
with calibrated bands: the largest |estimate - truth| / SE over the k
categories must stay below z(alpha / 2k) with alpha = 1e-6 (the truth is
the file's own shares, and formula (A) is the variance for that fixed
population). Each band has a power check: the raw (not debiased) report
shares, what an estimator that forgot to debias would return, are rejected.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import deniable as dn
from deniable.cli import _data as cli_data
from deniable.testing import estimate_check

ALPHA = 1e-6
SHARES = [0.1, 0.2, 0.3, 0.4]


def _check_band(rows: list[dict], truth: np.ndarray) -> None:
    """The estimates within z standard errors of the respondents' shares, alpha 1e-6 over the
    categories (the population standard errors, larger than the respondents', make it
    conservative); power: the observed shares (an estimator that forgot to debias) are not."""
    se = [r["std_error"] for r in rows]
    assert (res := estimate_check([r["estimate"] for r in rows], truth, se, ALPHA)), res.message
    assert not estimate_check([r["observed"] for r in rows], truth, se, ALPHA)


def _shares(answers: np.ndarray, categories: list[str]) -> np.ndarray:
    return np.array([np.mean(answers == c) for c in categories])


@pytest.mark.slow
@pytest.mark.stat
def test_csv_round_trip_one_million_rows(cli, tmp_path: Path, rng, write_answers) -> None:
    data, private = tmp_path / "data.csv", tmp_path / "private.csv"
    answers = write_answers(data, 1_000_000, SHARES, rng)
    result = cli("privatize", data, "--column", "answer", "--mechanism", "grr", "--epsilon", 1,
                 "--categories", "A,B,C,D", "-o", private)
    assert result.exit_code == 0, result.output
    assert "privatized 1,000,000 rows" in result.stdout
    assert "NOT private" not in result.stderr
    config = json.loads(cli_data.config_path(private).read_text())
    assert dn.from_config(config) == dn.GRR(["A", "B", "C", "D"], epsilon=1.0)
    # the other columns are kept verbatim, the answer column holds reports
    before = pd.read_csv(data, dtype=str, keep_default_na=False)
    after = pd.read_csv(private, dtype=str, keep_default_na=False)
    assert list(after.columns) == ["id", "answer", "score"]
    pd.testing.assert_frame_equal(before[["id", "score"]], after[["id", "score"]])
    assert set(after["answer"]) == {"A", "B", "C", "D"}
    assert (after["answer"] != before["answer"]).mean() > 0.3  # randomized (p = e/(e+3) = 0.475)
    est = cli("estimate", private, "--column", "answer", "--json")
    assert est.exit_code == 0, est.output
    out = json.loads(est.stdout)
    assert out["n"] == 1_000_000 and out["mechanism"] == "GRR"
    assert [r["category"] for r in out["categories"]] == ["A", "B", "C", "D"]
    _check_band(out["categories"], _shares(answers, ["A", "B", "C", "D"]))
    # the streamed, chunk-merged aggregate equals one in-memory aggregate exactly
    m = dn.from_config(config)
    direct = m.estimate(after["answer"].to_numpy(dtype=str))
    np.testing.assert_array_equal([r["estimate"] for r in out["categories"]], direct.frequencies)


@pytest.mark.slow
@pytest.mark.stat
def test_parquet_round_trip_with_structured_reports(cli, tmp_path: Path, rng, write_answers) -> None:
    data, private = tmp_path / "data.parquet", tmp_path / "private.parquet"
    answers = write_answers(data, 300_000, SHARES, rng)
    refused = cli("privatize", data, "-c", "answer", "-m", "olh", "-e", 2, "-o", private)
    assert refused.exit_code != 0 and "--categories-from-data" in refused.stderr
    result = cli("privatize", data, "-c", "answer", "-m", "olh", "-e", 2, "-o", private,
                 "--chunk-size", 100_000, "--categories-from-data")
    assert result.exit_code == 0, result.output
    assert "categories read from the data" in result.stderr
    table = pq.read_table(private)
    assert table.column_names == ["id", "answer", "score"]
    assert table.column("id").to_pylist()[:5] == [0, 1, 2, 3, 4]
    first = json.loads(table.column("answer")[0].as_py())
    assert set(first) == {"seed", "value"}
    png = tmp_path / "estimate.png"
    est = cli("estimate", private, "-c", "answer", "--json", "--plot", png,
              "--consistent", "norm-sub")
    assert est.exit_code == 0, est.output
    out = json.loads(est.stdout)
    assert f"plot -> {png}" in est.stderr.replace("\n", "")  # stdout stays JSON
    assert out["mechanism"] == "OLH" and out["n"] == 300_000
    _check_band(out["categories"], _shares(answers, ["A", "B", "C", "D"]))
    consistent = np.array([r["consistent"] for r in out["categories"]])
    assert consistent.min() >= 0 and consistent.sum() == pytest.approx(1.0)
    assert png.stat().st_size > 10_000


@pytest.mark.parametrize("mechanism", ["sue", "oue", "blh", "hadamard", "subset", "auto"])
def test_every_report_form_round_trips(cli, tmp_path: Path, rng, write_answers,
                                       mechanism: str) -> None:
    """Seeded privatize writes exactly ``privatize_many`` with the same generator, chunk by chunk."""
    data, private = tmp_path / "data.csv", tmp_path / "private.csv"
    answers = write_answers(data, 5_000, SHARES, rng)
    result = cli("privatize", data, "-c", "answer", "-m", mechanism, "-e", 1.5,
                 "--categories", "A,B,C,D", "-o", private, "--seed", 7, "--chunk-size", 1_000)
    assert result.exit_code == 0, result.output
    assert "NOT private" in result.stderr
    m = dn.from_config(cli_data.config_path(private).read_text())
    gen = np.random.default_rng(7)
    expected = np.concatenate(
        [m.privatize_many(answers[i:i + 1000], rng=gen) for i in range(0, 5000, 1000)]
    )
    written = pd.read_csv(private, dtype=str, keep_default_na=False)["answer"].tolist()
    items = written if cli_data.plain_reports(m) else [json.loads(t) for t in written]
    assert m.reports_to_json(m.reports_from_json(items)) == m.reports_to_json(expected)
    chunked = cli("estimate", private, "-c", "answer", "--json", "--chunk-size", 999)
    whole = cli("estimate", private, "-c", "answer", "--json")
    assert json.loads(chunked.stdout) == json.loads(whole.stdout)
    freqs = [r["estimate"] for r in json.loads(whole.stdout)["categories"]]
    np.testing.assert_allclose(freqs, m.estimate(expected).frequencies, rtol=0, atol=1e-12)


@pytest.mark.stat
def test_binary_column(cli, tmp_path: Path, rng) -> None:
    n = 200_000
    truth = rng.random(n) < 0.3
    data, private = tmp_path / "yes.csv", tmp_path / "yes-private.csv"
    spelled = np.where(truth, rng.choice(["true", "Yes", "1"], n), rng.choice(["FALSE", "no", "0"], n))
    spelled[0] = "true"  # the first answer's spelling is the output's: here the JSON booleans
    pd.DataFrame({"q": spelled}).to_csv(data, index=False)
    result = cli("privatize", data, "-c", "q", "-m", "binary-rr", "-e", 1, "-o", private)
    assert result.exit_code == 0, result.output
    assert set(pd.read_csv(private, dtype=str)["q"]) == {"true", "false"}
    est = cli("estimate", private, "-c", "q", "--json")
    rows = json.loads(est.stdout)["categories"]
    assert [r["category"] for r in rows] == [False, True]
    _check_band(rows, np.array([1 - truth.mean(), truth.mean()]))


@pytest.mark.parametrize(("first", "labels"), [("yes", ["no", "yes"]), ("No", ["No", "Yes"]),
                                               ("YES", ["NO", "YES"]), ("0", ["0", "1"]),
                                               ("False", ["False", "True"])])
def test_binary_column_keeps_its_labels(cli, tmp_path: Path, first: str, labels: list[str]) -> None:
    """A yes/no column comes back in its own words (the first answer's spelling), and the
    estimate names its categories with them."""
    data, private = tmp_path / "q.csv", tmp_path / "q-private.csv"
    answers = [first] + ["yes", "no", "1", "0", "TRUE", "false"] * 50
    pd.DataFrame({"id": range(len(answers)), "q": answers}).to_csv(data, index=False)
    result = cli("privatize", data, "-c", "q", "-m", "binary-rr", "-e", 1, "-o", private)
    assert result.exit_code == 0, result.output
    written = pd.read_csv(private, dtype=str)
    assert set(written["q"]) == set(labels) and written["id"].tolist() == [str(i) for i in range(len(answers))]
    rows = json.loads(cli("estimate", private, "-c", "q", "--json").stdout)["categories"]
    assert [r["category"] for r in rows] == labels
    table = cli("estimate", private, "-c", "q").stdout
    assert all(f"│ {label} " in table for label in labels)


def test_discovered_categories_sort_numerically(cli, tmp_path: Path) -> None:
    data, private = tmp_path / "n.csv", tmp_path / "p.csv"
    pd.DataFrame({"a": ["10", "9", "2", "9"] * 50}).to_csv(data, index=False)
    result = cli("privatize", data, "-c", "a", "-m", "grr", "-e", 1, "-o", private, "--categories-from-data")
    assert result.exit_code == 0, result.output
    assert dn.from_config(cli_data.config_path(private).read_text()).domain == ("2", "9", "10")


def test_estimate_table_and_plot(cli, tmp_path: Path, rng, write_answers) -> None:
    data, private = tmp_path / "d.csv", tmp_path / "p.csv"
    write_answers(data, 20_000, SHARES, rng)
    assert cli("privatize", data, "-c", "answer", "-e", 1, "--categories", "A,B,C,D",
               "-o", private).exit_code == 0
    png = tmp_path / "bars.png"
    result = cli("estimate", private, "-c", "answer", "--consistent", "norm-sub", "--plot", png)
    assert result.exit_code == 0, result.output
    for header in ("category", "estimate", "std. error", "95% interval low", "interval high",
                   "observed", "norm-sub", "target: population"):
        assert header in " ".join(result.stdout.split())
    assert f"plot -> {png}" in result.stdout.replace("\n", "")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_estimate_target_option(cli, tmp_path: Path, rng, write_answers) -> None:
    """--target respondents: formula (A) standard errors; the default, population, adds
    f(1-f)/n; both from the same aggregate, so the estimates agree exactly."""
    data, private = tmp_path / "d.csv", tmp_path / "p.csv"
    write_answers(data, 5_000, SHARES, rng)
    assert cli("privatize", data, "-c", "answer", "-e", 2, "--categories", "A,B,C,D",
               "-o", private).exit_code == 0
    runs = {t: json.loads(cli("estimate", private, "-c", "answer", "--json", *a).stdout)
            for t, a in (("population", []), ("respondents", ["--target", "respondents"]))}
    m = dn.from_config(cli_data.config_path(private).read_text())
    for target, out in runs.items():
        assert out["target"] == target
        f = np.array([r["estimate"] for r in out["categories"]])
        plug_in = f if target == "population" else np.clip(f, 0, 1)
        se = np.sqrt(m.variance(out["n"], plug_in, target))
        np.testing.assert_allclose([r["std_error"] for r in out["categories"]], se, rtol=1e-9)
    assert [r["estimate"] for r in runs["population"]["categories"]] == [
        r["estimate"] for r in runs["respondents"]["categories"]]
    table = " ".join(cli("estimate", private, "-c", "answer", "--target", "respondents").stdout.split())
    assert "target: respondents" in table


# ------------------------------------------------------------------- errors
def _error(result, *fragments: str) -> None:
    assert result.exit_code == 1, result.output
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    errors = [ln for ln in result.stderr.splitlines() if ln.startswith("error: ")]
    assert len(errors) == 1, result.stderr
    line = result.stderr[result.stderr.index("error: "):].replace("\n", "")
    for fragment in fragments:
        assert fragment in line, line


@pytest.fixture
def small_csv(tmp_path: Path, rng, write_answers) -> Path:
    path = tmp_path / "small.csv"
    write_answers(path, 50, SHARES, rng)
    return path


def test_privatize_errors(cli, tmp_path: Path, small_csv: Path) -> None:
    out = tmp_path / "o.csv"
    base = ["-e", 1, "-o", out]
    _error(cli("privatize", tmp_path / "missing.csv", "-c", "answer", *base),
           "no such file", "missing.csv")
    _error(cli("privatize", small_csv, "-c", "nope", *base),
           "column 'nope' not found", "['id', 'answer', 'score']")
    _error(cli("privatize", small_csv, "-c", "answer", "-e", 0, "-o", out),
           "--epsilon must be a positive finite number; got 0.0")
    _error(cli("privatize", small_csv, "-c", "answer", "-e", "nan", "-o", out), "got nan")
    _error(cli("privatize", small_csv, "-c", "answer", "-m", "laplace-v0", *base),
           "--mechanism must be one of")
    _error(cli("privatize", small_csv, "-c", "answer", "-m", "laplace", *base),
           "--mechanism laplace needs --low and --high")
    _error(cli("privatize", small_csv, "-c", "answer", "-m", "binary-rr", "--categories", "A,B",
               *base), "--categories does not apply to binary-rr")
    _error(cli("privatize", small_csv, "-c", "answer", "-m", "binary-rr", *base),
           "row 1 (line 2 of the file)", "is not a yes/no answer")
    _error(cli("privatize", small_csv, "-c", "answer", "-e", 1, "-o", small_csv),
           "--output must differ from the input")
    _error(cli("privatize", small_csv, "-c", "answer", "-e", 1, "-o", tmp_path / "o.json"),
           "o.json': expected a .csv or .parquet file")
    _error(cli("privatize", small_csv, "-c", "answer", "-e", 1, "-o", tmp_path / "o.parquet"),
           "must be a .csv file like the input")
    assert not (tmp_path / "o.parquet").exists() and not out.exists()
    _error(cli("privatize", tmp_path / "data.txt", "-c", "answer", *base),
           "expected a .csv or .parquet file")


def test_value_outside_the_categories_names_its_row(cli, tmp_path: Path) -> None:
    data = tmp_path / "d.csv"
    values = ["A", "B"] * 600
    values[1033] = "Z"
    pd.DataFrame({"x": range(1200), "answer": values}).to_csv(data, index=False)
    result = cli("privatize", data, "-c", "answer", "-e", 1, "--categories", "A,B",
                 "-o", tmp_path / "o.csv", "--chunk-size", 500)
    _error(result, "row 1034 (line 1035 of the file)", "value 'Z' is not one of the categories [A, B]")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.csv"]  # no partial output left
    values[1033] = ""
    pd.DataFrame({"answer": values}).to_csv(data, index=False)
    _error(cli("privatize", data, "-c", "answer", "-e", 1, "-o", tmp_path / "o.csv",
               "--categories-from-data"), "row 1034", "empty value")
    data.write_text("x,answer\n")
    _error(cli("privatize", data, "-c", "answer", "-e", 1, "--categories", "A,B",
               "-o", tmp_path / "o.csv"), "d.csv has no data rows")
    pd.DataFrame({"answer": ["A"] * 10}).to_csv(data, index=False)
    _error(cli("privatize", data, "-c", "answer", "-e", 1, "-o", tmp_path / "o.csv",
               "--categories-from-data"), "at least 2 categories")


def test_parquet_value_outside_the_categories_names_its_row(cli, tmp_path: Path) -> None:
    """Parquet chunks carry their row group's dictionary: a value only a later chunk uses is named
    there (row 1034), never in a chunk that merely shares the dictionary."""
    data, private = tmp_path / "d.parquet", tmp_path / "o.parquet"
    values = ["A", "B"] * 600
    values[1033] = "Z"
    pq.write_table(pa.table({"answer": values}), data, row_group_size=1200)
    result = cli("privatize", data, "-c", "answer", "-e", 1, "--categories", "A,B", "-o", private,
                 "--chunk-size", 500)
    _error(result, "row 1034: value 'Z' is not one of the categories [A, B]")
    values[1033] = "A"
    pq.write_table(pa.table({"answer": values, "x": range(1200)}), data, row_group_size=1200)
    assert cli("privatize", data, "-c", "answer", "-e", 1, "--categories", "A,B,Z", "-o", private,
               "--chunk-size", 500).exit_code == 0
    after = pq.read_table(private)
    assert after.column_names == ["answer", "x"] and after.schema.field("answer").type == pa.string()
    assert set(after.column("answer").to_pylist()) <= {"A", "B", "Z"}


@pytest.mark.parametrize(("categories", "kind", "want"), [
    ("0,1,2,3", pa.int8(), pa.int8()),     # integer answers stay integers of the column's type
    ("0,1,2,3,300", pa.int8(), pa.string()),  # a category the type cannot hold: text
    ("0,1,2,3,x", pa.int64(), pa.string()),  # a category that is no integer: text
])
def test_parquet_integer_answers_stay_integers(cli, tmp_path: Path, categories: str, kind: pa.DataType,
                                               want: pa.DataType) -> None:
    """An integer Parquet column privatized with integer categories keeps its type (each report the
    category's integer); where some category is no integer of that type the reports are text. Either
    way ``estimate`` reads the file back, and every report is one of the categories."""
    data, private = tmp_path / "d.parquet", tmp_path / "o.parquet"
    values = np.arange(3_000) % 4
    pq.write_table(pa.table({"answer": pa.array(values, kind), "x": range(3_000)}), data)
    assert cli("privatize", data, "-c", "answer", "-e", 2, "--categories", categories, "-o", private,
               "--chunk-size", 700).exit_code == 0
    after = pq.read_table(private)
    assert after.schema.field("answer").type == want and after.column("x").to_pylist() == list(range(3_000))
    assert {str(v) for v in after.column("answer").to_pylist()} <= set(categories.split(","))
    out = json.loads(cli("estimate", private, "-c", "answer", "--json").stdout)
    assert [r["category"] for r in out["categories"]] == categories.split(",") and out["n"] == 3_000


def test_estimate_errors(cli, tmp_path: Path, small_csv: Path) -> None:
    _error(cli("estimate", small_csv, "-c", "answer"), "small.csv.deniable.json not found")
    _error(cli("estimate"), "give a privatized file and its --column")
    _error(cli("estimate", small_csv, "-c", "answer", "--db", "sqlite:///x.db", "--survey", "s"),
           "not both")
    _error(cli("estimate", "--db", "sqlite:///x.db"), "--db and --survey go together")
    private = tmp_path / "p.csv"
    assert cli("privatize", small_csv, "-c", "answer", "-m", "oue", "-e", 1,
               "--categories", "A,B,C,D", "-o", private).exit_code == 0
    _error(cli("estimate", private, "-c", "answer", "--level", 1.5), "--level must be in (0, 1)")
    _error(cli("estimate", private, "-c", "answer", "--consistent", "magic"), "magic")
    frame = pd.read_csv(private, dtype=str)
    frame.loc[41, "answer"] = "zz"
    frame.to_csv(private, index=False)
    _error(cli("estimate", private, "-c", "answer"), "row 42 (line 43 of the file)", "'zz'")
    bad_config = tmp_path / "bad.json"
    bad_config.write_text('{"format": "deniable.mechanism", "version": 9}')
    _error(cli("estimate", private, "-c", "answer", "--config", bad_config), "'version' must be 1")


@pytest.mark.parametrize("kind", ["csv", "parquet"])
def test_estimate_reads_the_report_column_alone(cli, tmp_path: Path, rng, kind: str) -> None:
    """Category reports with other columns beside them (quoted commas, newlines, numbers):
    the estimate equals the one of the column alone, across chunks of 7 rows; a report
    outside the categories is named by its row, in a later chunk."""
    m = dn.GRR(["A", "B", "C"], epsilon=1.0)
    reports = m.privatize_many(rng.choice(["A", "B", "C"], 50), rng=rng)
    frame = pd.DataFrame({"note": ['x, "y"\nz'] * 50, "answer": reports, "n": np.arange(50)})
    alone = frame[["answer"]]
    paths = {}
    for name, table in (("full", frame), ("alone", alone)):
        path = tmp_path / f"{name}.{kind}"
        table.to_csv(path, index=False) if kind == "csv" else table.to_parquet(path)
        cli_data.config_path(path).write_text(json.dumps(m.to_config()))
        paths[name] = path
    runs = [cli("estimate", paths[name], "-c", "answer", "--json", "--chunk-size", 7) for name in paths]
    assert all(r.exit_code == 0 for r in runs), runs[0].output
    assert json.loads(runs[0].stdout) == json.loads(runs[1].stdout)
    frame.loc[23, "answer"] = "Z"
    frame.to_csv(paths["full"], index=False) if kind == "csv" else frame.to_parquet(paths["full"])
    line = " (line 25 of the file)" if kind == "csv" else ""
    _error(cli("estimate", paths["full"], "-c", "answer", "--chunk-size", 7), f"row 24{line}", "'Z'")


def test_an_empty_file_is_named(cli, tmp_path: Path) -> None:
    """A 0-byte (or blank) input is one error line naming the file, for every command that reads one."""
    for name in ("empty.csv", "blank.csv", "empty.parquet"):
        path = tmp_path / name
        path.write_text("\n\n" if name == "blank.csv" else "")
        expected = "a header row naming the columns" if name.endswith(".csv") else "a Parquet file"
        for args in (("privatize", path, "-c", "answer", "-e", 1, "--categories", "A,B", "-o",
                      tmp_path / f"o{path.suffix}"),
                     ("estimate", path, "-c", "answer"),
                     ("analyze", path, "--design", "FR", "--p", "1/6,1/6", "--response", "answer")):
            _error(cli(*args), f"{path} is empty: expected {expected}")


def test_a_rejected_report_shows_its_value(cli, tmp_path: Path) -> None:
    """``report '0' rejected``: the cell as written, never a numpy repr, for every report form."""
    for m in (dn.GRR(["A", "B"], epsilon=1.0), dn.OUE(3, epsilon=1.0), dn.OLH(3, epsilon=1.0),
              dn.BinaryRR(prob=0.75), dn.Laplace(0, 1, epsilon=1.0)):
        path = tmp_path / f"{m.wire_id}.csv"
        pd.DataFrame({"answer": ["x" if m.report_kind == "bool" else "zz"]}).to_csv(path, index=False)
        cli_data.config_path(path).write_text(json.dumps(m.to_config()))
        result = cli("estimate", path, "-c", "answer")
        bad = "x" if m.report_kind == "bool" else "zz"
        _error(result, f"row 1 (line 2 of the file): report '{bad}' rejected: ")
        assert "np." not in result.stderr


def test_a_latin1_file_is_named_as_not_utf8_with_its_row(cli, tmp_path: Path) -> None:
    """A category column saved as Latin-1: the row and "not valid UTF-8", in privatize (with given or
    discovered categories) and estimate (once "is not one of the categories [café, ...]", or Arrow's
    "invalid UTF8 data" with no row)."""
    data = tmp_path / "answers.csv"
    data.write_bytes("answer\nabc\ncafé\n".encode("latin-1"))
    config = tmp_path / "grr.json"
    config.write_text(json.dumps(dn.GRR(["café", "abc"], epsilon=1.0).to_config()))
    want = ("row 2 (line 3 of the file): value b'caf\\xe9' is not valid UTF-8 (the file may be Latin-1 or "
            "Windows-1252: save it as UTF-8, e.g. iconv -f latin1 -t utf-8) in column 'answer'")
    runs = [
        ("privatize", data, "-c", "answer", "-m", "grr", "-e", 1, "--categories", "café,abc", "-o", tmp_path / "p.csv"),
        ("privatize", data, "-c", "answer", "-m", "grr", "-e", 1, "--categories-from-data", "-o", tmp_path / "q.csv"),
        ("estimate", data, "-c", "answer", "--config", config),
    ]
    for args in runs:
        result = cli(*args)
        assert result.exit_code == 1 and want in result.stderr, (args[0], result.stderr)


def test_csv_output_is_written_as_pandas_writes_it(cli, tmp_path: Path) -> None:
    """The other columns come back as they were and every cell is quoted only where needed, byte for byte
    what pandas' ``to_csv`` writes (leading zeros, empty cells, commas, quotes and line breaks in cells, bytes
    that are not UTF-8), across chunks of 5 rows that Arrow writes and chunks that need quotes."""
    notes = ["007", "", "plain"] * 4 + ['a, "b"', "two\nlines", "x"] + ["0.50"] * 5 + ["caf\udce9", "ok"]
    frame = pd.DataFrame({"id": [str(i) for i in range(len(notes))], "note": notes,
                          "answer": ["A", "B", "C"] * (len(notes) // 3) + ["A"] * (len(notes) % 3)}, dtype=object)
    data, private = tmp_path / "data.csv", tmp_path / "private.csv"
    frame.to_csv(data, index=False, errors="surrogateescape")
    result = cli("privatize", data, "-c", "answer", "-m", "grr", "-e", 1, "--categories", "A,B,C",
                 "--seed", 1, "--chunk-size", 5, "-o", private)
    assert result.exit_code == 0, result.output
    read = {"dtype": object, "keep_default_na": False, "encoding_errors": "surrogateescape"}
    after = pd.read_csv(private, **read)
    expected = pd.read_csv(data, **read).assign(answer=after["answer"])
    assert private.read_bytes() == expected.to_csv(index=False).encode("utf-8", "surrogateescape")
    assert set(after["answer"]) <= {"A", "B", "C"} and len(after) == len(notes)


def test_a_row_with_more_or_fewer_fields_is_named(cli, tmp_path: Path) -> None:
    """A CSV row with fewer or more fields than the header: one error naming the file and the row's text
    (as Arrow reads it), in privatize and estimate; nothing is written."""
    private = tmp_path / "p.csv"
    for name, bad in (("short.csv", "2"), ("long.csv", "2,B,x")):
        data = tmp_path / name
        data.write_text(f"id,answer\n1,A\n{bad}\n3,B\n")
        cli_data.config_path(data).write_text(json.dumps(dn.GRR(["A", "B"], epsilon=1.0).to_config()))
        for args in (("privatize", data, "-c", "answer", "-m", "grr", "-e", 1, "--categories", "A,B", "-o", private),
                     ("estimate", data, "-c", "answer")):
            _error(cli(*args), f"{data}: CSV parse error: Expected 2 columns, got {bad.count(',') + 1}: {bad}")
        assert not private.exists()


def test_report_column_is_the_text_of_each_report() -> None:
    """The Arrow column privatize writes for bit vectors (built from the hex digits' bytes) and yes/no reports
    (a take of the two words) is ``to_text`` of the reports, cell for cell, with or without rows."""
    from deniable.wire._text import to_text

    rng = np.random.default_rng(6)
    for m in (dn.OUE(9, epsilon=1.0), dn.SUE(16, epsilon=1.0), dn.OUE(1024, epsilon=1.0)):
        reports = m.privatize_many(np.arange(300) % m.k, rng=rng)
        assert cli_data.report_column(m, reports).to_pylist() == to_text(m, reports).tolist()
        assert cli_data.report_column(m, reports[:0]).to_pylist() == []
    m = dn.BinaryRR(epsilon=1.0)
    reports = m.privatize_many(np.arange(300) % 3 == 0, rng=rng)
    for labels in (None, ("No", "Yes")):
        assert cli_data.report_column(m, reports, labels).to_pylist() == to_text(m, reports, labels).tolist()
