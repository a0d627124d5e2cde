"""``deniable demo``, ``deniable serve`` and ``deniable estimate --db`` (need ``deniable[server]``)."""

from __future__ import annotations

import re
import secrets
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer

import deniable as dn
from deniable._estimate import Estimate, Target
from deniable.cli._common import OUTPUT_DIR, CLIError, err, handle_errors, out, progress
from deniable.cli._output import check_figure_path, print_json, save_axes, show_estimate

__all__ = ["HONOR_CODE_SURVEY", "STUDY_DRUG_SURVEY", "register", "estimate_db", "run_demo", "run_covariate_demo"]

HONOR_CODE_SURVEY: dict[str, Any] = {
    "id": "honor-code",
    "title": "Honor code survey",
    "budget": 1.1,
    "questions": [
        {
            "id": "violated",
            "text": "Have you broken the honor code this term?",
            "type": "yes-no",
            "mechanism": "forced-response",
            "p_truth": 0.5,
            "p_yes": 0.5,
        }
    ],
}
"""The honor-code survey of the demo (the same as ``examples/honor-code.yaml``):
one yes/no question, two-coin forced response, epsilon = ln 3 within a budget of 1.1."""


def _server_extra() -> None:
    try:
        import deniable.server._runner  # noqa: F401
    except ImportError as exc:
        raise CLIError(
            f"this command needs the server extra: pip install 'deniable[server]' ({exc})"
        ) from None


def _safe_url(db_url: str) -> str:
    """A database URL with any password masked (for printing)."""
    from sqlalchemy.engine import make_url

    try:
        return make_url(db_url).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - unparsable URLs are reported by Storage itself
        return re.sub(r"://[^@/]*@", "://***@", db_url)


def _rebuild(mechanism: Any, question: dict[str, Any], truth: list[float] | None, target: Target) -> Estimate:
    """An Estimate for ``target`` from a results entry, decoded locally from its support counts."""
    est = mechanism.estimate_from(mechanism.aggregate_from_json(question["support_counts"]), target=target)
    if not np.allclose(est.frequencies, question["estimate"], rtol=0, atol=1e-9):
        raise CLIError("the server's estimate differs from the local recomputation")
    return replace(est, truth=None if truth is None else np.asarray(truth))


