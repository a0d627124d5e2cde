"""deniable-embed.js in a real headless Chromium: loaded cross-origin with its integrity hash, calibrated.

A page of another origin (``about:blank``, as a platform's page is to the
deniable server) loads the classic build from the server's
``/static/deniable-embed.js`` with ``integrity`` (the manifest's sha384) and
``crossorigin="anonymous"``, and the ES module with ``import()``; a wrong hash
is refused by the browser. Then every case of tests/js/fixtures'
mechanisms.json and designs.json (every mechanism and survey design the
client has) is drawn in the page with Chromium's crypto.getRandomValues and
counted there; the chi-square statistic against the fixture's exact
distribution, its merged bins and critical value is computed here, and the
per-bit rates of the unary cases against their Wilson intervals. Server mode
(``Deniable.submit``) posts a response from a page of the server's own origin.

Alpha: the fixtures' critical values are at ``alpha_per_test``, each file
splitting 1e-6 over twice as many tests as are run here (seeded and crypto),
so this file spends less than 1e-6 (the probability that a correct sampler
fails any case). Each case's power check runs here too: its wrong configuration
(one probability off; power >= 1 - 1e-9 by the fixtures' generators) is
rejected.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "js"))
from node_env import ROOT, STATIC, chromium, sync_playwright_api  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.integration, pytest.mark.slow]

runner = pytest.importorskip("deniable.server._runner")

FIXTURES = ROOT / "tests" / "js" / "fixtures"
MANIFEST = json.loads((STATIC / "dist" / "deniable-embed.json").read_text())
SURVEY = {
    "id": "embedded", "title": "Server mode", "budget": 10, "rate_limit": "off",
    "questions": [
        {"id": "drug", "text": "Ever?", "type": "yes-no", "design": {"model": "FR", "p": ["1/6", "1/6"]}},
        {"id": "app", "text": "Which?", "type": "categorical", "categories": ["a", "b", "c"], "mechanism": "grr",
         "epsilon": 1},
    ],
}

DRAW = """async ([cases]) => {
  const out = [];
  for (const c of cases) {
    const value = Deniable.parseJSON(c.value);
    const reports = Deniable.fromConfig(c.config).privatizeMany(new Array(c.n).fill(value));
    const counts = {};
    if (c.bits) {
      const ones = new Array(c.bits).fill(0);
      for (const hex of reports) {
        for (let i = 0; i < c.bits; i++) ones[i] += (parseInt(hex.substr(2 * (i >> 3), 2), 16) >> (7 - (i & 7))) & 1;
      }
      out.push(ones);
      continue;
    }
    for (const r of reports) {
      const key = Deniable.stringify(r);
      counts[key] = (counts[key] ?? 0) + 1;
    }
    out.push(counts);
  }
  return out;
}"""


def _raw_cases(name: str, key: str) -> list[dict[str, Any]]:
    """A fixture file's cases with their configs and values as JSON text (wide integers kept exact)."""
    data = json.loads((FIXTURES / name).read_text())
    return [{**c, "config_text": json.dumps(c["config"]), "value_text": json.dumps(c["value"])} for c in data[key]]


def _chi_square(counts: dict[str, int], c: dict[str, Any]) -> tuple[float, str]:
    index = {key: i for i, key in enumerate(c["outputs"])}
    observed = [0.0] * len(c["group_probs"])
    for key, count in counts.items():
        if key not in index:
            return math.inf, f"impossible report {key}"
        observed[c["groups"][index[key]]] += count
    n = sum(counts.values())
    terms = [(o - p * n) ** 2 / (p * n) for o, p in zip(observed, c["group_probs"], strict=True)]
    return sum(terms), f"observed {observed}"


