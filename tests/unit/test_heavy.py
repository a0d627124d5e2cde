"""HeavyHitters: items, bad input, merging, identify's filters and frame."""

from __future__ import annotations

import base64
import json
import zlib

import numpy as np
import pytest

import deniable as dn
from deniable._intervals import z_for
from deniable.errors import AggregateError
from deniable.heavy import HeavyStat
from deniable.heavy._items import Items
from deniable.mechanisms._sketch import SketchCounts


def make(**kw: object) -> dn.HeavyHitters:
    return dn.HeavyHitters(epsilon=kw.pop("epsilon", 6.0), max_length=kw.pop("max_length", 4),  # type: ignore[arg-type]
                           top_k=8, rows=16, width=256, seed=bytes(32), **kw)  # type: ignore[arg-type]


def test_items_mark_end_and_cut() -> None:
    hh = make()
    items, inverse = hh.items(["ab", "", "abcd", "abcde", "abcdé", "ab"])
    assert items[0] == b"ab\xff\xff\xff" and items[1] == b"\xff" * 5 and items[2] == b"abcd\xff"
    assert items[3] == b"abcd\xfe"  # cut after 4 bytes, flagged: not the same item as "abcd"
    assert items[4] == b"abcd\xfe"  # "é" does not fit: cut at the character boundary
    assert inverse.tolist() == [0, 1, 2, 3, 4, 0]
    assert make(max_length=5).items(["abcdé"])[0][0] == b"abcd\xfe\xff"
    # a first character longer than max_length: nothing of it is kept (not its lead byte alone)
    assert make(max_length=1).items(["é"])[0][0] == b"\xfe\xff"
    assert make(max_length=2).items(["€"])[0][0] == b"\xfe\xff\xff"
    assert make(max_length=1).levels == 2 and make(max_length=254).levels == 255  # both ends of 1..254


def test_text_extensions_follow_utf8() -> None:
    """Every byte of every item is among the extensions of its prefix; bytes no UTF-8 item holds are not."""
    items_of = make(max_length=6).items_of
    values = ["", "abc", "abcdef", "abcdefg", "xé", "é", "😀ok", "abcdeé", "ab😀", "\x00\x7f", "\ud7ff\ue000",
              "\U0010ffff"]
    for item in items_of.encode(values)[0]:
        for i in range(len(item)):
            assert item[i] in items_of.extensions(item[:i]), (item, i)
    after_char = set(items_of.extensions(b"ab"))  # 4 bytes of room: no cut yet
    assert len(after_char) == 180 and {0xC0, 0xC1, 0xF5, 0xFD, 0x80, 0xBF, 0xFE}.isdisjoint(after_char)
    assert 0xFE in items_of.extensions(b"abc") and 0xF0 not in items_of.extensions(b"abc")  # 3 bytes of room
    assert list(items_of.extensions(b"abcdef")) == [0xFF, 0xFE]
    assert list(items_of.extensions(b"\xe0")) == list(range(0xA0, 0xC0))  # no overlong 3-byte form
    assert list(items_of.extensions(b"\xe2\x82")) == list(range(0x80, 0xC0))
    assert list(items_of.extensions(b"\xe0\xa0")) == list(range(0x80, 0xC0))  # 0xE0 leads 3 bytes, not 2
    assert 0x41 in items_of.extensions(b"\xdf\x80") and 0x80 not in items_of.extensions(b"\xdf\x80")  # 2 bytes
    assert list(items_of.extensions(b"a\xfe")) == [0xFF]
    assert items_of.finished(b"a\xff") and items_of.finished(b"ab\xfe") and not items_of.finished(b"ab")
    assert items_of.padded(b"a\xff", 4) == b"a\xff\xff\xff"
    assert list(make(kind="integer").items_of.extensions(b"\x00")) == list(range(256))