# ---------------------------------------------------------------------- demo
def run_demo(
    n: int, truth: float, out_png: Path, seed: int | None, batch_size: int
) -> dict[str, Any]:
    """The whole journey on this machine: server, respondents over HTTP, estimate, plot."""
    _server_extra()
    import httpx

    from deniable.client import Client, ClientError
    from deniable.plot import bar_estimate
    from deniable.server._runner import BackgroundServer

    if n < 2:
        raise CLIError(f"--n must be >= 2; got {n}")
    if not 0 <= truth <= 1:
        raise CLIError(f"--truth must be a share in [0, 1]; got {truth!r}")
    check_figure_path(out_png)
    if not 1 <= batch_size <= 10_000:
        raise CLIError(f"--batch-size must be in 1..10000; got {batch_size}")
    if seed is not None:
        err.print(
            "[bold yellow]warning:[/] --seed makes the respondents' randomization predictable "
            "(not private); use it only for reproducible simulations"
        )
    # who violated: exactly round(truth * n) students, in random order
    violators = int(round(truth * n))
    population = np.zeros(n, dtype=bool)
    population[:violators] = True
    np.random.default_rng(seed).shuffle(population)
    true_share = violators / n
    survey_id = HONOR_CODE_SURVEY["id"]
    out.print(
        f"[bold]deniable demo[/]: {HONOR_CODE_SURVEY['title']}, {n:,} simulated students, "
        f"{true_share:.1%} truly violated"
    )
    rng = np.random.default_rng(seed) if seed is not None else None
    token = secrets.token_urlsafe(24)  # batches to an open survey come from a trusted relay: here, the demo
    with BackgroundServer([HONOR_CODE_SURVEY], admin_token=token) as server, \
            Client(server.url, timeout=120, token=token) as client:
        out.print(f"collection server on {server.url} (temporary SQLite database)")
        try:
            question = client.survey(survey_id)["questions"][0]
            mechanism = dn.from_config(question["mechanism"])
            out.print(f"question: {question['text']!r} -- {mechanism!r}")
            started = time.perf_counter()
            with progress() as bar:
                task = bar.add_task("respondents", total=n)
                for start in range(0, n, batch_size):
                    answers = [{"violated": bool(v)} for v in population[start:start + batch_size]]
                    client.respond_many(survey_id, answers, batch_size=batch_size, rng=rng)
                    bar.update(task, advance=len(answers))
            elapsed = time.perf_counter() - started
            results = client.results(survey_id)
        except ClientError as exc:
            raise CLIError(f"the server refused a request: {exc}") from None
        except httpx.HTTPError as exc:
            raise CLIError(f"HTTP request to the demo server failed: {exc!r}") from None
    q = results["questions"][0]
    # the class is the whole population of interest: its own share is the target
    est = _rebuild(mechanism, q, [1 - true_share, true_share], "respondents")
    low, high = est.ci(0.95)
    f, se = float(est.frequencies[1]), float(est.std_errors[1])  # type: ignore[index]
    ax = bar_estimate(est, title=f"Honor-code survey over HTTP: n = {est.n:,}, "
                                 f"\u03b5 = {est.epsilon:.4g}", xlabel=question["text"])
    out.print(f"posted {results['n_responses']:,} privatized responses in {elapsed:.1f} s "
              f"({results['n_responses'] / elapsed:,.0f} per second)")
    out.print(f"'yes' reports:       {est.observed[1]:.4f}  (randomized; half the answers are coin flips)")
    out.print(f"estimated violators: {f:.4f}  std. error {se:.4f}  "
              f"95% interval {low[1]:.4f} .. {high[1]:.4f}  (target: these students)")
    out.print(f"true violators:      {true_share:.4f}  "
              f"(inside the interval: {'yes' if low[1] <= true_share <= high[1] else 'no'}; "
              f"error = {(f - true_share) / se:+.2f} std. errors)")
    save_axes(ax, out_png)
    return {"n": est.n, "estimate": f, "std_error": se, "ci_low": float(low[1]),
            "ci_high": float(high[1]), "truth": true_share, "seconds": elapsed}


STUDY_DRUG_SURVEY: dict[str, Any] = {
    "id": "study-drugs",
    "title": "Study drugs and age",
    "budget": 1.7,
    "questions": [
        {"id": "used", "text": "Have you taken a prescription stimulant without a prescription to study?",
         "type": "yes-no", "design": {"model": "FR", "p": ["1/6", "1/6"]}},
        {"id": "age", "text": "How old are you?", "type": "integer", "randomized": False, "min": 18, "max": 30},
    ],
}
"""The demo's second survey: a forced-response design question (RRreg's FR, p = 1/6, 1/6:
epsilon = ln 5) and a plain age question, so the prevalence can be regressed on age."""

COVARIATE_TRUTH = {"Intercept": -4.2, "age": 0.15}
"""The demo's true model: P(used | age) = logistic(-4.2 + 0.15 age): 18% at 18, 57% at 30."""


