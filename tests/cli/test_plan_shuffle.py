"""``deniable plan`` shows the central guarantee of shuffled collection (exact: the library's number)."""

from __future__ import annotations

import json

import deniable as dn


def test_plan_shows_the_shuffled_guarantee(cli) -> None:
    result = cli("plan", "--k", 8, "--epsilon", 2, "--n", 50000, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    eps0 = dn.best_mechanism(8, 2.0).mechanism.epsilon
    assert data["shuffled"] == {"n": 50000, "epsilon": dn.shuffle_epsilon(eps0, 50000, 1e-6), "delta": 1e-6}
    table = cli("plan", "--k", 8, "--epsilon", 2, "--n", 50000, "--delta", 1e-9)
    assert table.exit_code == 0, table.output
    eps = dn.shuffle_epsilon(eps0, 50000, 1e-9)
    line = f"With shuffled collection of 50,000 reports this is also ({eps:.3g}, 1e-09)-DP centrally"
    assert line in " ".join(table.stdout.split())


def test_plan_design_shuffled_and_infinite_epsilon(cli) -> None:
    fr = json.loads(cli("plan", "--design", "FR", "--p", "1/6,1/6", "--prevalence", 0.1, "--n", 500, "--json").stdout)
    assert fr["shuffled"]["epsilon"] == dn.shuffle_epsilon(fr["epsilon"], 500, 1e-6) < fr["epsilon"]
    mangat = cli("plan", "--design", "Mangat", "--p", "0.7", "--prevalence", 0.2, "--json")
    assert json.loads(mangat.stdout)["shuffled"] is None


def test_plan_refuses_a_bad_delta(cli) -> None:
    result = cli("plan", "--k", 4, "--epsilon", 1, "--delta", 0)
    assert result.exit_code == 1 and "--delta must be in (0, 1); got 0.0" in result.stderr


def test_simulate_mse_compares_post_processings_on_the_same_surveys(cli, tmp_path) -> None:
    """Exact: the unbiased rows equal a run without --post (same seed, same surveys), and every method has a row."""
    args = ["simulate", "mse", "-m", "grr,oue", "--k", 6, "--n", 300, "--epsilons", "1", "--reps", 20, "--json"]
    plain = json.loads(cli(*args).stdout)["rows"]
    png = tmp_path / "mse.png"
    both = cli(*args, "--post", "none,norm-sub,clip,mle", "--plot", png)
    assert both.exit_code == 0, both.output
    rows = json.loads(both.stdout)["rows"]
    assert [r for r in rows if r["post_processing"] == "none"] == plain
    assert {(r["mechanism"], r["post_processing"]) for r in rows} == {
        (m, p) for m in ("GRR", "OUE") for p in ("none", "norm-sub", "clip", "mle")
    }
    assert png.stat().st_size > 0
    bad = cli("simulate", "mse", "--post", "mle,nope")
    assert bad.exit_code == 1 and "--post: 'nope' is not one of" in bad.stderr


def test_plan_compares_split_and_sampled_allocation(cli) -> None:
    """Exact: the JSON is the library's comparison; the table names the ratio and the choice."""
    data = json.loads(cli("plan", "--k", 4, "--epsilon", 2, "--n", 50000, "--questions", 5, "--json").stdout)
    c = dn.compare_allocations([4] * 5, 2.0, 50000)
    assert data["allocation"] == {
        "questions": 5, "recommended": "sample", "variance_ratio": float(c.ratio[0]),
        "split": {"epsilon_per_question": c.split_mechanisms[0].epsilon,
                  "mechanism": c.split_mechanisms[0].name, "variance": float(c.split_variance[0])},
        "sample": {"epsilon_per_question": c.sample_mechanisms[0].epsilon,
                   "mechanism": c.sample_mechanisms[0].name, "variance": float(c.sample_variance[0])},
    }
    table = " ".join(cli("plan", "--k", 2, "--epsilon", 12, "--questions", 2).stdout.split())
    ratio = dn.compare_allocations([2, 2], 12.0, 100_000).ratio[0]
    assert f"Variance ratio split/sample: {ratio:.3g}; recommended: allocation: split" in table
    assert json.loads(cli("plan", "--k", 4, "--epsilon", 1, "--json").stdout)["allocation"] is None
    bad = cli("plan", "--k", 4, "--epsilon", 1, "--questions", 0)
    assert bad.exit_code == 1 and "--questions must be >= 1; got 0" in bad.stderr