def test_found_items_pool_every_level_after_their_end() -> None:
    """A value ending at byte ``e`` is estimated from every level ``>= e + 1`` (weights = the levels' reports)."""
    hh = make()
    values = ["ab"] * 3000 + ["abcd"] * 3000 + [f"t{i}" for i in range(4000)]
    stat = hh.aggregate(hh.privatize_many(values, rng=9))
    items, f, se, tests = hh.protocol.candidates(stat)
    ab, abcd = items.index(b"ab\xff\xff\xff"), items.index(b"abcd\xff")
    counts = np.array([s.n for s in stat.levels], dtype=float)
    own = []
    for level in range(3, 6):  # "ab" ends at byte 3: levels 3, 4 and 5 hold its whole item
        key = bytes([level]) + items[ab][:level]
        own.append(hh.oracle.estimate_keys(stat.levels[level - 1], [key], np.array([0]), (0,)).frequencies[0])
    pooled = counts[2:] @ np.array(own) / counts[2:].sum()
    assert f[ab] == pytest.approx(pooled, abs=0.02)  # the same up to the collision correction
    assert se[ab] < se[abcd]  # three levels against one
    assert tests == len(items) and abs(f[ab] - 0.3) < 5 * se[ab] and abs(f[abcd] - 0.3) < 5 * se[abcd]


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match=r"method must be one of \['pem', 'sfp'\] or None; got 'tree'"):
        dn.HeavyHitters(epsilon=1, method="tree")
    with pytest.raises(ValueError, match=r"kind must be one of \['text', 'integer'\]; got 'float'"):
        dn.HeavyHitters(epsilon=1, kind="float")
    for bad in (0, 255):  # a level is one byte: at most 255 levels, max_length + 1
        with pytest.raises(ValueError, match=rf"^max_length must be an integer in 1..254 \(bytes\); got {bad}$"):
            dn.HeavyHitters(epsilon=1, max_length=bad)
    with pytest.raises(ValueError, match="top_k"):
        dn.HeavyHitters(epsilon=1, top_k=0)
    hh = make()
    with pytest.raises(ValueError, match=r"values\[1\] is not valid UTF-8"):
        hh.privatize_many(["a", b"\xc3"])
    with pytest.raises(TypeError, match=r"values\[0\] must be a string"):
        hh.privatize_many([3])
    reports = hh.privatize_many(["a"] * 5, rng=1)
    bad = reports.copy()
    bad["level"][2] = 9
    with pytest.raises(ValueError, match="report 2: level must be in 1..5; got 9"):
        hh.aggregate(bad)
    with pytest.raises(ValueError, match="structured array with fields"):
        hh.aggregate(np.zeros(3))
    with pytest.raises(TypeError, match="HeavyStat"):
        hh.identify(hh.oracle.aggregate([]))  # type: ignore[arg-type]


def test_levels_merge_and_refuse_other_configs() -> None:
    hh = make()
    reports = hh.privatize_many(["x", "yy", "zzz"] * 100, rng=2)
    whole = hh.aggregate(reports)
    assert isinstance(whole, HeavyStat) and whole.n == 300 and len(whole.levels) == 5
    merged = hh.aggregate(reports[:123]) + hh.aggregate(reports[123:])
    assert all(a == b for a, b in zip(merged.levels, whole.levels, strict=True))
    assert sorted(set(reports["level"].tolist())) == [1, 2, 3, 4, 5]
    back = hh.aggregate_from_json(whole.to_json())
    assert all(a == b for a, b in zip(back.levels, whole.levels, strict=True))
    with pytest.raises(AggregateError, match="levels"):
        hh.aggregate_from_json({**_old_form(whole), "levels": _old_form(whole)["levels"][:2]})  # type: ignore[index]
    with pytest.raises(AggregateError, match="fields 'fingerprint' and 'levels'"):
        hh.aggregate_from_json([])
    other = dn.HeavyHitters(epsilon=6.0, max_length=4, top_k=8, rows=16, width=256, seed=bytes(range(32)))
    with pytest.raises(AggregateError):
        other.identify(whole)


def test_identify_filters_and_frame() -> None:
    hh = make()
    values = ["apple"] * 2000 + ["pear"] * 1500 + [""] * 1000 + [f"t{i}" for i in range(500)]
    stat = hh.aggregate(hh.privatize_many(values, rng=3))
    found = hh.identify(stat)
    assert found.values[:3] == ("appl", "pear", "") and found.truncated[:3].tolist() == [True, False, False]
    assert hh.identify(stat, top=1).values == ("appl",)
    assert len(hh.identify(stat, threshold=10**9)) == 0
    frame = found.to_frame()
    assert list(frame.columns) == ["value", "count", "std_error", "ci_low", "ci_high", "truncated"]
    assert (frame["ci_low"] < frame["count"]).all() and (frame["count"] < frame["ci_high"]).all()
    assert len(hh.identify(hh.aggregate(hh.privatize_many([], rng=4)))) == 0


