"""The discovery protocols on their own: SFP's fragments, puzzle and candidates, PEM's pooling, both detectables.

Fixed seeds throughout. Where a planted share is asserted to be found or ranked, the margins are stated
next to it; each is at least 5.5 standard errors, so a correct implementation fails below 1e-6 per run.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from backends import both, needs_numba

import deniable as dn
from deniable._intervals import z_for
from deniable.heavy import HeavyStat
from deniable.heavy._items import Items
from deniable.heavy._protocols import SFP, _pooled, debiased
from deniable.mechanisms._sketch import keyed_digests


def sfp(**kw: object) -> dn.HeavyHitters:
    """SFP over two-byte text (three positions: two bytes and the end marker)."""
    return dn.HeavyHitters(epsilon=kw.pop("epsilon", 8.0), method="sfp", max_length=2,  # type: ignore[arg-type]
                           top_k=kw.pop("top_k", 1), rows=16, width=256, seed=bytes(32))  # type: ignore[arg-type]


def _empty(candidates: tuple[list[bytes], np.ndarray, np.ndarray, int]) -> bool:
    items, f, se, tests = candidates
    return items == [] and f.shape == (0,) and se.shape == (0,) and tests == 0


def test_sfp_piece_and_fragment_keys_are_fixed() -> None:
    """The puzzle piece is the first byte of BLAKE2b keyed with the seed, person ``deniable:sfp``
    (part of the wire form: a device and the server must agree on it)."""
    hh = sfp()
    assert [hh.protocol.piece(v + b"\xff") for v in (b"ab", b"zz", b"xf", b"bc")] == [99, 47, 6, 6]
    items, _ = hh.items(["ab", "zz"])
    used = np.array([0, 2, 4])  # item * levels + (position - 1): "ab" at 1 and 3, "zz" at 2
    assert hh.protocol._level_keys(items, used).split() == [bytes([1, 99, 0x61]), bytes([3, 99, 0xFF]),
                                                           bytes([2, 47, 0x7A])]


def test_sfp_candidates_need_every_position_and_the_word() -> None:
    """``ab`` and ``zz`` hold half of 6,000 devices each (about 60 SEs at every position): both found.
    Without a position's reports, or the word's, nothing is; one word report is enough to estimate
    the candidates the positions gave."""
    hh = sfp()
    reports = hh.privatize_many(["ab"] * 3000 + ["zz"] * 3000, rng=1)
    whole = hh.aggregate(reports)
    assert sorted(hh.protocol.candidates(whole)[0]) == [b"ab\xff", b"zz\xff"]
    assert _empty(hh.protocol.candidates(hh.aggregate(reports[reports["level"] != 1])))
    nothing = hh.aggregate(hh.privatize_many([], rng=2))
    assert _empty(hh.protocol.candidates(HeavyStat(whole.fingerprint, whole.levels, nothing.word)))
    one = hh.aggregate(reports[:1])
    items, f, se, tests = hh.protocol.candidates(HeavyStat(whole.fingerprint, whole.levels, one.word))
    assert sorted(items) == [b"ab\xff", b"zz\xff"] and f.shape == se.shape == (2,) and tests == 2


def test_sfp_nothing_found_is_empty() -> None:
    """200 distinct values, one device each: no pair is significant at a position, nothing is found."""
    hh = sfp()
    values = [chr(97 + i % 26) + chr(97 + i // 26) for i in range(200)]
    assert _empty(hh.protocol.candidates(hh.aggregate(hh.privatize_many(values, rng=3))))


def test_sfp_piece_must_be_significant_at_every_position() -> None:
    """Positions from ``ab``'s devices but one taken from ``zz``'s (another piece): no piece is kept at
    every position, so there are no candidates (the puzzle joins fragments of one piece only)."""
    hh = sfp()
    ab = hh.aggregate(hh.privatize_many(["ab"] * 3000, rng=4))
    zz = hh.aggregate(hh.privatize_many(["zz"] * 3000, rng=5))
    for swapped in range(hh.levels):
        levels = tuple(zz.levels[j] if j == swapped else ab.levels[j] for j in range(hh.levels))
        assert _empty(hh.protocol.candidates(HeavyStat(ab.fingerprint, levels, ab.word))), swapped


def test_sfp_keeps_the_best_fragments_and_partial_items() -> None:
    """Four values of one piece (6) at 36, 24, 18 and 14% of 10,000 devices and ``ab`` (another piece) at 8%.

    ``top_k`` 1: a position keeps its 4 best pairs, so ``ab``'s are dropped (14% against 8%: 5.6 SEs of
    the difference at a position's 3,333 reports) and ``ab`` is never a candidate. The puzzle joins the
    4 x 4 first and second bytes of piece 6 and keeps the 8 partial items of the largest summed share:
    ``xf`` (72%) is among them and ``bc`` (28%, the least of the 16) is not (at least 20 points below
    the eighth).
    """
    hh = sfp()
    values = ["xf"] * 3600 + ["mp"] * 2400 + ["cq"] * 1800 + ["bc"] * 1400 + ["ab"] * 800
    stat = hh.aggregate(hh.privatize_many(values, rng=6))
    first = hh.protocol.fragments(stat.levels[0], 1)
    assert list(first) == [6] and [b for b, _ in first[6]] == [ord(c) for c in "xmcb"]
    items = hh.protocol.candidates(stat)[0]
    assert b"xf\xff" in items and b"bc\xff" not in items and b"ab\xff" not in items


def test_pooled_weights_levels_by_their_reports() -> None:
    """Two levels of 30 and 10 reports of 100 devices: the mean weighted 3:1, its variance
    ``(30**2 SE_1**2 + 10**2 SE_2**2) / 40**2`` plus ``f (1 - f) (100 - 40) / (40 * 99)``; an item
    found at the second level only has that level's estimate and the subsampling of 10 of the 100."""
    f1, se1 = np.array([0.5]), np.array([0.1])
    f2, se2 = np.array([0.3, 0.2]), np.array([0.2, 0.05])
    pooled, se = _pooled([(f1, se1, 30), (f2, se2, 10)], 100)
    assert pooled == pytest.approx([0.45, 0.2], rel=1e-12)
    want = [(900 * 0.01 + 100 * 0.04) / 1600 + 0.45 * 0.55 * 60 / (40 * 99),
            0.05**2 + 0.2 * 0.8 * 90 / (10 * 99)]
    assert se == pytest.approx(np.sqrt(want), rel=1e-12)
    # a share estimated outside 0..1 adds no subsampling variance (its plug-in share is clipped to 0 or 1)
    pooled, se = _pooled([(np.array([1.5, -0.5, 0.5]), np.array([0.1, 0.1, 0.1]), 1)], 2)
    assert pooled.tolist() == [1.5, -0.5, 0.5] and se == pytest.approx([0.1, 0.1, np.sqrt(0.26)], rel=1e-12)


