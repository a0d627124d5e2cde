"""Local hashing: binary (BLH) and optimized (OLH) local hashing (Wang et al. 2017).

The device draws a random hash ``H: [k] -> [g]`` and reports ``(seed, y)``
where ``y`` is GRR over ``[g]`` applied to ``H(x)``: ``y = H(x)`` with
probability ``p = e / (e + g - 1)``, else one of the other ``g - 1`` values.
``epsilon = ln(p (g - 1) / (1 - p))``. Support ``S(seed, y) = {v : H(v) = y}``:
``p* = p`` and ``q* = 1/g`` exactly, so ``f_v = (C_v/n - 1/g) / (p - 1/g)``.

Hash family: ``H(v) = T v XOR b`` over GF(2), with ``T`` a uniformly random
``m x L`` Toeplitz matrix (``g = 2**m``, ``L = ceil(log2 k)``) and ``b`` a
random offset. The family is pairwise independent, so ``P[H(v) = H(x)] = 1/g``
holds exactly (not only for idealised hashing), and because it is linear the
server computes all ``k`` support counts with one fast Walsh-Hadamard
transform in ``O(n g + k log k)`` instead of hashing every report against
every category (``O(n k)``). The seed packs the ``L + m - 1`` Toeplitz bits
(low bits) and the ``m`` offset bits into one unsigned 64-bit integer.

OLH picks the power of two ``g`` with the lowest variance (the textbook
``g = round(e^eps) + 1`` is rounded to a power of two; ``plan`` reports the
resulting variance). BLH is ``g = 2``.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable import _privacy as privacy
from deniable import _randomness as randomness
from deniable._randomness import Source
from deniable.mechanisms._domain import Domain
from deniable.mechanisms._frequency import FrequencyOracle
from deniable.mechanisms._kary import randomize
from deniable.mechanisms._walsh import fwht, parity
from deniable.mechanisms.registry import register
from deniable.wire import _codecs as codecs

__all__ = ["LocalHashing", "BLH", "OLH", "REPORT_DTYPE"]

REPORT_DTYPE = np.dtype([("seed", "<u8"), ("value", "<u4")])
_WHT_MAX_BITS = 10  # up to 2^10 buckets the support counts come from the Walsh-Hadamard route
_DIRECT_MAX_BITS = 20
_DIRECT_MAX_K = 1024
_KEYS_PER_BLOCK = 1 << 18  # support-count keys built at a time (2 MiB)
_MAX_SEARCHED = 1 << 24  # the most hash matrices max_support tries
_SEEDS_PER_BLOCK = 1 << 16  # ... at a time


def lh_variance(epsilon: float, g: int) -> float:
    """``Var*`` of local hashing with ``g`` buckets: ``q(1-q)/(p-q)^2``, ``q = 1/g``."""
    e = np.exp(epsilon)
    p, q = e / (e + g - 1), 1.0 / g
    return float(q * (1 - q) / (p - q) ** 2)


class LocalHashing(FrequencyOracle):
    """Local hashing with ``g = 2**m`` buckets and GF(2)-linear Toeplitz hashes."""

    report_kind = "structured"
    wide_fields = ("seed",)

    def _setup(self, domain: Domain, m: int, a: int, b: int) -> None:
        self.domain_obj = domain
        self.m = m
        self.g = 1 << m
        self.hash_bits = max(1, (domain.k - 1).bit_length())
        self.seed_bits = self.hash_bits + 2 * m - 1
        if self.seed_bits > 64:
            raise ValueError(
                f"{self.name}: k={domain.k} with g={self.g} needs a {self.seed_bits}-bit seed "
                "(at most 64); use fewer buckets"
            )
        self._a, self._b = a, b
        self._denominator = a + (self.g - 1) * b
        self._epsilon = privacy.ln_up(Fraction(a, b))

    @property
    def prob(self) -> Fraction:
        """``P(y = H(x))``."""
        return Fraction(self._a, self._denominator)

    def support_probabilities(self) -> tuple[list[Fraction], list[Fraction]]:
        return [self.prob] * self.k, [Fraction(1, self.g)] * self.k

    # ------------------------------------------------------------------ hash
    def _rows(self, seeds: NDArray[np.uint64]) -> list[NDArray[np.uint64]]:
        mask = np.uint64((1 << self.hash_bits) - 1)
        return [(seeds >> np.uint64(j)) & mask for j in range(self.m)]

    def _offset(self, seeds: NDArray[np.uint64]) -> NDArray[np.uint64]:
        shift = np.uint64(self.hash_bits + self.m - 1)
        return (seeds >> shift) & np.uint64(self.g - 1)

    def hash(self, seeds: NDArray[np.uint64], positions: NDArray[np.int64] | int) -> NDArray[np.uint64]:
        """``H_seed(position)`` for arrays of seeds and category positions."""
        x = np.asarray(positions).astype(np.uint64)
        out = self._offset(seeds).copy()
        for j, row in enumerate(self._rows(seeds)):
            out ^= parity(row & x).astype(np.uint64) << np.uint64(j)
        return out

    # -------------------------------------------------------------- sampling
    def _sample(self, idx: NDArray[np.int64], source: Source) -> NDArray[np.void]:
        n = idx.size
        seeds = randomness.uniform_below(1 << self.seed_bits, n, source)
        hashed = self.hash(seeds, idx).astype(np.int64)
        out = np.empty(n, dtype=REPORT_DTYPE)
        out["seed"] = seeds
        out["value"] = randomize(hashed, self._a, self._b, self.g, source)
        return out

    # --------------------------------------------------------------- reports
    def _validate(self, reports: Any) -> NDArray[np.void]:
        if isinstance(reports, np.ndarray) and reports.dtype.names:
            if set(reports.dtype.names) != {"seed", "value"} or reports.ndim != 1:
                raise ValueError(
                    f"{self.name} reports need the fields 'seed' and 'value' in a 1-D array; "
                    f"got {reports.dtype} with shape {reports.shape}"
                )
            for name in ("seed", "value"):
                column = reports[name]
                if column.dtype.kind not in "iu" or (column.dtype.kind == "i" and (column < 0).any()):
                    raise ValueError(
                        f"{self.name} reports: field '{name}' must hold non-negative integers; "
                        f"got dtype {column.dtype}"
                    )
            arr = reports.astype(REPORT_DTYPE, copy=False)
        else:
            arr = self._parse(reports)
        if arr.size:
            if self.seed_bits < 64 and arr["seed"].max() >> np.uint64(self.seed_bits):
                row = int(np.flatnonzero(arr["seed"] >> np.uint64(self.seed_bits))[0])
                raise ValueError(
                    f"{self.name} report {row}: seed must be below 2**{self.seed_bits}; "
                    f"got {int(arr['seed'][row])}"
                )
            if arr["value"].max() >= self.g:
                row = int(np.flatnonzero(arr["value"] >= self.g)[0])
                raise ValueError(
                    f"{self.name} report {row}: value must be in 0..{self.g - 1}; "
                    f"got {int(arr['value'][row])}"
                )
        return arr

    def _parse(self, reports: Any) -> NDArray[np.void]:
        items = list(reports)
        out = np.empty(len(items), dtype=REPORT_DTYPE)
        for i, item in enumerate(items):
            if isinstance(item, dict):
                seed, value = item.get("seed"), item.get("value")
            elif isinstance(item, (tuple, list, np.void)) and len(item) == 2:  # type: ignore[arg-type]
                seed, value = item[0], item[1]
            else:
                raise ValueError(
                    f"{self.name} report {i} must be {{'seed': int, 'value': int}}; got {item!r:.60}"
                )
            for field, v in (("seed", seed), ("value", value)):
                if isinstance(v, np.integer):
                    v = int(v)
                if type(v) is not int or v < 0 or v >= 1 << 64:
                    raise ValueError(
                        f"{self.name} report {i}: {field} must be a non-negative integer; got {v!r}"
                    )
            if int(value) >= self.g:  # type: ignore[arg-type]
                raise ValueError(
                    f"{self.name} report {i}: value must be in 0..{self.g - 1}; got {value!r}"
                )
            out[i] = (int(seed), int(value))  # type: ignore[arg-type]
        return out

    def _support_counts(self, reports: NDArray[np.void]) -> NDArray[np.int64]:
        """All ``C_v`` at once: ``C_v = 2**-m WHT(h)[v]`` (see module docstring).

        That costs ``2**m`` passes over the reports, so above ``g = 2**10``
        the counts are taken directly instead, hashing every report against
        every category (``O(n k m)``).
        """
        n = reports.size
        size = 1 << self.hash_bits
        if n == 0:
            return np.zeros(self.k, dtype=np.int64)
        seeds = reports["seed"]
        if self.m > _WHT_MAX_BITS:
            values = reports["value"].astype(np.uint64)
            return np.array(
                [np.count_nonzero(self.hash(seeds, v) == values) for v in range(self.k)], dtype=np.int64
            )
        # key = (subset mask) | (sign bit << L); the signed histogram is the 0-sign half minus the
        # 1-sign half. Reports go in blocks of about 2**18 keys, so the working memory stays in
        # cache and is the same on the first call as on later ones (no fresh pages per call)
        sign = np.uint64(self.hash_bits)
        counts = np.zeros(2 * size, dtype=np.int64)
        block = max(1, _KEYS_PER_BLOCK >> self.m)
        keys = np.empty((self.g, min(block, n)), dtype=np.uint64)
        for start in range(0, n, block):
            part = seeds[start : start + block]
            width = part.size
            target = reports["value"][start : start + block].astype(np.uint64) ^ self._offset(part)
            keys[0, :width] = 0
            for j, row in enumerate(self._rows(part)):
                row |= ((target >> np.uint64(j)) & np.uint64(1)) << sign
                np.bitwise_xor(keys[: 1 << j, :width], row, out=keys[1 << j : 2 << j, :width])
            counts += np.bincount(keys[:, :width].ravel().view(np.int64), minlength=2 * size)
        histogram = counts[:size] - counts[size:]
        return fwht(histogram)[: self.k] >> self.m

    def _supports(self, reports: NDArray[np.void], position: int) -> NDArray[np.bool_]:
        return self.hash(reports["seed"], position) == reports["value"].astype(np.uint64)

    def max_support(self, positions: NDArray[np.int64]) -> int:
        """``max_{H, y} |{t in T : H(t) = y}|`` over every hash of the family (exact; :meth:`colliding_hashes`)."""
        return self.colliding_hashes(positions)[1]

    def colliding_hashes(
        self, positions: NDArray[np.int64], every: bool = False
    ) -> tuple[NDArray[np.uint64], int]:
        """The hash matrices that put the most of the categories at ``positions`` in one bucket, and that most.

        The offset does not change which categories collide, so the
        ``2**(L + m - 1)`` Toeplitz matrices are tried with offset 0 (seeds
        below ``2**(L + m - 1)``), at most ``2**24`` of them, a block at a time;
        the search stops at the first block where every category collides,
        unless ``every`` asks for all the matrices that do.
        """
        targets = np.unique(positions)
        matrices = 1 << (self.hash_bits + self.m - 1)
        if matrices > _MAX_SEARCHED:
            raise NotImplementedError(f"{self.name}: {matrices} hash matrices are too many to try exactly")
        best, found = 0, np.zeros(0, dtype=np.uint64)
        for start in range(0, matrices, _SEEDS_PER_BLOCK):
            seeds = np.arange(start, min(start + _SEEDS_PER_BLOCK, matrices), dtype=np.uint64)
            buckets = np.stack([self.hash(seeds, int(t)) for t in targets], axis=1).astype(np.int64)
            counts = np.zeros((seeds.size, self.g), dtype=np.int64)
            np.add.at(counts, (np.repeat(np.arange(seeds.size), targets.size), buckets.ravel()), 1)
            most = counts.max(axis=1)
            top = int(most.max())
            if top > best:
                best, found = top, seeds[most == top]
            elif top == best:
                found = np.concatenate([found, seeds[most == top]])
            if best == targets.size and not every:
                break
        return found, best

    def transition_matrix(self) -> tuple[list[Any], NDArray[np.float64]]:
        if self.seed_bits + self.m > 14:
            raise NotImplementedError("transition_matrix enumerates every (seed, value); too many")
        seeds = np.arange(1 << self.seed_bits, dtype=np.uint64)
        outputs = [(int(s), y) for s in seeds for y in range(self.g)]
        p, q = float(self.prob), self._b / self._denominator
        matrix = np.empty((self.k, len(outputs)))
        for x in range(self.k):
            h = self.hash(seeds, x).astype(np.int64)
            block = np.full((seeds.size, self.g), q)
            block[np.arange(seeds.size), h] = p
            matrix[x] = block.ravel() / seeds.size
        return outputs, matrix

    # ------------------------------------------------------------------ wire
    def _params(self) -> dict[str, Any]:
        return {"g": self.g, "truth_numerator": self._a, "other_numerator": self._b, "hash": "toeplitz-gf2"}

    @classmethod
    def _from_params(cls, domain: Any, params: dict[str, Any]) -> LocalHashing:
        g = int(params["g"])
        if g < 2 or g & (g - 1):
            raise ValueError(f"{cls.__name__} params: g must be a power of two >= 2; got {g}")
        a, b = int(params["truth_numerator"]), int(params["other_numerator"])
        if not 0 < b < a:
            raise ValueError(f"{cls.__name__} params need 0 < other_numerator < truth_numerator")
        self = cls.__new__(cls)
        self._setup(Domain(domain, cls.__name__), g.bit_length() - 1, a, b)
        return self

    @property
    def report_bits(self) -> int:
        return self.seed_bits + self.m

    def _report_to_json(self, report: Any) -> dict[str, int]:
        return codecs.seed_value_to_json(report)

    def _reports_from_json(self, items: Any) -> NDArray[np.void]:
        codecs.check_seed_value(items, self.name)
        return self._validate(list(items))


@register(decode_cost="O(n g + k log k) (Walsh-Hadamard)", candidate=True, browser=True, required={"epsilon"})
class BLH(LocalHashing):
    r"""Binary local hashing: a random hash to one bit, then Warner's randomized response.

    Each device draws a hash :math:`H: [k] \to \{0, 1\}` from a pairwise
    independent family (its seed travels with the report) and reports
    :math:`H(x)` through binary randomized response.

    Parameters
    ----------
    categories : int or sequence
        ``k`` (the categories are the ints ``0 .. k-1``) or the list of
        categories, any hashable values (at least 2).
    epsilon : float
        The privacy loss of one report, ``> 0``; the realised ``m.epsilon``
        (from the sampler's integer probabilities) is within 1% of it and
        never above.

    Raises
    ------
    ValueError
        Fewer than two categories, repeated categories, or an epsilon that is
        not a positive finite number.

    Notes
    -----
    :math:`p^* = e^\varepsilon / (e^\varepsilon + 1)` and :math:`q^* = 1/2`;
    :math:`V^* = (e^\varepsilon + 1)^2 / (e^\varepsilon - 1)^2`. ``OLH``, hashing to
    more buckets, has lower variance at every epsilon above about 1.

    Examples
    --------
    >>> import numpy as np
    >>> from deniable.mechanisms import BLH
    >>> m = BLH(8, epsilon=1.0)
    >>> round(m.epsilon, 6)
    1.0
    >>> rng = np.random.default_rng(0)
    >>> values = rng.integers(0, 8, size=20_000)
    >>> est = m.estimate(m.privatize_many(values, rng=rng))
    >>> truth = np.bincount(values, minlength=8) / values.size
    >>> bool(np.all(np.abs(est.frequencies - truth) < 5 * est.std_errors))
    True
    """

    wire_id = "blh"

    def __init__(self, categories: Any, *, epsilon: float) -> None:
        a, b = privacy.exp_ratio(privacy.check_epsilon(epsilon, owner="BLH"), 1)
        self._setup(Domain(categories, "BLH"), 1, a, b)


@register(
    decode_cost="O(n g + k log k) (Walsh-Hadamard)", candidate=True, browser=True,
    required={"epsilon"}, optional={"g"},
)
class OLH(LocalHashing):
    r"""Optimized local hashing (Wang et al. 2017).

    Each device draws a hash :math:`H: [k] \to [g]` from a pairwise independent
    family that is linear over GF(2) (its seed travels with the report) and
    reports :math:`H(x)` through k-ary randomized response over :math:`[g]`;
    the server decodes all ``k`` support counts with one Walsh-Hadamard
    transform.

    Parameters
    ----------
    categories : int or sequence
        ``k`` (the categories are the ints ``0 .. k-1``) or the list of
        categories, any hashable values (at least 2).
    epsilon : float
        The privacy loss of one report, ``> 0``; the realised ``m.epsilon``
        (from the sampler's integer probabilities) is within 1% of it and
        never above.
    g : int, optional
        The number of hash buckets, a power of two ``>= 2``; default:
        the power of two of lowest variance near :math:`e^\varepsilon + 1`.

    Raises
    ------
    ValueError
        Fewer than two categories, repeated categories, or an epsilon that is
        not a positive finite number, or a ``g`` that is not a power of two.

    Notes
    -----
    :math:`p^* = e^\varepsilon / (e^\varepsilon + g - 1)` and :math:`q^* = 1/g`
    (exact for the pairwise independent family); with :math:`g \approx e^\varepsilon + 1`,
    :math:`V^* \approx 4 e^\varepsilon / (e^\varepsilon - 1)^2`, as OUE, with a
    report of :math:`\log_2 g` bits plus the seed instead of ``k`` bits.

    Examples
    --------
    >>> import numpy as np
    >>> from deniable.mechanisms import OLH
    >>> m = OLH(8, epsilon=1.0)
    >>> round(m.epsilon, 6)
    1.0
    >>> rng = np.random.default_rng(0)
    >>> values = rng.integers(0, 8, size=20_000)
    >>> est = m.estimate(m.privatize_many(values, rng=rng))
    >>> truth = np.bincount(values, minlength=8) / values.size
    >>> bool(np.all(np.abs(est.frequencies - truth) < 5 * est.std_errors))
    True
    """

    wire_id = "olh"

    def __init__(self, categories: Any, *, epsilon: float, g: int | None = None) -> None:
        eps = privacy.check_epsilon(epsilon, owner="OLH")
        domain = Domain(categories, "OLH")
        if g is None:
            # the seed holds L + 2m - 1 <= 64 bits (L hash input bits). Past 2^10 buckets the
            # counts are taken by hashing every report against every category (O(n k m)), so larger
            # g (up to 2^20, optimal to epsilon ~ 13.9) is offered for domains of at most 1024
            cap = _DIRECT_MAX_BITS if domain.k <= _DIRECT_MAX_K else _WHT_MAX_BITS
            most = max(1, min(cap, (65 - max(1, (domain.k - 1).bit_length())) // 2))
            candidates = [1 << m for m in range(1, most + 1)]
            g = min(candidates, key=lambda c: lh_variance(eps, c))
        elif isinstance(g, bool) or not isinstance(g, int) or g < 2 or g & (g - 1):
            raise ValueError(f"g must be a power of two >= 2 for OLH; got {g!r}")
        a, b = privacy.exp_ratio(eps, g - 1)
        self._setup(domain, g.bit_length() - 1, a, b)