def test_integer_items_are_order_free_and_exact() -> None:
    hh = make(kind="integer")
    items, inverse = hh.items([5, -1, 0, 2**63 - 1, -(2**63), 5, np.int64(-1)])
    assert hh.levels == 8 and all(len(i) == 8 for i in items)
    assert [hh.items_of.decode(i)[0] for i in items] == [-(2**63), -1, 0, 5, 2**63 - 1]
    assert inverse.tolist() == [3, 1, 2, 4, 0, 3, 1]
    with pytest.raises(TypeError, match=r"values\[1\] must be an integer; got bool True"):
        hh.privatize_many([1, True])
    with pytest.raises(TypeError, match=r"values\[0\] must be an integer; got str 'a'"):
        hh.privatize_many(["a"])
    with pytest.raises(ValueError, match=r"values\[0\] must be in -2\*\*63..2\*\*63-1; got 9223372036854775808"):
        hh.privatize_many([2**63])
    with pytest.raises(TypeError, match="^values must be a sequence of integers; got a single str$"):
        hh.privatize_many("12")
    assert hh.items_of.options == 256


def test_integers_identified_with_their_type() -> None:
    """Fixed seeds; the two planted integers hold 50% and 33% of 6,000 devices at epsilon 8, about 20 and
    13 standard errors above anything else, so a correct implementation misses them with probability far
    below 1e-6. Power: the ``kind`` test above fails if integers are read as text."""
    for method in ("pem", "sfp"):
        hh = make(kind="integer", method=method, epsilon=8.0)
        values = [-7] * 3000 + [2**40] * 2000 + list(range(100, 1100))
        found = hh.identify(hh.aggregate(hh.privatize_many(values, rng=5)))
        assert found.values[:2] == (-7, 2**40) and not found.truncated.any(), (method, found)


def test_sfp_reports_aggregate_and_merge() -> None:
    hh = make(method="sfp")
    assert hh.method == "sfp" and hh.epsilon == pytest.approx(2 * hh.oracle.epsilon) and hh.epsilon <= 6.0
    reports = hh.privatize_many(["x", "yy", "zzz"] * 100, rng=2)
    assert {f"word_{f}" for f in hh.oracle.dtype.names or ()} < set(reports.dtype.names or ())
    whole = hh.aggregate(reports)
    assert whole.n == 300 and whole.word is not None and whole.word.n == 300 and len(whole.levels) == 5
    merged = hh.aggregate(reports[:123]) + hh.aggregate(reports[123:])
    assert merged.word == whole.word and all(a == b for a, b in zip(merged.levels, whole.levels, strict=True))
    back = hh.aggregate_from_json(whole.to_json())
    assert back.word == whole.word
    no_word = {k: v for k, v in _old_form(whole).items() if k != "word"}
    with pytest.raises(AggregateError, match="'word' is missing"):
        hh.aggregate_from_json(no_word)
    pem = make()
    with pytest.raises(AggregateError, match="another mechanism configuration"):
        pem.aggregate_from_json(whole.to_json())
    with pytest.raises(AggregateError, match="different levels"):
        whole + HeavyStat(whole.fingerprint, whole.levels)


def test_sfp_identifies_and_filters() -> None:
    """Fixed seed. Each planted count is within 5 standard errors (6e-7 each to fail for a correct
    estimator); a missing debias would put ``appl`` near its raw support share, dozens of SEs off."""
    hh = make(method="sfp", epsilon=8.0)
    values = ["apple"] * 2000 + ["pear"] * 1500 + [""] * 1000 + [f"t{i}" for i in range(500)]
    found = hh.identify(hh.aggregate(hh.privatize_many(values, rng=3)))
    assert found.values[:3] == ("appl", "pear", "") and found.truncated[:3].tolist() == [True, False, False]
    assert np.all(np.abs(found.counts[:3] - [2000, 1500, 1000]) < 5 * found.std_errors[:3])
    assert len(hh.identify(hh.aggregate(hh.privatize_many([], rng=4)))) == 0


def test_default_method_and_oracle() -> None:
    """The default is the protocol and sketch of the least detectable share (PEM over CMS here)."""
    for epsilon in (0.5, 2.0, 4.0, 8.0):
        hh = dn.HeavyHitters(epsilon=epsilon, max_length=6)
        assert hh.method == "pem" and hh.oracle.wire_id == "cms", epsilon
    assert dn.HeavyHitters(epsilon=4.0, method="sfp").oracle.wire_id == "cms"
    assert repr(dn.HeavyHitters(epsilon=4.0, kind="integer", rows=4, width=8, seed=bytes(32))) == (
        "HeavyHitters(method='pem', kind='integer', max_length=8, top_k=32, "
        "oracle=CountMeanSketch(rows=4, width=8, epsilon=4), epsilon=4)"
    )


