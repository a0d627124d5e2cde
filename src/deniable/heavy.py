"""Discovery of frequent strings nobody listed: the prefix extending method (PEM).

Wang, Li, Jha, "Locally differentially private heavy hitter identification"
(TDSC 2019), byte by byte, over one of Apple's count-mean sketches
(:mod:`deniable.mechanisms.sketch`) as the frequency oracle of each level:
``oracle="hcms"`` (19-bit reports, variance ``((e+1)/(e-1))**2`` per report,
which stops improving as epsilon grows) or ``oracle="cms"`` (``width``-bit
reports, SUE's variance at epsilon/2: about the same at small epsilon, 6x
lower at epsilon 4). The default (None) takes the one of lower variance at
the requested epsilon, which is CMS.

**Items.** A value is a ``str`` (or UTF-8 ``bytes``). Its item is
``max_length + 1`` bytes: the UTF-8 bytes, then the end marker ``0xFF``,
padded with ``0xFF``. A string longer than ``max_length`` bytes is cut after
its last whole character that fits and marked ``0xFE`` instead: it is found
as that prefix with ``truncated=True``, never merged with the shorter string
itself. ``0xFE`` and ``0xFF`` never occur in UTF-8, so items of distinct
strings (up to the cut) are distinct.

**Devices.** Each device draws its level ``i`` uniformly from
``1..max_length + 1`` (the mechanism's own randomness; it reports once, so
the split costs no epsilon) and sends an HCMS report of the key
``bytes([i]) + item[:i]`` through the oracle, with the full epsilon. The aggregate keeps one
sketch per level (mergeable).

**Server** (:meth:`HeavyHitters.identify`). Level 1 estimates all 256 first
bytes; each later level extends the ``top_k`` best prefixes of the level
before by every byte (a prefix that already ended only by ``0xFF``) and keeps
the ``top_k`` best again. The last level's candidates are whole items. A
value's share is estimated from the last level's ``n_L`` reports, a uniform
random subset of the ``n`` devices, so its variance is the sketch's plus the
subsampling term ``f (1 - f) (n - n_L) / (n_L (n - 1))``; ``count = f n``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable import randomness
from deniable.aggregates import Mergeable
from deniable.errors import AggregateError
from deniable.estimate import Estimate
from deniable.intervals import z_for
from deniable.mechanisms.sketch import CountMeanSketch, HadamardCountMeanSketch, Sketch, SketchCounts, text_bytes

__all__ = ["HeavyHitters", "HeavyStat", "Discovery"]

END, CUT = 0xFF, 0xFE
METHODS = ("pem",)
ORACLES: dict[str, Any] = {"hcms": HadamardCountMeanSketch, "cms": CountMeanSketch}


def _cut(data: bytes, limit: int) -> bytes:
    """The longest prefix of UTF-8 ``data`` of at most ``limit`` bytes that ends on a character boundary."""
    end = limit
    while end > 0 and data[end] & 0xC0 == 0x80:  # data[end] continues the character before it
        end -= 1
    return data[:end]


@dataclass(frozen=True, eq=False)
class HeavyStat(Mergeable):
    """Mergeable aggregate of :class:`HeavyHitters`: one sketch per prefix level."""

    fingerprint: str
    levels: tuple[SketchCounts, ...]

    @property
    def n(self) -> int:
        return sum(s.n for s in self.levels)

    def _merged(self, other: HeavyStat) -> HeavyStat:
        if len(other.levels) != len(self.levels):
            raise AggregateError("cannot merge discovery aggregates with different numbers of levels")
        return HeavyStat(self.fingerprint, tuple(a + b for a, b in zip(self.levels, other.levels, strict=True)))

    def to_json(self) -> dict[str, Any]:
        return {"fingerprint": self.fingerprint, "levels": [s.to_json() for s in self.levels]}

    @classmethod
    def from_json(cls, data: Any) -> HeavyStat:
        """Inverse of :meth:`to_json`; AggregateError naming the field if ``data`` is malformed."""
        if not isinstance(data, dict) or set(data) != {"fingerprint", "levels"}:
            raise AggregateError("a discovery aggregate must be a JSON object with fields 'fingerprint' and 'levels'")
        if not isinstance(data["fingerprint"], str) or not isinstance(data["levels"], list) or not data["levels"]:
            raise AggregateError("discovery aggregate: 'fingerprint' must be a string and 'levels' a non-empty list")
        return cls(data["fingerprint"], tuple(SketchCounts.from_json(s) for s in data["levels"]))


@dataclass(frozen=True)
class Discovery:
    """Discovered values, most frequent first, with estimated counts, standard errors and CIs."""

    values: tuple[str, ...]
    truncated: NDArray[np.bool_]
    counts: NDArray[np.float64]
    std_errors: NDArray[np.float64]
    ci_low: NDArray[np.float64]
    ci_high: NDArray[np.float64]
    n: int
    level: float

    def to_frame(self) -> Any:
        """A pandas DataFrame: ``value``, ``count``, ``std_error``, ``ci_low``, ``ci_high``, ``truncated``."""
        import pandas as pd

        return pd.DataFrame({
            "value": list(self.values), "count": self.counts, "std_error": self.std_errors,
            "ci_low": self.ci_low, "ci_high": self.ci_high, "truncated": self.truncated,
        })

    def __len__(self) -> int:
        return len(self.values)


class HeavyHitters:
    """Find the frequent strings among devices that each send one randomized report.

    ``epsilon``: each device's privacy loss. ``max_length``: bytes of UTF-8
    kept (longer strings are cut, see the module docstring). ``top_k``:
    prefixes kept per level (find at most that many values). ``oracle``,
    ``rows``, ``width``, ``seed``: the sketch of every level.
    """

    def __init__(
        self, *, epsilon: float, method: str = "pem", max_length: int = 8, top_k: int = 32,
        oracle: str | None = None, rows: int = 256, width: int = 1024, seed: bytes | str | None = None,
    ) -> None:
        if method not in METHODS:
            raise ValueError(f"method must be one of {list(METHODS)}; got {method!r}")
        if isinstance(max_length, bool) or not isinstance(max_length, int) or not 1 <= max_length <= 254:
            raise ValueError(f"max_length must be an integer in 1..254 (bytes); got {max_length!r}")
        if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= 4096:
            raise ValueError(f"top_k must be an integer in 1..4096; got {top_k!r}")
        self.method, self.max_length, self.top_k = method, max_length, top_k
        if oracle is None:
            shape = {"rows": 1, "width": 8, "seed": bytes(32)}
            oracle = min(ORACLES, key=lambda o: float(ORACLES[o](epsilon=epsilon, **shape).variance(1)))
        if oracle not in ORACLES:
            raise ValueError(f"oracle must be one of {list(ORACLES)} or None; got {oracle!r}")
        self.oracle: Sketch = ORACLES[oracle](epsilon=epsilon, rows=rows, width=width, seed=seed)
        self.levels = max_length + 1
        self.fingerprint = f"{self.oracle.fingerprint}:pem:{max_length}:{top_k}"
        self.dtype = np.dtype([("level", "u1"), *[(f, self.oracle.dtype[f]) for f in self.oracle.dtype.names or ()]])

    def aggregate_from_json(self, data: Any) -> HeavyStat:
        """An aggregate of this configuration from its ``to_json`` form (AggregateError otherwise)."""
        stat = HeavyStat.from_json(data)
        stat.require(HeavyStat, self.fingerprint)
        if len(stat.levels) != self.levels:
            raise AggregateError(f"discovery aggregate has {len(stat.levels)} levels; this one needs {self.levels}")
        for level in stat.levels:
            self.oracle._check_stat(level)
        return stat

    @property
    def epsilon(self) -> float:
        """Each device's privacy loss: the epsilon of its one HCMS report."""
        return self.oracle.epsilon

    def items(self, values: Any) -> tuple[list[bytes], NDArray[np.int64]]:
        """The distinct values' items (``max_length + 1`` bytes) and each value's position among them."""
        data, inverse = text_bytes(values)
        items = []
        for d in data:
            if len(d) <= self.max_length:
                item = d + bytes([END])
            else:
                item = _cut(d, self.max_length) + bytes([CUT])
            items.append(item.ljust(self.levels, bytes([END])))
        return items, inverse

    def privatize_many(self, values: Any, rng: randomness.RNGLike = None) -> NDArray[Any]:
        """One report ``(level, row, index, bit)`` per value; ``rng=None`` uses the OS CSPRNG."""
        items, inverse = self.items(values)
        source = randomness.resolve(rng)
        level = randomness.uniform_below(self.levels, inverse.size, source).astype(np.int64) + 1
        pair = inverse * self.levels + (level - 1)
        used, key_of = np.unique(pair, return_inverse=True)
        keys = [bytes([p % self.levels + 1]) + items[p // self.levels][: p % self.levels + 1] for p in used.tolist()]
        sketch = self.oracle.privatize_keys(keys, key_of.astype(np.int64), source)
        out = np.empty(inverse.size, dtype=self.dtype)
        out["level"] = level
        for f in sketch.dtype.names or ():
            out[f] = sketch[f]
        return out

    def aggregate(self, reports: Any) -> HeavyStat:
        """One HCMS aggregate per level (mergeable with ``+``)."""
        arr = np.asarray(reports)
        if arr.dtype.names is None or set(arr.dtype.names) != set(self.dtype.names or ()):
            raise ValueError(
                f"reports must be a structured array with fields {list(self.dtype.names or ())}; got {arr.dtype}"
            )
        level = arr["level"].astype(np.int64)
        if arr.size and (level.min() < 1 or level.max() > self.levels):
            bad = int(np.flatnonzero((level < 1) | (level > self.levels))[0])
            raise ValueError(f"report {bad}: level must be in 1..{self.levels}; got {int(level[bad])}")
        fields = [f for f in self.dtype.names or () if f != "level"]
        stats = tuple(
            self.oracle.aggregate(arr[level == i][fields].astype(self.oracle.dtype))
            for i in range(1, self.levels + 1)
        )
        return HeavyStat(self.fingerprint, stats)

    def _extensions(self, prefix: bytes, level: int) -> tuple[int, ...] | range:
        """Bytes that can follow ``prefix`` at ``level``: only padding after an end, a marker last."""
        if prefix[-1:] in (bytes([END]), bytes([CUT])):
            return (END,)
        return (END, CUT) if level == self.levels else range(256)

    def _estimate(self, stat: HeavyStat, level: int, prefixes: list[bytes]) -> Estimate:
        keys = [bytes([level]) + p for p in prefixes]
        return self.oracle.estimate_keys(stat.levels[level - 1], keys, np.arange(len(keys)), tuple(prefixes))

    def identify(self, stat: HeavyStat, top: int | None = None, threshold: float | None = None,
                 level: float = 0.95) -> Discovery:
        """The discovered values, most frequent first, with counts, SEs and ``level`` CIs.

        ``threshold``: the least estimated count reported; None reports the
        values whose count is significantly above 0 (one-sided z test at 5%,
        Bonferroni over the last level's candidates: a value of true count 0
        is reported with probability at most 5% per call). ``top``: at most
        that many. A string cut at ``max_length`` and the same text uncut are
        different rows (``truncated`` tells them apart).
        """
        if not isinstance(stat, HeavyStat):
            raise TypeError(f"identify needs a HeavyStat aggregate; got {type(stat).__name__}")
        stat.require(HeavyStat, self.fingerprint)
        kept = [b""]
        est: Any = None
        for lev in range(1, self.levels + 1):
            candidates = [p + bytes([b]) for p in kept for b in self._extensions(p, lev)]
            est = self._estimate(stat, lev, candidates)
            if stat.levels[lev - 1].n == 0:
                kept = []
                break
            order = np.argsort(-est.frequencies, kind="stable")[: self.top_k]
            kept = [candidates[i] for i in order]
            est_order = order
        n, n_last = stat.n, stat.levels[-1].n
        if not kept:
            empty = np.zeros(0)
            return Discovery((), np.zeros(0, bool), empty, empty, empty, empty, n, level)
        f = est.frequencies[est_order]
        se_sketch = est.std_errors[est_order]
        plug = np.clip(f, 0, 1)
        subsample = plug * (1 - plug) * (n - n_last) / (n_last * max(n - 1, 1))
        se = np.sqrt(se_sketch**2 + subsample)
        if threshold is None:
            keep = f > z_for(0.05 / len(kept), two_sided=False) * se
        else:
            keep = f * n >= threshold
        z = z_for(1 - level)
        idx = np.flatnonzero(keep)[: top]
        values, cut = [], []
        for i in idx:
            item = kept[i]
            end = min(j for j, b in enumerate(item) if b in (END, CUT))
            values.append(item[:end].decode("utf-8", errors="replace"))
            cut.append(item[end] == CUT)
        return Discovery(
            tuple(values), np.array(cut, dtype=bool), f[idx] * n, se[idx] * n,
            (f[idx] - z * se[idx]) * n, (f[idx] + z * se[idx]) * n, n, level,
        )
