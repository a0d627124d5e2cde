"""The two discovery protocols: PEM (prefix extending) and SFP (sequence fragment puzzle).

Both run over one of Apple's count-mean sketches (:mod:`deniable.mechanisms._sketch`)
and work on the items of :mod:`deniable.heavy._items` (``L`` bytes each).
Each device reports once; which level it reports is its own uniform draw,
independent of its value, so the split of devices costs no epsilon.

**PEM** (Wang, Li & Jha, "Locally differentially private heavy hitter
identification", TDSC 2019), byte by byte. A device draws its level ``i`` in
``1..L`` and sends a sketch report of the key ``bytes([i]) + item[:i]`` with
the whole epsilon. The server estimates every first byte (the
:meth:`~deniable.heavy._items.Items.extensions` of the empty prefix: with an
alphabet its ``|alphabet|`` bytes and the end marker); each later level
extends the ``top_k`` best open prefixes of the level before by every byte
that can follow and keeps the ``top_k`` best open ones again. An option that
ends in a marker (or, for integers, is ``L`` bytes long) is a whole item:
it is *found*, leaves the search (so it takes no place among the ``top_k``
open prefixes of later levels) and is estimated at every level from its
own on. Its key is the same item there (a marker is only followed by
padding), so with ``n_j`` reports at level ``j`` its share is the
``n_j``-weighted mean of those levels' estimates, of variance
``sum n_j**2 SE_j**2 / N**2`` (``N`` the pooled reports: the levels' devices
are disjoint) plus the subsampling term ``f (1 - f) (n - N) / (N (n - 1))``
of ``N`` of the ``n`` devices; a string of ``e`` bytes is estimated from the
last ``L - e`` levels instead of one. Which items are found depends only on
the levels before their own, so these estimates are not selected on. Every
level's estimates are freed of the collision bias of its significant
options (:func:`debiased`), so a prefix that shares sketch buckets with a
frequent one is neither kept nor reported for it.

**SFP** (Apple Differential Privacy Team, "Learning with Privacy at Scale",
2017), with one-byte fragments (so that every byte value can occur: Apple's
two-letter fragments assume a small alphabet). A device computes the 8-bit
puzzle piece ``r = h(item)`` (BLAKE2b keyed with the sketch's seed, person
``b"deniable:sfp"``, first byte), draws a position ``i`` in ``1..L`` and
sends two sketch reports at epsilon/2 each: the fragment key
``bytes([i, r, item[i - 1]])`` and the whole item. The server estimates the
``256 x 256`` pairs ``(r, byte)`` at each position and keeps the significant
ones (one-sided z test, Bonferroni over the 65,536 pairs, at most
``4 top_k``; the largest estimates freed of the collision bias of the
significant pairs first, as PEM's levels, see :meth:`SFP.fragments`);
for each ``r`` kept at every position, it joins the fragments into
candidate items (at most ``8 top_k`` partial items per ``r``, by summed
fragment share) whose piece is ``r``; and it estimates the candidates from
the whole-item sketch, which every device fed, so no subsampling term
(freed of the collision bias of the significant candidates, as PEM's levels).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable._intervals import z_for
from deniable._randomness import Source, uniform_below
from deniable.heavy._items import Items
from deniable.heavy._results import HeavyStat
from deniable.mechanisms._sketch import JoinedKeys, Sketch, SketchCounts, keyed_digests

__all__ = ["PEM", "SFP", "PROTOCOLS", "Candidates"]

# (items, shares, standard errors, number of candidates the significance filter corrects for)
Candidates = tuple[list[bytes], NDArray[np.float64], NDArray[np.float64], int]
_PAIRS = 256 * 256
_ROUNDS = 4  # choices of the significant keys whose collision bias is removed (see debiased)
_SCREEN = 32  # SFP: the pairs of a position freed of collision bias, per top_k (see SFP.fragments)


def debiased(oracle: Sketch, stat: SketchCounts, keys: list[bytes],
             top_k: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Estimates (and SEs) of ``keys`` freed of the collision bias of the significant ones.

    The significant keys (one-sided z test at 5%, Bonferroni over ``keys``;
    at most the ``4 top_k`` largest) are the frequent values the server has
    already estimated; they are chosen again on the corrected estimates (at
    most ``_ROUNDS`` times, until they stay the same), so that a key
    significant only by its collision with a frequent one drops out.
    :meth:`Sketch.without_collisions` subtracts what they add, through the
    known hashes, to every key sharing buckets with them. A
    key left out is below the test's threshold ``z SE``, so it shifts a key
    it meets in ``c`` of the ``k_h`` rows by less than ``c z SE / k_h``.
    """
    hashed = oracle.hashed(keys)  # fingerprinted and bucketed once for every round
    est = oracle.estimate_keys(stat, hashed, np.arange(len(keys)), tuple(range(len(keys))))
    f, se = est.frequencies, np.asarray(est.std_errors, dtype=float)
    z = z_for(0.05 / max(len(keys), 1), two_sided=False)
    heavy = np.zeros(0, dtype=np.int64)
    for _ in range(_ROUNDS):
        significant = np.flatnonzero(f > z * se)
        significant = np.sort(significant[np.argsort(-f[significant], kind="stable")][: 4 * top_k])
        if np.array_equal(significant, heavy):
            break
        heavy = significant
        f, se = oracle.without_collisions(stat, hashed, est, heavy)
    return f, se


