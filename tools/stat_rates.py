"""The false-failure rate of every statistical test, from the checks it makes.

    python tools/stat_rates.py                # run `pytest -m "stat or audit"`, print the table
    python tools/stat_rates.py tests/unit     # the tests pytest selects from these arguments
    python tools/stat_rates.py --write        # also put the table into docs/guide/testing.md
                                              # (with arguments: update those tests' rows only)
    python tools/stat_rates.py --check        # exit 1 when a test's rate exceeds 1e-6
    python tools/stat_rates.py --ids          # one row per test id (not per test function)

The tests run in this process with :func:`deniable.testing.recording` open
around each test's call, so every check of :mod:`deniable.testing` it makes
is collected. In a passing test, a check that passed was an assertion that a
correct sampler passes (it fails one with probability at most its
``alpha``), and a check that failed was a power check (a wrong sampler was
rejected); a :func:`deniable.testing.family` counts as one check. So every
check a test makes must be one of its assertions (checks used as data go in
``testing.recording(hide=True)``). A test's rate is the union bound

    sum of alpha over its passed checks + sum of the power checks' miss probabilities,

the probability that a correct implementation fails the test in one run, as
if its seed were drawn at random. A power check's miss probability is
estimated by plugging the observed effect, less one of its standard errors,
into the check's distribution (noncentral chi-square, normal or binomial;
see :func:`power_miss`): an estimate, not a bound, which separates power
checks with a wide margin from marginal ones. :func:`deniable.audit` calls
are recorded too (a failed audit gets no estimate). Tests that compute their
bands by hand record nothing; they are listed apart, with their rates in
their docstrings. Tests marked ``deterministic`` (checks on fixed numbers)
are left out. The table's last column is the smallest expected count of a
group in the test's chi-square checks (see docs/guide/testing.md).
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "guide" / "testing.md"
BEGIN, END = "<!-- stat-rates:begin -->", "<!-- stat-rates:end -->"
LIMIT = 1e-6
MARKERS = "stat or audit"
SHRINK = 1.0
"""Standard errors by which a power check's observed effect is moved towards none before its miss is
estimated (0: the plug-in estimate; 1 or 2 for a pessimistic screen)."""


def power_miss(result: Any, shrink: float = SHRINK) -> float:
    """Estimate of the probability that a failed (power) check would have passed.

    The effect observed in ``result``, moved ``shrink`` of its standard
    errors towards no effect (so a lucky draw does not hide a marginal
    check), is taken as the truth: chi-square and independence tests use the
    noncentral chi-square with ``lambda = X^2 - df - shrink sqrt(2 (df + 2 lambda))``;
    z and t checks a unit normal at the largest score less ``shrink``;
    binomial and coverage checks the binomial at the observed rate moved
    ``shrink`` binomial standard errors towards the band; KS checks a normal
    of standard deviation ``1 / (2 sqrt(n))`` (the largest of the empirical
    cdf's) at ``D`` less ``shrink`` of it; variance ratios a normal of
    standard deviation ``ratio sqrt(2 / (R - 1) + kurtosis / R)``. An audit
    (:func:`deniable.audit`) gets no estimate (nan).
    """
    d, stat, crit = result.details, float(result.statistic), float(result.critical_value)
    if result.name == "audit":
        return math.nan  # a lower confidence bound on epsilon: no estimate here
    if math.isinf(stat):
        return 0.0
    if result.name in ("chi-square", "independence"):
        df = d["df"]
        lam = max(stat - df, 0.0)
        lam = max(lam - shrink * math.sqrt(2 * (df + 2 * lam)), 1e-12)
        return float(stats.ncx2.cdf(crit, df, lam))
    if result.name in ("mean", "estimate"):
        shift = stat - shrink
        return float(stats.norm.cdf(crit - shift) - stats.norm.cdf(-crit - shift))
    if result.name in ("binomial", "coverage"):
        n, low, high = d["trials"], d["low"], d["high"]
        rate = d["successes"] / n
        step = shrink * math.sqrt(rate * (1 - rate) / n)
        rate = max(rate - step, high / n) if rate * n > high else min(rate + step, low / n)
        return float(stats.binom.cdf(high, n, rate) - stats.binom.cdf(low - 1, n, rate))
    if result.name in ("ks", "ks-discrete"):
        sd = 1 / (2 * math.sqrt(d["n"]))
        return float(stats.norm.cdf((crit - stat) / sd + shrink))
    if result.name == "variance-ratio":
        ratios = np.asarray(d["ratios"])
        worst = int(np.argmax(np.abs(np.log(ratios))))
        centre, r = float(ratios[worst]), d["replicates"]
        sd = centre * math.sqrt(2 / (r - 1) + max(float(d["kurtosis"][worst]), 0.0) / r)
        centre = max(centre - shrink * sd, 1.0) if centre > 1 else min(centre + shrink * sd, 1.0)
        return float(stats.norm.cdf(d["high"][worst], centre, sd) - stats.norm.cdf(d["low"][worst], centre, sd))
    raise ValueError(f"no power estimate for a {result.name!r} check")


@dataclass
class Row:
    """The checks one test made in one run."""

    test: str
    outcome: str = "not run"
    alphas: list[float] = field(default_factory=list)
    misses: list[float] = field(default_factory=list)
    smallest_expected: float = math.inf

    @property
    def null_rate(self) -> float:
        return math.fsum(self.alphas)

    @property
    def power_rate(self) -> float:
        return math.fsum(m for m in self.misses if not math.isnan(m))

    @property
    def unestimated(self) -> int:
        return sum(math.isnan(m) for m in self.misses)

    @property
    def rate(self) -> float:
        return self.null_rate + self.power_rate


def row_of(test: str, outcome: str, made: list[Any]) -> Row:
    """Sort a passing test's checks into assertions (passed) and power checks (failed).

    The members of a :func:`deniable.testing.family` count through their family:
    its alpha when it passed, and when it failed (a power check that some member
    fails) the smallest miss of its failed members.
    """
    grouped = {id(m) for r in made if r.name == "family" for m in r.details["members"]}
    row = Row(test, outcome)
    for result in made:
        if id(result) in grouped:
            continue
        if result.passed:
            row.alphas.append(float(result.alpha))
        elif result.name == "family":
            row.misses.append(min(power_miss(m) for m in result.details["members"] if not m.passed))
        else:
            row.misses.append(power_miss(result))
        for member in result.details["members"] if result.name == "family" else [result]:
            row.smallest_expected = min(row.smallest_expected, member.details.get("min_expected", math.inf))
    return row


class Collector:
    """A pytest plugin: the checks each test's call makes (audits included), and its outcome."""

    def __init__(self) -> None:
        self.made: dict[str, list[Any]] = {}
        self.outcomes: dict[str, str] = {}
        self.current: list[Any] | None = None

    def watch_audits(self) -> None:
        """Record each :func:`deniable.audit` (``dn.audit`` looks the function up when called)."""
        import deniable.audit
        from deniable.testing import CheckResult

        audit = deniable.audit.audit

        def recorded(*args: Any, **kwargs: Any) -> Any:
            result = audit(*args, **kwargs)
            if self.current is not None:
                self.current.append(CheckResult("audit", result.epsilon_lower, result.epsilon_claimed,
                                                result.alpha, result.passed, str(result)))
            return result

        deniable.audit.audit = recorded  # type: ignore[assignment]

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, None, None]:
        from deniable import testing

        if item.get_closest_marker("deterministic"):
            return (yield)
        with testing.recording() as made:
            self.current = made
            try:
                return (yield)
            finally:
                self.current = None
                self.made[item.nodeid] = list(made)

    def pytest_runtest_logreport(self, report: Any) -> None:
        if report.when == "call" or report.outcome != "passed":
            self.outcomes.setdefault(report.nodeid, report.outcome)

    def rows(self) -> list[Row]:
        return [row_of(test, self.outcomes.get(test, "not run"), made) for test, made in self.made.items()]


