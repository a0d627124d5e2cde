"""``deniable plan``, ``audit`` and ``simulate``: outputs, calibrated numbers, error paths.

Statistical assertions (seeded simulations, alpha per test stated below) are
calibrated for a false-failure probability below 1e-6 and each has a power
check that a wrong answer fails.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import deniable as dn
from deniable import _plan as planning
from deniable.mechanisms import GRR
from deniable.testing import estimate_check, proportion_check

ALPHA = 1e-6


# ---------------------------------------------------------------------- plan
def test_plan_json_matches_the_planning_api(cli) -> None:
    result = cli("plan", "--k", 1024, "--epsilon", 1, "--margin", 0.01, "--n", 100000, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    choice = dn.best_mechanism(1024, 1.0)
    assert data["recommended"] == choice.name
    assert data["respondents_needed"] == dn.sample_size(choice.mechanism, 0.01, 0.95)
    built = planning.candidates(1024, 1.0)
    assert {r["mechanism"] for r in data["mechanisms"]} == set(built)
    for row in data["mechanisms"]:
        m = built[row["mechanism"]]
        assert row["var_star"] == pytest.approx(float(m.variance(1)[0]), rel=1e-12)
        assert row["std_error"] == pytest.approx(math.sqrt(row["var_star"] / 100000), rel=1e-12)
        assert row["report_bits"] == planning.report_bits(m)
        assert row["decode_cost"] == planning.decode_cost(m)
    # sorted best first
    assert [r["var_star"] for r in data["mechanisms"]] == sorted(
        r["var_star"] for r in data["mechanisms"]
    )


def test_plan_sample_size_follows_the_target(cli) -> None:
    """--target respondents plans for the fixed respondents' variance, the default for the
    population's (larger by f(1-f)); a target outside the two is refused naming the option."""
    runs = {t: json.loads(cli("plan", "--k", 4, "--epsilon", 2, "--json", *a).stdout)
            for t, a in (("population", []), ("respondents", ["--target", "respondents"]))}
    choice = dn.best_mechanism(4, 2.0)
    for target, data in runs.items():
        assert data["target"] == target
        assert data["respondents_needed"] == dn.sample_size(choice.mechanism, 0.01, 0.95, target=target)
    assert runs["population"]["respondents_needed"] > runs["respondents"]["respondents_needed"]
    table = " ".join(cli("plan", "--k", 4, "--epsilon", 2).stdout.split())
    assert "target: population" in table and "confidence interval of half-width 0.01" in table
    bad = cli("plan", "--k", 4, "--epsilon", 2, "--target", "everyone")
    assert bad.exit_code == 2
    text = " ".join(bad.output.replace("│", " ").split())
    assert "--target" in text and "'population' or 'respondents'; got 'everyone'" in text


def test_plan_table_names_the_recommendation(cli) -> None:
    result = cli("plan", "--k", 8, "--epsilon", 2)
    assert result.exit_code == 0, result.output
    best = dn.best_mechanism(8, 2.0)
    assert f"Recommended: {best.name}" in result.stdout
    for name in planning.candidates(8, 2.0):
        assert name in result.stdout
    needed = dn.sample_size(best.mechanism, 0.01, 0.95)
    assert f"{needed:,}" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--k", 1, "--epsilon", 1], "--k must be >= 2; got 1"),
        (["--k", 4, "--epsilon", 0], "--epsilon must be a positive finite number; got 0.0"),
        (["--k", 4, "--epsilon", -2], "--epsilon must be a positive finite number"),
        (["--k", 4, "--epsilon", "nan"], "--epsilon must be a positive finite number; got nan"),
        (["--k", 4, "--epsilon", 1, "--margin", 2], "margin must be in (0, 1); got 2.0"),
        (["--k", 4, "--epsilon", 1, "--level", 1], "level must be in (0, 1); got 1.0"),
        (["--k", 4, "--epsilon", 1, "--n", 0], "--n must be positive; got 0"),
        (["--k", 4], "plan needs --k and --epsilon"),
        (["--design", "FR", "--p", "1/6", "--prevalence", 0.1], "p must have one value per category"),
        (["--design", "FR", "--prevalence", 0.1], "--design needs --p"),
        (["--design", "FR", "--p", "1/6,1/6"], "--design needs --prevalence"),
        (["--design", "Warner", "--p", "0.7", "--prevalence", 0.1, "--k", 4], "leave out --k and --epsilon"),
        (["--design", "Warner", "--p", "0.7", "--prevalence", 0.1, "--alternative", "up"],
         "alternative must be one of"),
    ],
)
def test_plan_errors_are_one_line(cli, args: list, message: str) -> None:
    result = cli("plan", *args)
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.strip().startswith("error: ")
    assert message in result.stderr
    assert "Traceback" not in result.output


