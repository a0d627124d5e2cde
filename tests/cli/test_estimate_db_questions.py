"""``deniable estimate --db URL --survey ID`` as text, for number and free-text questions.

The text lines carry the very figures of the results JSON (the server's
``results_json``): a number question's mean with its interval, and a
free-text question's discovered values, most frequent first.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("typer")

from deniable.server._storage import Storage  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _store(db_url: str, definition: str, answers: list[dict[str, Any]]) -> dict[str, Any]:
    storage = Storage(db_url)
    try:
        survey = storage.add_survey(EXAMPLES / definition)
        items = [{"idempotency_key": f"respondent-{i:06d}", "reports": r} for i, r in enumerate(answers)]
        for start in range(0, len(items), 5000):
            assert storage.submit(survey.id, items[start:start + 5000]).accepted == len(items[start:start + 5000])
        from deniable.server._results import question_estimates, results_json

        aggregates = storage.aggregates(survey.id)
        return results_json(survey, question_estimates(survey, aggregates, "population"), aggregates=aggregates,
                            refusals=storage.refusals.counts(survey.id))
    finally:
        storage.close()


def _reports(m: Any, values: Any, seed: int) -> list[Any]:
    return m.reports_to_json(m.privatize_many(values, rng=np.random.default_rng(seed)))


def test_a_number_question_prints_its_mean_and_interval(cli, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'n.db'}"
    from deniable.server._surveys import load_survey

    survey = load_survey(EXAMPLES / "screen-time.yaml")
    minutes = np.minimum(np.random.default_rng(1).exponential(90.0, 4000), 600.0)
    mins = _reports(survey.questions[0].mechanism, minutes, 2)
    night = _reports(survey.questions[1].mechanism, np.ones(4000, dtype=bool), 3)
    results = _store(url, "screen-time.yaml", [{"minutes": a, "night": b} for a, b in zip(mins, night, strict=True)])
    q = results["questions"][0]
    done = cli("estimate", "--db", url, "--survey", "screen-time")
    assert done.exit_code == 0, done.output
    line = " ".join(done.stdout.split())  # as one line, however the console wraps it
    assert "minutes: mean of answers in [0, 600] minutes, n = 4,000" in line
    assert f"{q['estimate']:.4g} minutes, standard error {q['std_error']:.4g}" in line
    assert f"95% interval {q['ci_low']:.4g} .. {q['ci_high']:.4g}" in line


@pytest.mark.slow  # 9,500 responses stored and discovered (about 18 s)
def test_a_free_text_question_prints_the_values_found(cli, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 't.db'}"
    from deniable.server._surveys import load_survey

    survey = load_survey(EXAMPLES / "editors.yaml")
    words = ["vim"] * 3000 + ["emacs"] * 2000 + ["[b]nano"] * 1500 + [f"u{i:04d}" for i in range(3000)]
    texts = _reports(survey.questions[0].hitters, words, 4)
    daily = _reports(survey.questions[1].mechanism, np.ones(len(words), dtype=bool), 5)
    results = _store(url, "editors.yaml", [{"editor": a, "daily": b} for a, b in zip(texts, daily, strict=True)])
    found = results["questions"][0]["values"]
    assert [v["value"] for v in found][:3] == ["vim", "emacs", "[b]nano"]  # typed text, not markup
    done = cli("estimate", "--db", url, "--survey", "editors")
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    at = next(i for i, x in enumerate(lines) if x.startswith("editor:"))
    assert f"{len(found)} values found" in lines[at]
    for v, line in zip(found, lines[at + 1:], strict=False):
        assert line.startswith(f"  {v['value']!r}: {v['count']:,.0f} +- {v['std_error']:,.0f}")


def test_a_free_text_question_without_enough_answers_says_so(cli, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'e.db'}"
    _store(url, "editors.yaml", [])
    done = cli("estimate", "--db", url, "--survey", "editors")
    assert done.exit_code == 0, done.output
    assert "editor: no reports yet" in done.stdout or "no value found yet" in done.stdout
