"""Publication-ready plots of estimates and simulation sweeps (needs ``deniable[plot]``).

Every function takes its data and an optional matplotlib ``ax`` and returns
the Axes it drew on. Without ``ax`` a new :class:`matplotlib.figure.Figure`
is made directly (no pyplot, so no global backend state; saving renders with
Agg)::

    ax = deniable.plot.bar_estimate(est)
    ax.figure.savefig("estimate.png")

* :func:`bar_estimate` -- one bar per category with confidence-interval
  whiskers, and the truth when known.
* :func:`convergence` -- estimate and CI band against the number of
  respondents (log x axis), for a list of Estimates of the same question.
* :func:`mse_vs_epsilon` -- simulated mean squared error against epsilon,
  one colour per mechanism, with the theoretical variance as a line (log-log).
* :func:`discovery_quality` -- heavy-hitter recall (solid) and precision
  (dashed) against the number of devices, one colour per method and epsilon.
* :func:`cdf_band` -- an estimated CDF (a :class:`~deniable.RangeEstimate`) with
  its pointwise confidence band, the truth and quantiles with their intervals.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

try:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.ticker import (
        FixedLocator,
        LogLocator,
        NullFormatter,
        NullLocator,
        PercentFormatter,
    )
except ImportError as exc:  # pragma: no cover - exercised without matplotlib
    raise ImportError("deniable.plot needs matplotlib: pip install 'deniable[plot]'") from exc

from deniable._estimate import Estimate

__all__ = ["bar_estimate", "cdf_band", "convergence", "discovery_quality", "mse_vs_epsilon", "new_axes"]

_BAR = "#4C72B0"
_TRUTH = "#C44E52"
_MAX_LABELLED = 40  # beyond this many categories the x tick labels are thinned
_MARKERS = "osD^vPX*<>"
_ANNOTATED = 12  # up to this many categories each bar carries its value


def new_axes(width: float = 6.4, height: float = 4.0) -> Axes:
    """A fresh Axes on its own Figure (constrained layout, so labels never clip)."""
    fig = Figure(figsize=(width, height), layout="constrained")
    return fig.add_subplot()


def _label(value: Any) -> str:
    if value is True:
        return "yes"
    if value is False:
        return "no"
    return str(value)


def _epsilon_text(epsilon: float) -> str:
    return f"\u03b5 = {epsilon:.3g}"


def _percent_axis(ax: Axes) -> None:
    """Shares as percentages, with as few decimals as the visible range allows."""
    low, high = ax.get_ylim()
    span = high - low
    ax.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0 if span >= 0.1 else
                                                  1 if span >= 0.01 else 2))


def bar_estimate(
    est: Estimate,
    ax: Axes | None = None,
    truth: Any = None,
    *,
    level: float = 0.95,
    title: str | None = None,
    xlabel: str | None = None,
) -> Axes:
    """Bar chart of an Estimate with ``level`` CI whiskers and the truth overlaid.

    ``xlabel`` names the x axis (the question asked; default ``"category"``).
    The whiskers are drawn over the truth marker, so both stay visible where
    they meet.

    ``truth`` (aligned with ``est.domain``) defaults to ``est.truth`` (set by
    :func:`deniable.simulate`). A post-processed estimate has no formula
    standard errors and is drawn without whiskers. The y axis is the share
    of respondents, in percent.
    """
    if ax is None:
        ax = new_axes(max(6.4, min(12.0, 1.0 + 0.55 * len(est.domain))), 4.2)
    k = len(est.domain)
    x = np.arange(k)
    freqs = np.asarray(est.frequencies, dtype=float)
    ax.bar(x, freqs, width=0.7, color=_BAR, alpha=0.85, label="estimate", zorder=2)
    whiskers = est.std_errors is not None and est.n > 0
    if whiskers:
        low, high = est.ci(level)
        ax.errorbar(
            x,
            freqs,
            yerr=np.vstack([freqs - low, high - freqs]),
            fmt="none",
            ecolor="black",
            elinewidth=1.2 if k <= _MAX_LABELLED else 0.6,
            alpha=1.0 if k <= _MAX_LABELLED else 0.5,
            capsize=4 if k <= _MAX_LABELLED else 0,
            label=f"{level:.0%} CI",
            zorder=4,
        )
    if truth is None:
        truth = est.truth
    if truth is not None:
        t = np.asarray(truth, dtype=float)
        if t.shape != (k,):
            raise ValueError(f"truth must have one value per category ({k}); got shape {t.shape}")
        ax.scatter(
            x, t, marker="_", s=900 if k <= 12 else 200 if k <= _MAX_LABELLED else 25,
            linewidths=2.5 if k <= _MAX_LABELLED else 1.5,
            color=_TRUTH, label="truth", zorder=3,
        )
    if k <= _ANNOTATED:  # the value above each bar (and above its whisker and truth mark)
        top = np.nanmax(np.vstack([freqs, high if whiskers else freqs,
                                   t if truth is not None else freqs]), axis=0)
        span = max(float(np.nanmax(top)), 0.0) - min(float(np.nanmin(freqs)), 0.0)
        for i in range(k):
            ax.annotate(f"{freqs[i]:.1%}", (x[i], max(top[i], 0.0)), xytext=(0, 4),
                        textcoords="offset points", ha="center", va="bottom", fontsize="small")
        ax.set_ylim(top=max(float(np.nanmax(top)), 0.0) + 0.12 * (span or 1.0))
    ax.axhline(0.0, color="0.3", linewidth=0.8, zorder=1)
    if k <= _MAX_LABELLED:
        labels = [_label(v) for v in est.domain]
        ax.set_xticks(x, labels)
        if k > 6 or max(len(s) for s in labels) > 10:
            ax.tick_params(axis="x", labelrotation=35)
            for text in ax.get_xticklabels():
                text.set_horizontalalignment("right")
    ax.set_xlim(-0.6, k - 0.4)
    ax.set_xlabel("category" if xlabel is None else xlabel)
    ax.set_ylabel("share of respondents")
    _percent_axis(ax)
    ax.grid(axis="y", alpha=0.3, zorder=0)
    ax.set_title(
        title
        if title is not None
        else f"{est.mechanism}, {_epsilon_text(est.epsilon)}, n = {est.n:,}"
        + ("" if est.post_processing == "none" else f" ({est.post_processing})"),
        pad=20,
    )
    handles, labels = ax.get_legend_handles_labels()
    order = sorted(range(len(labels)), key=lambda i: ("estimate", "CI", "truth").index(
        "CI" if labels[i].endswith("CI") else labels[i]))
    # one row above the plot area, under the title: never over a bar, whisker or label
    ax.legend([handles[i] for i in order], [labels[i] for i in order], loc="lower center",
              bbox_to_anchor=(0.5, 1.0), ncol=len(order), frameon=False, fontsize="small",
              markerscale=0.5, columnspacing=2.0)
    return ax


def _category_position(est: Estimate, category: Any) -> int:
    if category is None:
        return len(est.domain) - 1 if len(est.domain) == 2 else 0
    try:
        return est.domain.index(category)
    except ValueError:
        raise ValueError(f"category {category!r} is not in the domain {list(est.domain)!r}") from None


def convergence(
    sweep: Sequence[Estimate],
    ax: Axes | None = None,
    *,
    category: Any = None,
    level: float = 0.95,
    title: str | None = None,
) -> Axes:
    """Estimate of one category with its ``level`` CI band against n (log x axis).

    ``sweep`` is a sequence of Estimates of the same question at growing n
    (e.g. from :func:`deniable.simulate`); ``category`` defaults to ``True``
    for a yes/no question and to the first category otherwise. The truth is
    drawn where the Estimates carry it.
    """
    ests = sorted(sweep, key=lambda e: e.n)
    if not ests:
        raise ValueError("convergence needs at least one Estimate")
    if ax is None:
        ax = new_axes()
    pos = _category_position(ests[0], category)
    n = np.array([e.n for e in ests], dtype=float)
    f = np.array([e.frequencies[pos] for e in ests])
    bounds = [e.ci(level) for e in ests]
    low = np.array([b[0][pos] for b in bounds])
    high = np.array([b[1][pos] for b in bounds])
    ax.fill_between(n, low, high, color=_BAR, alpha=0.25, linewidth=0, label=f"{level:.0%} CI")
    ax.plot(n, f, "o-", color=_BAR, markersize=4, label="estimate")
    truths = [e.truth[pos] for e in ests if e.truth is not None]
    if truths:
        if np.allclose(truths, truths[0], atol=1e-12):
            ax.axhline(truths[0], color=_TRUTH, linestyle="--", linewidth=1.5, label="truth")
        else:
            ax.plot(n, truths, "--", color=_TRUTH, linewidth=1.5, label="truth")
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(LogLocator(base=10))
    ax.set_xlabel("respondents n")
    ax.set_ylabel(f"estimated share: {_label(ests[0].domain[pos])}")
    _percent_axis(ax)
    ax.grid(alpha=0.3, which="major")
    ax.set_title(
        title if title is not None
        else f"{ests[0].mechanism}, {_epsilon_text(ests[0].epsilon)}: estimate vs n"
    )
    ax.legend(loc="best", frameon=False)
    return ax


def cdf_band(
    est: Any,
    ax: Axes | None = None,
    *,
    confidence_level: float = 0.95,
    truth: Any = None,
    quantiles: Sequence[float] = (),
    title: str | None = None,
) -> Axes:
    """The estimated CDF of a :class:`~deniable.RangeEstimate` at its bin edges with its pointwise
    ``confidence_level`` band; ``truth`` (a callable ``x -> F(x)`` or the CDF at the edges) as a dashed
    line; each of ``quantiles`` as a point with its interval (inverted from the band) on the x axis.
    """
    from deniable._intervals import z_for
    from deniable._results import check_level

    level = check_level(confidence_level)
    if ax is None:
        ax = new_axes()
    edges, cdf, se = est.cdf_band()
    z = z_for(1 - level)
    ax.fill_between(edges, np.clip(cdf - z * se, 0, 1), np.clip(cdf + z * se, 0, 1), color=_BAR, alpha=0.25,
                    linewidth=0, label=f"{level:.0%} band")
    ax.plot(edges, cdf, color=_BAR, linewidth=1.5, label="estimate")
    if truth is not None:
        values = truth(edges) if callable(truth) else np.asarray(truth, dtype=float)
        ax.plot(edges, values, "--", color=_TRUTH, linewidth=1.5, label="truth")
    for q in quantiles:
        result = est.quantile(q)
        low, high = result.confidence_interval(level)
        ax.errorbar([result.value], [q], xerr=[[result.value - low], [high - result.value]], fmt="o", color="black",
                    markersize=4, capsize=3, linewidth=1)
        ax.annotate(f"q{q:g}", (result.value, q), textcoords="offset points", xytext=(6, -12), fontsize=8)
    ax.set_xlabel("value")
    ax.set_ylabel("share of values below")
    _percent_axis(ax)
    ax.grid(alpha=0.3)
    ax.set_title(title if title is not None else f"{est.mechanism}, {_epsilon_text(est.epsilon)}, n = {est.n:,}")
    ax.legend(loc="lower right", frameon=False)
    return ax


def _records(sweep: Any) -> list[Mapping[str, Any]]:
    if hasattr(sweep, "to_dict") and hasattr(sweep, "columns"):  # a pandas DataFrame
        return list(sweep.to_dict("records"))
    if isinstance(sweep, Iterable):
        return [dict(r) if not isinstance(r, Mapping) else r for r in sweep]
    raise TypeError(f"sweep must be a DataFrame or a list of records; got {type(sweep).__name__}")


def _scientific(value: float, _position: float) -> str:
    """Tick label ``m x 10^e`` (``10^e`` when m = 1)."""
    if value <= 0:
        return ""
    exponent = math.floor(math.log10(value) + 1e-9)
    mantissa = round(value / 10.0**exponent)
    power = f"10^{{{exponent}}}"
    return f"${power}$" if mantissa == 1 else f"${mantissa}\\times {power}$"


def mse_vs_epsilon(sweep: Any, ax: Axes | None = None, *, title: str | None = None) -> Axes:
    """Simulated MSE (markers) and theoretical variance (lines) against epsilon, log-log.

    ``sweep`` is a list of records (dicts) or a DataFrame with the columns
    ``mechanism``, ``epsilon``, ``mse`` (simulated mean squared error per
    category) and optionally ``variance`` (the mechanism's ``variance(n, truth)``, averaged
    over categories) and ``n``.
    """
    rows = _records(sweep)
    if not rows:
        raise ValueError("mse_vs_epsilon needs at least one record")
    for i, row in enumerate(rows):
        missing = {"mechanism", "epsilon", "mse"} - set(row)
        if missing:
            raise ValueError(f"sweep record {i} lacks {sorted(missing)}; got keys {sorted(row)}")
    if ax is None:
        ax = new_axes(8.0 if len({str(r['mechanism']) for r in rows}) > 1 else 6.4, 4.2)
    names = list(dict.fromkeys(str(r["mechanism"]) for r in rows))
    has_theory = False
    for i, name in enumerate(names):
        color, marker = f"C{i % 10}", _MARKERS[i % len(_MARKERS)]
        mine = sorted((r for r in rows if str(r["mechanism"]) == name), key=lambda r: r["epsilon"])
        eps = np.array([float(r["epsilon"]) for r in mine])
        ax.plot(eps, [float(r["mse"]) for r in mine], marker, color=color, markersize=5,
                label=name, alpha=0.9)
        if all(r.get("variance") is not None for r in mine):
            has_theory = True
            ax.plot(eps, [float(r["variance"]) for r in mine], "-", color=color, linewidth=1.3,
                    alpha=0.7)
    if has_theory:
        ax.plot([], [], "-", color="0.4", label="theory (variance formula)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    # plain tick labels at the simulated epsilons (log axes would print 6x10^-1)
    ticks = sorted({float(r["epsilon"]) for r in rows})
    if len(ticks) > 8:
        ticks = ticks[:: -(-len(ticks) // 8)]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(lambda v, _pos: f"{v:.2g}")
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("\u03b5 (privacy loss)")
    ax.set_ylabel("mean squared error per category")
    # y: labels at 1, 2, 5 x 10^k when the data span less than two decades, else at 10^k only
    values = [float(r[key]) for r in rows for key in ("mse", "variance") if r.get(key)]
    positive = [v for v in values if v > 0]
    narrow = bool(positive) and max(positive) / min(positive) < 100
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0) if narrow else (1.0,)))
    ax.yaxis.set_major_formatter(_scientific)
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.grid(alpha=0.3, which="major")
    ax.grid(alpha=0.1, which="minor", axis="y")
    sizes = {r["n"] for r in rows if r.get("n") is not None}
    if title is None:
        title = "Privacy-utility trade-off"
        if len(sizes) == 1 and all(r.get("n") is not None for r in rows):
            title += f" (n = {int(sizes.pop()):,})"
    ax.set_title(title)
    if len(names) > 1:  # outside, right: the lines fill the whole plot area
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize="small",
                  title="simulated (markers)" if has_theory else None, title_fontsize="small")
    else:
        ax.legend(loc="best", frameon=False, fontsize="small")
    return ax


def discovery_quality(sweep: Any, ax: Axes | None = None, *, metric: str = "recall",
                      title: str | None = None, legend: bool = True) -> Axes:
    """Recall or precision (``metric``) of heavy-hitter discovery against the number of devices (log x).

    ``sweep``: records (or a DataFrame) with ``method``, ``epsilon``, ``n``,
    ``recall``, ``precision`` and ``top``, as
    :func:`deniable.heavy.discovery_sweep` returns them; one line
    per (method, epsilon).
    """
    if metric not in ("recall", "precision"):
        raise ValueError(f"metric must be 'recall' or 'precision'; got {metric!r}")
    rows = _records(sweep)
    if not rows:
        raise ValueError("discovery_quality needs at least one record")
    for i, row in enumerate(rows):
        missing = {"method", "epsilon", "n", metric} - set(row)
        if missing:
            raise ValueError(f"sweep record {i} lacks {sorted(missing)}; got keys {sorted(row)}")
    if ax is None:
        ax = new_axes(6.4, 4.2)
    curves = list(dict.fromkeys((str(r["method"]), round(float(r["epsilon"]), 3)) for r in rows))
    for i, (method, eps) in enumerate(curves):
        mine = sorted((r for r in rows if (str(r["method"]), round(float(r["epsilon"]), 3)) == (method, eps)),
                      key=lambda r: r["n"])
        ax.plot([int(r["n"]) for r in mine], [float(r[metric]) for r in mine], "-" + _MARKERS[i % len(_MARKERS)],
                color=f"C{i % 10}", markersize=5, label=f"{method.upper()}, {_epsilon_text(eps)}")
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(FixedLocator(sorted({int(r["n"]) for r in rows})))
    ax.xaxis.set_major_formatter(lambda v, _pos: f"{v:,.0f}")
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_ylim(-0.03, 1.03)
    _percent_axis(ax)
    ax.set_xlabel("devices (n)")
    tops = {r.get("top") for r in rows}
    what = f"the true top {tops.pop()}" if len(tops) == 1 else "the true top values"
    ax.set_ylabel(f"share of {what} found" if metric == "recall" else f"share of the reported in {what}")
    ax.grid(alpha=0.3)
    ax.set_title(title or f"Discovery {metric}")
    if legend:
        ax.legend(loc="best", frameon=False, fontsize="small")
    return ax
