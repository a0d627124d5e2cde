"""deniable side by side with the LDP libraries users would otherwise pick.

Two questions, answered in one run on one machine:

* **Is it fast?** For each workload (privatize 10^6 values drawn from a Zipf
  law over k categories, eps = 1, then estimate the frequencies from those
  reports) deniable and every installed peer run in the same process,
  alternating, ``--runs`` times; the table gives the median reports per
  second and the ratio deniable / peer. deniable uses its secure default
  (``rng=None``, the OS CSPRNG); the peers draw from numpy's or Python's
  Mersenne Twister (OpenDP from a CSPRNG). A peer whose run would take more
  than ``--max-seconds`` runs on fewer reports and its rate is extrapolated
  linearly (marked ``*``).
* **Is it right?** For n = 10^5 respondents, k in {16, 128}, eps in
  {0.5, 1, 2, 4}, each library's estimate is repeated (20 times unless the
  time budget says fewer) and its mean squared error, summed over the
  categories, is put next to its own theory: the sum over categories of
  formula (A) with the library's ``p*`` and ``q*``. For an unbiased estimator
  with those variances, ``SSE_r * nu / T`` is close to chi-square with ``nu``
  degrees of freedom (``T`` the theory, ``nu = T^2 / sum_v Var_v^2``, the
  Satterthwaite match of the first two moments), so the sum over the ``R``
  repetitions is chi-square with ``R nu``; a cell whose two-sided p-value is
  below ``--alpha`` (default 1e-4, so a correct table of ~125 cells raises a
  false flag with probability < 2%) is flagged as off its own theory.

* **Does it find the frequent strings?** Heavy-hitter discovery
  (``--discovery``): on the Zipf workload of :mod:`deniable.heavy._quality`
  (1,000 words of 3-6 letters, Zipf(1.1), a quarter of the devices typing a
  word of their own), deniable's ``HeavyHitters`` (PEM and SFP, secure
  randomness) and pure-LDP's PEM and Apple SFP over its count-mean sketch of
  the same shape run on the same values: recall of the true top 10 and top
  20, precision, median relative count error, device and server CPU time;
  ``--discovery-reps R`` repeats each row on R new workloads (the peers'
  generators seeded per repetition) and gives means with their standard
  errors.
  deniable's values are given twice: as ``identify`` reports them (those
  significantly above 0, at most 20) and as the peers do (the 20 best).
  The peers run value by value in Python, in batches (a pure-LDP CMS report
  is a 1,024-entry int64 array), on at most ``--discovery-peer-n`` devices.
  ``--discovery-oracle hcms`` (or ``cms``) forces deniable's sketch instead
  of letting ``HeavyHitters`` choose. The peers are told the alphabet (26
  letters); ``--alphabet`` adds deniable's PEM told it too
  (``HeavyHitters(alphabet=...)``, rows ``PEM (a-z)``), like for like.

    python benchmarks/compare.py                 # full run (tens of minutes)
    python benchmarks/compare.py --quick         # smoke run, seconds
    python benchmarks/compare.py --json out.json --plot benchmarks/compare.png
    python benchmarks/compare.py --discovery --skip-speed --skip-accuracy   # heavy hitters alone
    python benchmarks/compare.py --discovery --skip-speed --skip-accuracy --discovery-oracle hcms --discovery-peer-n 0
    python benchmarks/compare.py --discovery --alphabet --skip-speed --skip-accuracy

Peers are imported lazily; a missing one is skipped and named in the output.
Install them in a separate environment: ``pip install -r benchmarks/requirements.txt``.
"""

from __future__ import annotations

import argparse
import gc
import importlib.metadata
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent))

import peers  # noqa: E402  (the adapters beside this script)

import deniable as dn  # noqa: E402
from deniable._estimate import pure_variance  # noqa: E402
from deniable.simulate import population_counts  # noqa: E402

MECHANISMS: dict[str, Callable[..., Any]] = {
    "GRR": dn.GRR,
    "OUE": dn.OUE,
    "SUE": dn.SUE,
    "OLH": dn.OLH,
    "HR": dn.HadamardResponse,
}
NUMERIC = ("Laplace", "Duchi", "Piecewise")
MEMORY_BYTES = 2 * 1024**3  # a peer's reports may use at most this much memory


