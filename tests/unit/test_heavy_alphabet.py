"""HeavyHitters with an ``alphabet``: validation, refusals, PEM's options, the wire form (old configs unchanged)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import deniable as dn
from deniable._intervals import z_for
from deniable.errors import ConfigError

LOWER = "abcdefghijklmnopqrstuvwxyz"


def make(**kw: object) -> dn.HeavyHitters:
    return dn.HeavyHitters(epsilon=6.0, method="pem", oracle="cms", max_length=4, top_k=8, rows=16, width=256,
                           seed=bytes(32), **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("alphabet", "words"),
    [
        ("", "non-empty string"),
        (["a", "b"], "non-empty string"),
        ("abé", "single-byte ASCII characters (code points 0..127); got 'é'"),
        ("ab\x80", "single-byte ASCII characters (code points 0..127); got '\\x80'"),
        ("abca", "distinct characters; 'a' occurs more than once"),
    ],
)
def test_bad_alphabets_are_refused_naming_alphabet(alphabet: object, words: str) -> None:
    with pytest.raises(ValueError, match="^alphabet") as err:
        make(alphabet=alphabet)
    assert words in str(err.value)


def test_every_ascii_character_may_be_in_an_alphabet() -> None:
    """Code points 0..127, DEL (127) included."""
    assert make(alphabet="ab\x7f").alphabet == "ab\x7f"
    assert make(alphabet="".join(map(chr, range(128)))).items_of.options == 129


def test_alphabet_refused_for_integers_and_sfp() -> None:
    with pytest.raises(ValueError, match="alphabet applies to kind 'text' only"):
        dn.HeavyHitters(epsilon=4, kind="integer", alphabet="ab")
    with pytest.raises(ValueError, match="alphabet applies to method 'pem' only"):
        dn.HeavyHitters(epsilon=4, method="sfp", alphabet="ab")
    assert dn.HeavyHitters(epsilon=8, alphabet=LOWER).method == "pem"  # the default never picks SFP then


def test_values_outside_the_alphabet_name_the_value_and_character() -> None:
    hh = make(alphabet=LOWER)
    with pytest.raises(ValueError, match=r"values\[2\] has the character 'X', not in the alphabet; got 'abX'"):
        hh.privatize_many(["ab", "cd", "abX", "ab", "é"], rng=np.random.default_rng(1))
    with pytest.raises(ValueError, match=r"values\[1\] has the character 'é'"):
        hh.items(["ab", "é"])
    items, inverse = hh.items(["ab", "", "abcde", "ab"])  # the items are those without an alphabet
    assert items == make().items(["ab", "", "abcde", "ab"])[0] and inverse.tolist() == [0, 1, 2, 0]



def test_a_value_of_every_letter_is_not_the_one_named() -> None:
    """A value holding the whole alphabet is within it: the refusal names the later value outside."""
    with pytest.raises(ValueError, match=r"^values\[2\] has the character 'c', not in the alphabet; got 'abc'$"):
        make(alphabet="ab").items(["ab", "ba", "abc"])

def test_pem_extends_by_alphabet_symbols_and_the_markers() -> None:
    items = make(alphabet="ab").items_of
    assert list(items.extensions(b"")) == [ord("a"), ord("b"), 0xFF] and items.options == 3
    assert list(items.extensions(b"abab")) == [0xFF, 0xFE]  # the last position: end or cut
    assert list(items.extensions(b"a\xff")) == [0xFF]
    assert make().items_of.options == 180  # without an alphabet: what UTF-8 allows after a whole character


def test_fewer_candidates_are_tested_with_an_alphabet() -> None:
    rng = np.random.default_rng(7)
    values = ["ab"] * 3000 + ["ba"] * 2000 + ["abba"] * 1000
    with_alphabet, without = make(alphabet="ab"), make()
    for hh in (with_alphabet, without):
        stat = hh.aggregate(hh.privatize_many(values, rng=rng))
        assert {"ab", "ba", "abba"} <= set(hh.identify(stat).values)
    # a level's Bonferroni threshold is over top_k * 3 options instead of top_k * 180
    ratio = with_alphabet.protocol.detectable(1.0) / without.protocol.detectable(1.0)
    assert ratio == pytest.approx(z_for(0.05 / 24, two_sided=False) / z_for(0.05 / 1440, two_sided=False))


def test_config_round_trip_and_fingerprint() -> None:
    hh = make(alphabet=LOWER)
    config = hh.to_config()
    assert config["alphabet"] == LOWER
    back = dn.HeavyHitters.from_config(json.dumps(config))
    assert back.alphabet == LOWER and back.fingerprint == hh.fingerprint and back.to_config() == config
    assert hh.fingerprint != make().fingerprint and hh.fingerprint != make(alphabet=LOWER[::-1]).fingerprint
    assert "alphabet" in repr(hh)


def test_configs_without_alphabet_are_unchanged() -> None:
    hh = make()
    config = hh.to_config()
    assert "alphabet" not in config and hh.alphabet is None and "alphabet" not in hh.fingerprint
    assert hh.fingerprint == f"{hh.oracle.fingerprint}:pem:text:4:8"
    back = dn.HeavyHitters.from_config(config)
    assert back.alphabet is None and back.to_config() == config and back.fingerprint == hh.fingerprint


def test_config_refusals_name_alphabet() -> None:
    config = make(alphabet=LOWER).to_config()
    with pytest.raises(ConfigError, match="discovery config: alphabet must hold distinct characters"):
        dn.HeavyHitters.from_config({**config, "alphabet": "aa"})
    with pytest.raises(ConfigError, match="discovery config: alphabet must be a non-empty string"):
        dn.HeavyHitters.from_config({**config, "alphabet": None})
    sfp = dn.HeavyHitters(epsilon=4, method="sfp", rows=4, width=8, seed=bytes(32)).to_config()
    with pytest.raises(ConfigError, match="alphabet applies to method 'pem' only"):
        dn.HeavyHitters.from_config({**sfp, "alphabet": "ab"})
    with pytest.raises(ConfigError, match=r"optionally \['alphabet'\]\); got .*'letters'"):
        dn.HeavyHitters.from_config({**config, "letters": "ab"})


def test_aggregates_of_different_alphabets_do_not_mix() -> None:
    a, b = make(alphabet="ab"), make(alphabet="abc")
    stat = a.aggregate(a.privatize_many(["ab"] * 10, rng=np.random.default_rng(2)))
    with pytest.raises(Exception, match="fingerprint|configuration"):
        b.identify(stat)