def test_default_is_sfp_where_its_share_is_smaller() -> None:
    """With more than 65,536 prefixes tested per level (``o top_k``: 180 x 4,096 for text) PEM's z exceeds
    SFP's fragment z, and at a high epsilon halving the budget barely raises the variance: at epsilon 16
    and ``top_k`` 4,096 SFP's least share is 5.91 ``sqrt(n)`` against PEM's 5.99, so the default is SFP.
    With an alphabet the default is PEM even where SFP's share would be smaller (epsilon 30: 5.47 against
    5.57 with 26 letters): SFP takes no alphabet. At most 65,536 prefixes (integers, ``top_k`` 256): PEM
    at any epsilon."""
    from deniable.heavy._hitters import ORACLES, PROTOCOLS, _per_report_variance

    def share(method: str, epsilon: float, alphabet: str | None) -> float:
        protocol = PROTOCOLS[method]
        sketch = ORACLES["cms"](epsilon=epsilon / protocol.budget_share, rows=1, width=8, seed=bytes(32))
        probe = protocol(Items("text", 8, alphabet), sketch, 4096)
        return probe.detectable(_per_report_variance("cms", epsilon / protocol.budget_share))

    assert share("sfp", 16.0, None) < share("pem", 16.0, None)
    assert share("sfp", 30.0, "abcdefghijklmnopqrstuvwxyz") < share("pem", 30.0, "abcdefghijklmnopqrstuvwxyz")
    assert dn.HeavyHitters(epsilon=16.0, top_k=4096).method == "sfp"
    assert dn.HeavyHitters(epsilon=30.0, top_k=4096, alphabet="abcdefghijklmnopqrstuvwxyz").method == "pem"
    assert dn.HeavyHitters(epsilon=40.0, kind="integer", top_k=256).method == "pem"


def test_identify_is_one_sided_bonferroni_over_the_candidates(monkeypatch: pytest.MonkeyPatch) -> None:
    """``identify`` keeps the candidates with ``f > z(0.05 / tests) SE``, one-sided: with 6 tests (z 2.39;
    two-sided 2.64) one at z 2.52 is kept and one at 2.30 is not; with one test (z 1.64; ``z(0.05 / 2)``
    1.96) one at z 1.80 is kept."""
    hh = dn.HeavyHitters(epsilon=4.0, method="pem", max_length=2, rows=4, width=8, seed=bytes(32))
    stat = hh.aggregate(hh.privatize_many(["ab"] * 100, rng=1))
    se = np.full(2, 0.01)
    for shares, tests in (([0.02516, 0.023], 6), ([0.018, 0.0], 1)):
        scripted = ([b"ab\xff", b"cd\xff"], np.array(shares), se, tests)
        monkeypatch.setattr(hh.protocol, "candidates", lambda stat, scripted=scripted: scripted)
        assert hh.identify(stat).values == ("ab",), tests


def test_default_width_is_the_narrowest_within_a_tenth_of_the_widest_variance() -> None:
    """``width=None``: the narrowest CMS of 64..1,024 buckets whose variance per report is within 10% of
    1,024's (each narrower one is not), so the sketch epsilon sets it; HCMS keeps 1,024; a given width stays."""
    from deniable.heavy._hitters import WIDTHS

    def variance(width: int, epsilon: float) -> float:
        return float(dn.CountMeanSketch(epsilon=epsilon, rows=1, width=width, seed=bytes(32)).variance(1))

    for epsilon, want in [(0.5, 64), (2.0, 64), (3.0, 64), (4.0, 128), (6.0, 256), (8.0, 512), (12.0, 1024)]:
        assert dn.HeavyHitters(epsilon=epsilon, max_length=6, oracle="cms").oracle.width == want, epsilon
        widest = variance(WIDTHS[-1], epsilon)
        assert variance(want, epsilon) <= 1.1 * widest
        assert all(variance(w, epsilon) > 1.1 * widest for w in WIDTHS if w < want), epsilon
    # SFP's two reports run at epsilon / 2 each: its sketch is that of PEM at half the epsilon
    assert dn.HeavyHitters(epsilon=8.0, method="sfp", oracle="cms").oracle.width == 128
    assert dn.HeavyHitters(epsilon=8.0, oracle="hcms").oracle.width == 1024
    assert dn.HeavyHitters(epsilon=8.0, oracle="cms", width=32).oracle.width == 32


