"""Apple's count-mean sketches (CMS, HCMS): frequency oracles over any string.

"Learning with Privacy at Scale" (Apple Differential Privacy Team, 2017).
Nobody lists the domain in advance: a device hashes its string into one of
``m`` buckets with one of ``k_h`` public hash functions (the row ``j``, its
own uniform choice) and randomizes the one-hot bucket vector; the server
adds reports into a ``k_h x m`` sketch and estimates any string afterwards.

The hash family (a value's fingerprint ``phi(x)`` and its bucket ``h_j(x)`` in
row ``j``) is in :mod:`deniable.mechanisms._sketch_hashing`; the estimator both
sketches share, with its variance and the collision correction, in
:mod:`deniable.mechanisms._sketch_base`; their aggregate, :class:`SketchCounts`,
in :mod:`deniable.mechanisms._sketch_counts`. Every name is importable from here.

**CMS** (wire id ``cms``): the device sends ``(j, v)`` with ``v`` the
one-hot vector of ``h_j(x)`` in ``{0, 1}^m``, each bit flipped independently
with probability ``t / 2**32`` (exact integer sampling),
``epsilon = 2 ln((2**32 - t) / t)`` (two bits differ between neighbours);
requests from ``CMS_MIN_EPSILON`` to ``CMS_MAX_EPSILON`` are realised to
within 1% (never above), others refused.
A report supports ``d`` when bit ``h_j(d)`` of ``v`` is set. The sketch is
``S[j, b]`` = reports in row ``j`` with bit ``b`` set.

**HCMS** (wire id ``hcms``): the device draws ``j`` and a Hadamard row
``l`` in ``[m]`` and sends ``(j, l, bit)`` with ``(-1)**bit`` =
``(-1)**popcount(l & h_j(x))`` kept with probability ``p = a / (a + b)``,
``epsilon = ln(a / b)``. A report supports ``d`` when ``(-1)**bit`` equals
``(-1)**popcount(l & h_j(d))``. The sketch is ``W[j, l]`` = sum of
``(-1)**bit`` over reports ``(j, l)``; one Walsh-Hadamard transform per row
gives every support count.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable import _columns as columns
from deniable import _privacy as privacy
from deniable import _randomness as randomness
from deniable import _skips as skips
from deniable._randomness import Source
from deniable.mechanisms._sketch_base import HashedKeys, Sketch
from deniable.mechanisms._sketch_counts import SketchCounts
from deniable.mechanisms._sketch_hashing import HASH_FAMILY, SEED_BYTES, JoinedKeys, keyed_digests, text_bytes
from deniable.mechanisms._walsh import fwht, parity
from deniable.mechanisms.registry import register
from deniable.wire import _codecs as codecs

__all__ = [
    "SketchCounts", "HashedKeys", "CountMeanSketch", "HadamardCountMeanSketch", "text_bytes", "keyed_digests",
    "Sketch", "JoinedKeys", "HASH_FAMILY", "SEED_BYTES", "CMS_MIN_EPSILON", "CMS_MAX_EPSILON",
]

_CHUNK = 4096  # CMS reports sampled at a time

CMS_MIN_EPSILON = 2e-7
"""Below it CMS's flip numerators ``t = 2**31 - k`` realise ``epsilon ~ k / 2**29``: steps of over 1% (``k < 99``)."""
CMS_MAX_EPSILON = 41.5
"""Above it the largest realisable epsilons (``t`` = 5, 4, 3, 2, 1: 41.14, 41.59, 42.16, 42.98, 44.36) lie more than
1% apart: a request just below one of them would realise more than 1% less."""