def _pooled(per_level: list[tuple[NDArray[np.float64], NDArray[np.float64], int]],
            n: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Each found item's estimates from its level and every later one, pooled with weights ``n_j``, and SEs.

    ``per_level[j]``: the estimates and SEs of the items found up to level
    ``j + 1`` (a prefix of the final list, in order) and the level's reports
    ``n_j``. Level ``j``'s reports are a uniform random subset of the ``n``
    devices, disjoint from the other levels', so the estimates' errors are
    independent: ``Var = sum n_j**2 SE_j**2 / N**2`` (``N = sum n_j``) plus
    the subsampling term of ``N`` of the ``n`` devices,
    ``f (1 - f) (n - N) / (N (n - 1))``.
    """
    k = per_level[-1][0].size
    weighted, variance, total = np.zeros(k), np.zeros(k), np.zeros(k)
    for f, se, n_j in per_level:
        weighted[: f.size] += n_j * f
        variance[: f.size] += n_j**2 * se**2
        total[: f.size] += n_j
    pooled = weighted / total
    plug = np.clip(pooled, 0, 1)
    subsample = plug * (1 - plug) * (n - total) / (total * max(n - 1, 1))
    return pooled, np.sqrt(variance / total**2 + subsample)


class Protocol:
    """Shared device and aggregate steps: one level report per device, plus ``extra`` sketch reports."""

    name: str
    budget_share: int  # the sketch runs at epsilon / budget_share

    def __init__(self, items: Items, oracle: Sketch, top_k: int) -> None:
        self.items, self.oracle, self.top_k = items, oracle, top_k
        self.levels = items.length
        fields = [(f, oracle.dtype[f]) for f in oracle.dtype.names or ()]
        self.dtype = np.dtype([("level", "u1"), *fields, *self._extra_fields(fields)])

    def _extra_fields(self, fields: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
        return []

    def _level_keys(self, items: list[bytes], used: NDArray[np.int64]) -> JoinedKeys:
        raise NotImplementedError

    def privatize(self, items: list[bytes], inverse: NDArray[np.int64], source: Source) -> NDArray[Any]:
        """One report per entry of ``inverse`` (the device's level draw, then its sketch report(s))."""
        level = uniform_below(self.levels, inverse.size, source).astype(np.int64) + 1
        pair = inverse * self.levels + (level - 1)
        seen = np.zeros(len(items) * self.levels, dtype=np.bool_)
        seen[pair] = True
        used = np.flatnonzero(seen)  # the (item, level) pairs drawn, in order; each report's rank among them
        key_of = (np.cumsum(seen, dtype=np.int64) - 1)[pair]
        sketch = self.oracle.privatize_keys(self._level_keys(items, used), key_of, source)
        out = np.empty(inverse.size, dtype=self.dtype)
        out["level"] = level
        for f in sketch.dtype.names or ():
            out[f] = sketch[f]
        self._privatize_extra(items, inverse, source, out)
        return out

    def _privatize_extra(self, items: list[bytes], inverse: NDArray[np.int64], source: Source,
                         out: NDArray[Any]) -> None:
        """Add the reports beyond the level report (none for PEM)."""

    def aggregate(self, arr: NDArray[Any], fingerprint: str) -> HeavyStat:
        level = arr["level"].astype(np.int64)
        stats = tuple(self.oracle.aggregate_groups(self.sketch_part(arr), level - 1, self.levels))
        return HeavyStat(fingerprint, stats, self._aggregate_extra(arr))

    def _aggregate_extra(self, arr: NDArray[Any]) -> SketchCounts | None:
        return None

    def sketch_part(self, arr: NDArray[Any], prefix: str = "") -> NDArray[Any]:
        """The sketch reports inside structured reports (``prefix`` ``"word_"``: SFP's whole-item reports)."""
        part = np.empty(arr.size, dtype=self.oracle.dtype)
        for f in self.oracle.dtype.names or ():
            part[f] = arr[prefix + f]
        return part

    def candidates(self, stat: HeavyStat) -> Candidates:
        raise NotImplementedError

    def detectable(self, epsilon_variance: float) -> float:
        """``sqrt(n)`` times the least share found with the sketch's per-report variance ``epsilon_variance``."""
        raise NotImplementedError


class PEM(Protocol):
    """Prefix extending (see the module docstring)."""

    name = "pem"
    budget_share = 1

    def _level_keys(self, items: list[bytes], used: NDArray[np.int64]) -> JoinedKeys:
        """Pair ``p``'s key: its level ``l = p % L + 1`` as a byte, then the first ``l`` bytes of item ``p // L``
        (every item is ``L`` bytes), built end to end with numpy."""
        L = self.levels
        level = used % L + 1
        keys = np.empty((used.size, L + 1), dtype=np.uint8)
        keys[:, 0] = level
        keys[:, 1:] = np.frombuffer(b"".join(items), dtype=np.uint8).reshape(len(items), L)[used // L]
        return JoinedKeys(keys[np.arange(L + 1) <= level[:, None]], np.cumsum(level + 1))

    def _estimate(self, stat: HeavyStat, level: int,
                  prefixes: list[bytes]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        keys = [bytes([level]) + p for p in prefixes]
        return debiased(self.oracle, stat.levels[level - 1], keys, self.top_k)

    def candidates(self, stat: HeavyStat) -> Candidates:
        if any(s.n == 0 for s in stat.levels):
            return [], np.zeros(0), np.zeros(0), 0
        frontier = [b""]
        found: list[bytes] = []  # the whole items the search met (options ending in a marker), in order
        per_level: list[tuple[NDArray[np.float64], NDArray[np.float64], int]] = []  # found items' estimates
        for lev in range(1, self.levels + 1):
            options = [p + bytes([b]) for p in frontier for b in self.items.extensions(p)]
            earlier = [self.items.padded(item, lev) for item in found]  # found before: their key at this level
            f_all, se_all = self._estimate(stat, lev, earlier + options)
            done = np.array([self.items.finished(o) for o in options], dtype=bool)
            found += [o for o, d in zip(options, done, strict=True) if d]
            mine = np.concatenate([np.arange(len(earlier)), len(earlier) + np.flatnonzero(done)])
            per_level.append((f_all[mine], se_all[mine], stat.levels[lev - 1].n))
            open_ = np.flatnonzero(~done)
            order = open_[np.argsort(-f_all[len(earlier):][open_], kind="stable")[: self.top_k]]
            frontier = [options[i] for i in order.tolist()]
        if not found:
            return [], np.zeros(0), np.zeros(0), 0
        f, se = _pooled(per_level, stat.n)
        # every found item is tested: the filter corrects for all of them
        return [self.items.padded(item, self.levels) for item in found], f, se, len(found)

    def detectable(self, epsilon_variance: float) -> float:
        """A level has ``n / L`` reports; each of the ``top_k * options`` (``Items.options``) is tested."""
        z = z_for(0.05 / (self.top_k * self.items.options), two_sided=False)
        return z * float(np.sqrt(self.levels * epsilon_variance))


class SFP(Protocol):
    """Sequence fragment puzzle (see the module docstring)."""

    name = "sfp"
    budget_share = 2

    def _extra_fields(self, fields: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
        return [(f"word_{f}", t) for f, t in fields]

    def piece(self, item: bytes) -> int:
        """The 8-bit puzzle piece ``r = h(item)``."""
        return int(keyed_digests([item], self.oracle.seed, b"deniable:sfp", 1)[0])

    def _level_keys(self, items: list[bytes], used: NDArray[np.int64]) -> JoinedKeys:
        """Pair ``p``'s key: the position ``p % L + 1``, item ``p // L``'s piece and its byte there (3 bytes)."""
        L = self.levels
        item, at = used // L, used % L
        keys = np.empty((used.size, 3), dtype=np.uint8)
        keys[:, 0] = at + 1
        keys[:, 1] = keyed_digests(items, self.oracle.seed, b"deniable:sfp", 1)[item]
        keys[:, 2] = np.frombuffer(b"".join(items), dtype=np.uint8).reshape(len(items), L)[item, at]
        return JoinedKeys(keys.reshape(-1), 3 * np.arange(1, used.size + 1))

    def _privatize_extra(self, items: list[bytes], inverse: NDArray[np.int64], source: Source,
                         out: NDArray[Any]) -> None:
        word = self.oracle.privatize_keys(items, inverse, source)
        for f in word.dtype.names or ():
            out[f"word_{f}"] = word[f]

    def _aggregate_extra(self, arr: NDArray[Any]) -> SketchCounts:
        return self.oracle.aggregate(self.sketch_part(arr, "word_"))

    def fragments(self, stat: SketchCounts, level: int) -> dict[int, list[tuple[int, float]]]:
        """The significant ``(r, byte)`` pairs at one position, best first, grouped by ``r``.

        All 65,536 pairs are estimated; the ``_SCREEN * top_k`` largest are
        then freed of the collision bias of the significant ones
        (:func:`debiased`), and a pair is kept if its corrected estimate
        passes the one-sided z test (Bonferroni over all 65,536 pairs; at
        most ``4 top_k`` kept). A pair left out of the screen is not kept:
        that can only lose a pair, never add a false one.
        """
        keys = [bytes([level, r, b]) for r in range(256) for b in range(256)]
        est = self.oracle.estimate_keys(stat, keys, np.arange(_PAIRS), tuple(range(_PAIRS)))
        screen = np.sort(np.argsort(-est.frequencies, kind="stable")[: _SCREEN * self.top_k])
        f, se = debiased(self.oracle, stat, [keys[i] for i in screen.tolist()], self.top_k)
        sig = np.flatnonzero(f > z_for(0.05 / _PAIRS, two_sided=False) * se)
        sig = sig[np.argsort(-f[sig], kind="stable")][: 4 * self.top_k]
        out: dict[int, list[tuple[int, float]]] = {}
        for i in sig.tolist():
            pair = int(screen[i])
            out.setdefault(pair >> 8, []).append((pair & 0xFF, float(f[i])))
        return out

    def candidates(self, stat: HeavyStat) -> Candidates:
        if stat.word is None or stat.word.n == 0 or any(s.n == 0 for s in stat.levels):
            return [], np.zeros(0), np.zeros(0), 0
        fragments = [self.fragments(s, lev) for lev, s in enumerate(stat.levels, start=1)]
        pieces = set(fragments[0]).intersection(*fragments[1:])
        found: list[bytes] = []
        for r in sorted(pieces):
            partial: list[tuple[bytes, float]] = [(b"", 0.0)]
            for frags in fragments:
                partial = [
                    (p + bytes([b]), score + share)
                    for p, score in partial for b, share in frags[r] if b in self.items.extensions(p)
                ]
                partial = sorted(partial, key=lambda ps: -ps[1])[: 8 * self.top_k]
            found.extend(p for p, _ in partial if self.piece(p) == r)
        if not found:
            return [], np.zeros(0), np.zeros(0), 0
        f, se = debiased(self.oracle, stat.word, found, self.top_k)
        return found, f, se, len(found)

    def detectable(self, epsilon_variance: float) -> float:
        """The harder of the two stages: a position's ``n / L`` reports over 65,536 pairs, then the word."""
        fragment = z_for(0.05 / _PAIRS, two_sided=False) * float(np.sqrt(self.levels * epsilon_variance))
        word = z_for(0.05 / self.top_k, two_sided=False) * float(np.sqrt(epsilon_variance))
        return max(fragment, word)


PROTOCOLS: dict[str, type[Protocol]] = {"pem": PEM, "sfp": SFP}