@pytest.mark.parametrize("method", ["pem", "sfp"])
@pytest.mark.parametrize("oracle", ["cms", "hcms"])
def test_config_and_reports_round_trip_as_json(method: str, oracle: str) -> None:
    import json

    hh = dn.HeavyHitters(epsilon=3.0, method=method, oracle=oracle, kind="text", max_length=4, top_k=8,
                         rows=8, width=16)
    back = dn.HeavyHitters.from_config(json.dumps(hh.to_config()))
    assert back.fingerprint == hh.fingerprint and back.epsilon == hh.epsilon and back.method == method
    reports = hh.privatize_many(["ab", "c", "ab"] * 5, rng=1)
    sent = json.loads(json.dumps(hh.reports_to_json(reports)))
    assert set(sent[0]) == ({"level", "sketch"} if method == "pem" else {"level", "sketch", "word"})
    received = back.reports_from_json(sent)
    assert (received == reports).all()
    assert back.aggregate(received).to_json() == hh.aggregate(reports).to_json()


def test_config_refusals_name_the_field() -> None:
    hh = dn.HeavyHitters(epsilon=3.0, method="sfp", kind="integer", top_k=8, rows=8, width=16)
    config = hh.to_config()
    assert config["kind"] == "integer" and config["sketch"]["mechanism"] == "cms"
    for change, message in [
        ({"format": "deniable.mechanism"}, "'format'/'version' must be 'deniable.discovery'/1"),
        ({"method": "tree"}, "'method' must be one of \\['pem', 'sfp'\\]; got 'tree'"),
        ({"kind": "float"}, "kind must be one of"),
        ({"top_k": 0}, "top_k must be an integer in 1..4096"),
        ({"max_length": True}, "max_length must be an integer"),
        ({"epsilon": 2.0}, "'epsilon' says 2.0 but the parameters give"),
        ({"sketch": dn.GRR(["a", "b"], epsilon=1.0).to_config()}, "'sketch' must configure one of"),
        ({"extra": 1}, "fields \\['epsilon', 'format'"),
    ]:
        with pytest.raises(dn.ConfigError, match=message):
            dn.HeavyHitters.from_config({**config, **change})
    with pytest.raises(dn.ConfigError, match="not valid JSON"):
        dn.HeavyHitters.from_config("{")


def test_json_reports_refusals_name_the_report() -> None:
    hh = dn.HeavyHitters(epsilon=3.0, method="sfp", max_length=4, top_k=8, rows=8, width=16)
    good = hh.reports_to_json(hh.privatize_many(["ab", "c"], rng=2))
    with pytest.raises(dn.ReportError, match="JSON array"):
        hh.reports_from_json({"level": 1})
    with pytest.raises(dn.ReportError, match="report 1: report must be an object with fields") as err:
        hh.reports_from_json([good[0], {"level": 1, "sketch": good[1]["sketch"]}])
    assert err.value.index == 1
    with pytest.raises(dn.ReportError, match="level must be an integer in 1..5; got 6") as err:
        hh.reports_from_json([good[0], {**good[1], "level": 6}])
    assert err.value.index == 1
    with pytest.raises(dn.ReportError) as err:
        hh.reports_from_json([good[0], {**good[1], "word": {"row": 99, "bits": "00"}}])
    assert err.value.index == 1


def _old_form(stat: HeavyStat) -> dict[str, object]:
    """The aggregate's JSON before the packed encoding (rows stored then stay readable)."""
    old: dict[str, object] = {"fingerprint": stat.fingerprint, "levels": [s.to_json() for s in stat.levels]}
    if stat.word is not None:
        old["word"] = stat.word.to_json()
    return old


@pytest.mark.parametrize("method", ["pem", "sfp"])
def test_packed_aggregate_round_trip_and_old_form(method: str) -> None:
    hh = make(method=method)
    stat = hh.aggregate(hh.privatize_many(["x", "yy", "zzz"] * 100, rng=4))
    packed = json.loads(json.dumps(stat.to_json()))
    assert packed["encoding"] == "deniable.packed-sketches/1" and packed["dtype"] == "<i4"
    assert len(json.dumps(packed)) < len(json.dumps(_old_form(stat))) / 3
    for data in (packed, _old_form(stat)):
        back = hh.aggregate_from_json(data)
        assert all(a == b for a, b in zip(back.levels, stat.levels, strict=True))
        assert (back.word is None) == (method == "pem") and (back.word is None or back.word == stat.word)
    empty = hh.aggregate(hh.privatize_many([], rng=5))
    assert hh.aggregate_from_json(json.loads(json.dumps(empty.to_json()))).n == 0