def run_covariate_demo(n: int, seed: int | None, batch_size: int) -> dict[str, Any]:
    """Part 2: a survey design with a covariate, posted over HTTP, analysed from the export."""
    import tempfile

    import httpx

    from deniable import survey
    from deniable.cli._analyze import read_table, responses_and_groups
    from deniable.client import Client, ClientError
    from deniable.server._runner import BackgroundServer

    rng = np.random.default_rng(None if seed is None else seed + 1)
    age = rng.integers(18, 31, n)
    chance = 1 / (1 + np.exp(-(COVARIATE_TRUTH["Intercept"] + COVARIATE_TRUTH["age"] * age)))
    used = rng.random(n) < chance
    design = survey.design("FR", ["1/6", "1/6"])
    out.print()
    out.print(f"[bold]part 2[/]: {STUDY_DRUG_SURVEY['title']}, a forced-response design question "
              f"(FR, p = 1/6, 1/6, epsilon = {design.epsilon:.4g}) and a plain age question (not randomized); "
              f"{used.mean():.1%} truly used")
    token = secrets.token_urlsafe(24)
    device_rng = np.random.default_rng(seed) if seed is not None else None
    with BackgroundServer([STUDY_DRUG_SURVEY], admin_token=token) as server, \
            Client(server.url, timeout=120, token=token) as client:
        try:
            answers = [{"used": bool(u), "age": int(a)} for u, a in zip(used, age, strict=True)]
            client.respond_many(STUDY_DRUG_SURVEY["id"], answers, batch_size=batch_size, rng=device_rng)
            export = httpx.get(f"{server.url}/admin/surveys/{STUDY_DRUG_SURVEY['id']}/export",
                               headers={"Authorization": f"Bearer {token}"}, timeout=120)
            export.raise_for_status()
        except ClientError as exc:
            raise CLIError(f"the server refused a request: {exc}") from None
        except httpx.HTTPError as exc:
            raise CLIError(f"HTTP request to the demo server failed: {exc!r}") from None
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "export.csv"
        path.write_text(export.text, encoding="utf-8")
        frame = read_table(path)
    answers_, _, _ = responses_and_groups(frame, "used", design, None)
    fit = survey.prevalence(answers_, design)
    low, high = fit.ci(0.95)["pi"]
    truth = float(used.mean())
    out.print(f"exported {len(frame):,} responses (the randomized answer and the age as given)")
    out.print(f"estimated users: {fit.params['pi']:.4f}  SE {fit.bse['pi']:.4f}  95% interval {low:.4f} .. {high:.4f}"
              f"  (truth {truth:.4f})")
    result: dict[str, Any] = {"n": fit.n, "estimate": fit.params["pi"], "std_error": fit.bse["pi"],
                              "ci_low": low, "ci_high": high, "truth": truth}
    try:
        logit = survey.logit
    except ImportError as exc:  # the survey extra (formulas) is not installed
        out.print(f"logistic regression on age: skipped ({exc})")
        return result
    frame["used"] = answers_
    reg = logit("used ~ age", frame, design)
    ci = reg.conf_int(0.05)
    out.print("logistic regression of the prevalence on age (from the export), against the truth:")
    for term, true_value in COVARIATE_TRUTH.items():
        out.print(f"  {term:<10} {reg.params[term]:+.4f}  SE {reg.bse[term]:.4f}  95% interval "
                  f"{ci.loc[term].iloc[0]:+.4f} .. {ci.loc[term].iloc[1]:+.4f}  (truth {true_value:+.4f})")
    result["regression"] = {t: {"estimate": float(reg.params[t]), "std_error": float(reg.bse[t])}
                            for t in COVARIATE_TRUTH}
    return result


def demo_cmd(
    n: Annotated[int, typer.Option("--n", help="Simulated respondents.")] = 50_000,
    truth: Annotated[float, typer.Option(help="True share of violators.")] = 0.2,
    out_png: Annotated[Path, typer.Option("--out", help="Where to write the plot.")] =
        OUTPUT_DIR / "deniable-demo.png",
    seed: Annotated[
        int | None,
        typer.Option(help="Seed the respondents' randomization (reproducible, NOT private)."),
    ] = None,
    batch_size: Annotated[int, typer.Option(help="Responses per HTTP batch.")] = 2_500,
) -> None:
    """The whole journey in under a minute: server, 50,000 respondents over HTTP, estimate, plot.

    Starts the collection server on a free loopback port with a temporary
    SQLite file, loads the honor-code survey (forced response, epsilon = ln 3),
    lets 50,000 simulated students (20% violators) answer through the Python
    client, each answer randomized on the "device" before it is posted, then
    prints the debiased estimate next to the truth and writes a bar chart.

    Part 2 runs a survey design with a covariate: a forced-response question
    (RRreg's FR, p = 1/6, 1/6) beside a plain age question, the same number of
    respondents posting over HTTP; the prevalence (and a logistic regression
    on age) is estimated from the server's export and shown against the truth.

    The plot goes to deniable-output/deniable-demo.png under the current
    directory unless --out says otherwise.

    Example: deniable demo --out demo.png
    """
    run_demo(n, truth, out_png, seed, batch_size)
    run_covariate_demo(n, seed, batch_size)


