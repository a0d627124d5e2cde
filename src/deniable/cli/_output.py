"""How the command line shows results: estimate tables, JSON records, figures."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
from rich.table import Table

from deniable._estimate import Estimate, MeanEstimate, Target
from deniable.cli._common import CLIError, err, out

__all__ = [
    "check_figure_path", "estimate_records", "estimate_table", "print_json", "save_axes", "show_estimate", "show_mean",
    "target_note", "show_sliced", "show_keyvalue",
]


def target_note(target: Target) -> str:
    """One line saying what the estimates are of, under every table."""
    if target == "population":
        return ("target: population (the respondents are a random sample of it; "
                "--target respondents for these respondents only)")
    return ("target: respondents (these respondents only, a census; "
            "--target population for the population they were sampled from)")


def estimate_records(
    est: Estimate, level: float = 0.95, consistent: Estimate | None = None
) -> list[dict[str, Any]]:
    """One JSON-ready dict per category of :meth:`Estimate.to_dict`: estimate, standard error, interval
    (with reports), observed share (where the estimate has one) and truth, and the ``consistent`` shares."""
    data = est.to_dict(level)
    keys = ["estimate", *(("std_error", "ci_low", "ci_high") if "std_error" in data and est.n else ()),
            *(("observed",) if "observed" in data else ())]
    rows = []
    for i, category in enumerate(est.domain):
        row: dict[str, Any] = {"category": category, **{key: data[key][i] for key in keys}}
        if consistent is not None:
            row["consistent"] = float(consistent.frequencies[i])
        if "truth" in data:
            row["truth"] = data["truth"][i]
        rows.append(row)
    return rows


def _number(value: float | None, spec: str) -> str:
    """A table cell: ``value`` formatted by ``spec``; ``nan`` where to_dict has no number (``None``)."""
    return "nan" if value is None else format(value, spec)


def _caption(est: Estimate | MeanEstimate) -> str:
    """Under every table: what the estimates are of, and how far fake reports could move them."""
    note = est.manipulation_note() if isinstance(est, Estimate) else (
        f"m fake reports could move the mean by at most m \u00d7 {est.manipulation_bound(1):.4g}"
        if est.report_spread is not None else "")
    return target_note(est.target) + (f"\n{note}" if note else "")


def estimate_table(
    est: Estimate,
    level: float = 0.95,
    consistent: Estimate | None = None,
    title: str | None = None,
    max_rows: int = 60,
) -> Table:
    """The estimate as a rich table: category, estimate, standard error, interval, observed
    (+ consistent, truth), with the target in the caption."""
    records = estimate_records(est, level, consistent)
    table = Table(
        title=title
        or f"{est.mechanism}, epsilon = {est.epsilon:.4g}, n = {est.n:,}"
        + ("" if est.post_processing == "none" else f" ({est.post_processing})"),
        title_justify="left",
        caption=_caption(est),
        caption_justify="left",
    )
    columns = [("category", "category")]
    columns.append(("estimate", "estimate"))
    if "std_error" in records[0]:
        columns += [("std_error", "std. error"), ("ci_low", f"{level:.0%} interval low"),
                    ("ci_high", "interval high")]
    if "observed" in records[0]:
        columns.append(("observed", "observed"))
    if consistent is not None:
        columns.append(("consistent", consistent.post_processing))
    if "truth" in records[0]:
        columns.append(("truth", "truth"))
    for key, header in columns:
        table.add_column(header, justify="left" if key == "category" else "right")
    shown = records if len(records) <= max_rows else records[:max_rows]
    for r in shown:
        table.add_row(
            *(str(r[key]) if key == "category" else _number(r[key], ".4f") for key, _ in columns)
        )
    if len(records) > len(shown):
        table.caption = (f"{len(records) - len(shown)} more categories (use --json for all)\n"
                         + _caption(est))
    return table


def print_json(data: Any) -> None:
    """Machine-readable output on stdout (NaN/inf become null)."""

    def clean(v: Any) -> Any:
        if isinstance(v, float) and not math.isfinite(v):
            return None
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [clean(x) for x in v]
        if isinstance(v, np.generic):
            return clean(v.item())
        return v

    sys.stdout.write(json.dumps(clean(data), indent=2) + "\n")
    sys.stdout.flush()


def save_axes(ax: Any, path: Path, *, as_json: bool = False) -> Path:
    """Write the figure of ``ax`` to ``path`` (PNG, SVG or PDF by suffix) at 150 dpi, making its
    folder, and say where (``plot -> PATH``: on stdout, or on stderr beside ``--json`` output)."""
    check_figure_path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    ax.figure.savefig(path, dpi=150)
    (err if as_json else out).print(f"plot -> {path}", soft_wrap=True)
    return path


def check_figure_path(path: Path) -> None:
    """A figure is written as PNG, SVG or PDF, by its suffix."""
    if path.suffix.lower() not in (".png", ".svg", ".pdf"):
        raise CLIError(f"--plot/--out must end in .png, .svg or .pdf; got {str(path)!r}")


def show_estimate(
    est: Estimate,
    *,
    consistent: str | None,
    level: float,
    plot: Path | None,
    as_json: bool,
    title: str | None = None,
    xlabel: str | None = None,
) -> None:
    """Print an Estimate as a table or JSON, and plot it when asked (``xlabel``: the question)."""
    post = est.consistent(consistent) if consistent else None
    if plot is not None:
        check_figure_path(plot)
    if as_json:
        print_json({"mechanism": est.mechanism, "epsilon": est.epsilon, "n": est.n,
                    "target": est.target, "level": level, "title": title,
                    "manipulation_per_fake_report": _per_fake_report(est),
                    "categories": estimate_records(est, level, post)})
    else:
        out.print(estimate_table(est, level, post, title=title))
    if plot is not None:
        from deniable.plot import bar_estimate

        save_axes(bar_estimate(est, level=level, title=title, xlabel=xlabel), plot, as_json=as_json)


def _per_fake_report(est: Estimate) -> float | None:
    """The most one fake report could move a share (the largest over the categories); None where unstated."""
    try:
        return float(np.max(est.manipulation_bound(1))) if est.n else None
    except NotImplementedError:
        return None
QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)
"""The quantiles ``deniable estimate`` shows for a range mechanism's column."""