def test_plan_a_survey_design(cli) -> None:
    """The design's epsilon, SE and power at --n, and the respondents needed: the survey package's numbers."""
    from deniable import survey

    result = cli("plan", "--design", "FR", "--p", "1/6,1/6", "--prevalence", 0.1, "--n", 500, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    d = survey.ForcedResponse(("1/6", "1/6"))
    assert data["epsilon"] == pytest.approx(math.log(5))
    assert data["power_at_n"] == pytest.approx(survey.prevalence_power(d, 0.1, 500))
    assert data["respondents_needed"] == survey.prevalence_sample_size(d, 0.1, power=0.8)
    table = cli("plan", "--design", "Mangat", "--p", "0.7", "--prevalence", 0.2)
    assert table.exit_code == 0, table.output
    assert "infinite (an answer reveals the truth)" in table.stdout and "Respondents needed" in table.stdout
    assert data["approximation_warnings"] == []
    assert "at n=99 fewer than 100 respondents" in table.stdout  # Mangat needs 99: the formula's rule says so


def test_plan_notes_where_the_power_formula_is_unreliable(cli) -> None:
    """Near a boundary (SLD's extra parameter at n = 300) the plan says the power is approximate."""
    args = ("plan", "--design", "SLD", "--p", "0.3,0.7", "--prevalence", 0.2, "--null", 0.3, "--extra", 0.8,
            "--n", 300)
    table = cli(*args)
    assert table.exit_code == 0, table.output
    assert "Note: prevalence_power: at n=300 an estimate of SLD lies 0.85 standard errors" in table.stdout
    data = json.loads(cli(*args, "--json").stdout)
    assert len(data["approximation_warnings"]) == 1 and "simulated_power" in data["approximation_warnings"][0]


def test_debug_shows_the_traceback(cli) -> None:
    result = cli("--debug", "plan", "--k", 4, "--epsilon", 1, "--margin", 2)
    assert result.exit_code != 0
    assert isinstance(result.exception, ValueError)
    assert "margin must be in (0, 1)" in str(result.exception)


def test_every_command_has_help_with_an_example(cli) -> None:
    top = cli("--help")
    assert top.exit_code == 0
    commands = ["demo", "serve", "plan", "audit", "privatize", "estimate", "simulate"]
    for name in commands:
        assert name in top.stdout
    for args in (*([c] for c in commands if c != "simulate"),
                 ["simulate", "survey"], ["simulate", "convergence"], ["simulate", "gamma"],
                 ["simulate", "mse"], ["simulate", "heavy-hitters"]):
        result = cli(*args, "--help")
        assert result.exit_code == 0, args
        assert "Example" in result.stdout, args


# --------------------------------------------------------------------- audit
def test_audit_passes_a_correct_mechanism(cli) -> None:
    """Secure path, 10^5 trials: PASS (false failure <= alpha = 1e-6 by construction).

    Power: the measured lower bound is close to the claim (> 0.8 for eps = 1;
    with 10^5 trials it sits near 0.94, sd about 0.01), so an audit that
    measured nothing would fail this test.
    """
    result = cli("audit", "--mechanism", "oue", "--k", 8, "--epsilon", 1, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["mechanism"] == "OUE" and data["k"] == 8 and data["passed"] is True
    assert 0.8 < data["epsilon_lower"] <= data["epsilon_claimed"]
    table = cli("audit", "--mechanism", "binary-rr", "--epsilon", 1, "--trials", 20000)
    assert table.exit_code == 0 and "PASS" in table.stdout


def test_audit_fails_a_mechanism_that_understates_epsilon(cli, monkeypatch) -> None:
    """A GRR that claims 80% of its real epsilon is caught: FAIL and exit code 1."""

    class Understated(GRR):
        @property
        def epsilon(self) -> float:
            return 0.8 * super().epsilon

    monkeypatch.setattr(
        "deniable.cli._plan.build_mechanism", lambda name, k, eps: Understated(k, epsilon=eps)
    )
    result = cli("audit", "--mechanism", "grr", "--k", 4, "--epsilon", 1, "--seed", 1)
    assert result.exit_code == 1
    assert "FAIL" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--mechanism", "nope", "--k", 4, "--epsilon", 1], "--mechanism must be one of"),
        (["--mechanism", "grr", "--k", 1, "--epsilon", 1], "k must be >= 2"),
        (["--mechanism", "grr", "--k", 4, "--epsilon", 1, "--trials", 10], "trials must be"),
        (["--mechanism", "grr", "--k", 4, "--epsilon", "inf"], "--epsilon must be a positive"),
    ],
)
def test_audit_errors(cli, args: list, message: str) -> None:
    result = cli("audit", *args)
    assert result.exit_code == 1
    assert message in result.stderr and result.stderr.startswith("error: ")


