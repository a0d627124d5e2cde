"""``deniable privatize --mechanism heavy-hitters`` -> ``deniable estimate`` on a free-text column.

The round trips use the secure default randomness (no ``--seed``), so recall
is checked against a calibrated bound, as in ``tests/stat/test_heavy_recall.py``:
with ``s**2 = oracle.variance(n_min, 0, c)`` (``n_min`` the fewest reports of a
level, read from the file; ``c`` the collision rate of the first level's keys,
at most 1), each of the at most ``L * top_k * 256`` prefix
candidates is off by more than ``z s`` with ``z = z(alpha / 2C)``, alpha
1e-6 in all; outside that event every value of share at least ``2 z s``
(with fewer than ``top_k`` prefixes above it at any level: at most 26 first
letters) is kept to the last level and passes ``identify``'s filter, checked
numerically below. Power: the same reports estimated with a sketch seeded
differently (a server hashing with the wrong functions) miss the top values.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from scipy import stats

import deniable as dn
from deniable.cli import _data as cli_data
from deniable.heavy._quality import zipf_strings

ALPHA = 1e-6


def _write(path: Path, words: list[str]) -> None:
    frame = pd.DataFrame({"id": np.arange(len(words)), "word": words})
    if path.suffix == ".csv":
        frame.to_csv(path, index=False)
    else:
        frame.to_parquet(path, index=False)


def _reports(path: Path, hh: dn.HeavyHitters) -> np.ndarray:
    frame = pd.read_csv(path, dtype=str) if path.suffix == ".csv" else pd.read_parquet(path)
    return hh.reports_from_json([json.loads(t) for t in frame["word"]])


def _calibrated_bound(hh: dn.HeavyHitters, stat: dn.HeavyStat, values: list[str] | None = None) -> float:
    """``2 z s``: every value with a larger share is found (alpha 1e-6; see the module docstring).

    The variance's collision term over the sketch's seed (drawn at random by the command) is that of
    the level with the most concentrated keys, the first (merging keys only adds to ``sum N (N - 1)``):
    ``sum_c N_c (N_c - 1) / n**2`` over the values' first characters, or its bound 1 without ``values``.
    """
    n, n_min = stat.n, min(s.n for s in stat.levels)
    collisions = 1.0
    if values is not None:
        first = np.array(list(Counter(v[:1] for v in values).values()), dtype=float)
        collisions = float(np.sum(first * (first - 1))) / len(values) ** 2
    s = float(np.sqrt(hh.oracle.variance(n_min, 0.0, collisions)))
    z = stats.norm.isf(ALPHA / (2 * hh.levels * hh.top_k * 256))
    # the filter: z_f SE with SE <= sqrt(s_L^2 + the largest subsampling term) stays below z s
    n_last = stat.levels[-1].n
    s_last = float(np.sqrt(hh.oracle.variance(n_last, 0.0, collisions)))
    z_filter = stats.norm.isf(0.05 / (hh.top_k * 256))
    assert z_filter * np.sqrt(s_last**2 + 0.25 * (n - n_last) / (n_last * (n - 1))) < z * s
    return 2 * z * s


@pytest.mark.slow
@pytest.mark.stat
@pytest.mark.parametrize("suffix", [".parquet"])  # the CSV path: test_truncate_and_kept_columns (30,000 rows)
def test_zipf_column_recall(cli, tmp_path: Path, rng: np.random.Generator, suffix: str) -> None:
    """Every value above the calibrated bound (the top 3 of a Zipf(1.1) column with a 25% tail of unique
    words, n = 400,000) is found; the estimate is the library's on the same reports; alpha 1e-6."""
    n = 400_000
    words = zipf_strings(n, rng, max_length=8)
    data, private = tmp_path / f"words{suffix}", tmp_path / f"private{suffix}"
    _write(data, words)
    result = cli("privatize", data, "--column", "word", "--mechanism", "heavy-hitters", "--epsilon", 4,
                 "--max-length", 8, "--method", "pem", "-o", private, "--chunk-size", 150_000)
    assert result.exit_code == 0, result.output
    assert "privatized 400,000 rows" in result.stdout and "NOT private" not in result.stderr
    config = json.loads(cli_data.config_path(private).read_text())
    assert config["format"] == "deniable.discovery" and config["max_length"] == 8
    hh = dn.HeavyHitters.from_config(config)
    stat = hh.aggregate(_reports(private, hh))
    bound = _calibrated_bound(hh, stat, words)
    truth = Counter(words)
    above = {w for w, c in truth.items() if c / n >= bound}
    assert {w for w, _ in truth.most_common(3)} <= above  # the calibration covers the top 3

    est = cli("estimate", private, "--column", "word", "--json")
    assert est.exit_code == 0, est.output
    out = json.loads(est.stdout)
    assert out["n"] == n and out["method"] == "pem"
    found = [r["value"] for r in out["values"]]
    assert above <= set(found), (above - set(found), out["values"][:5])
    direct = hh.identify(stat)  # the streamed, chunk-merged aggregate is the in-memory one
    assert found == list(direct.values)
    np.testing.assert_allclose([r["count"] for r in out["values"]], direct.counts, rtol=1e-12)
    top = cli("estimate", private, "--column", "word", "--csv", "--top", 2)
    assert top.exit_code == 0, top.output
    frame = pd.read_csv(pd.io.common.StringIO(top.stdout))
    assert list(frame.columns) == ["value", "count", "std_error", "ci_low", "ci_high", "truncated"]
    assert frame["value"].tolist() == found[:2]

    # power: a server hashing with another seed's functions misses the top values
    wrong = dict(config, sketch=dict(config["sketch"], params=dict(config["sketch"]["params"], seed="00" * 32)))
    cli_data.config_path(private).write_text(json.dumps(wrong))
    est = cli("estimate", private, "--column", "word", "--json")
    assert est.exit_code == 0, est.output
    assert not above <= {r["value"] for r in json.loads(est.stdout)["values"]}