def show_quantiles(est: Any, *, level: float, as_json: bool) -> None:
    """Print a range mechanism's quantiles (:data:`QUANTILES`) with the intervals inverted from the CDF's
    band, as a table or JSON (which adds the bins' estimates)."""
    q = est.quantile(list(QUANTILES))
    low, high = q.confidence_interval(level)
    rows = [{"q": float(p), "value": float(v), "std_error": float(s), "ci_low": float(lo), "ci_high": float(hi)}
            for p, v, s, lo, hi in zip(QUANTILES, q.value, q.std_error, low, high, strict=True)]
    if as_json:
        print_json({"mechanism": est.mechanism, "epsilon": est.epsilon, "n": est.n, "level": level,
                    "range": [est.low, est.high], "quantiles": rows, "bins": est.to_dict(level)})
        return
    table = Table(title=f"{est.mechanism}, epsilon = {est.epsilon:.4g}, n = {est.n:,}: quantiles",
                  title_justify="left", caption=f"intervals: the CDF's {level:.0%} band inverted",
                  caption_justify="left")
    for header in ("quantile", "value", "std. error", f"{level:.0%} interval low", "interval high"):
        table.add_column(header, justify="right")
    for r in rows:
        table.add_row(f"{r['q']:g}", _number(r["value"], ".6g"), _number(r["std_error"], ".4g"),
                      _number(r["ci_low"], ".6g"), _number(r["ci_high"], ".6g"))
    out.print(table)


def show_items(est: Any, *, level: float, as_json: bool) -> None:
    """Print a set-valued mechanism's item shares (:class:`~deniable.ItemEstimate`: a respondent holds several,
    so they need not add up to 1) with standard errors and normal intervals, as a table or JSON."""
    from rich.markup import escape

    low, high = est.confidence_interval(level)
    rows = [{"item": item, "estimate": float(f), "std_error": float(s), "ci_low": float(lo), "ci_high": float(hi)}
            for item, f, s, lo, hi in zip(est.domain, est.frequencies, est.std_errors, low, high, strict=True)]
    if as_json:
        print_json({"mechanism": est.mechanism, "epsilon": est.epsilon, "n": est.n, "ell": est.ell, "level": level,
                    "target": "population", "items": rows})
        return
    table = Table(title=f"{est.mechanism}, epsilon = {est.epsilon:.4g}, n = {est.n:,}: share holding each item",
                  title_justify="left", caption=f"sets padded and sampled to ell = {est.ell}; shares need not add "
                  "up to 1", caption_justify="left")
    for header in ("item", "share", "std. error", f"{level:.0%} interval low", "interval high"):
        table.add_column(header, justify="right")
    for r in rows:
        table.add_row(escape(str(r["item"])), _number(r["estimate"], ".4f"), _number(r["std_error"], ".4f"),
                      _number(r["ci_low"], ".4f"), _number(r["ci_high"], ".4f"))
    out.print(table)


