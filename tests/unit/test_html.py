"""Results render as HTML tables in Jupyter (``_repr_html_``): the numbers of the result, escaped."""

from __future__ import annotations

from html.parser import HTMLParser

import numpy as np
import pytest

import deniable as dn


class _Cells(HTMLParser):
    """The caption, header cells, body rows and note of a deniable HTML table."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.caption, self.headers, self.rows, self.note = "", [], [], ""
        self._where: str | None = None
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag == "tr":
            self.rows.append([])
        if tag in ("caption", "th", "td", "small"):
            self._where = tag
            if tag == "td":
                self.rows[-1].append("")

    def handle_endtag(self, tag: str) -> None:
        self._where = None

    def handle_data(self, data: str) -> None:
        if self._where == "caption":
            self.caption += data
        elif self._where == "th":
            self.headers.append(data)
        elif self._where == "td":
            self.rows[-1][-1] += data
        elif self._where == "small":
            self.note += data


def _parse(html: str) -> _Cells:
    cells = _Cells(html)
    cells.rows = [r for r in cells.rows if r]  # the header row has no <td>
    return cells


def test_estimate_html_shows_its_numbers() -> None:
    m = dn.GRR(["<b>A</b>", "B", "C"], epsilon=1.0)
    est = dn.simulate(m, [0.5, 0.3, 0.2], 5_000, rng=2)
    html = est._repr_html_()
    assert "<b>A</b>" not in html and "&lt;b&gt;A&lt;/b&gt;" in html  # escaped
    t = _parse(html)
    assert t.caption == "GRR, ε = 1, n = 5,000"
    assert t.headers == ["category", "estimate", "std. error", "95% interval low", "interval high",
                         "observed", "truth"]
    low, high = est.ci(0.95)
    for i, row in enumerate(t.rows):
        assert row[0] == m.domain[i]
        expected = [est.frequencies[i], est.std_errors[i], low[i], high[i], est.observed[i], est.truth[i]]
        np.testing.assert_array_equal([float(x) for x in row[1:]], np.round(expected, 4))
    assert t.note.startswith("target: population")
    post = _parse(est.consistent("norm-sub")._repr_html_())
    assert "std. error" not in post.headers and post.caption.endswith("(norm-sub)")


def test_long_estimates_are_cut_with_a_note() -> None:
    est = dn.simulate(dn.OUE(100, epsilon=2.0), np.full(100, 0.01), 10_000, rng=1)
    t = _parse(est._repr_html_(max_rows=10))
    assert len(t.rows) == 10 and t.note.startswith("90 more categories")


def test_mean_estimate_html() -> None:
    m = dn.Laplace(0, 10, epsilon=1.0)
    est = m.estimate(m.privatize_many(np.linspace(0, 10, 2_000), rng=3))
    t = _parse(est._repr_html_())
    assert t.headers == ["mean", "std. error", "95% interval low", "interval high", "range"]
    low, high = est.ci(0.95)
    assert [float(x) for x in t.rows[0][:4]] == [round(v, 4) for v in (est.mean, est.std_error, low, high)]
    assert t.rows[0][4] == "[0, 10]" and t.caption.startswith("Laplace, ε = 1, n = 2,000")


def test_survey_fits_html() -> None:
    pytest.importorskip("scipy")
    d = dn.survey.design("FR", p=["1/6", "1/6"])
    rng = np.random.default_rng(4)
    truth = rng.random(3_000) < 0.3
    answers = d.privatize_many(truth, rng=rng)
    fit = dn.survey.prevalence(answers, d)
    t = _parse(fit._repr_html_())
    assert t.caption == "FR design, n = 3,000, ε = 1.609"
    (lo, hi) = fit.ci(0.95)["pi"]
    assert t.rows[0][0] == "pi"
    assert [float(x) for x in t.rows[0][1:]] == [round(v, 4) for v in (fit.params["pi"], fit.bse["pi"], lo, hi)]
    by = dn.survey.prevalence_by(answers, d, by=np.where(np.arange(3_000) % 2 == 0, "even", "odd"))
    g = _parse(by._repr_html_())
    assert [r[0] for r in g.rows] == ["even", "odd"] and [r[1] for r in g.rows] == ["1500", "1500"]
    assert g.note.startswith("equal prevalence: likelihood ratio statistic")


def test_regression_html_is_its_summary() -> None:
    pd = pytest.importorskip("pandas")
    pytest.importorskip("statsmodels")
    d = dn.survey.design("FR", p=["1/6", "1/6"])
    rng = np.random.default_rng(5)
    age = rng.integers(18, 31, 2_000)
    used = rng.random(2_000) < 1 / (1 + np.exp(-(-4.2 + 0.15 * age)))
    frame = pd.DataFrame({"used": d.privatize_many(used, rng=rng).astype(int), "age": age})
    reg = dn.survey.logit("used ~ age", frame, d)
    html = reg._repr_html_()
    assert html == reg.summary().as_html() and "FR design" in html and "age" in html


def test_estimate_html_of_no_reports_and_of_one() -> None:
    """No reports: no interval exists, so no error columns (and no exception); one report has them."""
    m = dn.GRR(3, epsilon=1.0)
    empty = _parse(m.estimate_from(m.aggregate([]))._repr_html_())
    assert empty.headers == ["category", "estimate", "observed"] and empty.caption == "GRR, ε = 1, n = 0"
    one = _parse(m.estimate([2])._repr_html_())
    assert one.headers == ["category", "estimate", "std. error", "95% interval low", "interval high", "observed"]


def test_estimate_html_notes_one_more_category_and_the_target() -> None:
    est = dn.simulate(dn.GRR(4, epsilon=1.0), [0.25] * 4, 1_000, rng=6)
    assert _parse(est._repr_html_(max_rows=3)).note == (
        "1 more categories (to_frame() has all). target: population (the population the respondents were sampled from)"
        ". m fake reports among these 1,000 could move a share by at most m \u00d7 0.00333 (3.328/n per fake report)"
    )
    assert _parse(est._repr_html_(max_rows=4)).note.startswith("target: population")
    wide = _parse(dn.simulate(dn.GRR(61, epsilon=1.0), np.full(61, 1 / 61), 1_000, rng=6)._repr_html_())
    assert len(wide.rows) == 60 and wide.note.startswith("1 more categories")  # 60 rows by default


def test_mean_estimate_html_shows_delta_and_target() -> None:
    est = dn.MeanEstimate("test", 1.0, 0.3, 0.05, 0.08, 100, 0.0, 1.0, delta=1e-6, target="respondents")
    t = _parse(est._repr_html_())
    assert t.caption == "test, ε = 1, δ = 1e-06, n = 100"
    assert t.note == "target: respondents (the fixed set of respondents (a census))"
    pure = _parse(dn.MeanEstimate("test", 2.0, 0.3, 0.05, 0.05, 1_000, 0.0, 1.0)._repr_html_())
    assert pure.caption == "test, ε = 2, n = 1,000"
    assert pure.note == "target: population (the population the respondents were sampled from)"
