"""MarginalRelease: views, reports and their wire form, the exact privacy of the report distribution, the
consistency step (overlapping views agree, every view sums to 1), non-negativity, marginals by name, and
refusals naming the argument."""

from __future__ import annotations

import json
from itertools import combinations

import numpy as np
import pytest

import deniable as dn
from deniable import testing
from deniable._aggregates import SupportCounts
from deniable._marginals import summing_matrix


def _estimate(r: dn.MarginalRelease, truth: np.ndarray, n: int, seed: int) -> dn.ReleaseEstimate:
    """An estimate from support counts drawn in law (views multinomial, cells multinomial, the oracle's counts)."""
    rng = np.random.default_rng(seed)
    groups = rng.multinomial(n, np.full(len(r.views), 1 / len(r.views)))
    parts = []
    for view, oracle, n_j in zip(r.views, r.oracles, groups, strict=True):
        cells = rng.multinomial(n_j, summing_matrix(r.shape, view) @ truth)
        parts += [oracle.simulate_support_counts(cells, rng), [n_j]]
    return r.estimate_from(SupportCounts(r.fingerprint, np.concatenate(parts).astype(np.int64), n))


def test_views_config_and_reports() -> None:
    r = dn.MarginalRelease(["a", "b"], 3, [True, False], epsilon=2.0, names=["x", "y", "z"])
    assert r.views == ((0, 1), (0, 2), (1, 2)) and r.shape == (2, 3, 2) and r.oracles[0].name == "GRR"
    assert dn.MarginalRelease(2, 2, 2, 2, epsilon=1.0, size=3).views == tuple(combinations(range(4), 3))
    assert dn.MarginalRelease(2, 2, 2, epsilon=1.0, views=[("z", "x")], names=["x", "y", "z"]).views == ((0, 2),)
    config = json.loads(json.dumps(r.to_config()))
    assert config["mechanism"] == "marginal-release" and config["params"]["names"] == ["x", "y", "z"]
    assert dn.from_config(config) == r and "3 views, GRR" in repr(r)
    reports = r.privatize_many([("a", 0, True), ("b", 2, False)] * 50, rng=3)
    assert reports.dtype.names == ("view", "cell") and set(reports["view"]) == {0, 1, 2}
    back = r.reports_from_json(json.loads(json.dumps(r.reports_to_json(reports))))
    assert r.aggregate(back) == r.aggregate(reports)
    one = r.privatize(("b", 1, True), rng=4)
    assert r.report_to_json(one) == r.report_to_json(r.privatize("b", 1, True, rng=4))
    wide = dn.MarginalRelease(16, 2, 2, epsilon=1.0, mechanism="oue")  # views of 32, 32 and 4 cells
    packed = wide.privatize_many(np.zeros((20, 3), dtype=int), rng=5)
    assert (
        packed["bits"].shape == (20, 4) and wide.aggregate(wide.reports_from_json(wide.reports_to_json(packed))).n == 20
    )


@pytest.mark.parametrize("mechanism", ["grr", "oue"])
def test_exact_epsilon_of_the_report_distribution(mechanism: str) -> None:
    """Every output (view, oracle report) has probability P_j(y | x_V) / m; the largest log ratio over two
    answers is the release's epsilon, to rounding, and no more than the requested 1.5."""
    r = dn.MarginalRelease([0, 1], [0, 1, 2], [0, 1], epsilon=1.5, mechanism=mechanism)
    outputs, matrix = r.transition_matrix()
    assert matrix.shape == (12, len(outputs)) and np.allclose(matrix.sum(axis=1), 1.0)
    ratio = np.log(matrix.max(axis=0) / matrix.min(axis=0)).max()
    assert ratio == pytest.approx(r.epsilon, abs=1e-9) and r.epsilon <= 1.5 + 1e-9