# ------------------------------------------------------------------ simulate
@pytest.mark.stat
def test_simulate_survey_estimate_is_near_the_truth(cli, tmp_path: Path) -> None:
    """|estimate - truth| < z(alpha/2) SE with alpha = 1e-6 (z = 4.89); with the plug-in standard
    error of n = 50,000 forced-response answers the exact rate is 9.9e-7 (binomial sum).

    Power: the raw share of 'yes' reports (about 0.35 for truth 0.2) is
    38 SE away, so an estimator that forgot to debias fails.
    """
    png = tmp_path / "survey.png"
    result = cli("simulate", "survey", "--n", 50000, "--truth", 0.2, "--plot", png, "--json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["categories"]
    yes = rows[1]
    assert yes["category"] is True and yes["truth"] == 0.2
    assert (res := estimate_check(yes["estimate"], yes["truth"], yes["std_error"], ALPHA)), res.message
    assert not estimate_check(yes["observed"], yes["truth"], yes["std_error"], ALPHA)  # power
    assert png.stat().st_size > 10_000
    assert f"plot -> {png}" in result.stderr.replace("\n", "")  # beside --json: on stderr
    text = cli("simulate", "survey", "--n", 1000)
    assert "violators: estimate" in text.stdout


@pytest.mark.stat
def test_simulate_convergence_rows_and_band(cli, tmp_path: Path) -> None:
    """Every n from 10^2 to 10^7: the count of "yes" reports behind the estimate (forced response
    1/2, 1/2: P(yes) = 1/4 + f/2) in its exact binomial band, Bonferroni over 6 rows (alpha 1e-6),
    and the printed standard error is the plug-in one. (The band |error| < z SE failed a correct
    sweep 41 times too often at n = 100, 7.9e-6 in all: the plug-in SE is small when the count is.)

    Power: at n = 10^7 a truth off by 0.01 moves P(yes) by 0.005, 33 standard deviations.
    """
    png = tmp_path / "convergence.png"
    result = cli("simulate", "convergence", "--per-decade", 1, "--plot", png, "--json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["rows"]
    assert [r["n"] for r in rows] == [10**e for e in range(2, 8)]
    def yes_count(r: dict) -> int:
        return round(r["n"] * (0.25 + r["estimate"] / 2))

    for r in rows:
        res = proportion_check(yes_count(r), r["n"], 0.25 + r["truth"] / 2, ALPHA / len(rows), label=str(r["n"]))
        assert res, res.message
        share = yes_count(r) / r["n"]
        assert r["std_error"] == pytest.approx(2 * math.sqrt(share * (1 - share) / r["n"]), rel=1e-9)
        assert r["ci_low"] < r["estimate"] < r["ci_high"]
    last = rows[-1]
    assert not proportion_check(yes_count(last), last["n"], 0.25 + (last["truth"] + 0.01) / 2, ALPHA / len(rows))
    assert png.stat().st_size > 10_000
    assert f"plot -> {png}" in result.stderr.replace("\n", "")  # beside --json: on stderr


def _ratio_band(reps: int, alpha: float) -> tuple[float, float]:
    """Acceptance band of MSE / Var for ``reps`` normal errors: chi2(reps) / reps."""
    return stats.chi2.ppf(alpha / 2, reps) / reps, stats.chi2.isf(alpha / 2, reps) / reps


@pytest.mark.stat
def test_simulate_gamma_mse_matches_theory(cli, tmp_path: Path) -> None:
    """Simulated MSE / formula (A) variance in its chi-square band (alpha = 1e-6 over 5 cells).

    For Warner's design both categories carry the same error, so the MSE of
    ``reps`` surveys is Var * chi2(reps) / reps (normal approximation at n = 10^4).
    Power: against the neighbouring gamma's variance the ratio leaves the band
    (the variances differ by a factor 2.9 at least: a miss below 1e-59).
    """
    reps = 1000
    png = tmp_path / "gamma.png"
    result = cli("simulate", "gamma", "--gammas", "0.05,0.15,0.25,0.35,0.45", "--reps", reps,
                 "--plot", png, "--json", "--target", "respondents")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["target"] == "respondents"
    rows = json.loads(result.stdout)["rows"]
    assert [r["gamma"] for r in rows] == [0.05, 0.15, 0.25, 0.35, 0.45]
    lo, hi = _ratio_band(reps, ALPHA / len(rows))
    for r in rows:
        assert lo < r["mse"] / r["variance"] < hi, r
        assert r["epsilon"] == pytest.approx(math.log((0.5 + r["gamma"]) / (0.5 - r["gamma"])))
    for a, b in zip(rows[:-1], rows[1:], strict=True):  # power: the wrong gamma's variance is rejected
        assert not lo < a["mse"] / b["variance"] < hi
    assert png.stat().st_size > 10_000
    assert f"plot -> {png}" in result.stderr.replace("\n", "")  # beside --json: on stderr


@pytest.mark.stat
def test_simulate_mse_matches_theory_for_each_mechanism(cli, tmp_path: Path) -> None:
    """MSE / Var within the band of the worst category (union bound over k categories).

    ``ratio = sum_v Var_v X_v / sum_v Var_v`` lies between the smallest and
    largest per-category ``X_v ~ chi2(reps) / reps``, so each cell spends
    alpha / (k * cells). Power: a variance off by a factor 4 leaves the band (the
    band is 0.545..1.65: ratio / 4 stays in it with probability 1.4e-19 per cell even
    if one category carries all the variance; ratio / 2 did 18% of the time).
    """
    reps, k = 200, 4
    png = tmp_path / "mse.png"
    result = cli("simulate", "mse", "--mechanisms", "grr,oue,olh", "--k", k,
                 "--epsilons", "1,3", "--n", 5000, "--reps", reps, "--plot", png, "--json",
                 "--target", "respondents")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["rows"]
    assert {r["target"] for r in rows} == {"respondents"}
    assert {(r["mechanism"], round(r["epsilon"], 6)) for r in rows} == {
        (m, e) for m in ("GRR", "OUE", "OLH") for e in (1.0, 3.0)
    }
    lo, hi = _ratio_band(reps, ALPHA / (k * len(rows)))
    for r in rows:
        assert lo < r["ratio"] < hi, r
        assert not lo < r["mse"] / (4 * r["variance"]) < hi  # power
    assert png.stat().st_size > 10_000
    assert f"plot -> {png}" in result.stderr.replace("\n", "")  # beside --json: on stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["survey", "--truth", 1.5], "--truth must be a share in [0, 1]; got 1.5"),
        (["survey", "--p-truth", 1.5], "p_truth"),
        (["survey", "--plot", "out.txt"], "must end in .png, .svg or .pdf"),
        (["convergence", "--n-min", 1000, "--n-max", 10], "need 1 <= n_min <= n_max"),
        (["gamma", "--gammas", "0.6"], "gamma"),
        (["gamma", "--gammas", "a,b"], "--gammas must be comma-separated numbers"),
        (["mse", "--mechanisms", "grr,nope"], "--mechanisms: 'nope' is not one of"),
        (["mse", "--epsilons", "0"], "--epsilon must be a positive finite number"),
        (["mse", "--distribution", "normal"], "distribution must be 'uniform' or 'zipf'"),
        (["mse", "--k", 1], "--k must be >= 2"),
        (["heavy-hitters", "--methods", "tree"], "--methods: 'tree' is not one of pem, sfp"),
        (["heavy-hitters", "--n", "50"], "--n must be at least 100 devices each"),
        (["heavy-hitters", "--top", "0"], "--top must be in 1..--words (1000); got 0"),
        (["heavy-hitters", "--tail", "1"], "--tail must be a share in [0, 1)"),
    ],
)
def test_simulate_errors(cli, tmp_path: Path, monkeypatch, args: list, message: str) -> None:
    monkeypatch.chdir(tmp_path)
    result = cli("simulate", *args)
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith("error: ") and message in result.stderr


