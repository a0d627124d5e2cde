"""The Haar-wavelet range mechanism HaarHRR (Cormode, Kulkarni & Srivastava, VLDB 2019).

The ``D = 2^h`` bins of ``[low, high]`` are the leaves of a binary tree. Level ``l = 1..h`` has
``K_l = 2^(l-1)`` Haar coefficients, one per node at depth ``l - 1``: ``c_l[v] = f(left half of v) -
f(right half of v)`` (shares of the respondents). A respondent with value in bin ``i`` holds, at level
``l``, the vector with ``s = +1`` (left half) or ``-1`` (right half) at its node ``v_l(i)`` and 0 elsewhere.

**Report** (level sampling and Hadamard randomized response): pick a level ``l`` and a Hadamard row
``j`` uniformly in ``[0, K_l)``, compute ``x = H[j, v] s`` in ``{-1, +1}`` (``H[j, v] =
(-1)^popcount(j & v)``) and report ``(l, j, b)`` with ``b = x`` with probability ``p = e^eps / (1 + e^eps)``
(realised exactly as ``a / (a + b)``), else ``-x``: only the bit depends on the value, so the report
is ``ln(p / (1 - p))``-LDP.

**Estimate.** Per report, ``y = b H[j, :]^T / (2p - 1)`` is unbiased for the respondent's vector
(``E_j[H_j^T H_j] = I``), so ``c^_l = H^T S / (n_l (2p - 1))`` with ``S_j`` the sum of the ``+-1`` bits
of the level's reports with row ``j``. The bins are ``f_i = 1/D + sum_l s_l(i) c^_l[v_l(i)] 2^(l-1) / D``
(the Haar synthesis: consistent by construction). A query ``w^T f`` is ``sum w / D + sum_l v_l^T c^_l``
with ``v_l[v] = 2^(l-1)/D (sum of w over v's left half - over its right half)``, and, the reports of a
level being independent given ``n_l`` (population target), exactly
``Var = sum_l (|v_l|^2 / (2p - 1)^2 - (v_l^T c_l)^2) / n_l``, plugged in at ``c^_l``. A prefix (a CDF
value) touches one coefficient per level.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable import _privacy as privacy
from deniable import _randomness as randomness
from deniable._aggregates import SupportCounts
from deniable.mechanisms._ranges import RangeEstimate, RangeMechanism
from deniable.mechanisms._walsh import fwht, parity
from deniable.mechanisms.registry import register

__all__ = ["HaarHRR"]

_DTYPE = np.dtype([("level", "u1"), ("index", "<u4"), ("bit", "u1")])


@register(kind="range", decode_cost="O(n + D log D) (Walsh-Hadamard per level)", browser=True, required={"epsilon"},
          optional={"bins"}, name="haar")
class HaarHRR(RangeMechanism):
    r"""Haar wavelet coefficients by Hadamard randomized response, with level sampling (module docstring).

    ``HaarHRR(low, high, bins=1024, epsilon=1.0)``: ``bins`` a power of two. A true value is a number in
    ``[low, high]``; a report is ``{"level", "index", "bit"}``; ``estimate`` returns a
    :class:`~deniable.RangeEstimate`.

    Parameters
    ----------
    low, high : float
        The range of the values, ``low < high``.
    epsilon : float
        The privacy loss of one report, ``> 0``.
    bins : int, default 1024
        The number of equal bins, a power of two (at least 2).

    Raises
    ------
    ValueError
        A bad range, ``bins`` not a power of two, or a bad ``epsilon``.

    Notes
    -----
    A report is a level :math:`l`, a Hadamard row :math:`j` and the bit
    :math:`x = H_{jv} s` kept with probability :math:`p = e^\varepsilon / (1 + e^\varepsilon)`;
    :math:`b H_j^\top / (2p - 1)` is unbiased for the respondent's Haar
    coefficients, and a query's variance is
    :math:`\sum_l (\lVert v_l \rVert^2 / (2p - 1)^2 - (v_l^\top c_l)^2) / n_l` (module docstring).

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> rng = np.random.default_rng(0)
    >>> m = dn.HaarHRR(0, 100, bins=16, epsilon=2.0)
    >>> est = m.estimate(m.privatize_many(rng.uniform(0, 100, 20_000), rng=rng))
    >>> est.bins, round(float(est.frequencies.sum()), 6)
    (16, 1.0)
    >>> below = est.cdf(50)
    >>> bool(abs(below.estimate - 0.5) < 5 * below.std_error)
    True
    """

    wire_id = "haar-hrr"
    report_kind = "haar"

    def __init__(self, low: float, high: float, *, epsilon: float, bins: int = 1024) -> None:
        self._set_bounds(low, high, bins, "HaarHRR")
        a, b = privacy.exp_ratio(privacy.check_epsilon(epsilon, owner="HaarHRR"), 1)
        self._setup(a, a + b)

    def _setup(self, truth: int, denominator: int) -> None:
        if self._bins & (self._bins - 1):
            raise ValueError(f"bins must be a power of two for HaarHRR; got {self._bins!r}")
        if not 0 < denominator - truth < truth:
            raise ValueError(f"HaarHRR needs 1/2 < truth_numerator/denominator < 1; got {truth}/{denominator}")
        self._truth, self._denominator = truth, denominator
        self.height = self._bins.bit_length() - 1
        self._epsilon = privacy.ln_up(Fraction(truth, denominator - truth))

    @property
    def prob(self) -> Fraction:
        """``p``: the probability that the reported bit is the true ``H[j, v] s``."""
        return Fraction(self._truth, self._denominator)

    @property
    def epsilon(self) -> float:
        return self._epsilon

    @property
    def report_bits(self) -> int:
        return max(1, (self.height - 1).bit_length()) + max(1, self.height - 1) + 1

    def _node_sign(self, leaves: NDArray[np.int64], level: NDArray[np.int64] | int) -> tuple[NDArray[np.int64],
                                                                                             NDArray[np.int64]]:
        """The node ``v_l(i)`` at ``level`` and ``s = +1`` (left half) or ``-1`` (right half)."""
        shift = self.height - np.asarray(level, dtype=np.int64)
        node = leaves >> (shift + 1)
        sign = 1 - 2 * ((leaves >> shift) & 1)
        return node, sign

    # ------------------------------------------------------------ privatize
    def privatize_many(self, values: Any, rng: randomness.RNGLike = None) -> NDArray[Any]:
        """Randomize many values: a level, a Hadamard row and one randomized bit each."""
        leaves = self.bin_of(values)
        source = randomness.resolve(rng)
        n = leaves.size
        level = randomness.uniform_below(self.height, n, source).astype(np.int64) + 1
        index = np.zeros(n, dtype=np.int64)
        for lv in range(2, self.height + 1):  # rows uniform in [0, 2^(l-1)), drawn exactly per level
            rows = np.flatnonzero(level == lv)
            index[rows] = randomness.uniform_below(1 << (lv - 1), rows.size, source).astype(np.int64)
        node, sign = self._node_sign(leaves, level)
        truth = (1 - 2 * parity((index & node).astype(np.uint64)).astype(np.int64)) * sign > 0
        keep = randomness.bernoulli(self._truth, self._denominator, n, source)
        out = np.empty(n, dtype=_DTYPE)
        out["level"], out["index"] = level, index
        out["bit"] = truth == keep
        return out

    # -------------------------------------------------------------- reports
    def _validate(self, reports: Any) -> NDArray[Any]:
        arr = reports if isinstance(reports, np.ndarray) else np.asarray(reports)
        if arr.dtype.names is None or set(arr.dtype.names) != set(_DTYPE.names or ()) or arr.ndim != 1:
            if isinstance(reports, (list, tuple)) and all(isinstance(r, dict) for r in reports):
                return self._reports_from_json(list(reports))
            raise ValueError(
                f"{self.name} reports must be a 1-D structured array with fields 'level', 'index' and 'bit'; "
                f"got {arr.dtype} with shape {arr.shape}"
            )
        for name in ("level", "index", "bit"):
            column = arr[name]
            if column.dtype.kind not in "iub" or (column.dtype.kind == "i" and (column < 0).any()):
                raise ValueError(f"{self.name} reports: field '{name}' must hold non-negative integers")
        arr = arr.astype(_DTYPE, copy=False)
        level = arr["level"].astype(np.int64)
        bad = (level < 1) | (level > self.height)
        if not bad.any():
            bad = (arr["index"].astype(np.int64) >> (level - 1)) > 0
            what = "index must be below 2**(level - 1)"
        else:
            what = f"level must be in 1..{self.height}"
        bad |= arr["bit"] > 1
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{self.name} report {i}: {what} and bit 0 or 1; got {arr[i].tolist()!r}")
        return np.ascontiguousarray(arr)

    def _report_to_json(self, report: Any) -> dict[str, int]:
        return {"level": int(report["level"]), "index": int(report["index"]), "bit": int(report["bit"])}

    def _reports_from_json(self, items: list[Any]) -> NDArray[Any]:
        out = np.empty(len(items), dtype=_DTYPE)
        for i, item in enumerate(items):
            if not isinstance(item, dict) or item.keys() != {"level", "index", "bit"}:
                raise ValueError(
                    f"{self.name} report {i} must be {{'level': int, 'index': int, 'bit': 0 or 1}}; got {item!r:.60}"
                )
            values = [item["level"], item["index"], item["bit"]]
            if any(type(v) is not int or v < 0 or v >= 1 << 32 for v in values):
                raise ValueError(f"{self.name} report {i}: level, index and bit must be non-negative integers")
            out[i] = tuple(values)
        return self._validate(out)

    # ------------------------------------------------------------ aggregate
    def _aggregate_checked(self, checked: NDArray[Any]) -> SupportCounts:
        """``[n_1..n_h]``, then per level the reports of each row ``j`` and those with bit 1."""
        level = checked["level"].astype(np.int64)
        offset = np.left_shift(np.int64(1), level - 1) - 1  # rows of the levels below: 2^(l-1) - 1
        key = offset + checked["index"].astype(np.int64)
        rows = np.bincount(key, minlength=self._bins - 1)
        ones = np.bincount(key, weights=checked["bit"], minlength=self._bins - 1).astype(np.int64)
        per_level = np.bincount(level - 1, minlength=self.height)
        parts = [per_level]
        for lv in range(1, self.height + 1):
            lo, hi = (1 << (lv - 1)) - 1, (1 << lv) - 1
            parts += [rows[lo:hi], ones[lo:hi]]
        return SupportCounts(self.fingerprint, np.concatenate(parts).astype(np.int64), int(len(checked)))

    @property
    def _size(self) -> int:
        return self.height + 2 * (self._bins - 1)

    # ------------------------------------------------------------- estimate
    def _synthesis(self, w: NDArray[np.float64], level: int) -> NDArray[np.float64]:
        """``v_l``: each node's (left sum - right sum) of ``w`` (bins x queries)."""
        halves = w.reshape(1 << (level - 1), 2, -1, *w.shape[1:]).sum(axis=2)
        return halves[:, 0] - halves[:, 1]

    def _coefficient_variance(self, v: NDArray[np.float64], c: NDArray[np.float64], n_level: float) -> Any:
        gap = float(2 * self.prob - 1)
        return ((v * v).sum(axis=0) / gap**2 - (c @ v) ** 2) / n_level

    def estimate_from(self, stat: SupportCounts, target: Any = "population") -> RangeEstimate:
        """The bins by Haar synthesis of the estimated coefficients, with every query's standard error."""
        self._population(target)
        stat = self._check_stat(stat, self._size)
        per_level = self._levels(stat, self.height)
        gap = float(2 * self.prob - 1)
        coefficients, start = [], self.height
        leaves = np.full(self._bins, 1.0 / self._bins)
        for lv in range(1, self.height + 1):
            width = 1 << (lv - 1)
            rows, ones = stat.counts[start : start + width], stat.counts[start + width : start + 2 * width]
            start += 2 * width
            c = fwht(2 * ones - rows) / (max(1, per_level[lv - 1]) * gap)  # 0 without reports
            coefficients.append(c)
            signed = np.repeat(np.stack([c, -c], axis=1).ravel(), self._bins >> lv)
            leaves += signed * width / self._bins

        def moments(w: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
            if (per_level == 0).any():  # a level without reports: not unbiased, no standard error
                return w.T @ leaves, np.full(w.shape[1], np.nan)
            var = sum(self._coefficient_variance(self._synthesis(w, lv) * (1 << (lv - 1)) / self._bins,
                                                 coefficients[lv - 1], per_level[lv - 1])
                      for lv in range(1, self.height + 1))
            return w.T @ leaves, np.sqrt(np.maximum(var, 0.0))

        return RangeEstimate(self.name, self.epsilon, self.edges, leaves, stat.n, moments, "Haar wavelet, HRR")

    def _theory_variance(self, n: int, f: NDArray[np.float64], w: NDArray[np.float64]) -> NDArray[np.float64]:
        total = np.zeros(w.shape[1])
        for lv in range(1, self.height + 1):
            v = self._synthesis(w, lv) * (1 << (lv - 1)) / self._bins
            total += self._coefficient_variance(v, self._synthesis(f, lv), n / self.height)
        return total

    def _draw_levels(self, f: NDArray[np.float64], n: int, rng: np.random.Generator) -> list[Any] | None:
        """Level counts multinomial; per level the (node, half) counts multinomial, each one's rows
        multinomial and the kept bits binomial."""
        p = float(self.prob)
        per_level = rng.multinomial(n, np.full(self.height, 1.0 / self.height))
        parts = [per_level]
        for lv in range(1, self.height + 1):
            width = 1 << (lv - 1)
            cells = rng.multinomial(per_level[lv - 1], f.reshape(width, 2, -1).sum(axis=2).ravel())
            rows = rng.multinomial(cells, np.full(width, 1.0 / width))  # (node, half) x row
            node = (np.arange(2 * width) // 2).astype(np.uint64)
            sign = 1 - 2 * (np.arange(2 * width) % 2)
            x = (1 - 2 * parity(np.arange(width, dtype=np.uint64)[None, :] & node[:, None]).astype(np.int64))
            plus = (rows * (x * sign[:, None] > 0)).sum(axis=0)
            total = rows.sum(axis=0)
            parts += [total, rng.binomial(plus, p) + rng.binomial(total - plus, 1 - p)]
        return parts

    # ----------------------------------------------------------- exact view
    def transition_matrix(self) -> tuple[list[Any], NDArray[np.float64]]:
        """``(outputs, P)`` over every ``(level, index, bit)`` and every bin (small domains only)."""
        if self._bins > 1024:
            raise NotImplementedError("transition_matrix enumerates every bin and output; bins <= 1024 only")
        p = float(self.prob)
        leaves = np.arange(self._bins)
        outputs, columns = [], []
        for lv in range(1, self.height + 1):
            node, sign = self._node_sign(leaves, lv)
            for j in range(1 << (lv - 1)):
                x = (1 - 2 * parity(np.uint64(j) & node.astype(np.uint64)).astype(np.int64)) * sign
                for bit in (0, 1):
                    outputs.append((lv, j, bit))
                    columns.append(np.where((x > 0) == bool(bit), p, 1 - p) / (self.height << (lv - 1)))
        return outputs, np.stack(columns, axis=1)

    # ----------------------------------------------------------------- wire
    def _params(self) -> dict[str, Any]:
        return {"bins": self._bins, "truth_numerator": self._truth, "denominator": self._denominator}

    @classmethod
    def _from_params(cls, domain: Any, params: dict[str, Any]) -> HaarHRR:
        if not (isinstance(domain, list) and len(domain) == 2):
            raise ValueError(f"config field 'domain' must be [low, high] for {cls.wire_id}; got {domain!r:.60}")
        self = cls.__new__(cls)
        self._set_bounds(domain[0], domain[1], params.get("bins"), "HaarHRR")
        truth, denominator = params.get("truth_numerator"), params.get("denominator")
        if type(truth) is not int or type(denominator) is not int:
            raise ValueError("config fields 'params.truth_numerator' and 'params.denominator' must be integers")
        self._setup(truth, denominator)
        return self

    def __repr__(self) -> str:
        return f"HaarHRR([{self.low:.6g}, {self.high:.6g}], bins={self._bins}, epsilon={self.epsilon:.4g})"