def _wilson_misses(ones: list[int], n: int, rates: list[float], z: float) -> list[str]:
    misses = []
    for i, (count, rate) in enumerate(zip(ones, rates, strict=True)):
        lam = count / n
        centre = (lam + z * z / (2 * n)) / (1 + z * z / n)
        half = z * math.sqrt(lam * (1 - lam) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        if not centre - half <= rate <= centre + half:
            misses.append(f"bit {i}: {lam:.5f} vs {rate:.5f}")
    return misses


@pytest.fixture(scope="module")
def page() -> Any:
    sync_api = sync_playwright_api()
    with runner.BackgroundServer([SURVEY]) as server, sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), headless=True, args=["--no-sandbox"])
        page = browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        integrity = MANIFEST["files"]["deniable-embed.js"]["integrity"]
        page.set_content(f'<script src="{server.url}/static/deniable-embed.js" integrity="{integrity}" '
                         'crossorigin="anonymous"></script>')
        page.wait_for_function("typeof Deniable === 'object'", timeout=30_000)
        yield {"page": page, "url": server.url, "errors": errors, "browser": browser}
        browser.close()


def test_the_page_loads_both_builds_cross_origin_with_their_hash(page: dict[str, Any]) -> None:
    p = page["page"]
    assert p.evaluate("Deniable.version") == MANIFEST["version"]
    module = p.evaluate("async (url) => { const m = await import(url); "
                        "return [m.version, typeof m.local, Object.keys(m.default).length]; }",
                        f"{page['url']}/static/deniable-embed.mjs")
    assert module == [MANIFEST["version"], "function", len(MANIFEST["exports"])]
    # a wrong hash: the browser refuses the script
    other = page["browser"].new_page()
    bad = "sha384-" + "A" * 64
    other.set_content(f'<script src="{page["url"]}/static/deniable-embed.js" integrity="{bad}" '
                      'crossorigin="anonymous"></script>')
    other.wait_for_timeout(500)
    assert other.evaluate("typeof Deniable") == "undefined"
    other.close()
    assert page["errors"] == []


@pytest.mark.parametrize("fixture", ["mechanisms.json", "designs.json"])
def test_chi_square_of_every_case_in_chromium(page: dict[str, Any], fixture: str) -> None:
    cases = _raw_cases(fixture, "chi_square")
    # the configs go as JSON text, parsed by the embed (wide integers exact)
    batch = [{"config": c["config_text"], "value": c["value_text"], "n": int(c["n"])} for c in cases]
    counts = page["page"].evaluate(DRAW, [batch])
    failures = []
    for c, got in zip(cases, counts, strict=True):
        statistic, detail = _chi_square(got, c)
        if not statistic <= c["critical"]:
            failures.append(f"{c['name']}: chi2 {statistic:.2f} > {c['critical']:.2f} ({detail})")
    assert failures == []
    # power: the same test on each case's wrong configuration (one probability off) rejects it
    wrong = [{**item, "config": json.dumps(c["wrong_config"])} for item, c in zip(batch, cases, strict=True)]
    passed = [c["name"] for c, got in zip(cases, page["page"].evaluate(DRAW, [wrong]), strict=True)
              if _chi_square(got, c)[0] <= c["critical"]]
    assert passed == []
    assert page["errors"] == []


def test_per_bit_rates_in_chromium(page: dict[str, Any]) -> None:
    cases = _raw_cases("mechanisms.json", "bits")
    batch = [{"config": c["config_text"], "value": c["value_text"], "n": int(c["n"]), "bits": len(c["rates"])}
             for c in cases]
    ones = page["page"].evaluate(DRAW, [batch])
    for c, got in zip(cases, ones, strict=True):
        assert _wilson_misses(got, int(c["n"]), c["rates"], c["z_critical"]) == [], c["name"]


def test_server_mode_posts_from_chromium(page: dict[str, Any]) -> None:
    """Deniable.submit in Chromium, from a page of the server's own origin (a platform's origin needs the
    survey's embed origins on the server): the response is stored and holds only the reports."""
    other = page["browser"].new_page()
    other.goto(f"{page['url']}/static/deniable-embed.json")
    other.add_script_tag(url=f"{page['url']}/static/deniable-embed.js")
    result = other.evaluate("""() => Deniable.submit({ server: location.origin, survey: 'embedded',
                                                      answers: { drug: true, app: 'b' } })""")
    other.close()
    assert result["ok"] and result["status"] in (200, 201), result
    body = json.loads(result["body"])
    assert set(body) == {"idempotency_key", "wire_version", "reports"}
    assert body["reports"]["drug"] in (True, False) and body["reports"]["app"] in ("a", "b", "c")