# --------------------------------------------------------------------- serve
def serve_cmd(
    surveys: Annotated[list[Path], typer.Argument(help="Survey definition files (YAML or JSON).")],
    db: Annotated[
        str | None,
        typer.Option(help="Database URL (SQLite file or PostgreSQL); default "
                     "sqlite:///deniable-output/deniable.db under the current directory.", show_default=False),
    ] = None,
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[
        int, typer.Option(help="Port (0 picks a free one; 8765 by default, not mkdocs serve's 8000).")
    ] = 8765,
    admin_token: Annotated[
        str | None,
        typer.Option(envvar="DENIABLE_ADMIN_TOKEN", show_default=False,
                     help="Bearer token of the admin endpoints (prefer the environment "
                          "variable: command lines are visible to other users)."),
    ] = None,
    durable: Annotated[
        bool,
        typer.Option("--durable", help="SQLite: sync every commit to disk (synchronous=FULL), so "
                     "acknowledged reports survive a power cut too; without it they survive a "
                     "killed server."),
    ] = False,
    relay_token: Annotated[
        str | None,
        typer.Option(envvar="DENIABLE_RELAY_TOKEN", show_default=False,
                     help="Bearer token that may only post batches (for trusted relays; prefer "
                          "the environment variable)."),
    ] = None,
    trusted_proxy: Annotated[
        list[str] | None,
        typer.Option("--trusted-proxy", help="A reverse proxy (address or network) whose "
                     "X-Forwarded-For names the client, for the rate limit; repeatable."),
    ] = None,
    ohttp_keys: Annotated[
        Path | None,
        typer.Option("--ohttp-keys", help="Also be an Oblivious HTTP gateway (/.well-known/ohttp-gateway), its "
                     "secret keys kept in this file (created if missing, owner-only); needs deniable[ohttp].",
                     show_default=False),
    ] = None,
    ohttp_rotate_days: Annotated[
        float, typer.Option("--ohttp-rotate-days", help="Age in days at which the gateway's key is replaced.")
    ] = 7.0,
    ohttp_overlap_hours: Annotated[
        float, typer.Option("--ohttp-overlap-hours", help="Hours a replaced key still opens requests.")
    ] = 24.0,
) -> None:
    """Run the collection server until Ctrl-C.

    Example: DENIABLE_ADMIN_TOKEN=... deniable serve examples/honor-code.yaml --db sqlite:///survey.db
    """
    _server_extra()
    from deniable.server._database import DEFAULT_DB_URL
    from deniable.server._runner import PortInUseError, run
    from deniable.server._surveys import load_surveys

    db = db or DEFAULT_DB_URL

    for path in surveys:
        if not path.is_file():
            raise CLIError(f"no such survey file: {path}")
    loaded = load_surveys(surveys)  # fail here, with the field named, before binding a port
    err.print(
        f"deniable: {len(loaded)} survey(s) "
        f"({', '.join(s.id for s in loaded)}), database {_safe_url(db)}, admin endpoints "
        f"{'enabled' if admin_token else 'disabled (no token)'}",
        soft_wrap=True,
    )
    # a refusal (a StorageError, e.g. the database holds another survey with this id) is one line
    from deniable.server._security import parse_networks

    try:
        parse_networks(trusted_proxy or ())
    except ValueError as exc:
        raise CLIError(f"--trusted-proxy: {exc}") from None
    keys = None
    if ohttp_keys is not None:
        try:
            from deniable._ohttp._keys import KeyRing
        except ImportError as exc:
            raise CLIError(f"--ohttp-keys needs the ohttp extra: pip install 'deniable[ohttp]' ({exc})") from None
        keys = KeyRing(ohttp_keys, rotate_every=ohttp_rotate_days * 86_400, overlap=ohttp_overlap_hours * 3600)
        keys.current()  # the file is made (or read) now: a bad path fails before the port is bound
    try:
        run(loaded, db_url=db, host=host, port=port, admin_token=admin_token,
            sqlite_synchronous="FULL" if durable else "NORMAL", relay_token=relay_token,
            trusted_proxies=trusted_proxy or (), ohttp_keys=keys)
    except PortInUseError as exc:
        raise CLIError(str(exc)) from None