def zipf(k: int, s: float = 1.1) -> NDArray[np.float64]:
    """Zipf frequencies ``f_v ∝ (v + 1)^-s`` over ``0..k-1``."""
    w = np.arange(1, k + 1, dtype=float) ** -s
    return w / w.sum()


def population(k: int, n: int, rng: np.random.Generator) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """A shuffled population of ``n`` values with Zipf shares (exact counts) and its truth."""
    counts = population_counts(zipf(k), n, k)
    return rng.permutation(np.repeat(np.arange(k), counts)), counts / n


# ------------------------------------------------------------------ speed
@dataclass
class Entrant:
    """Something to time: a library's privatize and (optionally) estimate."""

    library: str
    privatize: Callable[[Any], Any]
    estimate: Callable[[Any], Any] | None
    capped: bool = True  # may run on fewer reports than the workload
    bytes_per_report: int = 100
    note: str = ""


@dataclass
class Timing:
    library: str
    n: int
    privatize_rate: float
    estimate_rate: float | None
    extrapolated: bool
    note: str = ""


@dataclass
class Workload:
    name: str
    values: Any
    entrants: list[Entrant]
    results: list[Timing] = field(default_factory=list)


def _seconds(fn: Callable[[Any], Any], arg: Any) -> tuple[float, Any]:
    """Wall seconds of ``fn(arg)`` (after a garbage collection) and its result."""
    gc.collect()
    start = time.perf_counter()
    out = fn(arg)
    return time.perf_counter() - start, out


def _warm_up(privatize: Callable[[Any], Any], estimate: Callable[[Any], Any] | None,
             values: Any) -> None:
    """One tiny call first, so that JIT compilation (numba peers) is not timed."""
    reports = privatize(values[:20])
    if estimate is not None:
        estimate(reports)


