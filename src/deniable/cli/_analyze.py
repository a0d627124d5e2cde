"""``deniable analyze``: the prevalence (and a logistic regression) of a survey design's answers.

Reads a CSV or Parquet file of randomized answers, e.g. the collection
server's export (each cell JSON text: ``true``, ``{"group":1,"answer":false}``,
``"second"``), and estimates with :mod:`deniable.survey` under the design
given as RRreg names it (``--design FR --p 1/6,1/6``). Answers may be
``true``/``false``, ``1``/``0`` or ``yes``/``no`` (or the category number of
an m-category FR or Kuk design). A two-group design's group comes from
``--group COLUMN`` or, in a server export, from the answer itself.

A survey platform's CSV export (Qualtrics, LimeSurvey, REDCap, oTree) whose
column holds deniable-embed's reports is read as it is: each row's
fingerprint must be the design's, and a two-group design's group is in the
report (:mod:`deniable.cli._platforms`).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer
from rich.table import Table

from deniable.cli import _platforms as platforms
from deniable.cli._common import CLIError, JsonOpt, handle_errors, out
from deniable.cli._data import data_file, file_kind
from deniable.cli._output import print_json
from deniable.wire._fields import REPORT_FORMAT

__all__ = ["analyze_cmd", "read_table", "responses_and_groups"]

_WORDS = {"true": 1, "yes": 1, "false": 0, "no": 0}


def read_table(path: Path, column: str | None = None) -> Any:
    """The whole file as a pandas DataFrame, JSON-text cells (a server export's) decoded.

    A survey platform's CSV export whose ``column`` holds deniable-embed's
    reports is read as :mod:`deniable.cli._platforms` reads it (Qualtrics's
    header rows left out); that column's cells decode to the embed's records.
    """
    import pandas as pd

    file_kind(path)
    if not path.is_file():
        raise CLIError(f"FILE: no such file: {path}")
    kind = data_file(path)
    if column is not None and platforms.holds_fields(path, column):
        frame = platforms.read_export(path)[0]
    else:
        frame = pd.read_csv(path) if kind == "csv" else pd.read_parquet(path)
    for name in frame.columns:
        if frame[name].dtype == object or pd.api.types.is_string_dtype(frame[name]):
            frame[name] = _decoded(frame[name])
    return frame


def _decoded(column: Any) -> Any:
    """A text column whose every cell is JSON (a server export) as the decoded values; else unchanged.

    The decoded column takes the type of its values (integers as integers,
    numbers as floats, with missing cells as NaN), so an export written with
    every column as text reads as the typed export does.
    """
    values = []
    for v in column.tolist():
        if not isinstance(v, str):
            values.append(v)
            continue
        try:
            values.append(json.loads(v))
        except json.JSONDecodeError:
            return column
    import pandas as pd

    return pd.Series(values, index=column.index, name=column.name, dtype=object).infer_objects()


def _answer(v: Any, allowed: tuple[int, ...]) -> int | None:
    if isinstance(v, (bool, np.bool_)):
        return int(v)
    if isinstance(v, str):
        v = _WORDS.get(v.strip().lower(), v)
    if isinstance(v, (int, np.integer)) or isinstance(v, (float, np.floating)) and float(v).is_integer():
        return int(v) if int(v) in allowed else None
    return None


def _missing(v: Any) -> bool:
    return v is None or isinstance(v, float) and math.isnan(v) or isinstance(v, str) and not v.strip()


def responses_and_groups(frame: Any, response: str, design: Any, group: str | None) -> tuple[Any, Any, Any]:
    """The answer codes, groups (``None`` for a one-group design) and the rows kept.

    Rows whose answer (or group) is missing are left out, as R's ``na.omit``
    does; any other value that is not an answer is an error naming its row.
    """
    if response not in frame.columns:
        raise CLIError(f"--response: no column {response!r} in the file (columns: {list(frame.columns)})")
    cells = frame[response].tolist()
    groups: list[Any] | None = None
    if any(isinstance(c, dict) for c in cells) and all(isinstance(c, dict) or _missing(c) for c in cells):
        # {"group": g, "answer": a} (a server export, an embed's two-group design), empty rows left out
        if group is not None:
            raise CLIError(f"--group: column {response!r} already holds each answer's group")
        groups = [c.get("group") if isinstance(c, dict) else None for c in cells]
        cells = [c.get("answer") if isinstance(c, dict) else None for c in cells]
    elif group is not None:
        if group not in frame.columns:
            raise CLIError(f"--group: no column {group!r} in the file (columns: {list(frame.columns)})")
        groups = frame[group].tolist()
    keep = np.array([not _missing(c) and (groups is None or not _missing(groups[i])) for i, c in enumerate(cells)],
                    dtype=bool)
    answers = []
    for i, v in enumerate(cells):
        if not keep[i]:
            continue
        a = _answer(v, design.responses)
        if a is None:
            raise CLIError(f"--response: row {i + 1} of column {response!r} is {v!r}, not an answer of "
                           f"{design.model} ({', '.join(map(str, design.responses))}, or true/false, yes/no)")
        answers.append(a)
    if design.groups == 1:
        if groups is not None:
            raise CLIError(f"--group: {design.model} has one group")
        return np.array(answers, dtype=np.int64), None, keep
    if groups is None:
        raise CLIError(f"--group: {design.model} is a two-group design; name the column holding each "
                       "respondent's group (1 or 2)")
    codes = []
    for i, g in enumerate(groups):
        if not keep[i]:
            continue
        if not (isinstance(g, (int, np.integer, float)) and g in (1, 2)) or isinstance(g, bool):
            raise CLIError(f"--group: row {i + 1} is {g!r}; groups are 1 or 2")
        codes.append(int(g))
    return np.array(answers, dtype=np.int64), np.array(codes, dtype=np.int64), keep


def _embedded(column: Any) -> bool:
    """Whether a decoded column holds deniable-embed's records (and nothing else but empty cells)."""
    cells = [c for c in column.tolist() if not _missing(c)]
    return bool(cells) and all(isinstance(c, dict) and c.get("format") == REPORT_FORMAT for c in cells)


def _field_answers(frame: Any, response: str, design: Any, path: Path) -> list[Any]:
    """The design's answers in a column of embed records, each fingerprint checked; None where empty."""
    reports, held = platforms.field_reports(frame, response, design, path, platforms.platform_of(path))
    answers: list[Any] = [None] * len(held)
    for i, report in zip(np.flatnonzero(held), reports, strict=True):
        answers[i] = report
    return answers


def _design(model: str, p: str) -> Any:
    from deniable import survey

    if model not in survey.MODELS:
        raise CLIError(f"--design must be one of {', '.join(survey.MODELS)}; got {model!r}")
    values = [v.strip() for v in p.split(",") if v.strip()]
    if not values:
        raise CLIError("--p: give the design's probabilities, comma-separated (e.g. --p 1/6,1/6)")
    try:
        return survey.design(model, values if len(values) > 1 else values[0])
    except (ValueError, TypeError, ZeroDivisionError) as exc:
        raise CLIError(f"--p: {exc}") from None


def _number(x: float, digits: int = 4) -> str:
    return f"{x:.{digits}f}" if math.isfinite(x) else "–"


@handle_errors
def analyze_cmd(
    data: Annotated[Path, typer.Argument(help="A .csv or .parquet file of randomized answers.")],
    design: Annotated[str, typer.Option("--design", help="RRreg's model name: Warner, FR, UQTknown, ...")],
    p: Annotated[str, typer.Option("--p", help="The design's p, comma-separated; fractions allowed (1/6,1/6).")],
    response: Annotated[
        str | None, typer.Option("--response", help="Column of the answers (default: the formula's left side).")
    ] = None,
    group: Annotated[str | None, typer.Option("--group", help="Column of a two-group design's group (1 or 2).")] = None,
    formula: Annotated[
        str | None, typer.Option("--formula", help='Logistic regression of the prevalence, e.g. "y ~ age + female".')
    ] = None,
    level: Annotated[float, typer.Option("--level", help="Confidence level of the intervals.")] = 0.95,
    weights: Annotated[
        str | None, typer.Option("--weights", help="Column of survey weights (inverse inclusion probabilities).")
    ] = None,
    strata: Annotated[str | None, typer.Option("--strata", help="Column of the sampling strata.")] = None,
    cluster: Annotated[
        str | None, typer.Option("--cluster", help="Column of the primary sampling units (clusters).")
    ] = None,
    fpc: Annotated[
        str | None, typer.Option("--fpc", help="Column of the finite population correction: a sampling fraction "
                                 "or the stratum's population count of PSUs.")
    ] = None,
    lonely_psu: Annotated[
        str, typer.Option("--lonely-psu", help="A stratum with one PSU: fail, remove, certainty, adjust, average "
                          "(R's survey.lonely.psu).")
    ] = "fail",
    as_json: JsonOpt = False,
) -> None:
    """Prevalence of a survey design's randomized answers; with --formula, a logistic regression.

    The prevalence is the maximum-likelihood estimate with RRreg's standard
    error (respondents drawn from a population) and the profile-likelihood
    interval. A survey platform's CSV export of deniable-embed's reports (Qualtrics,
    LimeSurvey, REDCap, oTree) is read as it is, each row's fingerprint checked against
    the design. Example: deniable analyze answers.csv --design FR --p 1/6,1/6 --response used

    With --weights, --strata, --cluster or --fpc (columns of the file) the
    estimates are weighted and their standard errors design-based (Taylor
    linearization, as R's survey package), with the design effect beside
    each; the intervals are then Wald intervals.
    """
    from deniable.survey import prevalence

    if not 0 < level < 1:
        raise CLIError(f"--level must be in (0, 1); got {level!r}")
    d = _design(design, p)
    if response is None:
        if formula is None or "~" not in formula:
            raise CLIError("--response: name the column of the answers (or give --formula \"y ~ x\")")
        response = formula.split("~", 1)[0].strip()
    frame = read_table(data, response)
    if response in frame.columns and _embedded(frame[response]):
        frame[response] = _field_answers(frame, response, d, data)
    answers, groups, keep = responses_and_groups(frame, response, d, group)
    given = (("weights", weights), ("strata", strata), ("cluster", cluster), ("fpc", fpc))
    sample: dict[str, Any] = {k: v for k, v in given if v is not None}
    if sample:
        sample["lonely_psu"] = lonely_psu
    try:
        fit = prevalence(answers, d, group=groups, data=frame[keep].reset_index(drop=True), **sample)
    except ValueError as exc:
        if not sample:
            raise
        raise CLIError(f"--{str(exc).split()[0].rstrip(':').replace('_', '-')}: {exc}") from None
    ci = fit.ci(level)
    deff = getattr(fit, "design_effect", None)
    record: dict[str, Any] = {
        "design": {"model": d.model, "p": [str(v) for v in d.p]},
        "epsilon": d.epsilon,
        "reveals_truth": not math.isfinite(d.epsilon),
        "n": fit.n,
        "missing": int((~keep).sum()),
        "level": level,
        "method": fit.method,
        "prevalence": [
            {"parameter": k, "estimate": v, "std_error": fit.bse[k], "ci_low": ci[k][0], "ci_high": ci[k][1]}
            | ({} if deff is None else {"design_effect": deff[k]})
            for k, v in fit.params.items()
        ],
    }
    if deff is not None:
        record["sample"] = fit.sample  # type: ignore[attr-defined]
    regression = _regression(formula, frame[keep], d, response, answers, groups, level, sample) if formula \
        else None
    if regression is not None:
        record["regression"] = regression
    if as_json:
        print_json(record)
        return
    eps = "infinite: an answer reveals the truth" if record["reveals_truth"] else f"{d.epsilon:.4g}"
    dropped = f" ({record['missing']} without an answer left out)" if record["missing"] else ""
    out.print(f"[bold]{d.model}[/bold] (p = {', '.join(record['design']['p'])}): n = {fit.n:,}{dropped}, "
              f"epsilon = {eps}")
    if deff is None:
        caption = (f"standard error: respondents drawn from a population; interval: {level:.0%} profile "
                   f"likelihood; estimate by {fit.method}")
    else:
        caption = f"{record['sample']}; interval: {level:.0%} Wald; estimate by {fit.method}"
    table = Table(caption=caption, caption_justify="left")
    for header in ("parameter", "estimate", "std. error", f"{level:.0%} interval") + (() if deff is None
                                                                                   else ("design effect",)):
        table.add_column(header, justify="right")
    for row in record["prevalence"]:
        table.add_row(row["parameter"], _number(row["estimate"]), _number(row["std_error"]),
                      f"{_number(row['ci_low'])} to {_number(row['ci_high'])}",
                      *(() if deff is None else (_number(row["design_effect"], 3),)))
    out.print(table)
    if regression is not None:
        out.print(_regression_table(regression, level))


def _regression(
    formula: str, frame: Any, d: Any, response: str, answers: Any, groups: Any, level: float,
    sample: dict[str, Any],
) -> dict[str, Any]:
    """``deniable.survey.logit`` on the file (the answers decoded), as a JSON-ready record."""
    from deniable import survey

    try:
        logit = survey.logit
    except ImportError as exc:  # the survey extra (formulas) is not installed
        raise CLIError(f"--formula: {exc}") from None
    data = frame.copy()
    data[response] = answers
    try:
        result = logit(formula, data, d, group=groups, **sample)
    except (ValueError, KeyError) as exc:
        raise CLIError(f"--formula: {exc}") from None
    low_high = result.conf_int(1 - level)
    deff = result.design_effect
    return {
        "formula": formula,
        "cov_type": result.cov_type,
        "n": int(result.nobs) if hasattr(result, "nobs") else int(len(data)),
        "llf": float(result.llf),
        "terms": [
            {"term": str(term), "estimate": float(result.params[term]), "std_error": float(result.bse[term]),
             "ci_low": float(low_high.loc[term].iloc[0]), "ci_high": float(low_high.loc[term].iloc[1]),
             "p_value": float(result.pvalues[term])} | ({} if deff is None else {"design_effect": float(deff[term])})
            for term in result.params.index
        ],
    }


def _regression_table(regression: dict[str, Any], level: float) -> Table:
    out.print(f"[bold]logistic regression[/bold] {regression['formula']}: n = {regression['n']:,}, "
              f"log-likelihood {regression['llf']:.2f}")
    design = regression["cov_type"] != "oim"
    caption = f"standard errors: design-based ({regression['cov_type']})" if design else \
        "standard errors from the observed information"
    table = Table(caption=caption, caption_justify="left")
    for header in ("term", "coefficient", "std. error", f"{level:.0%} interval", "p-value") + (
            ("design effect",) if design else ()):
        table.add_column(header, justify="right")
    for t in regression["terms"]:
        table.add_row(t["term"], _number(t["estimate"]), _number(t["std_error"]),
                      f"{_number(t['ci_low'])} to {_number(t['ci_high'])}", f"{t['p_value']:.3g}",
                      *((_number(t["design_effect"], 3),) if design else ()))
    return table