def test_detectable_shares() -> None:
    """PEM: ``z(0.05 / (top_k o)) sqrt(L V)``; SFP: the larger of ``z(0.05 / 65536) sqrt(L V)`` and
    ``z(0.05 / top_k) sqrt(V)``."""
    pem = dn.HeavyHitters(epsilon=4.0, method="pem", max_length=4, top_k=8, rows=4, width=8, seed=bytes(32))
    assert pem.protocol.detectable(2.0) == pytest.approx(z_for(0.05 / (8 * 180), two_sided=False) * np.sqrt(10),
                                                         rel=1e-12)
    one = dn.HeavyHitters(epsilon=4.0, method="sfp", max_length=4, top_k=8, rows=4, width=8, seed=bytes(32))
    assert one.protocol.detectable(2.0) == pytest.approx(z_for(0.05 / 65536, two_sided=False) * np.sqrt(10),
                                                         rel=1e-12)
    assert one.protocol.detectable(0.01) == pytest.approx(z_for(0.05 / 65536, two_sided=False) * np.sqrt(0.05),
                                                          rel=1e-12)
    # one level and a large top_k: the fragment stage is still the harder one; max_length 1 has 2 levels
    short = dn.HeavyHitters(epsilon=4.0, method="sfp", max_length=1, top_k=4096, rows=4, width=8, seed=bytes(32))
    assert short.protocol.detectable(2.0) == pytest.approx(z_for(0.05 / 65536, two_sided=False) * 2, rel=1e-12)


