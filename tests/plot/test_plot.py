"""deniable.plot: the figures carry the numbers they claim to show."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from matplotlib.collections import PathCollection, PolyCollection  # noqa: E402
from matplotlib.container import BarContainer, ErrorbarContainer  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

import deniable as dn  # noqa: E402
from deniable import plot  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n"


def _bars(ax) -> BarContainer:
    (bars,) = [c for c in ax.containers if isinstance(c, BarContainer)]
    return bars


def _save(ax, path: Path) -> Path:
    ax.figure.savefig(path, dpi=100)
    assert path.read_bytes()[:8] == PNG and path.stat().st_size > 5_000
    return path


def test_bar_estimate_bars_whiskers_and_truth(tmp_path: Path) -> None:
    cats = ["WhatsApp", "Signal", "Telegram", "iMessage", "Messenger", "WeChat", "Line", "Other"]
    truth = np.array([0.3, 0.1, 0.1, 0.2, 0.1, 0.05, 0.05, 0.1])
    est = dn.simulate(dn.OUE(cats, epsilon=1.0), truth, 20_000, rng=3)
    ax = plot.bar_estimate(est)
    bars = _bars(ax)
    assert len(bars.patches) == len(cats)
    np.testing.assert_allclose([p.get_height() for p in bars.patches], est.frequencies)
    (whiskers,) = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    low, high = est.ci(0.95)
    segments = whiskers.lines[2][0].get_segments()
    np.testing.assert_allclose([s[0][1] for s in segments], low)
    np.testing.assert_allclose([s[1][1] for s in segments], high)
    (marks,) = [c for c in ax.collections if isinstance(c, PathCollection)]
    np.testing.assert_allclose(marks.get_offsets()[:, 1], est.truth)
    assert [t.get_text() for t in ax.get_xticklabels()] == cats
    assert ax.get_legend() is not None
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["estimate", "95% CI", "truth"]
    assert "OUE" in ax.get_title() and "n = 20,000" in ax.get_title()
    _save(ax, tmp_path / "bars.png")


def test_bar_estimate_on_a_given_axes_and_explicit_truth(tmp_path: Path) -> None:
    m = dn.BinaryRR.forced_response(0.5, 0.5)
    est = m.estimate(m.privatize_many(np.arange(1000) < 200, rng=1))
    fig = Figure(figsize=(9, 3.5), layout="constrained")
    left, right = fig.subplots(1, 2)
    assert plot.bar_estimate(est, ax=right, truth=[0.8, 0.2]) is right
    assert len(_bars(right).patches) == 2 and not left.containers
    assert [t.get_text() for t in right.get_xticklabels()] == ["no", "yes"]
    assert right.get_xlabel() == "category"
    named = plot.bar_estimate(est, truth=[0.8, 0.2], xlabel="Have you broken the honor code?")
    assert named.get_xlabel() == "Have you broken the honor code?"
    (whiskers,) = [c for c in named.containers if isinstance(c, ErrorbarContainer)]
    (marks,) = [c for c in named.collections if isinstance(c, PathCollection)]
    assert whiskers.lines[2][0].get_zorder() > marks.get_zorder()  # the interval is drawn over the truth
    with pytest.raises(ValueError, match="one value per category"):
        plot.bar_estimate(est, truth=[0.1, 0.2, 0.7])
    _save(right, tmp_path / "given-axes.png")


def test_post_processed_estimate_has_no_whiskers() -> None:
    est = dn.simulate(dn.GRR(5, epsilon=0.5), [0.5, 0.3, 0.2, 0.0, 0.0], 2_000, rng=4)
    ax = plot.bar_estimate(est.consistent("norm-sub"))
    assert not [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert len(_bars(ax).patches) == 5 and "norm-sub" in ax.get_title()


def test_many_categories_stay_readable(tmp_path: Path) -> None:
    est = dn.simulate(dn.OLH(200, epsilon=2.0), np.full(200, 1 / 200), 100_000, rng=5)
    ax = plot.bar_estimate(est)
    assert len(_bars(ax).patches) == 200
    assert len(ax.texts) == 0  # no per-bar labels beyond a dozen categories
    _save(ax, tmp_path / "many.png")


def test_convergence_band_and_truth(tmp_path: Path) -> None:
    m = dn.BinaryRR(prob=0.75)
    gen = np.random.default_rng(6)
    sizes = [100, 1_000, 10_000, 100_000, 1_000_000]
    sweep = [dn.simulate(m, [0.7, 0.3], n, gen) for n in sizes]
    ax = plot.convergence(sweep[::-1])  # order does not matter
    (line,) = [ln for ln in ax.lines if ln.get_label() == "estimate"]
    np.testing.assert_array_equal(line.get_xdata(), sizes)
    np.testing.assert_allclose(line.get_ydata(), [e.frequencies[1] for e in sweep])
    (truth,) = [ln for ln in ax.lines if ln.get_label() == "truth"]
    assert truth.get_ydata()[0] == pytest.approx(0.3)
    (band,) = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert band.get_label() == "95% CI"
    assert ax.get_xscale() == "log"
    assert "yes" in ax.get_ylabel()
    with pytest.raises(ValueError, match="at least one"):
        plot.convergence([])
    with pytest.raises(ValueError, match="not in the domain"):
        plot.convergence(sweep, category="maybe")
    _save(ax, tmp_path / "convergence.png")


def test_mse_vs_epsilon_records_and_dataframe(tmp_path: Path) -> None:
    records = []
    for name, var in (("GRR", 1.0), ("OUE", 0.5), ("OLH", 0.6)):
        for eps in (0.5, 1.0, 2.0, 4.0):
            records.append({"mechanism": name, "epsilon": eps, "mse": var / eps**2 * 1.05,
                            "variance": var / eps**2, "n": 1000})
    ax = plot.mse_vs_epsilon(records)
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["GRR", "OUE", "OLH", "theory (variance formula)"]
    markers = [ln for ln in ax.lines if ln.get_linestyle() == "None"]
    assert len(markers) == 3 and all(len(ln.get_xdata()) == 4 for ln in markers)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0.5", "1", "2", "4"]
    assert "n = 1,000" in ax.get_title()
    _save(ax, tmp_path / "mse.png")
    pd = pytest.importorskip("pandas")
    frame_ax = plot.mse_vs_epsilon(pd.DataFrame(records))
    assert len([ln for ln in frame_ax.lines if ln.get_linestyle() == "None"]) == 3
    with pytest.raises(ValueError, match=r"lacks \['mse'\]"):
        plot.mse_vs_epsilon([{"mechanism": "GRR", "epsilon": 1.0}])
    with pytest.raises(ValueError, match="at least one record"):
        plot.mse_vs_epsilon([])


def test_discovery_quality_lines_per_method_and_epsilon(tmp_path: Path) -> None:
    records = [
        {"method": m, "epsilon": e, "n": n, "top": 10, "recall": r, "precision": 1.0}
        for m, e in (("pem", 4.0), ("sfp", 8.0)) for n, r in ((1000, 0.2), (10_000, 0.7))
    ]
    ax = plot.discovery_quality(records)
    assert [line.get_label() for line in ax.get_lines()] == ["PEM, \u03b5 = 4", "SFP, \u03b5 = 8"]
    assert ax.get_lines()[0].get_ydata().tolist() == [0.2, 0.7]
    assert "top 10" in ax.get_ylabel() and ax.get_xscale() == "log"
    precision = plot.discovery_quality(records, metric="precision")
    assert precision.get_lines()[1].get_ydata().tolist() == [1.0, 1.0]
    ax.figure.savefig(tmp_path / "d.png")
    with pytest.raises(ValueError, match="metric must be 'recall' or 'precision'"):
        plot.discovery_quality(records, metric="f1")
    with pytest.raises(ValueError, match="lacks \\['recall'\\]"):
        plot.discovery_quality([{"method": "pem", "epsilon": 1, "n": 5, "precision": 1}])


def test_cdf_band_draws_the_estimate_its_band_and_the_quantiles(tmp_path: Path) -> None:
    m = dn.HaarHRR(0, 100, bins=32, epsilon=2.0)
    rng = np.random.default_rng(9)
    est = m.estimate(m.privatize_many(rng.uniform(0, 100, 20_000), rng=rng))
    ax = plot.cdf_band(est, truth=lambda x: x / 100, quantiles=(0.5, 0.9))
    edges, cdf, se = est.cdf_band()
    line = ax.get_lines()[0]
    np.testing.assert_allclose(line.get_ydata(), cdf)
    (band,) = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert band.get_paths()[0].vertices[:, 1].max() <= 1.0
    errorbars = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert len(errorbars) == 2
    assert errorbars[0].lines[0].get_xdata()[0] == pytest.approx(est.quantile(0.5).value)
    _save(ax, tmp_path / "cdf.png")