def show_keyvalue(est: Any, *, level: float, as_json: bool, question: dict[str, Any] | None = None) -> None:
    """Print a PCKV estimate (:class:`~deniable.KeyValueEstimate`): each key's share of respondents and the mean
    of its values with standard errors and normal intervals, as a table or JSON; the means on the survey
    ``question``'s ``[low, high]`` where the reports are a keyvalue question's, else on PCKV's ``[-1, 1]``."""
    from rich.markup import escape

    from deniable.mechanisms._key_value_estimate import columns_on_range

    low, high = (float(question["low"]), float(question["high"])) if question else (-1.0, 1.0)
    units = question.get("units") if question else None
    columns = columns_on_range(est, level, low, high)
    rows = [{"key": key, **{name: float(v[i]) for name, v in columns.items()}} for i, key in enumerate(est.keys)]
    if as_json:
        print_json({"mechanism": est.mechanism, "epsilon": est.epsilon, "n": est.n, "ell": est.ell, "level": level,
                    "target": "population", "low": low, "high": high, "units": units, "keys": rows})
        return
    where = f"[{low:g}, {high:g}]{f' {units}' if units else ''}"
    table = Table(title=f"{est.mechanism}, epsilon = {est.epsilon:.4g}, n = {est.n:,}: share holding each key and its "
                  "mean value", title_justify="left", caption=f"values in {where}; pairs padded and sampled to ell = "
                  f"{est.ell}; shares need not add up to 1; {level:.0%} intervals", caption_justify="left")
    for header in ("key", "share", "std. error", "interval", "mean", "std. error", "interval"):
        table.add_column(header, justify="right")
    for r in rows:
        table.add_row(escape(str(r["key"])), _number(r["estimate"], ".4f"), _number(r["std_error"], ".4f"),
                      f"{_number(r['ci_low'], '.4f')} .. {_number(r['ci_high'], '.4f')}",
                      _number(r["mean"], ".4g"), _number(r["mean_std_error"], ".3g"),
                      f"{_number(r['mean_ci_low'], '.4g')} .. {_number(r['mean_ci_high'], '.4g')}")
    out.print(table)


def show_mean(est: MeanEstimate, *, level: float, as_json: bool, title: str | None = None) -> None:
    """Print a numeric mechanism's mean estimate (mean, standard error, interval) as a table or JSON."""
    data = est.to_dict(level)
    record = {**{key: data[key] for key in ("mechanism", "epsilon", "delta", "n", "target")}, "level": level,
              "manipulation_per_fake_report": est.manipulation_bound(1) if est.report_spread is not None else None,
              "title": title, "mean": data["estimate"],
              **{key: data[key] for key in ("std_error", "ci_low", "ci_high")}, "range": [data["low"], data["high"]]}
    if as_json:
        print_json(record)
        return
    table = Table(
        title=title or f"{est.mechanism}, epsilon = {est.epsilon:.4g}, n = {est.n:,}",
        title_justify="left",
        caption=_caption(est),
        caption_justify="left",
    )
    for header in ("mean", "std. error", f"{level:.0%} interval low", "interval high", "range"):
        table.add_column(header, justify="right")
    table.add_row(_number(data["estimate"], ".6g"), _number(data["std_error"], ".4g"),
                  _number(data["ci_low"], ".6g"), _number(data["ci_high"], ".6g"), f"[{est.low:g}, {est.high:g}]")
    out.print(table)


def show_sliced(sliced: Any, *, level: float, as_json: bool) -> None:
    """Print a :class:`~deniable.SlicedEstimate` (``estimate --by``) as its long-form table or JSON: one row per
    slice and category (per slice for a mean) with the slice's ``n`` and whether it is ``small``."""
    data = sliced.to_dict(level)
    keys = [k for k in ("category", "estimate", "std_error", "ci_low", "ci_high", "n", "small") if k in data]
    rows = [{"slice": label, **{k: data[k][i] for k in keys}} for i, label in enumerate(data["slices"])]
    if as_json:
        print_json({**{k: data[k] for k in ("by", "mechanism", "epsilon", "target", "min_n")}, "level": level,
                    "rows": rows})
        return
    small = int(sliced.small.sum())
    caption = target_note(sliced.results[0].target) + (
        f"\n{small} slice(s) under {sliced.min_n} reports (small: a 95% interval wider than ±0.1 on a share, "
        "or than 10% of the range for a mean)" if small else "")
    first = sliced.results[0]
    table = Table(title=f"{first.mechanism}, epsilon = {first.epsilon:.4g}, by {sliced.by}: {len(sliced)} slices, "
                  f"n = {int(sliced.n.sum()):,}", title_justify="left", caption=caption, caption_justify="left")
    headers = {"std_error": "std. error", "ci_low": f"{level:.0%} interval low", "ci_high": "interval high"}
    for key in ["slice", *keys]:
        table.add_column(headers.get(key, key), justify="left" if key in ("slice", "category") else "right")
    for row in rows:
        table.add_row(*(str(row[k]) if k in ("slice", "category", "n") else ("yes" if row[k] else "")
                        if k == "small" else _number(row[k], ".4f") for k in ["slice", *keys]))
    out.print(table)