# ------------------------------------------------------------- estimate --db
def estimate_db(
    db_url: str, survey_id: str, *, consistent: str | None, level: float, plot: Path | None,
    as_json: bool, target: Target = "population",
) -> None:
    """``deniable estimate --db URL --survey ID``: results from a server's database."""
    _server_extra()
    from sqlalchemy.engine import make_url

    from deniable.server._results import question_estimates, results_json
    from deniable.server._storage import Storage

    url = make_url(db_url)
    if url.get_backend_name() == "sqlite" and url.database and not Path(url.database).is_file():
        raise CLIError(f"no such database file: {url.database}")
    storage = Storage(db_url)
    try:
        survey = storage.survey(survey_id)
        aggregates = storage.aggregates(survey_id)
        estimates = question_estimates(survey, aggregates, target)
        results = results_json(survey, estimates, level=level, aggregates=aggregates, target=target,
                               refusals=storage.refusals.counts(survey_id))
    finally:  # a refusal (StorageError: "field: message") is one line through handle_errors
        storage.close()
    if as_json:
        if consistent:
            for q in results["questions"]:
                if q["id"] not in estimates:  # a design or plain question
                    continue
                est = estimates[q["id"]]
                q[f"consistent_{consistent}"] = (
                    est.consistent(consistent).frequencies.tolist() if est.n else None
                )
        print_json(results)
        return
    out.print(f"[bold]{results['title']}[/] ({survey_id}): {results['n_responses']:,} responses")
    questions = survey.questions
    shown = {r["id"]: r for r in results["questions"]}
    for i, q in enumerate(questions):
        if q.id not in estimates:  # a design question (its prevalence) or a plain question
            out.print(_other_line(shown[q.id], level))
            continue
        est = estimates[q.id]
        if est.n == 0:
            out.print(f"{q.id}: no reports yet")
            continue
        figure = None
        if plot is not None:
            figure = plot if len(questions) == 1 else plot.with_name(f"{plot.stem}-{q.id}{plot.suffix}")
        show_estimate(est, consistent=consistent, level=level, plot=figure, as_json=False,
                      title=f"{q.id}: {q.text}", xlabel=q.text)
        if i + 1 < len(questions):
            out.print()


def _other_line(result: dict[str, Any], level: float) -> str:
    """The text for a question the results JSON answers without an Estimate.

    A design question's prevalence (here), or the lines of its kind's
    formatter (:data:`_LINES`): a plain question's count, a number question's
    mean, a free-text question's discovered values, and so on.
    """
    lines = _LINES.get(result["kind"])
    if lines is not None:
        return lines(result, level)
    pi = result["parameters"][0]
    eps = "infinite: an answer reveals the truth" if result["reveals_truth"] else f"{result['epsilon']:.4g}"
    head = f"{result['id']}: {result['design']['model']} design, n = {result['n']:,}, epsilon = {eps}"
    if pi["estimate"] is None:
        return f"{head}: too few answers for a prevalence"
    return (f"{head}: prevalence {pi['estimate']:.4f}, standard error {pi['std_error']:.4f}, "
            f"{level:.0%} interval {pi['ci_low']:.4f} .. {pi['ci_high']:.4f}")


