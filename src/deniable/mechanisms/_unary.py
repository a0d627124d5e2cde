"""Unary encoding: symmetric (SUE, basic one-time RAPPOR) and optimized (OUE).

The value is one-hot encoded into ``k`` bits; the 1-bit is reported as 1 with
probability ``p`` and every 0-bit as 1 with probability ``q``, independently.
``epsilon = ln(p (1 - q) / ((1 - p) q))`` (two bits differ between inputs).

* SUE: ``p = e^(eps/2) / (e^(eps/2) + 1)``, ``q = 1 - p``; ``Var* = e^(eps/2)/(e^(eps/2)-1)^2``.
* OUE: ``p = 1/2``, ``q = 1 / (e^eps + 1)``; ``Var* = 4 e^eps / (e^eps - 1)^2``.

Support: ``S(y) = {v : y_v = 1}``, so ``p* = p``, ``q* = q``. Reports are bit
packed (``numpy.packbits`` order: category ``i`` is bit ``7 - i % 8`` of byte
``i // 8``), ``ceil(k / 8)`` bytes per report. Probabilities are dyadic
(``c / 2**32``) and sampled exactly by a lazy comparison of uniform bits with
``c`` (:func:`deniable._randomness.bernoulli_packed`, about 2 random bits per
report bit), straight into the packed report.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable import _columns as columns
from deniable import _privacy as privacy
from deniable import _randomness as randomness
from deniable._randomness import Source
from deniable.mechanisms._domain import Domain
from deniable.mechanisms._frequency import FrequencyOracle
from deniable.mechanisms.registry import register
from deniable.wire import _codecs as codecs

__all__ = ["SUE", "OUE", "UnaryEncoding"]

_BITS = 32
_ONE = 1 << _BITS
_BLOCK_BITS = 1 << 22  # report bits sampled at a time on the secure path (512 KiB)


class UnaryEncoding(FrequencyOracle):
    """Shared machinery of SUE and OUE: bit-packed one-hot reports."""

    report_kind = "bits"

    def _setup(self, domain: Domain, p_num: int, q_num: int) -> None:
        if not 0 < q_num < p_num < _ONE:
            raise ValueError(
                f"{type(self).__name__} needs 0 < q < p < 1 in 32-bit probabilities (epsilon too small "
                f"or too large to realise); got p={p_num}/2^32, q={q_num}/2^32"
            )
        self._set_domain(domain)
        self._p, self._q = p_num, q_num
        self._epsilon = privacy.ln_up(
            Fraction(p_num * (_ONE - q_num), (_ONE - p_num) * q_num)
        )

    def _set_domain(self, domain: Domain) -> None:
        """The categories and the packed report layout (``ceil(k / 8)`` bytes)."""
        self.domain_obj = domain
        self.report_bytes = (domain.k + 7) // 8
        self._block_reports = max(1, _BLOCK_BITS // (8 * self.report_bytes))
        self._run_bits = 8 * self.report_bytes + 1  # the noise bits and the value's own
        self._last_byte = np.uint8((0xFF << (-domain.k % 8)) & 0xFF)  # the real bits of a report's last byte

    def _check_realised(self, requested: float) -> None:
        """Refuse an epsilon the 32-bit probabilities cannot come within 1% of.

        Realising less privacy loss than asked is safe but silently costs
        accuracy (OUE tops out near epsilon = 22 with 2**-32 steps).
        """
        if self._epsilon < requested * (1 - 1e-2):
            raise ValueError(
                f"epsilon={requested!r} cannot be realised by {self.name} with 32-bit probabilities "
                f"(it would give {self._epsilon:.4g}); at such large epsilons GRR or "
                "SubsetSelection is also far more accurate"
            )

    @property
    def p(self) -> Fraction:
        return Fraction(self._p, _ONE)

    @property
    def q(self) -> Fraction:
        return Fraction(self._q, _ONE)

    def support_probabilities(self) -> tuple[list[Fraction], list[Fraction]]:
        return [self.p] * self.k, [self.q] * self.k

    # -------------------------------------------------------------- sampling
    def _sample(self, idx: NDArray[np.int64], source: Source) -> NDArray[np.uint8]:
        n, width = idx.size, self.report_bytes
        packed = randomness.bernoulli_packed(self._q, _BITS, n * width * 8, source).reshape(n, width)
        packed[:, -1] &= self._last_byte
        truth = randomness.bernoulli_bits(self._p, _BITS, n, source)
        _set_bits(packed, idx, truth)
        return packed

    # --------------------------------------------------------------- reports
    def unpack(self, reports: Any) -> NDArray[np.uint8]:
        """Reports as an ``(n, k)`` array of 0/1."""
        packed = self._checked(reports)
        return np.unpackbits(packed, axis=1, count=self.k)

    def _validate(self, reports: Any) -> NDArray[np.uint8]:
        arr = np.asarray(reports)
        name = self.name
        if arr.size == 0:
            return np.zeros((0, self.report_bytes), dtype=np.uint8)
        if arr.ndim != 2:
            raise ValueError(
                f"{name} reports must be a 2-D array (one row per report); got shape {arr.shape}"
            )
        if arr.dtype == np.uint8 and arr.shape[1] == self.report_bytes and arr.shape[1] != self.k:
            spare = self.report_bytes * 8 - self.k
            if spare and np.any(arr[:, -1] & np.uint8((1 << spare) - 1)):
                row = int(np.flatnonzero(arr[:, -1] & np.uint8((1 << spare) - 1))[0])
                raise ValueError(
                    f"{name} report {row} sets padding bits beyond the k={self.k} categories"
                )
            return np.ascontiguousarray(arr)
        if arr.shape[1] == self.k and arr.dtype.kind in "biu":
            if arr.dtype.kind != "b" and (arr.min() < 0 or arr.max() > 1):
                raise ValueError(f"{name} unpacked reports must hold only 0 and 1")
            return np.packbits(arr.astype(bool), axis=1)
        raise ValueError(
            f"{name} reports must be {self.report_bytes} packed bytes (uint8) or {self.k} bits per "
            f"row; got shape {arr.shape} and dtype {arr.dtype}"
        )

    def _support_counts(self, packed: NDArray[np.uint8]) -> NDArray[np.int64]:
        """Column sums of the reports' bits, ``C_v = sum_i y_iv``, exactly (:func:`deniable._columns.column_counts`)."""
        return columns.column_counts(packed)[0, : self.k]

    def _supports(self, packed: NDArray[np.uint8], position: int) -> NDArray[np.bool_]:
        return ((packed[:, position // 8] >> np.uint8(7 - position % 8)) & 1).astype(bool)

    def max_support(self, positions: NDArray[np.int64]) -> int:
        """Any bits may be set: a report can support every target."""
        return int(np.unique(positions).size)

    def transition_matrix(self) -> tuple[list[Any], NDArray[np.float64]]:
        if self.k > 12:
            raise NotImplementedError("transition_matrix enumerates 2**k outputs; k <= 12 only")
        outputs = [tuple(bits) for bits in itertools.product((0, 1), repeat=self.k)]
        y = np.array(outputs, dtype=float)
        p, q = float(self.p), float(self.q)
        matrix = np.empty((self.k, len(outputs)))
        for x in range(self.k):
            prob_one = np.full(self.k, q)
            prob_one[x] = p
            matrix[x] = np.prod(np.where(y == 1, prob_one, 1 - prob_one), axis=1)
        return outputs, matrix

    def simulate_support_counts(
        self, true_counts: NDArray[np.int64], rng: np.random.Generator
    ) -> NDArray[np.int64]:
        n = int(true_counts.sum())
        return rng.binomial(true_counts, float(self.p)) + rng.binomial(
            n - true_counts, float(self.q)
        )

    # ------------------------------------------------------------------ wire
    def _params(self) -> dict[str, Any]:
        return {"bits": _BITS, "p_numerator": self._p, "q_numerator": self._q}

    @classmethod
    def _from_params(cls, domain: Any, params: dict[str, Any]) -> UnaryEncoding:
        if int(params.get("bits", _BITS)) != _BITS:
            raise ValueError(f"{cls.__name__} params: bits must be {_BITS}; got {params['bits']!r}")
        self = cls.__new__(cls)
        self._setup(Domain(domain, cls.__name__), int(params["p_numerator"]), int(params["q_numerator"]))
        return self

    @property
    def report_bits(self) -> int:
        return self.k

    def _report_to_json(self, report: Any) -> str:
        return codecs.hex_to_json(report)

    def _reports_from_json(self, items: Any) -> NDArray[np.uint8]:
        return self._validate(codecs.hex_from_json(items, self.report_bytes, self.name, self.k))


@register(decode_cost="O(n k) bit sums", candidate=True, browser=True, required={"epsilon"})
class SUE(UnaryEncoding):
    r"""Symmetric unary encoding (basic one-time RAPPOR).

    The device one-hot encodes its category into ``k`` bits and keeps each
    bit w.p. :math:`e^{\varepsilon/2} / (e^{\varepsilon/2} + 1)`, flipping it
    otherwise; a report is the ``k`` bits.

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
    Two categories differ in two bits, each of likelihood ratio
    :math:`e^{\varepsilon/2}`. With :math:`p^* = e^{\varepsilon/2} / (e^{\varepsilon/2} + 1)`
    and :math:`q^* = 1 - p^*`, the estimate is
    :math:`\hat f_v = (C_v / n - q^*) / (p^* - q^*)` and its variance formula (A);
    the per-respondent variance at a rare category is
    :math:`V^* = e^{\varepsilon/2} / (e^{\varepsilon/2} - 1)^2`.

    Examples
    --------
    >>> import numpy as np
    >>> from deniable.mechanisms import SUE
    >>> m = SUE(8, epsilon=1.0)
    >>> round(m.epsilon, 6)
    1.0
    >>> rng = np.random.default_rng(0)
    >>> values = rng.integers(0, 8, size=20_000)
    >>> est = m.estimate(m.privatize_many(values, rng=rng))
    >>> truth = np.bincount(values, minlength=8) / values.size
    >>> bool(np.all(np.abs(est.frequencies - truth) < 5 * est.std_errors))
    True
    """

    wire_id = "sue"

    def __init__(self, categories: Any, *, epsilon: float) -> None:
        eps = privacy.check_epsilon(epsilon, owner="SUE")
        a, b = privacy.exp_ratio(eps / 2, 1)
        p_num = (a * _ONE) // (a + b)
        while privacy.ln_up(Fraction(p_num * p_num, (_ONE - p_num) ** 2)) > eps:
            p_num -= 1
        self._setup(Domain(categories, "SUE"), p_num, _ONE - p_num)
        self._check_realised(eps)


@register(decode_cost="O(n k) bit sums", candidate=True, browser=True, required={"epsilon"})
class OUE(UnaryEncoding):
    r"""Optimized unary encoding (Wang et al. 2017).

    The device one-hot encodes its category into ``k`` bits, reports the
    1-bit as 1 w.p. 1/2 and each 0-bit as 1 w.p. :math:`1 / (e^\varepsilon + 1)`.

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
    :math:`p^* = 1/2` and :math:`q^* = 1 / (e^\varepsilon + 1)`, so
    :math:`\varepsilon = \ln \frac{p^* (1 - q^*)}{(1 - p^*) q^*}`; the estimate is
    :math:`\hat f_v = (C_v / n - q^*) / (p^* - q^*)` with variance formula (A), and
    :math:`V^* = 4 e^\varepsilon / (e^\varepsilon - 1)^2`, the lowest of the
    pure frequency oracles for large ``k``.

    Examples
    --------
    >>> import numpy as np
    >>> from deniable.mechanisms import OUE
    >>> m = OUE(8, epsilon=1.0)
    >>> round(m.epsilon, 6)
    1.0
    >>> rng = np.random.default_rng(0)
    >>> values = rng.integers(0, 8, size=20_000)
    >>> est = m.estimate(m.privatize_many(values, rng=rng))
    >>> truth = np.bincount(values, minlength=8) / values.size
    >>> bool(np.all(np.abs(est.frequencies - truth) < 5 * est.std_errors))
    True
    """

    wire_id = "oue"

    def __init__(self, categories: Any, *, epsilon: float) -> None:
        eps = privacy.check_epsilon(epsilon, owner="OUE")
        self._setup(Domain(categories, "OUE"), _ONE // 2, oue_q_numerator(eps))
        self._check_realised(eps)


_BIT = np.array([0x80 >> i for i in range(8)], dtype=np.uint8)  # position i's bit in its byte
_WORDS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_MASKS = {width: np.packbits(np.eye(8 * width, dtype=np.uint8), axis=1).view(word).reshape(-1)
          for width, word in _WORDS.items()}  # position i's one-hot report of `width` bytes, as a word


def _set_bits(packed: NDArray[np.uint8], idx: NDArray[np.int64], truth: NDArray[np.bool_]) -> None:
    """Set bit ``idx[r]`` of packed report ``r`` to ``truth[r]``, in place.

    A report of 1, 2, 4 or 8 bytes is one machine word: its bit is cleared and set with the word's
    one-hot mask (four passes over ``n`` words); wider reports through the flat index of the byte
    holding the bit, ``r * width + idx // 8``.
    """
    n, width = packed.shape
    ones = -truth.astype(_WORDS.get(width, np.uint8))  # all 1s where true
    if width in _WORDS:
        words = packed.view(_WORDS[width]).reshape(n)
        masks = _MASKS[width][idx]
        words &= ~masks
        words |= masks & ones
        return
    flat = packed.reshape(-1)
    at = np.arange(0, n * width, width)
    at += idx >> 3
    bit = _BIT[idx & 7]
    flat[at] = flat[at] & ~bit | bit & ones


def oue_q_numerator(epsilon: float) -> int:
    """OUE's ``q = 1 / (e^eps + 1)`` in units of 2**-32, rounded up so that
    ``ln(p (1-q) / ((1-p) q)) <= eps`` with ``p = 1/2``."""
    a, b = privacy.exp_ratio(epsilon, 1)
    q_num = -((-b * _ONE) // (a + b))  # ceil: more noise, never more epsilon
    half = _ONE // 2
    while privacy.ln_up(Fraction(half * (_ONE - q_num), half * q_num)) > epsilon:
        q_num += 1
    return q_num