def test_truncate_and_kept_columns(cli, tmp_path: Path, rng: np.random.Generator) -> None:
    """An over-long value is refused naming its row; with --truncate it is found as its cut, flagged.

    n = 30,000, max_length 4: 60% type "abcdefg" (cut to "abcd"), 40% unique words. The cut's share
    0.6 is above the calibrated bound (alpha 1e-6, see the module docstring).
    """
    n = 30_000
    words = np.where(rng.random(n) < 0.6, "abcdefg", np.char.add("u", np.arange(n).astype(str))).tolist()
    data, private = tmp_path / "words.csv", tmp_path / "private.csv"
    _write(data, words)
    first_long = next(i for i, w in enumerate(words) if len(w.encode()) > 4)
    args = ("privatize", data, "-c", "word", "-m", "heavy-hitters", "-e", 4, "--max-length", 4, "-o", private)
    refused = cli(*args)
    assert refused.exit_code == 1
    assert (f"row {first_long + 1} (line {first_long + 2} of the file): value 'abcdefg' is 7 bytes of UTF-8, "
            "longer than --max-length 4") in refused.stderr
    assert "--truncate" in refused.stderr and not private.exists()
    assert not list(tmp_path.glob(".*partial"))

    result = cli(*args, "--truncate")
    assert result.exit_code == 0, result.output
    before = pd.read_csv(data, dtype=str, keep_default_na=False)
    after = pd.read_csv(private, dtype=str, keep_default_na=False)
    pd.testing.assert_series_equal(before["id"], after["id"])
    assert after["word"].str.startswith('{"level":').all()
    hh = dn.HeavyHitters.from_config(json.loads(cli_data.config_path(private).read_text()))
    stat = hh.aggregate(_reports(private, hh))
    assert _calibrated_bound(hh, stat) < 0.6
    est = cli("estimate", private, "-c", "word", "--json")
    values = {r["value"]: r for r in json.loads(est.stdout)["values"]}
    assert values["abcd"]["truncated"] is True
    table = cli("estimate", private, "-c", "word")
    assert table.exit_code == 0 and "abcd" in table.stdout and "yes" in table.stdout
    # --threshold above every count shows none; below the cut's count keeps it
    none = cli("estimate", private, "-c", "word", "--json", "--threshold", 2 * n)
    assert json.loads(none.stdout)["values"] == []
    kept = cli("estimate", private, "-c", "word", "--json", "--threshold", 1000)
    assert [r["value"] for r in json.loads(kept.stdout)["values"]][:1] == ["abcd"]


