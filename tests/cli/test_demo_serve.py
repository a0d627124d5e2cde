"""``deniable demo``, ``deniable serve`` and ``deniable estimate --db``: real HTTP, real SQLite.

The demo uses secure randomness, so its estimate is checked with a
calibrated band: |estimate - truth| < z(alpha/2) SE with alpha = 1e-6
(z = 4.89; formula (A) is the variance for the fixed population of
students). Power: the raw share of "yes" reports (what a missing debias
step would print) is about 38 SE from the truth and is rejected.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

import httpx  # noqa: E402

import deniable as dn  # noqa: E402
from deniable.cli._server import HONOR_CODE_SURVEY  # noqa: E402
from deniable.client import Client  # noqa: E402
from deniable.server._results import question_estimates, results_json  # noqa: E402
from deniable.server._runner import BackgroundServer  # noqa: E402
from deniable.server._storage import Storage  # noqa: E402
from deniable.testing import estimate_check  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

pytestmark = pytest.mark.server

NUMBER = r"([-+]?\d+\.\d+)"


def _demo_numbers(stdout: str) -> dict[str, float]:
    text = " ".join(stdout.split())
    found = {
        "yes": re.search(rf"'yes' reports: {NUMBER}", text),
        "estimate": re.search(rf"estimated violators: {NUMBER} std\. error {NUMBER} 95% interval {NUMBER} "
                              rf"\.\. {NUMBER} \(target: these students\)", text),
        "truth": re.search(rf"true violators: {NUMBER}", text),
        "posted": re.search(r"posted ([\d,]+) privatized responses in", text),
    }
    assert all(found.values()), stdout
    est = found["estimate"]
    return {
        "yes": float(found["yes"][1]),
        "estimate": float(est[1]), "se": float(est[2]), "low": float(est[3]), "high": float(est[4]),
        "truth": float(found["truth"][1]),
        "posted": float(found["posted"][1].replace(",", "")),
    }


@pytest.mark.stat
def test_demo_end_to_end_under_a_minute(cli, tmp_path: Path, monkeypatch) -> None:
    """The demo (the OS CSPRNG, n = 50,000): the estimate within z standard errors of the truth at
    alpha 1e-6; power: the raw share of "yes" (about 0.35 against 0.2, 35 standard errors) is not."""
    monkeypatch.chdir(tmp_path)
    started = time.perf_counter()
    result = cli("demo")
    elapsed = time.perf_counter() - started
    assert result.exit_code == 0, result.output
    assert elapsed < 60, f"the demo took {elapsed:.1f} s"
    got = _demo_numbers(result.stdout)
    assert got["posted"] == 50_000 and got["truth"] == 0.2
    assert (res := estimate_check(got["estimate"], got["truth"], got["se"], 1e-6)), res.message
    assert not estimate_check(got["yes"], got["truth"], got["se"], 1e-6)  # power: the raw share is rejected
    # the printed standard error is formula (A) for forced response at n = 50,000 (clamped
    # plug-in): the demo's target is its students themselves
    m = dn.BinaryRR.forced_response(0.5, 0.5)
    expected_se = np.sqrt(m.variance(50_000, [1 - got["estimate"], got["estimate"]], "respondents")[1])
    assert got["se"] == pytest.approx(expected_se, abs=1e-4)
    assert got["low"] == pytest.approx(got["estimate"] - 1.959964 * got["se"], abs=2e-4)
    png = tmp_path / "deniable-output" / "deniable-demo.png"  # never in the current directory itself
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    assert [p.name for p in tmp_path.iterdir()] == ["deniable-output"]
    assert f"plot -> {Path('deniable-output', 'deniable-demo.png')}" in result.stdout
    assert "NOT private" not in result.stderr and "not private" not in result.stderr


def test_demo_seeded_is_reproducible(cli, tmp_path: Path) -> None:
    runs = [cli("demo", "--n", 3000, "--seed", 5, "--out", tmp_path / f"d{i}.svg", "--batch-size", 700)
            for i in range(2)]
    for r in runs:
        assert r.exit_code == 0, r.output
        assert "not private" in r.stderr
    a, b = (_demo_numbers(r.stdout) for r in runs)
    assert a == {**b, "posted": a["posted"]} and a["posted"] == 3000
    assert (tmp_path / "d0.svg").read_text().startswith("<?xml")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--n", 1], "--n must be >= 2"),
        (["--truth", 2], "--truth must be a share in [0, 1]"),
        (["--out", "demo.txt"], "--out must end in .png, .svg or .pdf"),
        (["--batch-size", 0], "--batch-size must be in 1..10000"),
    ],
)
def test_demo_errors(cli, args: list, message: str) -> None:
    result = cli("demo", *args)
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.startswith("error: ") and message in result.stderr


# --------------------------------------------------------------------- serve
@pytest.fixture
def survey_file(tmp_path: Path) -> Path:
    path = tmp_path / "honor-code.json"
    path.write_text(json.dumps(HONOR_CODE_SURVEY))
    return path


def test_serve_runs_the_server_and_never_prints_the_token(survey_file: Path, tmp_path: Path) -> None:
    token = "s3cret-admin-token-for-the-test"
    env = {**os.environ, "DENIABLE_ADMIN_TOKEN": token}
    proc = subprocess.Popen(
        [sys.executable, "-m", "deniable.cli", "serve", str(survey_file),
         "--db", f"sqlite:///{tmp_path / 'serve.db'}", "--port", "0", "--durable"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        url = None
        deadline = time.monotonic() + 30
        lines = []
        while url is None and time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line:
                break
            lines.append(line)
            match = re.search(r"serving on (http://\S+)", line)
            url = match[1] if match else None
        assert url, "".join(lines)
        assert "admin endpoints enabled" in "".join(lines)
        survey = httpx.get(f"{url}/surveys/honor-code", timeout=10).json()
        assert survey["questions"][0]["id"] == "violated"
        headers = {"Authorization": f"Bearer {token}"}
        second = {**HONOR_CODE_SURVEY, "id": "second"}
        assert httpx.post(f"{url}/admin/surveys", json=second, timeout=10).status_code == 401
        created = httpx.post(f"{url}/admin/surveys", json=second, headers=headers, timeout=10)
        assert created.status_code == 201, created.text
        assert httpx.get(f"{url}/surveys/second", timeout=10).status_code == 200
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=30)
    assert token not in out + err + "".join(lines)


def test_serve_keeps_its_default_database_in_deniable_output(survey_file: Path, tmp_path: Path) -> None:
    """Without --db the SQLite file is deniable-output/deniable.db under the current directory, and
    the startup line names it."""
    workdir = tmp_path / "work"
    workdir.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "deniable.cli", "serve", str(survey_file), "--port", "0"],
                            cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines = [proc.stderr.readline(), proc.stderr.readline()]
        assert "serving on" in lines[1], lines
    finally:
        proc.terminate()
        proc.communicate(timeout=30)
    assert "database sqlite:///deniable-output/deniable.db" in lines[0]
    assert (workdir / "deniable-output" / "deniable.db").is_file()
    assert [p.name for p in workdir.iterdir()] == ["deniable-output"]


def test_serve_errors(cli, tmp_path: Path) -> None:
    missing = cli("serve", tmp_path / "nope.yaml")
    assert missing.exit_code == 1 and "no such survey file" in missing.stderr
    over = tmp_path / "over.json"
    over.write_text(json.dumps({**HONOR_CODE_SURVEY, "budget": 0.5}))
    result = cli("serve", over)
    assert result.exit_code == 1
    assert result.stderr.startswith("error: budget: ") and "above the budget" in result.stderr
    db_url = f"sqlite:///{tmp_path / 'stored.db'}"
    storage = Storage(db_url)
    storage.add_survey(HONOR_CODE_SURVEY)
    storage.close()
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps({**HONOR_CODE_SURVEY, "title": "Changed"}))
    conflict = cli("serve", changed, "--db", db_url, "--port", 0)
    assert conflict.exit_code == 1
    assert "error: id: a different survey with id 'honor-code' is already stored" in conflict.stderr


# ------------------------------------------------------------- estimate --db
def _collect(db_url: str, survey: dict, n: int, truth: float, seed: int) -> float:
    """Post n seeded respondents through the real client; returns the true share."""
    population = np.random.default_rng(seed).random(n) < truth
    token = "relay-token-for-cli-tests"
    with BackgroundServer([survey], db_url=db_url, relay_token=token) as server, \
            Client(server.url, timeout=120, token=token) as client:
        client.respond_many(survey["id"], [{"violated": bool(v)} for v in population],
                            batch_size=2000, rng=seed)
    return float(population.mean())


def _estimate_db_checks(cli, db_url: str, survey_id: str, tmp_path: Path, truth: float,
                        n: int) -> None:
    as_json = cli("estimate", "--db", db_url, "--survey", survey_id, "--json",
                  "--consistent", "norm-sub", "--target", "respondents")  # fixed students
    assert as_json.exit_code == 0, as_json.output
    data = json.loads(as_json.stdout)
    storage = Storage(db_url)
    try:
        survey = storage.survey(survey_id)
        expected = results_json(
            survey, question_estimates(survey, storage.aggregates(survey_id), "respondents"),
            refusals=storage.refusals.counts(survey_id))
        population = results_json(survey, question_estimates(survey, storage.aggregates(survey_id)))
    finally:
        storage.close()
    assert data["target"] == "respondents" and population["target"] == "population"
    q = data["questions"][0]
    assert q["target"] == "respondents"
    # the population's standard errors add f(1-f)/n; the estimates are the same
    assert population["questions"][0]["estimate"] == q["estimate"]
    assert all(p > r for p, r in zip(population["questions"][0]["std_error"], q["std_error"], strict=True))
    assert {k: v for k, v in data.items() if k != "questions"} == {
        k: v for k, v in expected.items() if k != "questions"}
    assert {k: v for k, v in q.items() if k != "consistent_norm-sub"} == expected["questions"][0]
    assert q["n"] == n
    assert (res := estimate_check(q["estimate"][1], truth, q["std_error"][1], 1e-6)), res.message
    # power: the share of "yes" a raw reading expects, 0.25 + truth / 2 (half the answers are coin
    # flips), lies outside the band; the expected share (a number, not a draw), so that the power
    # statement holds at n = 5,000 too (the observed one came within 3.8 of its standard deviations
    # of the band)
    assert abs(0.25 + truth / 2 - truth) > res.critical_value * q["std_error"][1]
    png = tmp_path / "db.png"
    table = cli("estimate", "--db", db_url, "--survey", survey_id, "--plot", png)
    assert table.exit_code == 0, table.output
    assert "violated: Have you broken the honor code this term?" in table.stdout
    assert f"{n:,} responses" in table.stdout
    assert "target: population" in " ".join(table.stdout.split())
    assert png.stat().st_size > 10_000 and f"plot -> {png}" in table.stdout.replace("\n", "")


@pytest.mark.stat
def test_estimate_from_a_sqlite_database(cli, tmp_path: Path) -> None:
    """Seeded; the estimate within z standard errors of the truth at alpha 1e-6 (the power
    statement is deterministic, see _estimate_db_checks)."""
    db_url = f"sqlite:///{tmp_path / 'survey.db'}"
    truth = _collect(db_url, HONOR_CODE_SURVEY, 20_000, 0.2, seed=11)
    _estimate_db_checks(cli, db_url, "honor-code", tmp_path, truth, 20_000)
    unknown = cli("estimate", "--db", db_url, "--survey", "nope")
    assert unknown.exit_code == 1 and "error: id: no survey with id 'nope'" in unknown.stderr
    missing = cli("estimate", "--db", f"sqlite:///{tmp_path / 'missing.db'}", "--survey", "x")
    assert missing.exit_code == 1 and "no such database file" in missing.stderr
    assert not (tmp_path / "missing.db").exists()


@pytest.mark.stat
@pytest.mark.postgres
def test_estimate_from_postgresql(cli, tmp_path: Path, postgres_url: str) -> None:
    truth = _collect(postgres_url, HONOR_CODE_SURVEY, 5_000, 0.3, seed=12)
    _estimate_db_checks(cli, postgres_url, "honor-code", tmp_path, truth, 5_000)


# ------------------------------------------------------ estimate from exports
MESSAGING = {
    "id": "messaging",
    "title": "Messaging apps",
    "budget": 2.2,
    "questions": [
        {**HONOR_CODE_SURVEY["questions"][0]},
        {"id": "app", "text": "Which messaging app do you use most?", "type": "categorical",
         "categories": ["WhatsApp", "Signal", "Telegram", "Other"], "mechanism": "grr",
         "epsilon": 1.0},
    ],
}


def test_estimate_from_the_servers_csv_and_parquet_exports(cli, tmp_path: Path) -> None:
    """Exports (every report JSON-quoted) give exactly the server's own estimates."""
    token = "export-token"
    gen = np.random.default_rng(21)
    apps = MESSAGING["questions"][1]["categories"]
    answers = [{"violated": bool(v), "app": str(a)}
               for v, a in zip(gen.random(3000) < 0.25, gen.choice(apps, 3000), strict=True)]
    db_url = f"sqlite:///{tmp_path / 'export.db'}"
    with BackgroundServer([MESSAGING], db_url=db_url, admin_token=token) as server, \
            Client(server.url, timeout=120, token=token) as client:
        client.respond_many("messaging", answers, batch_size=1000, rng=22)
        headers = {"Authorization": f"Bearer {token}"}
        for fmt in ("csv", "parquet"):
            got = httpx.get(f"{server.url}/admin/surveys/messaging/export?format={fmt}",
                            headers=headers, timeout=60)
            assert got.status_code == 200, got.text
            (tmp_path / f"export.{fmt}").write_bytes(got.content)
        (tmp_path / "survey.json").write_text(json.dumps(client.survey("messaging")))
        expected = client.results("messaging")
    for question in expected["questions"]:
        qid = question["id"]
        from_csv = cli("estimate", tmp_path / "export.csv", "--column", qid,
                       "--config", tmp_path / "survey.json", "--json")
        from_parquet = cli("estimate", tmp_path / "export.parquet", "--column", qid, "--json")
        for result in (from_csv, from_parquet):
            assert result.exit_code == 0, result.output
            rows = json.loads(result.stdout)["categories"]
            assert [r["category"] for r in rows] == question["categories"]
            np.testing.assert_allclose([r["estimate"] for r in rows], question["estimate"],
                                       rtol=0, atol=1e-12)
    wrong = cli("estimate", tmp_path / "export.csv", "--column", "row",
                "--config", tmp_path / "survey.json")
    assert wrong.exit_code == 1
    assert "has no question 'row' (questions: ['violated', 'app'])" in wrong.stderr
    no_config = cli("estimate", tmp_path / "export.csv", "--column", "app")
    assert no_config.exit_code == 1 and "export.csv.deniable.json not found" in no_config.stderr


