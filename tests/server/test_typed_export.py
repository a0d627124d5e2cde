"""The Parquet export's columns are typed, so the analysis reads them as they are.

Regression: every column was text, so ``deniable analyze export.parquet
--formula "used ~ age"`` treated age as categories ("perfect separation ...
'age[T.38]'"). Now integers export as integers, yes/no as booleans, numbers as
floats, string categories as strings and a two-group design's report as a
struct; and ``analyze`` still reads an older export written as text. Real
server on loopback, real SQLite.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import numpy as np
import pytest
from typer.testing import CliRunner

import deniable as dn
from deniable.cli import app
from deniable.client import Client
from deniable.server._runner import BackgroundServer

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

ADMIN = "admin-token-for-typed-export"
SURVEY = {
    "id": "typed",
    "title": "Typed export",
    "budget": 6,
    "questions": [
        {"id": "used", "text": "Used?", "type": "yes-no", "design": {"model": "FR", "p": ["1/6", "1/6"]}},
        {"id": "copied", "text": "Copied?", "type": "yes-no", "design": {"model": "SLD", "p": [0.3, 0.7]},
         "allow_infinite_epsilon": True},
        {"id": "age", "text": "Age?", "type": "integer", "randomized": False, "min": 18, "max": 60},
        {"id": "year", "text": "Year?", "type": "categorical", "randomized": False, "categories": ["a", "b"]},
        {"id": "app", "text": "App?", "type": "categorical", "categories": ["x", "y", "z"],
         "mechanism": "grr", "epsilon": 1},
        {"id": "hours", "text": "Hours?", "type": "number", "mechanism": "one-bit-mean", "low": 0, "high": 10,
         "epsilon": 1},
    ],
}
N = 300


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("typed")
    rng = np.random.default_rng(11)
    ages = rng.integers(18, 61, N)
    used = rng.random(N) < 1 / (1 + np.exp(-(ages - 35) / 6))
    answers = [{"used": bool(u), "copied": bool(rng.random() < 0.2), "age": int(a), "year": "ab"[i % 2],
                "app": "xyz"[i % 3], "hours": float(rng.uniform(0, 10))}
               for i, (u, a) in enumerate(zip(used, ages, strict=True))]
    with BackgroundServer([SURVEY], db_url=f"sqlite:///{folder / 'db.sqlite'}", admin_token=ADMIN) as server:
        with Client(server.url, token=ADMIN) as client:  # batches to an open survey: a trusted relay
            client.respond_many("typed", answers)
        r = httpx.get(f"{server.url}/admin/surveys/typed/export?format=parquet",
                      headers={"Authorization": f"Bearer {ADMIN}"}, timeout=60)
    r.raise_for_status()
    path = folder / "export.parquet"
    path.write_bytes(r.content)
    return path


def test_columns_are_typed(export: Path) -> None:
    schema = pq.read_schema(export)
    assert schema.field("row").type == pa.int64()
    assert schema.field("used").type == pa.bool_()
    assert schema.field("copied").type == pa.struct([("group", pa.int64()), ("answer", pa.bool_())])
    assert schema.field("age").type == pa.int64()
    assert schema.field("year").type == pa.string()
    assert schema.field("app").type == pa.string()
    assert schema.field("hours").type == pa.float64()
    table = pq.read_table(export)
    assert set(table.column("year").to_pylist()) == {"a", "b"}
    assert {c["group"] for c in table.column("copied").to_pylist()} == {1, 2}
    # the typed cells are the reports: the survey's mechanism estimates from them
    survey = json.loads(table.schema.metadata[b"deniable.survey"])
    app_config = next(q for q in survey["questions"] if q["id"] == "app")["mechanism"]
    m = dn.from_config(app_config)
    assert m.estimate(m.reports_from_json(table.column("app").to_pylist())).n == N


def _as_text(export: Path, path: Path) -> Path:
    """The export as the server wrote it before: every column JSON text (the old format)."""
    table = pq.read_table(export)
    columns = {name: [None if v is None else json.dumps(v) for v in table.column(name).to_pylist()]
               for name in table.column_names if name != "row"}
    old = pa.table({"row": table.column("row"), **{k: pa.array(v, pa.string()) for k, v in columns.items()}},
                   metadata=table.schema.metadata)
    pq.write_table(old, path)
    return path


@pytest.mark.parametrize("old", [False, True], ids=["typed", "text"])
def test_analyze_fits_a_formula_on_the_export(export: Path, tmp_path: Path, old: bool) -> None:
    path = _as_text(export, tmp_path / "old.parquet") if old else export
    result = CliRunner().invoke(app, ["analyze", str(path), "--design", "FR", "--p", "1/6,1/6", "--formula",
                                      "used ~ age", "--json"])
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    names = [t["term"] for t in record["regression"]["terms"]]
    assert names == ["Intercept", "age"]


def test_the_survey_logit_reads_the_export(export: Path) -> None:
    import pandas as pd

    frame = pd.read_parquet(export)
    res = dn.survey.logit("used ~ age", data=frame, design=dn.survey.design("FR", ["1/6", "1/6"]))
    assert list(res.params.index) == ["Intercept", "age"]
    assert res.bse["age"] > 0