def function_of(test: str) -> str:
    """``path::name[case]`` -> ``path::name``."""
    return test.split("[", 1)[0]


def grouped(rows: list[Row]) -> list[tuple[str, int, Row]]:
    """Per test function: the number of cases and its worst case (largest rate)."""
    groups: dict[str, list[Row]] = {}
    for row in rows:
        groups.setdefault(function_of(row.test), []).append(row)
    return [(name, len(group), max(group, key=lambda r: (r.outcome != "passed", r.rate)))
            for name, group in groups.items()]


def _rate(x: float) -> str:
    return "0" if x == 0 else f"{x:.2g}"


HEADER = "| test | rate | alpha | power miss | checks (power) | cases | min. expected |\n" + "|---" + "|---:" * 6 + "|"
LEGEND = ("rate: the false-failure rate per run, alpha + power miss; alpha: the sum of the alphas of the checks "
          "that passed; power miss: the estimated misses of the power checks (audits: not estimated); cases: "
          "of a parametrized test; min. expected: the smallest expected count of a group in its chi-square checks.")


def table(rows: list[Row], *, per_id: bool = False) -> str:
    """The Markdown tables, one per test file: a row per test function (its worst case) or per test id."""
    entries = [(r.test, 1, r) for r in rows] if per_id else grouped(rows)
    lines = {}
    for name, cases, row in entries:
        if not row.alphas and not row.misses:
            continue
        rate = _rate(row.rate) if row.outcome == "passed" else row.outcome.upper()
        power = _rate(row.power_rate) + (f" + {row.unestimated} audit" if row.unestimated else "")
        smallest = "" if math.isinf(row.smallest_expected) else f"{row.smallest_expected:.3g}"
        where, _, test = name.removeprefix("tests/").partition("::")
        lines[where, test] = (f"| {test} | {rate} | {_rate(row.null_rate)} | {power} "
                              f"| {len(row.alphas) + len(row.misses)} ({len(row.misses)}) | {cases} | {smallest} |")
    return _render(lines)