@pytest.mark.stat
def test_sampled_reports_follow_the_exact_distribution() -> None:
    """The reports of one answer, 30,000 draws, against the exact law of (view, cell): chi-square GOF at
    1e-6. Power: a sampler that forgot the view's draw (all in view 0) or kept the truth in every view
    fails by thousands of sigma."""
    r = dn.MarginalRelease([0, 1], [0, 1, 2], [0, 1], epsilon=1.5, mechanism="grr")
    outputs, matrix = r.transition_matrix()
    truth = (1, 2, 0)
    reports = r.privatize_many(np.tile(truth, (30_000, 1)), rng=11)
    index = {o: i for i, o in enumerate(outputs)}
    counts = np.bincount(
        [index[(int(v), int(c))] for v, c in zip(reports["view"], reports["cell"], strict=True)], minlength=len(outputs)
    )
    row = int(np.ravel_multi_index(truth, r.shape))
    result = testing.chi_square_gof(counts, matrix[row], 1e-6)
    assert result.passed, result.message


def test_consistency_views_agree_and_sum_to_one() -> None:
    """After the step, every pair of views agrees on the questions they share and every view sums to 1; the
    raw views did not (different groups); non-negativity keeps both and leaves no negative cell."""
    r = dn.MarginalRelease(2, 3, 2, 2, epsilon=1.0, size=3)
    truth = np.random.default_rng(1).dirichlet(np.full(24, 0.3))
    est = _estimate(r, truth, 800, seed=2)
    for e in (est, est.nonnegative()):
        for a, b in combinations(range(len(r.views)), 2):
            shared = tuple(sorted(set(r.views[a]) & set(r.views[b])))
            left, right = e.view(a), e.view(b)
            sa = summing_matrix(left.table.shape, [r.views[a].index(q) for q in shared])
            sb = summing_matrix(right.table.shape, [r.views[b].index(q) for q in shared])
            assert np.allclose(sa @ left.frequencies, sb @ right.frequencies, atol=1e-12)
        assert all(abs(e.view(j).frequencies.sum() - 1) < 1e-12 for j in range(len(r.views)))
        assert np.allclose(e.marginal(1).frequencies, e.view(0).marginal(1).frequencies, atol=1e-12)
    assert est.values.min() < 0 and est.nonnegative().values.min() >= -1e-12
    assert 0 < est.nonnegative().nonnegative_rounds <= 100
    assert not np.allclose(est.linear, np.eye(len(est.values)))  # the step moved the raw views


def test_marginals_by_name_on_joint_and_release() -> None:
    """DESIGN's ``j.estimate(r).marginal(("q1", "q3"))``: by name on a Joint and on a release alike."""
    j = dn.Joint([0, 1], [0, 1, 2], [0, 1], epsilon=2.0, names=["q1", "q2", "q3"])
    answers = np.random.default_rng(3).integers(0, 2, size=(2000, 3))
    est = j.estimate(j.privatize_many(answers, rng=4))
    by_name, by_position = est.marginal(("q1", "q3")), est.marginal((0, 2))
    assert np.array_equal(by_name.frequencies, by_position.frequencies) and by_name.names == ("q1", "q3")
    assert np.allclose(by_name.marginal("q3").frequencies, est.marginal("q3").frequencies, atol=1e-12)
    assert est.independence("q1", "q3").statistic == est.independence(0, 2).statistic
    assert dn.from_config(json.loads(json.dumps(j.to_config()))) == j and est.to_dict()["names"] == ["q1", "q2", "q3"]
    assert "names" not in dn.Joint([0, 1], [0, 1], epsilon=1.0).to_config()["params"]
    r = dn.MarginalRelease([0, 1], [0, 1, 2], [0, 1], epsilon=2.0, names=["q1", "q2", "q3"])
    rel = r.estimate(r.privatize_many(answers, rng=5))
    table = rel.marginal(("q3", "q1"))
    assert table.positions == (2, 0) and table.table.shape == (2, 2) and table.names == ("q3", "q1")
    assert np.allclose(table.table, rel.marginal(("q1", "q3")).table.T)
    assert rel.to_frame()["cell"][0] == (("q1", "q2"), (0, 0))


