"""Hadamard response, high-privacy form (Acharya, Sun, Zhang, AISTATS 2019).

With ``K = 2**ceil(log2(k + 1))``, category ``i`` owns the set
``C_i = {y in [K] : popcount((i + 1) & y) is even}`` (row ``i + 1`` of the
Sylvester Hadamard matrix is +1 there), ``|C_i| = K/2``. The device reports a
uniform element of ``C_x`` with probability ``p = e / (e + 1)``, otherwise a
uniform element of the complement, so ``P(y|x)`` is ``2p/K`` or ``2(1-p)/K`` and
``epsilon = ln(p / (1 - p))``. Two distinct sets overlap in ``K/4`` elements,
so the support probabilities are ``p* = p`` and ``q* = 1/2`` exactly;
``Var* = (e + 1)^2 / (e - 1)^2``. Reports are ``log2 K``-bit integers, and the
server gets every ``C_i`` from one Walsh-Hadamard transform of the report
histogram: ``C_i = (n + WHT(hist)[i + 1]) / 2``.

Sampling is constant-time in the value: a uniform ``y`` in ``[K]`` whose
parity with ``i + 1`` is wrong is moved into the right half by flipping the
lowest set bit of ``i + 1`` (a 2-to-1 map onto the half).
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
from deniable.mechanisms._walsh import fwht, parity
from deniable.mechanisms.registry import register

__all__ = ["HadamardResponse"]


@register(
    decode_cost="O(n + K log K) (Walsh-Hadamard)", candidate=True, browser=True, required={"epsilon"}
)
class HadamardResponse(FrequencyOracle):
    r"""Hadamard response (Acharya, Sun & Zhang 2019).

    With :math:`K = 2^{\lceil \log_2 (k + 1) \rceil}`, category ``i`` owns the
    half :math:`C_i = \{y : \mathrm{popcount}((i + 1) \,\&\, y) \text{ even}\}` of
    :math:`[K]`; the device reports a uniform element of its half w.p.
    :math:`e^\varepsilon / (e^\varepsilon + 1)`, else of the other half: a report
    is :math:`\log_2 K` bits and decoding takes :math:`O(n + K \log K)`.

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
    :math:`p^* = e^\varepsilon / (e^\varepsilon + 1)` and :math:`q^* = 1/2` exactly
    (two halves overlap in :math:`K/4` elements), so
    :math:`V^* = (e^\varepsilon + 1)^2 / (e^\varepsilon - 1)^2`.

    Examples
    --------
    >>> import numpy as np
    >>> from deniable.mechanisms import HadamardResponse
    >>> m = HadamardResponse(8, epsilon=1.0)
    >>> round(m.epsilon, 6)
    1.0
    >>> rng = np.random.default_rng(0)
    >>> values = rng.integers(0, 8, size=20_000)
    >>> est = m.estimate(m.privatize_many(values, rng=rng))
    >>> truth = np.bincount(values, minlength=8) / values.size
    >>> bool(np.all(np.abs(est.frequencies - truth) < 5 * est.std_errors))
    True
    """

    wire_id = "hadamard"
    report_kind = "int"

    def __init__(self, categories: Any, *, epsilon: float) -> None:
        a, b = privacy.exp_ratio(privacy.check_epsilon(epsilon, owner="HadamardResponse"), 1)
        self._setup(Domain(categories, "HadamardResponse"), a, b)

    def _setup(self, domain: Domain, a: int, b: int) -> None:
        self.domain_obj = domain
        self.K = 1 << domain.k.bit_length()  # smallest power of two > k
        self._a, self._b = a, b
        self._epsilon = privacy.ln_up(Fraction(a, b))

    @property
    def prob(self) -> Fraction:
        """Probability that the report falls in the respondent's own set."""
        return Fraction(self._a, self._a + self._b)

    def support_probabilities(self) -> tuple[list[Fraction], list[Fraction]]:
        return [self.prob] * self.k, [Fraction(1, 2)] * self.k

    def _sample(self, idx: NDArray[np.int64], source: Source) -> NDArray[np.int64]:
        n = idx.size
        rows = (idx + 1).astype(np.uint64)
        inside = randomness.bernoulli(self._a, self._a + self._b, n, source)
        y = randomness.uniform_below(self.K, n, source)
        wrong = parity(rows & y).astype(bool) == inside  # inside needs even parity
        lowest = rows & (~rows + np.uint64(1))
        y ^= np.where(wrong, lowest, np.uint64(0))
        return y.astype(np.int64)

    def _validate(self, reports: Any) -> NDArray[np.int64]:
        if isinstance(reports, (list, tuple)) and bool in set(map(type, reports)):
            reports = np.array(reports, dtype=object)  # JSON true/false are not reports (numpy would read 1/0)
        arr = np.asarray(reports)
        if arr.shape == (0,):  # no reports (not [[]], one empty report)
            return np.zeros(0, dtype=np.int64)
        if arr.ndim == 1 and arr.dtype == object and all(type(v) is int for v in arr.tolist()):
            # Python ints (a JSON array) may not fit 64 bits: range-check them as Python ints
            outside = [not 0 <= v < self.K for v in arr.tolist()]
            if any(outside):
                row = outside.index(True)
                raise self._out_of_range(row, arr[row])
            return arr.astype(np.int64)
        if arr.ndim != 1 or arr.dtype.kind not in "iu":
            raise ValueError(
                f"HadamardResponse reports must be a 1-D array of integers in 0..{self.K - 1}; "
                f"got dtype {arr.dtype} and shape {arr.shape}"
            )
        if arr.min() < 0 or arr.max() >= self.K:
            row = int(np.argmax((arr < 0) | (arr >= self.K)))
            raise self._out_of_range(row, arr[row])
        return arr.astype(np.int64, copy=False)

    def _out_of_range(self, row: int, value: Any) -> ValueError:
        """The refusal of report ``row`` (the first one outside ``0..K-1``), naming its value."""
        return ValueError(f"HadamardResponse report {row} is {int(value)}, not in 0..{self.K - 1}")

    def _support_counts(self, reports: NDArray[np.int64]) -> NDArray[np.int64]:
        spectrum = fwht(np.bincount(reports, minlength=self.K))
        return (reports.size + spectrum[1 : self.k + 1]) // 2

    def _supports(self, reports: NDArray[np.int64], position: int) -> NDArray[np.bool_]:
        return parity(reports.astype(np.uint64) & np.uint64(position + 1)) == 0

    def max_support(self, positions: NDArray[np.int64]) -> int:
        """``max_y |{t in T : y in C_t}|`` over every output ``y`` in ``[K]`` (exact)."""
        y = np.arange(self.K, dtype=np.uint64)[:, None]
        rows = np.unique(positions).astype(np.uint64)[None, :] + np.uint64(1)
        return int((parity(y & rows) == 0).sum(axis=1).max())

    def transition_matrix(self) -> tuple[list[Any], NDArray[np.float64]]:
        y = np.arange(self.K, dtype=np.uint64)
        p = float(self.prob)
        matrix = np.empty((self.k, self.K))
        for x in range(self.k):
            inside = parity(y & np.uint64(x + 1)) == 0
            matrix[x] = np.where(inside, 2 * p / self.K, 2 * (1 - p) / self.K)
        return list(range(self.K)), matrix

    def simulate_support_counts(
        self, true_counts: NDArray[np.int64], rng: np.random.Generator
    ) -> NDArray[np.int64] | None:
        if self.k * self.K > 1 << 24:
            return None
        _, matrix = self.transition_matrix()
        histogram = np.zeros(self.K, dtype=np.int64)
        for x in np.flatnonzero(true_counts):
            histogram += rng.multinomial(int(true_counts[x]), matrix[x])
        spectrum = fwht(histogram)
        return (int(true_counts.sum()) + spectrum[1 : self.k + 1]) // 2

    @property
    def report_bits(self) -> int:
        return self.K.bit_length() - 1

    def _params(self) -> dict[str, Any]:
        return {"K": self.K, "inside_numerator": self._a, "outside_numerator": self._b}

    @classmethod
    def _from_params(cls, domain: Any, params: dict[str, Any]) -> HadamardResponse:
        a, b = int(params["inside_numerator"]), int(params["outside_numerator"])
        if not 0 < b < a:
            raise ValueError("HadamardResponse params need 0 < outside_numerator < inside_numerator")
        self = cls.__new__(cls)
        self._setup(Domain(domain, "HadamardResponse"), a, b)
        if int(params.get("K", self.K)) != self.K:
            raise ValueError(f"HadamardResponse params: K must be {self.K} for k={self.k}")
        return self
