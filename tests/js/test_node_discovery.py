"""Free-text answers randomized by the browser client (discovery.js) under node, decoded in Python.

* the checked-in fixture of discovery.test.mjs (its calibrated chi-square tests run in
  ``node --test tests/js/``, see test_node_client.py) is what the generator builds now;
* reports made by discovery.js pass ``HeavyHitters.reports_from_json`` byte for byte (the
  canonical wire form) and ``identify`` finds the frequent values of a Zipf list with their
  counts: each of the three most frequent (60,000 devices at epsilon 5: the third stands
  7.5 standard errors or more above 0, where the selection needs about 3, so a correct client
  misses it with probability below 1e-6) is found and its estimated count is within
  z = 5.33 standard errors of the truth (two-sided alpha 1e-7 each, 1e-6 in all with the
  runs below); with the reports decoded under another seed (a power check: a JS hash that
  were not Python's) none of them is found. With an alphabet (lowercase letters and digits,
  every value's characters) the same holds, Python decoding with the alphabet's narrower
  search; a value with another character is refused by discovery.js (nothing printed) as
  Python refuses it, naming its position.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest
from node_env import ROOT, node, run_node
from scipy import stats

from deniable.heavy import HeavyHitters

pytestmark = pytest.mark.browser

HERE = ROOT / "tests" / "js"
ALPHA_EACH = 1e-6 / 10  # 3 values x 3 cases, and margin
Z = float(stats.norm.isf(ALPHA_EACH / 2))

WORDS = ["vim", "emacs", "nano", "helix", "kakoune", "micro", "zed", "ed"]
LOWER_AND_DIGITS = "abcdefghijklmnopqrstuvwxyz0123456789"


def _zipf_values(n: int) -> list[str]:
    """A fixed population: Zipf(1.1) shares over WORDS (rounded) and a tail of unique words."""
    weights = 1 / np.arange(1, len(WORDS) + 1) ** 1.1
    counts = np.floor(0.8 * n * weights / weights.sum()).astype(int)
    values = [w for w, c in zip(WORDS, counts, strict=True) for _ in range(c)]
    return values + [f"t{i:05d}" for i in range(n - len(values))]


def test_fixture_is_current() -> None:
    proc = subprocess.run(
        [sys.executable, str(HERE / "fixtures" / "make_discovery_fixtures.py"), "--check"],
        capture_output=True, text=True, cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize(("method", "oracle", "alphabet"),
                         [("pem", "cms", None), ("pem", "hcms", None), ("pem", "cms", LOWER_AND_DIGITS)])
def test_js_reports_are_identified_in_python(method: str, oracle: str, alphabet: str | None) -> None:
    values = _zipf_values(60_000)
    h = HeavyHitters(epsilon=5.0, method=method, oracle=oracle, max_length=7, top_k=16, rows=64, width=256,
                     seed=bytes(range(32)), alphabet=alphabet)
    assert h.to_config().get("alphabet") == alphabet
    reports = run_node(HERE / "discovery_cli.mjs", {"config": h.to_config(), "values": values,
                                                    "seed": f"{method}-{oracle}-{alphabet}"}, timeout=300)
    parsed = h.reports_from_json(reports)
    assert h.reports_to_json(parsed) == reports  # the canonical wire form, byte for byte
    found = h.identify(h.aggregate(parsed))
    truth = Counter(values)
    for word, count in truth.most_common(3):
        assert word in found.values, f"{word} ({count} devices) not found; found {found.values}"
        i = found.values.index(word)
        assert abs(found.counts[i] - count) <= Z * found.std_errors[i], (word, count, found.counts[i])
    # power check: decoded with another seed, the same reports find none of them
    other = HeavyHitters.from_config({**h.to_config(), "sketch": {
        **h.to_config()["sketch"], "params": {**h.to_config()["sketch"]["params"], "seed": "ab" * 32}}})
    lost = other.identify(other.aggregate(other.reports_from_json(reports)))
    assert not set(lost.values) & {w for w, _ in truth.most_common(3)}


@pytest.mark.parametrize("oracle", ["cms", "hcms"])
def test_js_sfp_reports_are_the_wire_form(oracle: str) -> None:
    """SFP reports (fragment and word) from discovery.js pass ``reports_from_json`` byte for byte
    (their distribution is tested in discovery.test.mjs)."""
    h = HeavyHitters(epsilon=4.0, method="sfp", oracle=oracle, max_length=5, rows=8, width=64, seed=bytes(32))
    values = ["vim", "emacs", "日本", "a longer text", ""] * 20
    reports = run_node(HERE / "discovery_cli.mjs", {"config": h.to_config(), "values": values, "seed": "sfp"})
    assert all(set(r) == {"level", "sketch", "word"} for r in reports)
    assert h.reports_to_json(h.reports_from_json(reports)) == reports


def test_js_refuses_a_value_outside_the_alphabet_as_python_does() -> None:
    h = HeavyHitters(epsilon=5.0, method="pem", max_length=7, rows=8, width=64, seed=bytes(32),
                     alphabet=LOWER_AND_DIGITS)
    values = ["vim", "emacs", "Vim", "nano"]
    with pytest.raises(ValueError, match=r"values\[2\] has the character 'V', not in the alphabet"):
        h.privatize_many(values)
    proc = subprocess.run([node(), str(HERE / "discovery_cli.mjs")], input=json.dumps(
        {"config": h.to_config(), "values": values}), capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode != 0 and proc.stdout == ""
    assert 'values[2]: has the character "V", not in the alphabet; got "Vim"' in proc.stderr