def test_simulate_tables_render(cli) -> None:
    convergence = " ".join(cli("simulate", "convergence", "--n-max", 10000).stdout.split())
    for label in ("std. error", "95% interval", "error / std. error", "target: population"):
        assert label in convergence
    assert "SE" not in convergence  # no bare "SE": the standard error is spelled out
    gamma = " ".join(cli("simulate", "gamma", "--reps", 20, "--target", "respondents").stdout.split())
    assert "MSE / Var" in gamma and "target: respondents" in gamma
    mse = cli("simulate", "mse", "--k", 4, "--epsilons", "1", "--reps", 5, "--n", 1000)
    assert mse.exit_code == 0 and "SubsetSelection" in mse.stdout
    np.testing.assert_equal(mse.stderr, "")


def test_python_dash_m_deniable_runs_the_command_line() -> None:
    """``python -m deniable COMMAND`` is ``deniable COMMAND`` (no command: the demo)."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "deniable", "plan", "--k", "4", "--epsilon", "1", "--json"],
        capture_output=True, text=True, timeout=120, check=True,
    )
    assert json.loads(done.stdout)["recommended"] == dn.best_mechanism(4, 1.0).name


def test_simulate_heavy_hitters_json_table_and_plot(cli, tmp_path: Path) -> None:
    """PEM at epsilon 8 with 20,000 devices finds the 3 words that half of them type.

    Zipf(1.1) over 3 words for half the devices: shares 28%, 13% and 8.5%;
    the other half type unique words (count 1 each), so the true top 3 is
    clear. The 26 first letters all stay among the 32 kept prefixes; later
    prefixes of the tail are spread over 26**i. A level's share has a
    standard error near 0.9% (2,857 reports at a per-report variance about
    0.22), the final filter asks for about 3.2 of them, and 8.5% is then 6
    standard errors clear: recall 1 fails with probability far below 1e-6.
    """
    png = tmp_path / "recall.png"
    result = cli("simulate", "heavy-hitters", "--methods", "pem", "--epsilons", "8", "--n", "20000",
                 "--top", 3, "--words", 3, "--tail", 0.5, "--plot", png, "--json")
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.stdout)["rows"]
    assert row["method"] == "pem" and row["n"] == 20000 and row["recall"] == 1.0
    assert 0 <= row["precision"] <= 1 and row["relative_error"] < 0.2
    assert png.stat().st_size > 10_000
    assert f"plot -> {png}" in result.stderr.replace("\n", "")  # beside --json: on stderr
    table = " ".join(cli("simulate", "heavy-hitters", "--methods", "sfp", "--epsilons", "4", "--n", "1000",
                         "--top", 3, "--words", 20).stdout.split())
    for label in ("recall", "precision", "median rel. error", "device s", "server s", "sfp"):
        assert label in table