def test_serve_on_a_port_in_use_names_it_and_the_flag(cli, tmp_path: Path) -> None:
    """Once a bare "[Errno 98] Address already in use"; both entry points now name the port and --port."""
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        want = (f"port {port} on 127.0.0.1 is in use (another server listens there, perhaps an earlier deniable "
                f"serve or mkdocs serve): choose another with --port, e.g. --port {port + 1}, or --port 0 for any "
                "free one")
        result = cli("serve", EXAMPLES / "honor-code.yaml", "--db", f"sqlite:///{tmp_path / 'a.db'}", "--port", port)
        assert result.exit_code == 1 and want in " ".join(result.stderr.split()), result.stderr
        module = subprocess.run(
            [sys.executable, "-m", "deniable.server", str(EXAMPLES / "honor-code.yaml"), "--db",
             f"sqlite:///{tmp_path / 'b.db'}", "--port", str(port)],
            capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        )
        assert module.returncode == 1 and f"python -m deniable.server: {want}" in module.stderr, module.stderr


def test_the_default_port_is_not_mkdocs_and_every_file_agrees() -> None:
    """``mkdocs serve`` (the docs site, as the README runs it) takes 8000: the service defaults to 8765,
    and the CLI, the module, the Dockerfile, compose.yaml and the production guide say the same."""
    import inspect

    from deniable.cli._server import serve_cmd
    from deniable.server._runner import DEFAULT_PORT, run

    assert DEFAULT_PORT == 8765
    assert inspect.signature(serve_cmd).parameters["port"].default == DEFAULT_PORT
    assert inspect.signature(run).parameters["port"].default == DEFAULT_PORT
    for name in ("Dockerfile", "compose.yaml", "docs/howto/production.md"):
        text = (ROOT / name).read_text()
        assert "8000" not in text and str(DEFAULT_PORT) in text, name