def _sketch_stat(oracle: dn.CountMeanSketch, counts: dict[int, int], seed: int) -> tuple[list[bytes], object]:
    """The keys ``k0 .. k199`` and the aggregate of ``counts[i]`` devices holding ``k<i>``."""
    keys = [b"k%d" % i for i in range(200)]
    inverse = np.repeat(np.array(list(counts)), list(counts.values())).astype(np.int64)
    return keys, oracle.aggregate(oracle.privatize_keys(keys, inverse, seed))


def _corrected(oracle: dn.CountMeanSketch, stat: object, keys: list[bytes],
               heavy: list[int]) -> tuple[np.ndarray, np.ndarray]:
    est = oracle.estimate_keys(stat, keys, np.arange(len(keys)), tuple(range(len(keys))))
    return oracle.without_collisions(stat, keys, est, np.array(heavy, dtype=np.int64))


def test_debiased_frees_keys_of_the_one_significant_key() -> None:
    """``k0`` (40% of 10,000 devices, 7 SEs) is the only significant key of two; ``k10`` shares one of
    its 4 buckets (its raw estimate about 1 SE): ``k10`` is freed of ``k0``'s collision bias."""
    oracle = dn.CountMeanSketch(epsilon=8.0, rows=4, width=32, seed=bytes(32))
    keys, stat = _sketch_stat(oracle, {0: 4000, 199: 6000}, 1)
    pair = [keys[0], keys[10]]
    f, se = debiased(oracle, stat, pair, 8)
    want_f, want_se = _corrected(oracle, stat, pair, [0])
    assert f.tolist() == want_f.tolist() and se.tolist() == want_se.tolist()
    raw = oracle.estimate_keys(stat, pair, np.arange(2), (0, 1)).frequencies
    assert f[1] < raw[1] - 0.01  # the bias removed: k0's 40% through one row of four


def test_debiased_removes_the_4_top_k_largest() -> None:
    """Five keys significant before the correction (z from 2.7 to 7.8, the 25, 20, 15, 12 and 14% of
    10,000 devices): with ``top_k`` 1 the 4 largest estimates are the heavy keys (not all 5, not the 4
    smallest)."""
    oracle = dn.CountMeanSketch(epsilon=8.0, rows=4, width=32, seed=bytes(32))
    keys, stat = _sketch_stat(oracle, {0: 2500, 1: 2000, 2: 1500, 3: 1200, 4: 1400, 199: 1400}, 3)
    six = keys[:6]
    f, se = debiased(oracle, stat, six, 1)
    want_f, want_se = _corrected(oracle, stat, six, [0, 1, 2, 4])
    assert f.tolist() == want_f.tolist() and se.tolist() == want_se.tolist()
    for other in ([0, 1, 2, 3, 4], [1, 2, 3, 4]):
        assert f.tolist() != _corrected(oracle, stat, six, other)[0].tolist()