def test_non_utf8_values_are_refused(cli, tmp_path: Path) -> None:
    """A CSV cell or a Parquet binary cell that is not UTF-8 is named by its row; nothing is written."""
    data, private = tmp_path / "words.csv", tmp_path / "private.csv"
    data.write_bytes(b"id,word\n1,hello\n2,caf\xe9\n3,ok\n")
    result = cli("privatize", data, "-c", "word", "-m", "heavy-hitters", "-e", 2, "--max-length", 8, "-o", private)
    assert result.exit_code == 1
    assert "row 2 (line 3 of the file): value b'caf\\xe9' is not valid UTF-8 (the file may be Latin-1" in result.stderr
    assert not private.exists()

    parquet = tmp_path / "words.parquet"
    pq.write_table(pa.table({"word": pa.array([b"ok", b"\xff\xfe", b"ok"], pa.binary())}), parquet)
    result = cli("privatize", parquet, "-c", "word", "-m", "heavy-hitters", "-e", 2, "--max-length", 8,
                 "-o", tmp_path / "private.parquet")
    assert result.exit_code == 1
    assert "row 2: value b'\\xff\\xfe' is not valid UTF-8" in result.stderr
    # a binary column of UTF-8 text is fine; other columns' bytes go back verbatim into a CSV
    pq.write_table(pa.table({"word": pa.array([b"ok", "é".encode()], pa.binary())}), parquet)
    ok = cli("privatize", parquet, "-c", "word", "-m", "heavy-hitters", "-e", 2, "--max-length", 8,
             "-o", tmp_path / "private.parquet")
    assert ok.exit_code == 0, ok.output
    data.write_bytes(b"id,word\n\xe9,hello\n2,ok\n")
    ok = cli("privatize", data, "-c", "word", "-m", "heavy-hitters", "-e", 2, "--max-length", 8, "-o", private)
    assert ok.exit_code == 0, ok.output
    assert private.read_bytes().splitlines()[1].startswith(b"\xe9,")


def test_bad_files_and_options(cli, tmp_path: Path) -> None:
    data, private = tmp_path / "words.csv", tmp_path / "private.csv"
    hh = ("-m", "heavy-hitters", "-e", 2, "--max-length", 8)
    data.write_text("")
    assert "is empty" in cli("privatize", data, "-c", "word", *hh, "-o", private).stderr
    data.write_text("id,word\n")
    assert "has no data rows" in cli("privatize", data, "-c", "word", *hh, "-o", private).stderr
    data.write_text("id,word\n1,hello\n2,\n")
    assert "row 2 (line 3 of the file): empty value" in cli("privatize", data, "-c", "word", *hh, "-o", private).stderr
    data.write_text("id,word\n1,hello\n2,world\n")
    missing = cli("privatize", data, "-c", "word", "-m", "heavy-hitters", "-e", 2, "-o", private)
    assert "needs --max-length" in missing.stderr
    assert "--max-length must be in 1..254" in cli("privatize", data, "-c", "word", "-m", "heavy-hitters", "-e", 2,
                                                   "--max-length", 300, "-o", private).stderr
    assert "--method must be one of pem, sfp" in cli("privatize", data, "-c", "word", *hh, "--method", "x",
                                                     "-o", private).stderr
    assert "do not apply to heavy-hitters" in cli("privatize", data, "-c", "word", *hh, "--categories", "a,b",
                                                   "-o", private).stderr
    assert "go with --mechanism heavy-hitters" in cli("privatize", data, "-c", "word", "-m", "grr", "-e", 2,
                                                      "--max-length", 8, "--categories", "hello,world",
                                                      "-o", private).stderr

    assert cli("privatize", data, "-c", "word", *hh, "-o", private).exit_code == 0
    assert "apply to category frequencies" in cli("estimate", private, "-c", "word", "--consistent",
                                                  "norm-sub").stderr
    assert "--top must be at least 1" in cli("estimate", private, "-c", "word", "--top", 0).stderr
    assert "not both" in cli("estimate", private, "-c", "word", "--json", "--csv").stderr
    lines = private.read_text().splitlines()
    private.write_text("\n".join([*lines[:2], "2,{\"level\":99}"]) + "\n")
    bad = cli("estimate", private, "-c", "word")
    assert bad.exit_code == 1 and "row 2 (line 3 of the file): report" in bad.stderr and "level" in bad.stderr
    private.write_text(lines[0] + "\n")
    assert "has no reports" in cli("estimate", private, "-c", "word").stderr
    config = cli_data.config_path(private)
    config.write_text(json.dumps(dict(json.loads(config.read_text()), version=2)))
    private.write_text("\n".join(lines) + "\n")
    other = cli("estimate", private, "-c", "word")
    assert other.exit_code == 1 and "'deniable.discovery'/1" in other.stderr and "2" in other.stderr

    grr = tmp_path / "grr.csv"
    assert cli("privatize", data, "-c", "word", "-m", "grr", "-e", 2, "--categories", "hello,world",
               "-o", grr).exit_code == 0
    assert "apply to a column privatized with heavy-hitters" in cli("estimate", grr, "-c", "word", "--top",
                                                                    3).stderr