def _render(lines: dict[tuple[str, str], str]) -> str:
    out: list[str] = [LEGEND]
    for where in sorted({w for w, _ in lines}):
        out += ["", f"#### `{where}`", "", HEADER]
        out += [lines[w, t] for w, t in sorted(lines) if w == where]
    return "\n".join(out).strip("\n")


def _parse(text: str) -> dict[tuple[str, str], str]:
    """The rows of tables that :func:`table` wrote, by (file, test)."""
    lines, where = {}, ""
    for line in text.splitlines():
        if line.startswith("#### `"):
            where = line.split("`")[1]
        elif line.startswith("| test") and not line.startswith("| test |"):
            lines[where, line.split(" ")[1]] = line
    return lines


def unrecorded(rows: list[Row]) -> list[str]:
    """Test functions that made no check of deniable.testing in any case."""
    groups: dict[str, bool] = {}
    for row in rows:
        name = function_of(row.test)
        groups[name] = groups.get(name, False) or bool(row.alphas or row.misses)
    return sorted(name for name, recorded in groups.items() if not recorded)


def over(rows: list[Row], limit: float = LIMIT) -> list[Row]:
    """Passing tests whose rate, to the two digits the table shows, exceeds ``limit``; tests that did not pass."""
    return [r for r in rows if (r.alphas or r.misses) and (r.outcome != "passed" or float(_rate(r.rate)) > limit)]


def write_doc(text: str, doc: Path = DOC, *, merge: bool = False) -> None:
    """Replace the table between the stat-rates markers of ``doc`` with ``text``.

    With ``merge``, only its rows are replaced or added: the other tests' rows stay (a run of a
    few files updates their rows).
    """
    page = doc.read_text()
    start, end = page.index(BEGIN) + len(BEGIN), page.index(END)
    if merge:
        text = _render(_parse(page[start:end]) | _parse(text))
    doc.write_text(page[:start] + "\n" + text + "\n" + page[end:])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help=f"exit 1 when a test's rate exceeds {LIMIT:g}")
    parser.add_argument("--write", action="store_true", help=f"write the table into {DOC.relative_to(ROOT)}")
    parser.add_argument("--ids", action="store_true", help="one row per test id")
    args, extra = parser.parse_known_args(argv)
    collector = Collector()
    collector.watch_audits()
    selection = extra or ["-m", MARKERS, str(ROOT / "tests")]
    sys.path.insert(0, str(ROOT))  # as `python -m pytest` from the root has it: tests import `tests.*` helpers
    code = pytest.main(["-q", "-p", "no:cacheprovider", "--rootdir", str(ROOT), *selection], plugins=[collector])
    rows = collector.rows()
    text = table(rows, per_id=args.ids)
    print(text)
    silent = unrecorded(rows)
    if silent:
        print("\nTests that recorded no check (bands by hand; rates in their docstrings):")
        print("\n".join(f"  {name}" for name in silent))
    if args.write and code not in (0, 5):
        print(f"\nnot written: pytest ended with code {code}, so the table would miss tests", file=sys.stderr)
    elif args.write:
        write_doc(table(rows), merge=bool(extra))
    bad = over(rows)
    for row in bad:
        print(f"OVER {LIMIT:g}: {row.test} ({row.outcome}, rate {row.rate:.3g})", file=sys.stderr)
    return 1 if args.check and (bad or code not in (0, 5)) else 0


if __name__ == "__main__":
    sys.exit(main())