def test_heavy_keys_sharing_every_bucket_split_their_sum() -> None:
    """Two heavy keys hashed to the same bucket in every row cannot be told apart: the system
    ``f^_H = (I + W_HH) f_H`` is singular (it raised LinAlgError), and least squares splits the two
    keys' estimated sum between them; a tiny sketch (4 rows of 8) finds such pairs among its keys."""
    oracle = dn.CountMeanSketch(epsilon=8.0, rows=4, width=8, seed=bytes(32))
    keys = [b"k%d" % i for i in range(200)]
    buckets = oracle.hashed(keys).buckets
    i, j = next((i, j) for i in range(199) for j in range(i + 1, 199) if (buckets[:, i] == buckets[:, j]).all())
    _, stat = _sketch_stat(oracle, {i: 3000, j: 1000, 199: 6000}, 2)
    pair = [keys[i], keys[j]]
    est = oracle.estimate_keys(stat, pair, np.arange(2), (0, 1))
    assert (est.frequencies[0] == est.frequencies[1])  # the sketch sees one key
    f, se = oracle.without_collisions(stat, pair, est, np.array([0, 1], dtype=np.int64))
    assert f[0] == pytest.approx(f[1]) and f.sum() == pytest.approx(est.frequencies[0], abs=1e-12)
    assert np.isfinite(se).all()


def test_identify_on_a_tiny_sketch() -> None:
    """PEM with 4 rows of 8 buckets: every seed identifies (before, most raised LinAlgError)."""
    rng = np.random.default_rng(4)
    for seed in range(6):
        hh = dn.HeavyHitters(epsilon=4.0, max_length=4, rows=4, width=8, seed=bytes([seed]) * 32)
        values = rng.choice(["ab", "cd", "ef", "gh"], 2000).tolist()
        found = hh.identify(hh.aggregate(hh.privatize_many(values, rng=rng)), top=3)
        assert len(found.values) <= 3


def pem(**kw: object) -> dn.HeavyHitters:
    return dn.HeavyHitters(epsilon=6.0, method="pem", max_length=4, top_k=8, rows=16, width=256, seed=bytes(32),
                           **kw)  # type: ignore[arg-type]


def test_pem_candidates_need_every_level() -> None:
    """No reports at a level: nothing is found. One report at a level is enough to go on (and PEM's search
    always ends in whole items at the last level)."""
    hh = pem()
    reports = hh.privatize_many(["ab"] * 500 + ["xyz"] * 500, rng=7)
    level = reports["level"]
    assert _empty(hh.protocol.candidates(hh.aggregate(reports[level != 2])))
    keep = (level != 2) | (np.cumsum(level == 2) == 1)  # the first report of level 2 only
    items, f, se, tests = hh.protocol.candidates(hh.aggregate(reports[keep]))
    assert len(items) == tests > 0 and f.shape == se.shape == (tests,)


def test_pem_pools_levels_by_their_own_reports() -> None:
    """``ab`` is estimated at levels 3 to 5, ``abcd`` at 5 only; level 3 keeps 1 report in 20. Weighted by
    each level's own reports, ``ab``'s SE is about that of levels 4 and 5 pooled, below ``abcd``'s (weighting
    level 3's noisy estimate by level 2's reports would put it far above)."""
    hh = pem()
    reports = hh.privatize_many(["ab"] * 3000 + ["abcd"] * 3000 + [f"t{i}" for i in range(4000)], rng=9)
    level = reports["level"]
    keep = (level != 3) | (np.cumsum(level == 3) % 20 == 0)
    items, f, se, _ = hh.protocol.candidates(hh.aggregate(reports[keep]))
    ab, abcd = items.index(b"ab\xff\xff\xff"), items.index(b"abcd\xff")
    assert se[ab] < se[abcd]


@pytest.mark.parametrize("method", ["pem", "sfp"])
def test_seeded_reports_are_reproducible(method: str) -> None:
    """A seed fixes every draw of a simulation: the level, the level report and SFP's word report."""
    hh = dn.HeavyHitters(epsilon=4.0, method=method, max_length=4, top_k=8, rows=16, width=256, seed=bytes(32))
    values = ["ab", "c", "ab", "xyz"] * 50
    first, again = hh.privatize_many(values, rng=11), hh.privatize_many(values, rng=11)
    assert (first == again).all() and not (first == hh.privatize_many(values, rng=12)).all()