def _interval(lo: float | None, hi: float | None) -> str:
    return "no interval yet" if lo is None or hi is None else f"{lo:.4g} .. {hi:.4g}"


def _range_lines(result: dict[str, Any], level: float) -> str:
    """A number question collected for ranges: its quantiles with their intervals (the CDF is in the JSON)."""
    units = f" {result['units']}" if result.get("units") else ""
    head = (f"{result['id']}: answers in [{result['low']:g}, {result['high']:g}]{units}, {result['bins']} bins "
            f"({result['mechanism']}), n = {result['n']:,}, epsilon = {result['epsilon']:.4g}")
    if not result["n"]:
        return f"{head}: no reports yet"
    rows = [f"  {q['q']:.0%} quantile {q['estimate']:.4g}{units} ({_interval(q['ci_low'], q['ci_high'])})"
            for q in result["quantiles"]]
    return "\n".join([head, *rows, f"  ({level:.0%} intervals; the CDF with its band: --json)"])


def _items_lines(result: dict[str, Any], level: float) -> str:
    """A choose-several question: each option's share of respondents with its interval."""
    from rich.markup import escape

    head = (f"{result['id']}: choose up to {result['max_choices']} of {len(result['options'])} "
            f"({result['mechanism']}, ell = {result['ell']}), n = {result['n']:,}, epsilon = {result['epsilon']:.4g}")
    if not result["n"]:
        return f"{head}: no reports yet"
    rows = [f"  {escape(str(o))}: {e:.4f} ({lo:.4f} .. {hi:.4f})" for o, e, lo, hi in zip(
        result["options"], result["estimate"], result["ci_low"], result["ci_high"], strict=True)]
    return "\n".join([head, *rows, f"  ({level:.0%} intervals; shares of respondents, not adding up to 1)"])


def _keyvalue_lines(result: dict[str, Any], level: float) -> str:
    """A key-value question: each key's share of respondents and the mean of its values, with intervals."""
    from rich.markup import escape

    units = f" {result['units']}" if result.get("units") else ""
    head = (f"{result['id']}: values in [{result['low']:g}, {result['high']:g}]{units} for up to {result['max_pairs']} "
            f"of {len(result['keys'])} keys ({result['mechanism']}, ell = {result['ell']}), n = {result['n']:,}, "
            f"epsilon = {result['epsilon']:.4g}")
    if not result["n"]:
        return f"{head}: no reports yet"
    columns = ("keys", "estimate", "ci_low", "ci_high", "mean", "mean_ci_low", "mean_ci_high")
    rows = [f"  {escape(str(k))}: share {f:.4f} ({_interval(lo, hi)}), mean {m:.4g}{units} ({_interval(mlo, mhi)})"
            for k, f, lo, hi, m, mlo, mhi in zip(*(result[c] for c in columns), strict=True)]
    return "\n".join([head, *rows, f"  ({level:.0%} intervals; shares of respondents, not adding up to 1)"])


def _joint_lines(result: dict[str, Any], level: float) -> str:
    """A joint question: each part's shares with their intervals, then each pair's Cramér's V and test."""
    from rich.markup import escape

    head = (f"{result['id']}: {len(result['questions'])} questions answered jointly ({result['mechanism']}), "
            f"n = {result['n']:,}, epsilon = {result['epsilon']:.4g}")
    if not result["n"]:
        return f"{head}: no reports yet"
    lines = [head]
    for part in result["questions"]:
        shares = ", ".join(f"{escape(str(c))} {e:.4f} ({lo:.4f} .. {hi:.4f})" for c, e, lo, hi in zip(
            part["categories"], part["estimate"], part["ci_low"], part["ci_high"], strict=True))
        lines.append(f"  {part['id']}: {shares}")
    lines.append(f"  ({level:.0%} intervals)")
    for pair in result["pairs"]:
        lines.append(f"  {pair['first']} x {pair['second']}: Cramer's V {pair['cramers_v']:.3f} "
                     f"(s.e. {pair['cramers_v_std_error']:.3f}), independence p = {pair['p_value']:.3g}")
    return "\n".join(lines)