def test_packed_aggregate_refuses_malformed() -> None:
    hh = make()
    packed = hh.aggregate(hh.privatize_many(["x", "yy"] * 50, rng=6)).to_json()
    bad_table = base64.b64encode(zlib.compress(b"\0" * 12)).decode()
    cases = [
        ({"encoding": "other"}, "'encoding' must be"),
        ({"table": "not base64!"}, "'table' must be base64"),
        ({"table": bad_table}, "'table' must hold"),
        ({"dtype": "<f8"}, "'dtype' must be one of"),
        ({"shape": [5, 16]}, "'shape' must be"),
        ({"row_counts": [[1] * 16] * 4}, "'row_counts' must be 5 lists of 16"),
        ({"row_counts": [[0] * 16] * 5}, "integers in -n..n"),
        ({"word": 1}, "'word' must be true or false"),
        ({"extra": 1}, "must have the fields"),
    ]
    for change, message in cases:
        with pytest.raises(AggregateError, match=message):
            hh.aggregate_from_json({**packed, **change})


def test_refusals_name_what_they_got() -> None:
    """Each refusal says what it was given, and a report's ``reason`` is phrased for that report alone."""
    hh = make(method="sfp")
    with pytest.raises(dn.ConfigError, match=r"\(optionally \['alphabet'\]\); got list$"):
        dn.HeavyHitters.from_config([1])  # type: ignore[arg-type]
    with pytest.raises(dn.ConfigError, match="^discovery config: alphabet must be a non-empty string of distinct "
                                             r"ASCII characters \(or absent\); got None$"):
        dn.HeavyHitters.from_config({**make().to_config(), "alphabet": None})
    with pytest.raises(dn.ReportError, match="^reports must be a JSON array; got dict$"):
        hh.reports_from_json({"level": 1})
    good = hh.reports_to_json(hh.privatize_many(["ab", "c"], rng=2))
    with pytest.raises(dn.ReportError) as err:
        hh.reports_from_json([good[0], {"level": 1}])
    assert err.value.reason.startswith("report must be an object with fields ['level', 'sketch', 'word']; got")
    with pytest.raises(dn.ReportError, match=r"^report 1: report level must be an integer in 1\.\.5; got True$") as err:
        hh.reports_from_json([good[0], {**good[1], "level": True}])
    assert err.value.reason == "report level must be an integer in 1..5; got True"
    with pytest.raises(TypeError, match="^identify needs a HeavyStat aggregate; got SketchCounts$"):
        hh.identify(hh.oracle.aggregate([]))  # type: ignore[arg-type]


def test_config_epsilon_must_match_to_12_digits() -> None:
    config = make().to_config()
    with pytest.raises(dn.ConfigError, match="'epsilon' says"):
        dn.HeavyHitters.from_config({**config, "epsilon": config["epsilon"] * (1 + 1e-10)})
    close = {**config, "epsilon": config["epsilon"] * (1 + 1e-13)}
    assert dn.HeavyHitters.from_config(close).epsilon == config["epsilon"]


def test_aggregate_word_must_match_the_method_and_sketch() -> None:
    """A PEM aggregate with a word sketch is refused as such; an SFP aggregate's word sketch must be this
    configuration's (rows, width and seed), as its levels must."""
    pem, sfp = make(), make(method="sfp")
    levels = _old_form(pem.aggregate(pem.privatize_many(["ab"] * 20, rng=1)))["levels"]
    with pytest.raises(AggregateError, match="^discovery aggregate: 'word' is unexpected$"):
        pem.aggregate_from_json({"fingerprint": pem.fingerprint, "levels": levels, "word": levels[0]})  # type: ignore[index]
    good = _old_form(sfp.aggregate(sfp.privatize_many(["ab"] * 20, rng=1)))
    narrow = dn.CountMeanSketch(epsilon=sfp.oracle.epsilon, rows=16, width=128, seed=bytes(32))
    with pytest.raises(AggregateError):
        sfp.aggregate_from_json({**good, "word": narrow.aggregate(narrow.privatize_many(["ab"], rng=1)).to_json()})