def test_refusals_name_the_argument() -> None:
    with pytest.raises(ValueError, match="MarginalRelease needs two or more"):
        dn.MarginalRelease([0, 1], epsilon=1.0)
    with pytest.raises(ValueError, match="size must be an integer 1..3"):
        dn.MarginalRelease(2, 2, 2, epsilon=1.0, size=4)
    with pytest.raises(ValueError, match="give views or size, not both"):
        dn.MarginalRelease(2, 2, 2, epsilon=1.0, size=2, views=[(0, 1)])
    with pytest.raises(ValueError, match="views: which: 'w' is not a question's name"):
        dn.MarginalRelease(2, 2, 2, epsilon=1.0, views=[("x", "w")], names=["x", "y", "z"])
    with pytest.raises(ValueError, match="views must differ"):
        dn.MarginalRelease(2, 2, 2, epsilon=1.0, views=[(0, 1), (1, 0)])
    with pytest.raises(ValueError, match="views must be a non-empty list"):
        dn.MarginalRelease(2, 2, 2, epsilon=1.0, views=[])
    with pytest.raises(ValueError, match="at most 4096"):
        dn.MarginalRelease(20, 20, 20, 20, epsilon=1.0, size=3)
    with pytest.raises(ValueError, match="mechanism must be one of"):
        dn.MarginalRelease(2, 2, epsilon=1.0, mechanism="olh")
    with pytest.raises(ValueError, match="names must be 3 distinct"):
        dn.MarginalRelease(2, 2, 2, epsilon=1.0, names=["a", "a", "b"])
    r = dn.MarginalRelease(2, 2, 2, epsilon=1.0, views=[(0, 1), (1, 2)], names=["a", "b", "c"])
    with pytest.raises(ValueError, match="give 3 columns of answers"):
        r.privatize_many([0, 1], [1, 0])
    reports = r.privatize_many(np.zeros((4, 3), dtype=int), rng=1)
    bad = reports.copy()
    bad["view"][2] = 7
    with pytest.raises(ValueError, match="MarginalRelease report 2 names view 7"):
        r.aggregate(bad)
    bad = reports.copy()
    bad["cell"][1] = 4
    with pytest.raises(ValueError, match="report 1 is not a report of view"):
        r.aggregate(bad)
    with pytest.raises(dn.errors.ReportError, match="must be an object"):
        r.reports_from_json([[0, 1]])
    with pytest.raises(dn.errors.ReportError, match="view must be an integer 0..1"):
        r.reports_from_json([{"view": 2, "report": 0}])
    est = _estimate(r, np.full(8, 1 / 8), 400, seed=1)
    with pytest.raises(ValueError, match=r"no released view holds the questions \('a', 'c'\)"):
        est.marginal(("a", "c"))
    with pytest.raises(ValueError, match="view must be an index 0..1"):
        est.view(2)
    with pytest.raises(ValueError, match="rounds must be an integer >= 1"):
        est.nonnegative(0)
    with pytest.raises(ValueError, match="target 'population' only"):
        r.estimate(reports, target="respondents")
    with pytest.raises(dn.ConfigError, match="'params.oracles' must be one oracle per view"):
        dn.from_config({**r.to_config(), "params": {**r.to_config()["params"], "oracles": []}})


def test_a_view_without_reports_borrows_from_the_others() -> None:
    """One report: the other views start uniform with weight 0, take the shared margin from the reported
    view, sum to 1, and have NaN standard errors where nothing was reported."""
    r = dn.MarginalRelease(2, 2, 2, epsilon=1.0)
    est = r.estimate(r.privatize_many([(0, 1, 1)], rng=2))
    assert est.n == 1 and sorted(est.counts) == [0, 0, 1]
    assert all(abs(est.view(j).frequencies.sum() - 1) < 1e-12 for j in range(3))
    empty = est.counts.index(0)
    assert np.isnan(est.view(empty).std_errors).all()