def _mean_line(result: dict[str, Any], level: float) -> str:
    units = f" {result['units']}" if result.get("units") else ""
    head = (f"{result['id']}: mean of answers in [{result['low']:g}, {result['high']:g}]{units}, "
            f"n = {result['n']:,}, epsilon = {result['epsilon']:.4g}")
    if result["estimate"] is None:
        return f"{head}: too few answers for a mean"
    return (f"{head}: {result['estimate']:.4g}{units}, standard error {result['std_error']:.4g}, "
            f"{level:.0%} interval {result['ci_low']:.4g} .. {result['ci_high']:.4g}")


def _discovery_lines(result: dict[str, Any], level: float) -> str:
    from rich.markup import escape  # the values are what respondents typed: never markup

    head = (f"{result['id']}: free text ({result['method']}), n = {result['n']:,}, "
            f"epsilon = {result['epsilon']:.4g}")
    if not result["values"]:
        return f"{head}: no value found yet (discovery needs many respondents)"
    lines = [f"{head}: {len(result['values'])} values found (estimated respondents, {level:.0%} interval)"]
    for v in result["values"]:
        cut = " (begins with)" if v["truncated"] else ""
        lines.append(f"  {escape(repr(v['value']))}{cut}: {v['count']:,.0f} +- {v['std_error']:,.0f}, "
                     f"{v['ci_low']:,.0f} .. {v['ci_high']:,.0f}")
    return "\n".join(lines)


def _plain_line(result: dict[str, Any], level: float) -> str:
    return f"{result['id']}: {result['n']:,} answers, not randomized (see the results JSON)"


_LINES: dict[str, Callable[[dict[str, Any], float], str]] = {
    "plain": _plain_line, "mean": _mean_line, "discovery": _discovery_lines, "joint": _joint_lines,
    "range": _range_lines, "items": _items_lines, "keyvalue": _keyvalue_lines,
}
"""The text of each results kind answered without an Estimate (a design question's is ``_other_line``'s own)."""


# ------------------------------------------------------------------------ db
def db_upgrade_cmd(
    db: Annotated[
        str | None,
        typer.Option(help="Database URL (SQLite file or PostgreSQL); default: the server's, "
                     "sqlite:///deniable-output/deniable.db.", show_default=False),
    ] = None,
) -> None:
    """Create or upgrade the collection service's database schema (Alembic migrations).

    The server does this itself at start-up; run it alone before starting
    several servers on one database, or to upgrade at a time of your choosing.
    A database made by an older deniable is upgraded in place, its reports kept.

    Example: deniable db upgrade --db postgresql://deniable@db-host/deniable
    """
    _server_extra()
    from sqlalchemy.exc import DBAPIError

    from deniable.server._database import DEFAULT_DB_URL, make_engine
    from deniable.server._schema import upgrade

    db = db or DEFAULT_DB_URL

    engine = make_engine(db, "NORMAL")
    try:
        revision = upgrade(engine)
    except DBAPIError as exc:  # cannot connect, no permission, ...: the driver's first line
        first = str(exc.orig).strip().splitlines()[0] if str(exc.orig).strip() else type(exc.orig).__name__
        raise CLIError(f"database {_safe_url(db)}: {first}") from None
    finally:
        engine.dispose()
    out.print(f"database {_safe_url(db)}: schema at revision {revision}", soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Add ``demo``, ``serve`` and ``db`` to the main app (``demo`` first in --help)."""
    app.command("demo")(handle_errors(demo_cmd))
    app.command("serve")(handle_errors(serve_cmd))
    db_app = typer.Typer(help="The collection service's database: create or upgrade its schema.",
                         no_args_is_help=True)
    db_app.command("upgrade")(handle_errors(db_upgrade_cmd))
    app.add_typer(db_app, name="db")