def test_identify_threshold_is_an_estimated_count() -> None:
    """``threshold``: the values whose estimated count (share times ``n``) is at least it, the bound included."""
    hh = make()
    values = ["apple"] * 2000 + ["pear"] * 1500 + [""] * 1000 + [f"t{i}" for i in range(500)]
    stat = hh.aggregate(hh.privatize_many(values, rng=3))
    found = hh.identify(stat)
    at_pear = hh.identify(stat, threshold=float(found.counts[1]))
    assert at_pear.values == found.values[:2] and at_pear.counts.tolist() == found.counts[:2].tolist()


def test_alphabet_extends_the_fingerprint() -> None:
    assert make(alphabet="ab").fingerprint == make().fingerprint + ":alphabet=6162"


def test_bad_levels_name_the_first_bad_report() -> None:
    hh = make()
    bad = hh.privatize_many(["a"] * 6, rng=1)
    bad["level"][:4] = [1, 5, 1, 0]
    with pytest.raises(ValueError, match="^report 3: level must be in 1..5; got 0$"):
        hh.aggregate(bad)
    with pytest.raises(ValueError, match=r"fields \['level', 'row', 'bits'\]; got float64$"):
        hh.aggregate(np.zeros(3))


def test_identify_counts_and_intervals_are_scaled_by_n() -> None:
    """Counts ``f n``, SEs ``SE n``, the interval ``(f -+ z SE) n`` at the given level, and ``n`` itself."""
    hh = make()
    values = ["apple"] * 2000 + ["pear"] * 1500 + [""] * 1000 + [f"t{i}" for i in range(500)]
    stat = hh.aggregate(hh.privatize_many(values, rng=3))
    found = hh.identify(stat, level=0.9)
    z = z_for(0.1)
    assert found.n == stat.n == 5000 and found.level == 0.9
    assert found.ci_low == pytest.approx(found.counts - z * found.std_errors, rel=1e-12)
    assert found.ci_high == pytest.approx(found.counts + z * found.std_errors, rel=1e-12)


def test_top_k_oracle_and_rows_bounds() -> None:
    """``top_k`` is an integer in 1..4096 (not a bool); the oracle is named; 256 sketch rows by default."""
    for bad in (True, 4097):
        with pytest.raises(ValueError, match=rf"^top_k must be an integer in 1\.\.4096; got {bad}$"):
            dn.HeavyHitters(epsilon=4.0, top_k=bad)
    assert dn.HeavyHitters(epsilon=4.0, top_k=4096).top_k == 4096
    with pytest.raises(ValueError, match=r"^oracle must be one of \['hcms', 'cms'\] or None; got 'grr'$"):
        dn.HeavyHitters(epsilon=4.0, oracle="grr")
    with pytest.raises(ValueError, match=r"^alphabet applies to method 'pem' only \(SFP's one-byte fragments"):
        dn.HeavyHitters(epsilon=4.0, method="sfp", alphabet="ab")
    assert dn.HeavyHitters(epsilon=4.0).oracle.rows == 256


def _sketch(table: list[list[int]], rows: list[int]) -> SketchCounts:
    return SketchCounts("s", np.array(table, dtype=np.int64), np.array(rows, dtype=np.int64))


def _packed(**change: object) -> dict[str, object]:
    """A packed aggregate of 2 sketches (1 x 2 each; PEM's 2 levels, or SFP's level and word) with ``change``."""
    data = HeavyStat("f", (_sketch([[1, 0]], [1]), _sketch([[2, 1]], [3]))).to_json()
    return {**data, **change}


def _refused(data: object) -> str:
    with pytest.raises(AggregateError) as err:
        HeavyStat.from_json(data)
    return str(err.value)


def test_packed_aggregate_counts_of_32_and_64_bits() -> None:
    """Tables pack as 32-bit integers up to 2**31 - 1 and as 64-bit ones from 2**31 (either sign); back as int64."""
    for big, dtype in [(2**31 - 1, "<i4"), (2**31, "<i8"), (-(2**31), "<i8"), (2**40, "<i8")]:
        stat = HeavyStat("f", (_sketch([[big, 0]], [2**41]), _sketch([[1, 0]], [1])))
        data = json.loads(json.dumps(stat.to_json()))
        assert data["dtype"] == dtype and data["shape"] == [2, 1, 2], big
        back = HeavyStat.from_json(data)
        assert all(a == b for a, b in zip(back.levels, stat.levels, strict=True)) and back.fingerprint == "f"
        assert back.levels[0].table.dtype == np.int64 and back.levels[0].row_counts.dtype == np.int64