@register(kind="sketch", decode_cost="O(n m) to aggregate, O(k_h) per estimated string")
class CountMeanSketch(Sketch):
    r"""Apple's count-mean sketch: ``(row, m bits)`` per report, each bit flipped w.p. ``1/(1 + e^(eps/2))``.

    Parameters
    ----------
    categories : sequence of str, optional
        The strings ``estimate`` reports on (any others can be estimated
        afterwards with ``estimate_values``); none by default.
    epsilon : float
        The privacy loss of one report, ``> 0`` (from ``CMS_MIN_EPSILON`` to ``CMS_MAX_EPSILON``).
    rows : int, default 256
        :math:`k_h`, the number of hash functions (sketch rows), 1 to 65,536.
    width : int, default 1024
        :math:`m`, the buckets per row, a power of two from 8 to :math:`2^{20}`.
    seed : bytes or str, optional
        The hash family's 32-byte seed (or its hex); None draws one from the
        OS CSPRNG. Server and devices must share it (it is in the
        configuration).

    Raises
    ------
    ValueError
        A bad ``epsilon``, ``rows``, ``width`` or ``seed``, or repeated
        categories.

    Notes
    -----
    A report supports :math:`d` with :math:`p^* = p` when the device holds
    :math:`d`; over the seed, :math:`q^* = q_0 + (p - q_0) / m`, and
    :math:`\hat f_d = (C_d / n - q^*) / (p^* - q^*)` is unbiased, with a
    hash-collision term added to the oracle's variance
    (:mod:`deniable.mechanisms._sketch_base`). CMS flips each bit with probability
    :math:`t / 2^{32}`, so :math:`q_0 = 1 - p` and :math:`\varepsilon = 2 \ln((2^{32} - t) / t)`.

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> rng = np.random.default_rng(0)
    >>> m = dn.CountMeanSketch(["apple", "pear", "fig"], epsilon=4.0, rows=16, width=64, seed=bytes(32))
    >>> values = rng.choice(["apple", "pear", "fig"], size=5000, p=[0.6, 0.3, 0.1])
    >>> stat = m.aggregate(m.privatize_many(values, rng=rng))
    >>> est = m.estimate_from(stat)
    >>> bool(np.all(np.abs(est.frequencies - [0.6, 0.3, 0.1]) < 5 * est.std_errors))
    True
    >>> kiwi = m.estimate_values(stat, ["kiwi"])  # never listed, held by nobody
    >>> bool(abs(kiwi.frequencies[0]) < 5 * kiwi.std_errors[0])
    True
    """

    wire_id = "cms"
    report_fields = ("row", "bits")
    hex_fields = ("bits",)

    def __init__(
        self, categories: Any = None, *, epsilon: float, rows: int = 256, width: int = 1024,
        seed: bytes | str | None = None,
    ) -> None:
        eps = privacy.check_epsilon(epsilon, owner="CountMeanSketch")
        half = privacy.check_realisable(eps, CMS_MAX_EPSILON, "CountMeanSketch", smallest=CMS_MIN_EPSILON) / 2
        flip = math.ceil((1 << 32) / (1 + math.exp(half)))
        while flip < 1 << 31 and privacy.ln_up(Fraction((1 << 32) - flip, flip)) > half:
            flip += 1
        self._setup(categories, rows, width, seed, flip)

    def _setup(self, categories: Any, rows: Any, width: Any, seed: Any, flip: int) -> None:
        if not 0 < flip < 1 << 31:
            raise ValueError(f"CountMeanSketch: flip_numerator must be in 1..2**31-1; got {flip}")
        self._setup_hash(categories, rows, width, seed)
        self.flip_numerator = flip
        self._epsilon = 2 * privacy.ln_up(Fraction((1 << 32) - flip, flip))
        self.dtype = np.dtype([("row", "<u4"), ("bits", "u1", (width // 8,))])

    @property
    def epsilon(self) -> float:
        """``2 ln((2**32 - t) / t)`` for the integer flip numerator ``t`` (rounded up)."""
        return self._epsilon

    @property
    def report_bits(self) -> int:
        return max(1, (self.rows - 1).bit_length()) + self.width

    def _params(self) -> dict[str, Any]:
        return {**self._hash_params(), "flip_numerator": self.flip_numerator}

    @classmethod
    def _from_params(cls, domain: Any, params: dict[str, Any]) -> CountMeanSketch:
        self = cls.__new__(cls)
        args = cls._hash_args(params)
        self._setup(domain, args["rows"], args["width"], args["seed"], int(params["flip_numerator"]))
        return self

    def _probabilities(self) -> tuple[float, float]:
        q0 = self.flip_numerator / 2**32
        return 1 - q0, q0

    def _sample(self, rows: NDArray[np.int64], buckets: NDArray[np.int64], source: Source) -> NDArray[Any]:
        """Each report's ``m`` flips drawn packed (:func:`~deniable._skips.flips_packed`), then
        the bit of its bucket (``bitorder="little"``: bit ``b % 8`` of byte ``b // 8``) inverted."""
        n, size = rows.size, self.width // 8
        out = np.empty(n, dtype=self.dtype)
        out["row"] = rows
        for start in range(0, n, _CHUNK):
            stop = min(n, start + _CHUNK)
            bits = skips.flips_packed(self.flip_numerator, 32, (stop - start) * self.width, source)
            bits = bits.reshape(stop - start, size)
            own = buckets[start:stop]
            bits[np.arange(stop - start), own >> 3] ^= np.left_shift(1, own & 7).astype(np.uint8)
            out["bits"][start:stop] = bits
        return out

    def _validate(self, reports: Any) -> NDArray[Any]:
        arr = self._structured(reports, self.dtype)
        self._check_range(arr, "row", self.rows)
        return arr

    def _field(self, i: int, name: str, value: Any) -> Any:
        if name != "bits":
            return super()._field(i, name, value)
        size = self.width // 8
        raw = codecs.hex_field(value, size)
        if raw is not None:
            return raw
        raise ValueError(
            f"{self.name} report {i}: bits must be {2 * size} hex digits (m={self.width} bits); got {value!r:.60}"
        )

    def _tables(self, checked: NDArray[Any], cells: NDArray[np.int64], size: int) -> NDArray[np.int64]:
        return columns.column_counts(checked["bits"], cells, size, "little")

    def _row_pairs(self, stat: SketchCounts) -> NDArray[np.float64]:
        p, q0 = self._probabilities()
        n_j = stat.row_counts.astype(float)
        squares = ((stat.table - n_j[:, None] * q0) ** 2).sum(axis=1)
        noise = n_j * p * (1 - p) + (self.width - 1) * n_j * q0 * (1 - q0)
        return np.asarray((squares - noise) / (p - q0) ** 2 - n_j, dtype=float)

    def _supports(self, reports: NDArray[Any], buckets: NDArray[np.int64]) -> NDArray[np.bool_]:
        byte = reports["bits"][np.arange(reports.size), buckets >> 3]
        return ((byte >> (buckets & 7).astype(np.uint8)) & 1).astype(bool)


@register(kind="sketch", decode_cost="O(n + k_h m log m) to aggregate, O(k_h) per estimated string")
class HadamardCountMeanSketch(Sketch):
    r"""Apple's Hadamard count-mean sketch: ``(row, index, bit)`` per report, kept w.p. ``e^eps/(1 + e^eps)``.

    Parameters
    ----------
    categories : sequence of str, optional
        The strings ``estimate`` reports on (any others can be estimated
        afterwards with ``estimate_values``); none by default.
    epsilon : float
        The privacy loss of one report, ``> 0``.
    rows : int, default 256
        :math:`k_h`, the number of hash functions (sketch rows), 1 to 65,536.
    width : int, default 1024
        :math:`m`, the buckets per row, a power of two from 8 to :math:`2^{20}`.
    seed : bytes or str, optional
        The hash family's 32-byte seed (or its hex); None draws one from the
        OS CSPRNG. Server and devices must share it (it is in the
        configuration).

    Raises
    ------
    ValueError
        A bad ``epsilon``, ``rows``, ``width`` or ``seed``, or repeated
        categories.

    Notes
    -----
    A report supports :math:`d` with :math:`p^* = p` when the device holds
    :math:`d`; over the seed, :math:`q^* = q_0 + (p - q_0) / m`, and
    :math:`\hat f_d = (C_d / n - q^*) / (p^* - q^*)` is unbiased, with a
    hash-collision term added to the oracle's variance
    (:mod:`deniable.mechanisms._sketch_base`). HCMS keeps the sign
    :math:`(-1)^{\mathrm{popcount}(l \,\&\, h_j(x))}` with probability
    :math:`p = e^\varepsilon / (1 + e^\varepsilon)`, so :math:`q_0 = 1/2`.

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> rng = np.random.default_rng(0)
    >>> m = dn.HadamardCountMeanSketch(["apple", "pear", "fig"], epsilon=4.0, rows=16, width=64, seed=bytes(32))
    >>> values = rng.choice(["apple", "pear", "fig"], size=5000, p=[0.6, 0.3, 0.1])
    >>> stat = m.aggregate(m.privatize_many(values, rng=rng))
    >>> est = m.estimate_from(stat)
    >>> bool(np.all(np.abs(est.frequencies - [0.6, 0.3, 0.1]) < 5 * est.std_errors))
    True
    >>> kiwi = m.estimate_values(stat, ["kiwi"])  # never listed, held by nobody
    >>> bool(abs(kiwi.frequencies[0]) < 5 * kiwi.std_errors[0])
    True
    """

    wire_id = "hcms"
    report_fields = ("row", "index", "bit")
    dtype = np.dtype([("row", "<u4"), ("index", "<u4"), ("bit", "u1")])

    def __init__(
        self, categories: Any = None, *, epsilon: float, rows: int = 256, width: int = 1024,
        seed: bytes | str | None = None,
    ) -> None:
        a, b = privacy.exp_ratio(privacy.check_epsilon(epsilon, owner="HadamardCountMeanSketch"), 1)
        self._setup(categories, rows, width, seed, a, b)

    def _setup(self, categories: Any, rows: Any, width: Any, seed: Any, a: int, b: int) -> None:
        if not 0 < b < a:
            raise ValueError("HadamardCountMeanSketch params need 0 < other_numerator < keep_numerator")
        self._setup_hash(categories, rows, width, seed)
        self._a, self._b = a, b
        self._epsilon = privacy.ln_up(Fraction(a, b))

    @property
    def epsilon(self) -> float:
        """``ln(a / b)`` of the integer keep / flip numerators (rounded up)."""
        return self._epsilon

    @property
    def report_bits(self) -> int:
        return max(1, (self.rows - 1).bit_length()) + self.bits + 1

    def _params(self) -> dict[str, Any]:
        return {**self._hash_params(), "keep_numerator": self._a, "other_numerator": self._b}

    @classmethod
    def _from_params(cls, domain: Any, params: dict[str, Any]) -> HadamardCountMeanSketch:
        self = cls.__new__(cls)
        args = cls._hash_args(params)
        a, b = int(params["keep_numerator"]), int(params["other_numerator"])
        self._setup(domain, args["rows"], args["width"], args["seed"], a, b)
        return self

    def _probabilities(self) -> tuple[float, float]:
        return self._a / (self._a + self._b), 0.5

    def _sample(self, rows: NDArray[np.int64], buckets: NDArray[np.int64], source: Source) -> NDArray[Any]:
        n = rows.size
        index = randomness.uniform_below(self.width, n, source)
        flip = ~randomness.bernoulli(self._a, self._a + self._b, n, source)
        out = np.empty(n, dtype=self.dtype)
        out["row"] = rows
        out["index"] = index
        out["bit"] = parity(index & buckets.astype(np.uint64)) ^ flip
        return out

    def _validate(self, reports: Any) -> NDArray[Any]:
        arr = self._structured(reports, self.dtype)
        self._check_range(arr, "row", self.rows)
        self._check_range(arr, "index", self.width)
        self._check_range(arr, "bit", 2)
        return arr

    def _tables(self, checked: NDArray[Any], cells: NDArray[np.int64], size: int) -> NDArray[np.int64]:
        cell = cells * self.width + checked["index"].astype(np.int64)
        signs = 1 - 2 * checked["bit"].astype(np.int64)
        table = np.bincount(cell, weights=signs, minlength=size * self.width).round().astype(np.int64)
        return table.reshape(size, self.width)

    def _lookup_table(self, stat: SketchCounts) -> NDArray[np.int64]:
        """Row ``j`` of the result at bucket ``b``: ``sum_l W[j, l] (-1)**popcount(l & b)`` (an FWHT of each row)."""
        return fwht(stat.table)

    def _support_counts(self, stat: SketchCounts, summed: NDArray[np.int64]) -> NDArray[np.int64]:
        return np.asarray((stat.n + summed) // 2, dtype=np.int64)

    def _row_pairs(self, stat: SketchCounts) -> NDArray[np.float64]:
        p, _ = self._probabilities()
        n_j = stat.row_counts.astype(float)
        squares = (stat.table.astype(float) ** 2).sum(axis=1)
        return np.asarray(self.width * (squares - n_j) / (2 * p - 1) ** 2, dtype=float)

    def _supports(self, reports: NDArray[Any], buckets: NDArray[np.int64]) -> NDArray[np.bool_]:
        own = parity(reports["index"].astype(np.uint64) & buckets.astype(np.uint64))
        return np.asarray(own == reports["bit"], dtype=bool)