class _Scripted:
    """A stand-in sketch with given estimates (``key -> share``, 0 otherwise; every SE ``se``) and no
    collisions: ``without_collisions`` returns the estimates unchanged and records the heavy keys it was
    given. It puts a key's z exactly where a significance test's cut is."""

    dtype = np.dtype([("bit", "u1")])
    seed = bytes(32)

    def __init__(self, shares: dict[bytes, float], se: float = 1.0) -> None:
        self.shares, self.se = shares, se
        self.heavy: list[list[int]] = []

    def hashed(self, keys: list[bytes]) -> list[bytes]:
        return list(keys)

    def estimate_keys(self, stat: object, keys: list[bytes], inverse: np.ndarray, labels: tuple[int, ...]) -> object:
        f = np.array([self.shares.get(keys[i], 0.0) for i in inverse.tolist()])
        return SimpleNamespace(frequencies=f, std_errors=np.full(f.size, self.se))

    def without_collisions(self, stat: object, keys: list[bytes], est: object,
                           heavy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        self.heavy.append(heavy.tolist())
        return est.frequencies, est.std_errors  # type: ignore[attr-defined]


def _between(low: float, high: float) -> float:
    assert low < high - 0.05
    return (low + high) / 2


def test_debiased_significance_is_one_sided_bonferroni_over_the_keys() -> None:
    """Six keys: the heavy ones are those with ``f > z(0.05 / 6) SE``, one-sided (z 2.39; two-sided it
    would be 2.64, and ``z(1.05 / 6)`` 0.93). A key at z 2.52 is heavy, one at 1.66 is not. One key: the
    cut is ``z(0.05)`` 1.64 (not ``z(0.025)`` 1.96): a key at z 1.80 is heavy."""
    one, two = z_for(0.05 / 6, two_sided=False), z_for(0.05 / 6)
    oracle = _Scripted({b"a": _between(one, two), b"b": _between(z_for(1.05 / 6, two_sided=False), one)})
    debiased(oracle, None, [b"a", b"b", b"c", b"d", b"e", b"f"], 1)  # type: ignore[arg-type]
    assert oracle.heavy == [[0]]  # one round with ``a`` heavy; the second finds the same set and stops
    single = _Scripted({b"a": _between(z_for(0.05, two_sided=False), z_for(0.05))})
    debiased(single, None, [b"a"], 1)  # type: ignore[arg-type]
    assert single.heavy == [[0]]


def test_sfp_fragments_are_one_sided_bonferroni_over_all_pairs() -> None:
    """A position keeps the pairs with ``f > z(0.05 / 65536) SE``, one-sided (z 4.81; two-sided 4.94,
    and ``z(1.05 / 65536)`` 4.16): the pair at z 4.88 is kept, the one at 4.48 is not."""
    one, two = z_for(0.05 / 65536, two_sided=False), z_for(0.05 / 65536)
    kept, left = _between(one, two), _between(z_for(1.05 / 65536, two_sided=False), one)
    oracle = _Scripted({bytes([1, 6, ord("x")]): kept, bytes([1, 6, ord("m")]): left})
    protocol = SFP(Items("text", 2), oracle, 1)  # type: ignore[arg-type]
    assert protocol.fragments(None, 1) == {6: [(ord("x"), kept)]}  # type: ignore[arg-type]


# Fragments of piece 6 (whose words among these 16 are xf, mp, cq and bc) at the three positions of
# two-byte text; the summed shares of the 16 two-letter words are distinct, and rank bc, cc, bp, mc, cp,
# bq, xc, mp (piece 6: bc and mp), then cq (piece 6) ninth and bf tenth.
_PUZZLE = {
    1: {6: [(ord("b"), 0.19), (ord("c"), 0.16), (ord("m"), 0.13), (ord("x"), 0.10)]},
    2: {6: [(ord("c"), 0.13), (ord("p"), 0.09), (ord("q"), 0.05), (ord("f"), 0.01)]},
    3: {6: [(0xFF, 0.5)]},
}


def _scripted_fragments(hh: dn.HeavyHitters, monkeypatch: pytest.MonkeyPatch) -> None:
    assert [hh.protocol.piece(w + b"\xff") for w in (b"xf", b"mp", b"cq", b"bc")] == [6] * 4
    monkeypatch.setattr(hh.protocol, "fragments", lambda stat, level: _PUZZLE[level])


def test_sfp_puzzle_keeps_the_8_top_k_best_partial_items(monkeypatch: pytest.MonkeyPatch) -> None:
    """``top_k`` 1: of the 16 partial items the 8 of the largest summed share go on, so ``bc`` and ``mp``
    (first and eighth) are candidates and ``cq`` (ninth) is not."""
    hh = sfp()
    _scripted_fragments(hh, monkeypatch)
    stat = hh.aggregate(hh.privatize_many(["bc"] * 30, rng=13))
    assert hh.protocol.candidates(stat)[0] == [b"bc\xff", b"mp\xff"]


def test_sfp_uses_a_position_with_one_report(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a position without reports ends the search: one report at position 2 is enough to go on."""
    hh = sfp()
    _scripted_fragments(hh, monkeypatch)
    reports = hh.privatize_many(["bc"] * 30, rng=13)
    level = reports["level"]
    stat = hh.aggregate(reports[(level != 2) | (np.cumsum(level == 2) == 1)])
    assert [s.n for s in stat.levels][1] == 1 and stat.word is not None and stat.word.n > 1
    assert hh.protocol.candidates(stat)[0] == [b"bc\xff", b"mp\xff"]
    assert _empty(hh.protocol.candidates(hh.aggregate(reports[level != 2])))


@pytest.mark.parametrize("kind", ["text", "integer"])
@pytest.mark.parametrize("method", ["pem", "sfp"])
def test_level_keys_as_defined(method: str, kind: str) -> None:
    """PEM: pair ``p``'s key is the byte ``l = p % L + 1`` then the first ``l`` bytes of item ``p // L``; SFP:
    the position ``l``, the item's piece and its byte at ``l``. For every other pair of a few items (built
    end to end with numpy: the same bytes as written out one by one)."""
    hh = dn.HeavyHitters(epsilon=4.0, method=method, max_length=5, top_k=8, kind=kind)
    items, _ = hh.items_of.encode(["", "ab", "héllo", "a much longer one"] if kind == "text" else [0, -1, 2**40])
    L = hh.levels
    used = np.array([p for p in range(len(items) * L) if p % 3 != 1], dtype=np.int64)
    keys = hh.protocol._level_keys(items, used)
    if method == "pem":
        expected = [bytes([p % L + 1]) + items[p // L][: p % L + 1] for p in used.tolist()]
    else:
        expected = [bytes([p % L + 1, hh.protocol.piece(items[p // L]), items[p // L][p % L]]) for p in used.tolist()]
    assert keys.split() == expected


@needs_numba
@pytest.mark.parametrize("method", ["pem", "sfp"])
def test_level_keys_hash_alike_when_compiled(method: str, restore_accelerator: None) -> None:
    """The level keys are what the compiled BLAKE2b reads too (one flat byte array and its ends): the
    same digests under numpy and numba."""
    hh = dn.HeavyHitters(epsilon=4.0, method=method, max_length=5, top_k=8)
    items, _ = hh.items_of.encode(["", "ab", "héllo", "a much longer one"])
    keys = hh.protocol._level_keys(items, np.arange(len(items) * hh.levels, dtype=np.int64))
    by_numpy, by_numba = both(lambda: keyed_digests(keys, bytes(32), b"deniable:test", 8))
    assert by_numpy.tolist() == by_numba.tolist()