def test_merge_keeps_the_fingerprint_and_refuses_other_shapes() -> None:
    a = HeavyStat("f", (_sketch([[1, 0]], [1]), _sketch([[2, 1]], [3])))
    merged = a + a
    assert merged.fingerprint == "f" and merged.n == 8 and merged.word is None
    assert merged.levels[1].table.tolist() == [[4, 2]]
    with_word = HeavyStat("f", (_sketch([[1, 0]], [1]),), _sketch([[2, 1]], [3]))
    assert (with_word + with_word).word == _sketch([[4, 2]], [6])
    assert HeavyStat.from_json(with_word.to_json()).word == with_word.word  # one level and the word
    for other in (HeavyStat("f", (_sketch([[1, 0]], [1]),)), with_word):
        with pytest.raises(AggregateError, match="^cannot merge discovery aggregates with different levels$"):
            a + other


def test_old_form_refusals_in_whole_messages() -> None:
    fields = ("a discovery aggregate must be a JSON object with fields 'fingerprint' and 'levels' "
              "(and SFP's 'word')")
    assert _refused(["fingerprint", "levels"]) == fields  # not an object, though it holds the names
    assert _refused({"fingerprint": "f"}) == fields
    types = "discovery aggregate: 'fingerprint' must be a string and 'levels' a non-empty list"
    level = _sketch([[1, 0]], [1]).to_json()
    for bad in ({"fingerprint": "f", "levels": []}, {"fingerprint": 1, "levels": [level]},
                {"fingerprint": "f", "levels": level}):
        assert _refused(bad) == types, bad


def test_packed_refusals_in_whole_messages() -> None:
    base = "discovery aggregate field"
    assert _refused(_packed(encoding="other")) == f"{base} 'encoding' must be 'deniable.packed-sketches/1'; got 'other'"
    assert _refused(_packed(fingerprint=1)) == "discovery aggregate fields 'fingerprint' and 'sketch' must be strings"
    assert _refused(_packed(dtype="<f8")) == f"{base} 'dtype' must be one of ['<i4', '<i8']; got '<f8'"
    rows = f"{base} 'row_counts' must be 2 lists of 1 non-negative integers"
    for bad_rows in ([[1], [-1]], [[1], [True]], [[1], (3,)], [[1]], [[1], [3, 0]]):
        assert _refused(_packed(row_counts=bad_rows)) == rows, bad_rows
    # each sketch's counts within -n..n of its own n (not the total over sketches)
    assert _refused(_packed(row_counts=[[0], [4]])) == f"{base} 'table' must hold integers in -n..n of each sketch"
    table = str(_packed()["table"])
    bad64 = f"{base} 'table' must be base64 of zlib-compressed counts"
    assert _refused(_packed(table=table[:4] + "!" + table[4:])) == bad64  # not discarded: refused
    assert _refused(_packed(word=1)) == f"{base} 'word' must be true or false; got 1"


def test_packed_shape_limits() -> None:
    """Each of sketches, rows and width in 1..2**20 and their product at most 2**26; SFP needs 2 sketches."""
    def shape_refused(shape: list[int], **change: object) -> bool:
        message = _refused(_packed(shape=shape, **change))
        return message.startswith("discovery aggregate field 'shape' must be [sketches, rows, width]; got ")

    # accepted shapes go on to the next check, row_counts (here never matching)
    for shape in ([1, 1, 1], [5, 1, 1 << 20], [64, 1024, 1024], [1 << 20, 1, 64]):
        assert not shape_refused(shape, row_counts=[]), shape
    for shape in ([5, 0, 16], [5, 1, (1 << 20) + 1], [64, 1024, 1025], [1 << 20, 65, 1], [1 << 20, 1, 65],
                  [5, 16], [5, 16, 1.0]):
        assert shape_refused(shape), shape
    word = "discovery aggregate field 'word' must be true or false; got True"
    assert _refused(_packed(shape=[1, 16, 16], word=True)) == word
    assert _refused(_packed(shape=[2, 16, 16], word=True, row_counts=[])).startswith(
        "discovery aggregate field 'row_counts'")
    assert _refused(_packed(shape=[1, 16, 16], word=False, row_counts=[])).startswith(
        "discovery aggregate field 'row_counts'")


def test_packed_per_sketch_bounds() -> None:
    """A sketch whose counts exceed another's n is valid (levels hold different numbers of devices)."""
    stat = HeavyStat("f", (_sketch([[9, 0]], [9]), _sketch([[1, 0]], [1])))
    back = HeavyStat.from_json(json.loads(json.dumps(stat.to_json())))
    assert back.levels[0].table.tolist() == [[9, 0]] and back.n == 10