def _size(entrant: Entrant, values: Any, max_seconds: float, pilot: int) -> int:
    """Reports this entrant runs on: all of them unless that would exceed the budget."""
    total = len(values)
    _warm_up(entrant.privatize, entrant.estimate, values)
    if not entrant.capped:
        return total
    sample = values[: min(pilot, total)]
    t_priv, reports = _seconds(entrant.privatize, sample)
    t_est = _seconds(entrant.estimate, reports)[0] if entrant.estimate else 0.0
    per_report = (t_priv + t_est) / len(sample)
    n = min(total, int(max_seconds / per_report), MEMORY_BYTES // entrant.bytes_per_report)
    if n >= 0.9 * total:
        return total
    digits = 10 ** max(0, len(str(max(n, 1))) - 2)  # two significant digits
    return max(len(sample), n // digits * digits)


def run_workload(work: Workload, runs: int, max_seconds: float, pilot: int) -> None:
    """Time every entrant ``runs`` times, alternating the order each run; keep medians."""
    sizes = [_size(e, work.values, max_seconds, pilot) for e in work.entrants]
    priv: list[list[float]] = [[] for _ in work.entrants]
    est: list[list[float]] = [[] for _ in work.entrants]
    for r in range(runs):
        order = list(range(len(work.entrants)))
        order = order[r % len(order) :] + order[: r % len(order)]
        for i in order:
            entrant, values = work.entrants[i], work.values[: sizes[i]]
            t, reports = _seconds(entrant.privatize, values)
            priv[i].append(t)
            if entrant.estimate is not None:
                est[i].append(_seconds(entrant.estimate, reports)[0])
            del reports
    total = len(work.values)
    for i, entrant in enumerate(work.entrants):
        n = sizes[i]
        work.results.append(
            Timing(
                entrant.library,
                n,
                n / statistics.median(priv[i]),
                n / statistics.median(est[i]) if est[i] else None,
                n < total,
                entrant.note,
            )
        )


def deniable_entrant(mechanism: str, k: int, epsilon: float) -> Entrant:
    m = MECHANISMS[mechanism](k, epsilon=epsilon)
    return Entrant(
        "deniable", m.privatize_many, m.estimate, capped=False,
        note=f"{m!r}.privatize_many(values) (rng=None: OS CSPRNG); .estimate(reports)",
    )


def deniable_numeric(name: str, low: float, high: float, epsilon: float) -> Entrant | str:
    """deniable's numeric mechanism ``name`` if this checkout has it, else why not."""
    cls = getattr(dn, name, None)
    if cls is None:
        return f"dn.{name} does not exist in this version"
    try:
        m = cls(low, high, epsilon=epsilon)
        probe = m.estimate(m.privatize_many(np.linspace(low, high, 10)))
        _ = probe.mean
    except Exception as exc:  # a mechanism still being written may not fit yet
        return f"dn.{name} is not usable here ({type(exc).__name__}: {exc})"
    return Entrant(
        "deniable", m.privatize_many, lambda reports: m.estimate(reports).mean, capped=False,
        note=f"dn.{name}({low}, {high}, epsilon={epsilon}).privatize_many; .estimate().mean",
    )


def speed_workloads(n: int, epsilon: float, ks: tuple[int, ...], skipped: list[str]) -> list[Workload]:
    rng = np.random.default_rng(2026)
    out: list[Workload] = []
    for k in ks:
        values, _ = population(k, n, rng)
        for mech in MECHANISMS:
            entrants = [deniable_entrant(mech, k, epsilon)]
            for peer in peers.peers_for(mech, k, epsilon):
                entrants.append(
                    Entrant(peer.library, peer.privatize,
                            peer.estimate if peer.own_estimator else None,
                            bytes_per_report=peer.bytes_per_report, note=peer.note)
                )
            out.append(Workload(f"{mech} k={k}", values, entrants))
        # one report per call: the single-report API of each library, privatize only
        grr = dn.GRR(k, epsilon=epsilon)
        single = [
            Entrant("deniable", lambda v, m=grr: [m.privatize(x) for x in v.tolist()], None,
                    note="GRR.privatize(value) once per value (secrets.randbelow)")
        ]
        for peer in peers.peers_for("GRR", k, epsilon):
            single.append(Entrant(peer.library, peer.privatize, None, note=peer.note))
        out.append(Workload(f"GRR k={k}, one call per report", values, single))
    # numeric mean estimation
    values01 = rng.beta(2.0, 5.0, n)
    numeric = {name: deniable_numeric(name, 0.0, 1.0, epsilon) for name in NUMERIC}
    for name, entrant in numeric.items():
        if isinstance(entrant, str):
            skipped.append(entrant)
            continue
        entrants = [entrant]
        if name == "Laplace" and "opendp" not in peers.missing_libraries():
            p = peers.opendp_laplace(0.0, 1.0, epsilon)
            entrants.append(Entrant(p.library, p.privatize, None, note=p.note))
        out.append(Workload(f"mean, {name}, values in [0, 1]", values01, entrants))
    return out


# --------------------------------------------------------------- accuracy
@dataclass
class Cell:
    """One (row, k, eps) cell of the accuracy table; MSE and theory at n = ``n_report``."""

    row: str
    k: int
    epsilon: float
    n: int
    reps: int
    mse: float
    theory: float | None
    p_value: float | None
    flagged: bool
    note: str = ""


def chi2_p(sse: list[float], variances: NDArray[np.float64]) -> float:
    """Two-sided p-value of ``sum_r SSE_r`` against its chi-square approximation.

    ``T = sum(variances)`` is the expected SSE and ``nu = T^2 / sum(variances^2)``
    the Satterthwaite degrees of freedom of one repetition.
    """
    total = float(np.sum(variances))
    nu = total**2 / float(np.sum(np.square(variances)))
    statistic = float(np.sum(sse)) * nu / total
    dof = nu * len(sse)
    return float(min(1.0, 2 * min(stats.chi2.cdf(statistic, dof), stats.chi2.sf(statistic, dof))))


def _plan(per_report: float, n: int, reps: int, budget: float, min_n: int) -> tuple[int, int]:
    """(n, reps) fitting ``budget`` seconds: fewer reps first (>= 3), then fewer reports."""
    if reps * n * per_report <= budget:
        return n, reps
    fewer = int(budget / (n * per_report))
    if fewer >= 3:
        return n, fewer
    fit = int(budget / (3 * per_report))
    return max(min_n, fit // 1000 * 1000 if fit >= 10_000 else fit // 100 * 100), 3


def accuracy(
    ks: tuple[int, ...], epsilons: tuple[float, ...], n: int, reps: int, budget: float,
    alpha: float, min_n: int,
) -> list[Cell]:
    rng = np.random.default_rng(7)
    cells: list[Cell] = []
    for k in ks:
        for eps in epsilons:
            values, truth = population(k, n, rng)
            for mech, cls in MECHANISMS.items():
                m = cls(k, epsilon=eps)
                var = m.variance(n, truth)
                raw, sub = [], []
                for _ in range(reps):
                    est = m.estimate(m.privatize_many(values))
                    raw.append(float(np.sum((est.frequencies - truth) ** 2)))
                    sub.append(float(np.sum((est.consistent("norm-sub").frequencies - truth) ** 2)))
                p = chi2_p(raw, var)
                cells.append(Cell(f"deniable {mech}", k, eps, n, reps, float(np.mean(raw)),
                                  float(var.sum()), p, p < alpha))
                cells.append(Cell(f"deniable {mech} + Norm-Sub", k, eps, n, reps,
                                  float(np.mean(sub)), None, None, False))
                for peer in peers.peers_for(mech, k, eps):
                    cells.extend(_peer_cells(peer, k, eps, n, reps, budget, alpha, min_n))
            print(f"  accuracy k={k} eps={eps:g} done", file=sys.stderr, flush=True)
    return cells


def _peer_cells(
    peer: peers.Peer, k: int, eps: float, n: int, reps: int, budget: float, alpha: float,
    min_n: int,
) -> list[Cell]:
    rng = np.random.default_rng(11)
    pilot_values, _ = population(k, min(min_n, n), rng)
    _warm_up(peer.privatize, peer.estimate, pilot_values)
    start = time.perf_counter()
    reports = peer.privatize(pilot_values)
    peer.estimate(reports)
    if peer.linear is not None:
        peer.linear(reports)
    per_report = (time.perf_counter() - start) / len(pilot_values)
    n_used, reps_used = _plan(per_report, n, reps, budget, min_n)
    values, truth = population(k, n_used, rng)
    shipped, linear = [], []
    for _ in range(reps_used):
        reports = peer.privatize(values)
        shipped.append(float(np.sum((peer.estimate(reports) - truth) ** 2)))
        if peer.linear is not None:
            linear.append(float(np.sum((peer.linear(reports) - truth) ** 2)))
    scale = n_used / n  # MSE of these estimators is proportional to 1/n
    theory = peer.theory_mse(n_used, truth)
    var = (
        None if peer.theory_p is None
        else pure_variance(n_used, peer.theory_p, peer.theory_q, truth, "respondents")  # fixed counts
    )
    label = f"{peer.library} {peer.mechanism}"
    smaller = f"n={n_used}, scaled by n/{n}" if n_used < n else ""
    out = []
    if peer.unbiased:
        p = chi2_p(shipped, var) if var is not None else None
        out.append(Cell(label, k, eps, n_used, reps_used, float(np.mean(shipped)) * scale,
                        None if theory is None else theory * scale, p,
                        p is not None and p < alpha, smaller))
    else:
        out.append(Cell(f"{label} (as shipped: Norm-Mul)", k, eps, n_used, reps_used,
                        float(np.mean(shipped)) * scale, None, None, False, smaller))
        if linear and var is not None and theory is not None:
            p = chi2_p(linear, var)
            out.append(Cell(f"{label} (its reports, linear estimate)", k, eps, n_used, reps_used,
                            float(np.mean(linear)) * scale, theory * scale, p, p < alpha, smaller))
    return out


# ----------------------------------------------------------------- report
def _commit() -> str:
    """The git commit of this checkout (``unknown`` outside one): what deniable's figures are of."""
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=Path(__file__).parent, capture_output=True,
                             text=True, timeout=10, check=True)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.stdout.strip()


def machine() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions = {"deniable": f"{dn.__version__} (commit {_commit()})"}
    for dist in ("numpy", "scipy", *peers.LIBRARIES):
        try:
            versions[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            versions[dist] = "not installed"
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None,
        "versions": versions,
    }


def _rate(x: float | None) -> str:
    if x is None:
        return "-"
    for unit, div in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if x >= div:
            return f"{x / div:.3g}{unit}"
    return f"{x:.3g}"


def _ratio(a: float | None, b: float | None) -> str:
    return "-" if a is None or b is None else f"{a / b:,.3g}x"


def speed_table(works: list[Workload]) -> str:
    lines = [
        "| workload | library | reports | privatize (reports/s) | deniable / it | "
        "estimate (reports/s) | deniable / it |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for w in works:
        base = w.results[0]
        for t in w.results:
            star = "*" if t.extrapolated else ""
            same = t is base
            lines.append(
                f"| {w.name} | {t.library} | {t.n:,}{star} | {_rate(t.privatize_rate)} | "
                f"{'' if same else _ratio(base.privatize_rate, t.privatize_rate)} | "
                f"{_rate(t.estimate_rate)} | "
                f"{'' if same else _ratio(base.estimate_rate, t.estimate_rate)} |"
            )
    return "\n".join(lines)


def accuracy_tables(cells: list[Cell], epsilons: tuple[float, ...]) -> str:
    out = []
    for k in sorted({c.k for c in cells}):
        rows: dict[str, dict[float, Cell]] = {}
        for c in cells:
            if c.k == k:
                rows.setdefault(c.row, {})[c.epsilon] = c
        head = "| estimate | " + " | ".join(f"eps={e:g}: MSE / theory" for e in epsilons) + " |"
        lines = [f"**k = {k}**", "", head, "|---|" + "---:|" * len(epsilons)]
        for row, by_eps in rows.items():
            parts = []
            for e in epsilons:
                c = by_eps.get(e)
                if c is None:
                    parts.append("")
                    continue
                text = f"{c.mse:.3g}" + (f" / {c.theory:.3g}" if c.theory is not None else "")
                if c.flagged:
                    text += " **FLAG**"
                if c.n < 100_000 or c.reps < 20:
                    text += f" <sub>(n={c.n:,}, {c.reps} reps)</sub>"
                parts.append(text)
            lines.append(f"| {row} | " + " | ".join(parts) + " |")
        out.append("\n".join(lines))
    flags = [c for c in cells if c.flagged]
    if flags:
        out.append("Flagged (MSE off the library's own theory, two-sided chi-square p < alpha):\n\n"
                   + "\n".join(f"* {c.row}, k={c.k}, eps={c.epsilon:g}: MSE/theory = "
                               f"{c.mse / c.theory:.3f}, p = {c.p_value:.2g}" for c in flags
                               if c.theory))
    else:
        out.append("No cell is off its own theory at the chosen alpha.")
    return "\n\n".join(out)


def plot(works: list[Workload], path: Path) -> None:
    """Dot plot: one row per workload, one marker per peer, deniable / peer on a log axis."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = [w for w in works if len(w.results) > 1]
    libs = sorted({t.library for w in shown for t in w.results[1:]})
    colours = dict(zip(libs, plt.rcParams["axes.prop_cycle"].by_key()["color"], strict=False))
    markers = dict(zip(libs, "osD^v", strict=False))
    fig, axes = plt.subplots(1, 2, figsize=(12, 0.38 * len(shown) + 1.8), sharey=True)
    for ax, phase in zip(axes, ("privatize", "estimate"), strict=True):
        for y, w in enumerate(shown):
            base = w.results[0]
            for t in w.results[1:]:
                a = base.privatize_rate if phase == "privatize" else base.estimate_rate
                b = t.privatize_rate if phase == "privatize" else t.estimate_rate
                if a and b:
                    ax.scatter(a / b, y, color=colours[t.library], marker=markers[t.library],
                               s=36, facecolors="none" if t.extrapolated else colours[t.library])
        ax.set_xscale("log")
        ax.axvline(1, color="black", lw=0.8)
        ax.axvline(10, color="grey", lw=0.8, ls="--")
        ax.grid(axis="x", which="major", alpha=0.3)
        ax.set_title(f"{phase}: deniable / peer (reports per second)")
        ax.set_xlabel("ratio (log scale; dashed line: 10x; hollow: extrapolated)")
    axes[0].set_yticks(range(len(shown)), [w.name for w in shown], fontsize=8)
    axes[0].invert_yaxis()
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color=colours[lib], marker=markers[lib], ls="") for lib in libs]
    fig.legend(handles, libs, loc="lower center", ncol=max(1, len(libs)), fontsize=8)
    fig.suptitle("deniable (secure randomness) vs peer LDP libraries: same process, "
                 "alternating runs, medians")
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    fig.savefig(path, dpi=120)
    plt.close(fig)


# ------------------------------------------------------------------ discovery
LETTERS = "abcdefghijklmnopqrstuvwxyz"
PEER_BATCH = 20_000  # values per peer batch: its reports are 8 KiB each


@dataclass
class Found:
    """A discovery's reported values and counts (what :func:`deniable.heavy._quality.score` reads)."""

    values: list[Any]
    counts: NDArray[np.float64]


def _scores(values: list[str], found: Found) -> dict[str, float]:
    from deniable.heavy._quality import score

    out: dict[str, float] = {}
    for top in (10, 20):
        cut = Found(found.values[:top], found.counts[:top])
        s = score(values, cut, top)
        out[f"recall{top}"], out[f"precision{top}"] = s["recall"], s["precision"]
        out[f"error{top}"] = s["relative_error"]
    return out


SCORES = ("recall10", "recall20", "precision20", "error20")


def discovery(ns: list[int], epsilons: list[float], peer_n: int, rng: np.random.Generator,
              max_length: int = 6, top_k: int = 32, oracle: str | None = None,
              alphabet: bool = False, reps: int = 1) -> list[dict[str, Any]]:
    """``reps`` runs per (n, epsilon, entrant): deniable's PEM and SFP, then the installed peers' (n <= peer_n).

    Each repetition draws a new workload (the same values for every entrant of that repetition).
    deniable draws from the OS CSPRNG; the peers from Python's ``random`` and numpy's global
    generator, both seeded with the repetition's number before each peer's run (as their code
    uses them). One row per run; :func:`discovery_summary` gives the means and their standard errors.

    ``oracle``: deniable's sketch (``"cms"``, ``"hcms"``, or None for ``HeavyHitters``' own choice);
    a forced one is named in the method column. ``peer_n`` 0 runs deniable alone. ``alphabet``: also
    deniable's PEM given the 26 letters, as the peers are (rows ``PEM (a-z)``).
    """
    from deniable.heavy._quality import zipf_strings

    rows = []
    for n in ns:
        for rep in range(reps):
            values = zipf_strings(n, rng, max_length=max_length)
            if rep == 0:  # untimed: load the compiled loops (numba, when installed), as a running service has them
                for method in ("pem", "sfp"):
                    hh = dn.HeavyHitters(epsilon=4.0, method=method, max_length=max_length, top_k=top_k, oracle=oracle)
                    hh.identify(hh.aggregate(hh.privatize_many(values[:2000])))
            for eps in epsilons:
                rows += _deniable_runs(values, n, eps, rep, max_length, top_k, oracle, alphabet)
                if n <= peer_n:
                    rows += _peer_runs(values, n, eps, rep, max_length, top_k)
    return rows


def _deniable_runs(values: list[str], n: int, eps: float, rep: int, max_length: int, top_k: int,
                   oracle: str | None, alphabet: bool) -> list[dict[str, Any]]:
    rows = []
    for method, letters in [("pem", None), ("sfp", None), *([("pem", LETTERS)] if alphabet else [])]:
        print(f"  discovery deniable {method} n={n:,} eps={eps:g} alphabet={letters} rep={rep} ...",
              file=sys.stderr, flush=True)
        hh = dn.HeavyHitters(epsilon=eps, method=method, max_length=max_length, top_k=top_k,
                             oracle=oracle, alphabet=letters)
        name = method.upper() + (" (a-z)" if letters else "") + (f" over {oracle.upper()}" if oracle else "")
        begin = time.process_time()
        reports = hh.privatize_many(values)  # the OS CSPRNG
        middle = time.process_time()
        stat = hh.aggregate(reports)
        aggregated = time.process_time()
        del reports
        # as identify reports by default (significantly above 0), and as the peers do (the top 20)
        for label, threshold in ((name, None), (f"{name}, top 20 unfiltered", 0.0)):
            start = time.process_time()
            found = hh.identify(stat, top=20, threshold=threshold)
            end = time.process_time()
            rows.append({"library": "deniable", "method": label, "n": n, "epsilon": eps, "rep": rep,
                         **_scores(values, Found(list(found.values), found.counts)),
                         "device_s": middle - begin, "server_s": aggregated - middle + end - start})
    return rows


def _peer_runs(values: list[str], n: int, eps: float, rep: int, max_length: int, top_k: int) -> list[dict[str, Any]]:
    rows = []
    for peer in peers.heavy_peers(eps, max_length, LETTERS, top_k):
        print(f"  discovery {peer.library} {peer.method} n={n:,} eps={eps:g} rep={rep} ...", file=sys.stderr,
              flush=True)
        random.seed(rep)  # the peers' own generators, seeded per repetition
        np.random.seed(rep)  # noqa: NPY002
        device = server = 0.0
        for lo in range(0, n, PEER_BATCH):
            start = time.process_time()
            batch = peer.privatize(values[lo:lo + PEER_BATCH])
            middle = time.process_time()
            peer.aggregate(batch)
            device, server = device + middle - start, server + time.process_time() - middle
        start = time.process_time()
        found_values, counts = peer.find(20)
        server += time.process_time() - start
        rows.append({"library": peer.library, "method": peer.method, "n": n, "epsilon": eps, "rep": rep,
                     **_scores(values, Found(found_values, np.asarray(counts, dtype=float))),
                     "device_s": device, "server_s": server})
    return rows


def discovery_summary(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (n, epsilon, library, method), in the runs' order: ``runs``, the mean of each score
    and CPU time, and each score's standard error of the mean (``<score>_se``, NaN for one run)."""
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["n"], r["epsilon"], r["library"], r["method"]), []).append(r)
    out = []
    for (n, eps, library, method), runs in groups.items():
        summary: dict[str, Any] = {"n": n, "epsilon": eps, "library": library, "method": method, "runs": len(runs)}
        for key in (*SCORES, "device_s", "server_s"):
            x = np.array([r[key] for r in runs], dtype=float)
            x = x[~np.isnan(x)]
            summary[key] = float(x.mean()) if x.size else float("nan")
            if key in SCORES:
                summary[f"{key}_se"] = float(x.std(ddof=1) / np.sqrt(x.size)) if x.size > 1 else float("nan")
        out.append(summary)
    return sorted(out, key=lambda s: (s["n"], s["epsilon"]))


def discovery_table(summary: list[dict[str, Any]]) -> str:
    """Markdown: mean scores (``± SE`` when there are several runs) and mean CPU seconds."""
    def cell(r: dict[str, Any], key: str, digits: int) -> str:
        se = r[f"{key}_se"]
        return f"{r[key]:.{digits}f}" + ("" if np.isnan(se) else f" ± {se:.{digits}f}")

    lines = ["| n | eps | library | method | runs | recall top 10 | recall top 20 | precision (top 20 reported) "
             "| median rel. count error (top 20) | device CPU s | server CPU s |",
             "|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in summary:
        lines.append(f"| {r['n']:,} | {r['epsilon']:g} | {r['library']} | {r['method']} | {r['runs']} | "
                     f"{cell(r, 'recall10', 2)} | {cell(r, 'recall20', 2)} | {cell(r, 'precision20', 2)} | "
                     f"{cell(r, 'error20', 3)} | {r['device_s']:.2f} | {r['server_s']:.2f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: tiny sizes, one run")
    parser.add_argument("--n", type=int, default=1_000_000, help="reports per speed workload")
    parser.add_argument("--runs", type=int, default=3, help="timed runs per entrant (median)")
    parser.add_argument("--max-seconds", type=float, default=180.0,
                        help="a peer run longer than this is measured on fewer reports")
    parser.add_argument("--accuracy-n", type=int, default=100_000)
    parser.add_argument("--reps", type=int, default=20, help="repetitions per accuracy cell")
    parser.add_argument("--accuracy-budget", type=float, default=60.0,
                        help="seconds per peer accuracy cell (fewer reps, then fewer reports)")
    parser.add_argument("--alpha", type=float, default=1e-4, help="flag level of the MSE test")
    parser.add_argument("--skip-accuracy", action="store_true")
    parser.add_argument("--skip-speed", action="store_true")
    parser.add_argument("--discovery", action="store_true", help="also run the heavy-hitter comparison")
    parser.add_argument("--alphabet", action="store_true",
                        help="discovery: also run deniable's PEM given the 26 letters (as the peers are)")
    parser.add_argument("--discovery-n", default="200000,1000000", help="comma-separated devices per run")
    parser.add_argument("--discovery-epsilons", default="2,4,8")
    parser.add_argument("--discovery-peer-n", type=int, default=200_000,
                        help="the peers run only where n is at most this (value by value in Python)")
    parser.add_argument("--discovery-reps", type=int, default=1,
                        help="discovery: runs per (n, epsilon, entrant), each on a new workload; the table "
                             "gives means with their standard errors")
    parser.add_argument("--discovery-oracle", choices=("auto", "cms", "hcms"), default="auto",
                        help="deniable's sketch for discovery (auto: HeavyHitters' own choice)")
    parser.add_argument("--json", type=Path, help="write all results here")
    parser.add_argument("--plot", type=Path, help="write the throughput-ratio plot here (PNG)")
    args = parser.parse_args(argv)
    if args.quick:
        args.n, args.runs, args.max_seconds = 5_000, 1, 0.2
        args.accuracy_n, args.reps, args.accuracy_budget = 2_000, 3, 0.3
        args.discovery_n, args.discovery_epsilons, args.discovery_peer_n = "5000", "4", 5_000
    ks_speed, eps_speed = (16, 1024), 1.0
    ks_acc, eps_acc = ((16,), (1.0,)) if args.quick else ((16, 128), (0.5, 1.0, 2.0, 4.0))
    np.random.seed(1)  # noqa: NPY002 - the peers draw from numpy's legacy global generator
    random.seed(1)

    info = machine()
    missing = peers.missing_libraries()
    skipped = [f"{name} (not installed: {why})" for name, why in missing.items()]
    print(f"# deniable vs peers ({'quick smoke run' if args.quick else 'full run'})\n")
    print(f"machine: {info['cpu']}, {info['cores']} cores, Python {info['python']}, "
          f"{info['platform']}; load average at start {info['load_average']}")
    print("versions: " + ", ".join(f"{k} {v}" for k, v in info["versions"].items()))
    print("skipped peers: " + ("; ".join(skipped) if skipped else "none"))
    print("command: python benchmarks/compare.py " + " ".join(sys.argv[1:] if argv is None else argv))
    print()

    works: list[Workload] = []
    if not args.skip_speed:
        works = speed_workloads(args.n, eps_speed, ks_speed, skipped)
        for w in works:
            print(f"  timing {w.name} ...", file=sys.stderr, flush=True)
            run_workload(w, args.runs, args.max_seconds, 100 if args.quick else 1000)
        print(f"## Throughput: n = {args.n:,} values, eps = {eps_speed:g}, median of "
              f"{args.runs} alternating run(s)\n")
        print(speed_table(works))
        print(f"\n`*` measured on fewer reports (a full run would exceed {args.max_seconds:g} s "
              "or 2 GiB of reports) and extrapolated linearly.\n")
        if any(s.startswith("dn.") for s in skipped):
            print("numeric: " + "; ".join(s for s in skipped if s.startswith("dn.")) + "\n")
        if args.plot:
            plot(works, args.plot)
            print(f"plot: {args.plot}\n")
    cells: list[Cell] = []
    if not args.skip_accuracy:
        cells = accuracy(ks_acc, eps_acc, args.accuracy_n, args.reps, args.accuracy_budget,
                         args.alpha, 100 if args.quick else 1_000)
        print(f"## Accuracy: n = {args.accuracy_n:,}, Zipf(1.1) population, {args.reps} "
              "repetitions; MSE = mean over repetitions of sum_v (f_v - truth_v)^2; theory = "
              "sum_v of formula (A) with the library's own p*, q*\n")
        print(accuracy_tables(cells, eps_acc))
        print()
    found: list[dict[str, Any]] = []
    if args.discovery:
        ns = [int(x) for x in args.discovery_n.split(",")]
        eps = [float(x) for x in args.discovery_epsilons.split(",")]
        oracle = None if args.discovery_oracle == "auto" else args.discovery_oracle
        found = discovery(ns, eps, args.discovery_peer_n, np.random.default_rng(2026), oracle=oracle,
                          alphabet=args.alphabet, reps=args.discovery_reps)
        print(f"## Heavy hitters: Zipf(1.1) over 1,000 words of 3-6 letters, 25% of devices typing a word of "
              f"their own; max_length 6, top_k 32; the peers at n <= {args.discovery_peer_n:,}"
              + ("" if peers.heavy_peers(1.0, 6, LETTERS, 32) else " (pure-ldp not installed: deniable alone)")
              + f"; {args.discovery_reps} run(s) per row, each on a new workload (mean ± standard error of "
              "the mean when more than one)\n")
        print(discovery_table(discovery_summary(found)))
        print()
    end_load = os.getloadavg() if hasattr(os, "getloadavg") else None
    print(f"load average at end: {end_load}")
    if args.json:
        args.json.write_text(json.dumps({
            "machine": info,
            "load_average_end": end_load,
            "skipped": skipped,
            "args": {k: str(v) for k, v in vars(args).items()},
            "speed": [{"workload": w.name, "results": [asdict(t) for t in w.results]}
                      for w in works],
            "accuracy": [asdict(c) for c in cells],
            "discovery": found,
            "discovery_summary": discovery_summary(found),
        }, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
