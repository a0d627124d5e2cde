"""Subset selection, omega-SS (Wang et al. 2016; Ye & Barg 2018).

The device reports a set ``Y`` of ``omega`` distinct categories: it contains
the true value with probability ``p = omega e / (omega e + k - omega)`` (plus
``omega - 1`` others drawn uniformly), otherwise ``omega`` categories drawn
uniformly from the other ``k - 1``. Then ``P(Y|x)`` is proportional to ``e`` when
``x in Y`` and to 1 otherwise, and ``epsilon = ln(p (k - omega) / ((1 - p) omega))``.
Support ``S(Y) = Y``: ``p* = p`` and
``q* = (p (omega - 1) + (1 - p) omega) / (k - 1)``.
The default ``omega = max(1, round(k / (e + 1)))``; ``omega = 1`` is GRR.

Reports are *sets*: the category positions sorted ascending in a structured
array with one field ``subset`` of length ``omega`` (an ordered list would
reveal which item was drawn first, which is not covered by the epsilon above).
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable import _privacy as privacy
from deniable import _randomness as randomness
from deniable._randomness import Source
from deniable.mechanisms._domain import Domain
from deniable.mechanisms._frequency import FrequencyOracle
from deniable.mechanisms.registry import register
from deniable.wire import _codecs as codecs

__all__ = ["SubsetSelection"]

_FLOYD_MAX = 16
_CHUNK_CELLS = 1 << 20  # positions keyed at a time (8 MiB of int64 scratch)
_MATRIX_OUTPUTS = 20_000  # the most subsets transition_matrix enumerates


def _floyd(n: int, population: int, size: int, source: Source) -> NDArray[np.int64]:
    """Per row, a uniform ``size``-subset of ``[population]`` (Floyd's algorithm), unsorted."""
    picks = np.empty((n, size), dtype=np.int64)
    for col, j in enumerate(range(population - size, population)):
        t = randomness.uniform_below(j + 1, n, source).astype(np.int64)
        seen = (picks[:, :col] == t[:, None]).any(axis=1)
        picks[:, col] = np.where(seen, j, t)
    return picks


def _smallest_keys(n: int, population: int, size: int, source: Source) -> NDArray[np.int64]:
    """Per row, a uniform ``size``-subset of ``[population]``, ascending: where the smallest keys are.

    Every position gets an i.i.d. uniform key, compared lexicographically: a
    random ``b``-bit number (``b = min(8, bit length of population)``, from
    one random byte), then, drawn only for the positions tied with their
    row's cut-off (the ``size``-th smallest first part), a random 32-bit
    word. The ``size`` smallest keys are chosen; when the ``size``-th and
    the next smallest key of a row tie on both parts (probability below
    ``population 2**-32``) the words are drawn again. Given no such tie the
    keys' order is exchangeable, so every subset has probability exactly
    ``1 / C(population, size)``. Work and random bytes per row are linear in
    ``population``: a byte per position and a word per tied one (about
    ``population 2**-b`` of them per row).
    """
    out = np.empty((n, size), dtype=np.int64)
    step = max(1, _CHUNK_CELLS // population)
    for start in range(0, n, step):
        rows = min(step, n - start)
        out[start : start + rows] = _smallest_keys_chunk(rows, population, size, source)
    return out


def _smallest_keys_chunk(rows: int, population: int, size: int, source: Source) -> NDArray[np.int64]:
    """:func:`_smallest_keys` for ``rows * population`` cells at once."""
    bits = min(8, population.bit_length())
    keys = randomness.uniform_words(rows * population, np.uint8, source) >> np.uint8(8 - bits)
    keys = keys.reshape(rows, population)
    offsets = np.arange(rows) * population
    histogram = np.bincount((keys + (np.arange(rows) << bits)[:, None]).ravel(), minlength=rows << bits)
    at_most = histogram.reshape(rows, 1 << bits).cumsum(axis=1)
    cut = (at_most < size).sum(axis=1)  # each row's size-th smallest first part
    need = size - np.where(cut > 0, at_most[np.arange(rows), cut - 1], 0)  # how many tied ones to take
    cut_part = cut.astype(np.uint8)[:, None]
    chosen = keys < cut_part
    tied = np.flatnonzero(keys == cut_part)  # ascending, so grouped by row
    tied_row = tied // population
    per_row = np.bincount(tied_row, minlength=rows)
    first = np.cumsum(per_row) - per_row
    short = need < per_row
    boundary = first[short] + need[short]  # sorted index of each row's first tied key left out
    while True:
        words = randomness.uniform_words(tied.size, np.uint32, source)
        order = np.lexsort((words, tied_row))  # by row, then word; rows keep their places
        ranked = words[order]
        if not np.any(ranked[boundary - 1] == ranked[boundary]):
            break
    take = order[np.arange(tied.size) - first[tied_row] < need[tied_row]]
    chosen.ravel()[tied[take]] = True
    picked = np.flatnonzero(chosen).reshape(rows, size)
    picked -= offsets[:, None]
    return picked


@register(decode_cost="O(n omega)", candidate=True, browser=True, required={"epsilon"}, optional={"omega"})
class SubsetSelection(FrequencyOracle):
    r"""Subset selection (Ye & Barg 2018; Wang et al. 2016): report a set of ``omega`` categories.

    The device reports a set of ``omega`` categories that contains its own
    w.p. :math:`p = \omega e^\varepsilon / (\omega e^\varepsilon + k - \omega)`, uniformly
    among such sets, else a uniform set without it; the report is the sorted
    set. Near-optimal variance between GRR (small ``k``) and OUE (large ``k``).

    Parameters
    ----------
    categories : int or sequence
        ``k`` (the categories are the ints ``0 .. k-1``) or the list of
        categories, any hashable values (at least 2).
    epsilon : float
        The privacy loss of one report, ``> 0``; the realised ``m.epsilon``
        (from the sampler's integer probabilities) is within 1% of it and
        never above.
    omega : int, optional
        The size of the reported set, ``1 .. k-1``; default
        :math:`\max(1, \mathrm{round}(k / (e^\varepsilon + 1)))`.

    Raises
    ------
    ValueError
        Fewer than two categories, repeated categories, or an epsilon that is
        not a positive finite number, or an ``omega`` outside ``1 .. k-1``.

    Notes
    -----
    :math:`p^* = p` and :math:`q^* = (p (\omega - 1) + (1 - p) \omega) / (k - 1)`;
    :math:`\varepsilon = \ln \frac{p (k - \omega)}{(1 - p) \omega}`. At the default
    ``omega``, :math:`V^* \approx 4 e^\varepsilon / (e^\varepsilon - 1)^2` for
    :math:`k \gg e^\varepsilon`; at ``omega = 1`` it is GRR.

    Examples
    --------
    >>> import numpy as np
    >>> from deniable.mechanisms import SubsetSelection
    >>> m = SubsetSelection(8, epsilon=1.0)
    >>> round(m.epsilon, 6)
    1.0
    >>> rng = np.random.default_rng(0)
    >>> values = rng.integers(0, 8, size=20_000)
    >>> est = m.estimate(m.privatize_many(values, rng=rng))
    >>> truth = np.bincount(values, minlength=8) / values.size
    >>> bool(np.all(np.abs(est.frequencies - truth) < 5 * est.std_errors))
    True
    """

    wire_id = "subset"
    report_kind = "structured"

    def __init__(self, categories: Any, *, epsilon: float, omega: int | None = None) -> None:
        eps = privacy.check_epsilon(epsilon, owner="SubsetSelection")
        domain = Domain(categories, "SubsetSelection")
        k = domain.k
        a, b = privacy.exp_ratio(eps, k)  # first: refuses an epsilon too large to realise
        if omega is None:
            omega = max(1, min(k - 1, round(k / (math.exp(eps) + 1))))
        elif isinstance(omega, bool) or not isinstance(omega, int) or not 1 <= omega <= k - 1:
            raise ValueError(f"omega must be an int in 1..{k - 1} for SubsetSelection; got {omega!r}")
        self._setup(domain, omega, omega * a, (k - omega) * b)

    def _setup(self, domain: Domain, omega: int, inside: int, outside: int) -> None:
        self.domain_obj = domain
        self.omega = omega
        self._in, self._out = inside, outside
        k = domain.k
        self._epsilon = privacy.ln_up(Fraction(inside * (k - omega), outside * omega))
        self.dtype = np.dtype([("subset", "<i8", (omega,))])

    @property
    def prob(self) -> Fraction:
        """Probability that the reported set contains the true value."""
        return Fraction(self._in, self._in + self._out)

    def support_probabilities(self) -> tuple[list[Fraction], list[Fraction]]:
        p, w, k = self.prob, self.omega, self.k
        q = (p * (w - 1) + (1 - p) * w) / (k - 1)
        return [p] * k, [q] * k

    def _sample(self, idx: NDArray[np.int64], source: Source) -> NDArray[np.void]:
        n, w, k = idx.size, self.omega, self.k
        include = randomness.bernoulli(self._in, self._in + self._out, n, source)
        draw = _floyd if w <= _FLOYD_MAX else _smallest_keys
        others = draw(n, k - 1, w, source)  # uniform w-subsets of the k-1 others
        # a uniform (w-1)-subset: drop one uniformly chosen element, put x in its slot
        slot = randomness.uniform_below(w, n, source).astype(np.int64)
        others += others >= idx[:, None]
        rows = np.flatnonzero(include)
        others[rows, slot[rows]] = idx[rows]
        out = np.empty(n, dtype=self.dtype)
        out["subset"] = np.sort(others, axis=1, kind="stable")  # runs: linear when one slot moved
        return out

    def _validate(self, reports: Any) -> NDArray[np.int64]:
        if isinstance(reports, np.ndarray) and reports.dtype.names:
            if reports.dtype.names != ("subset",):
                raise ValueError(f"SubsetSelection reports need the single field 'subset'; got {reports.dtype}")
            arr = reports["subset"]
        else:
            arr = np.asarray(reports if len(reports) else np.zeros((0, self.omega), dtype=np.int64))
            if arr.dtype.names == ("subset",):  # a list of single reports from privatize()
                arr = arr["subset"]
        if arr.ndim != 2 or arr.shape[1] != self.omega or (arr.size and arr.dtype.kind not in "iu"):
            raise ValueError(
                f"SubsetSelection reports must each be {self.omega} sorted category positions; "
                f"got shape {arr.shape} and dtype {arr.dtype}"
            )
        arr = arr.astype(np.int64, copy=False)
        if arr.size:
            if arr.min() < 0 or arr.max() >= self.k:
                row = int(np.flatnonzero(((arr < 0) | (arr >= self.k)).any(axis=1))[0])
                raise ValueError(
                    f"SubsetSelection report {row} has a position outside 0..{self.k - 1}: {arr[row].tolist()}"
                )
            if self.omega > 1 and not (np.diff(arr, axis=1) > 0).all():
                row = int(np.flatnonzero((np.diff(arr, axis=1) <= 0).any(axis=1))[0])
                raise ValueError(
                    f"SubsetSelection report {row} must list distinct positions in ascending order; "
                    f"got {arr[row].tolist()}"
                )
        return arr

    def _support_counts(self, reports: NDArray[np.int64]) -> NDArray[np.int64]:
        return np.bincount(reports.ravel(), minlength=self.k)

    def _supports(self, reports: NDArray[np.int64], position: int) -> NDArray[np.bool_]:
        return (reports == position).any(axis=1)

    def max_support(self, positions: NDArray[np.int64]) -> int:
        """A report is a set of ``omega`` categories: ``min(|T|, omega)``."""
        return min(int(np.unique(positions).size), self.omega)

    def transition_matrix(self) -> tuple[list[Any], NDArray[np.float64]]:
        if math.comb(self.k, self.omega) > _MATRIX_OUTPUTS:
            raise NotImplementedError("transition_matrix enumerates all subsets; too many")
        outputs = list(itertools.combinations(range(self.k), self.omega))
        p, w, k = float(self.prob), self.omega, self.k
        with_x = p / math.comb(k - 1, w - 1)
        without_x = (1 - p) / math.comb(k - 1, w)
        matrix = np.array([[with_x if x in y else without_x for y in outputs] for x in range(k)])
        return outputs, matrix

    def _params(self) -> dict[str, Any]:
        return {"omega": self.omega, "inside_weight": self._in, "outside_weight": self._out}

    @classmethod
    def _from_params(cls, domain: Any, params: dict[str, Any]) -> SubsetSelection:
        self = cls.__new__(cls)
        d = Domain(domain, "SubsetSelection")
        w = int(params["omega"])
        if not 1 <= w <= d.k - 1:
            raise ValueError(f"SubsetSelection params: omega must be in 1..{d.k - 1}; got {w}")
        self._setup(d, w, int(params["inside_weight"]), int(params["outside_weight"]))
        return self

    @property
    def report_bits(self) -> int:
        return min(self.k, self.omega * max(1, (self.k - 1).bit_length()))

    def _report_to_json(self, report: Any) -> list[int]:
        return codecs.subset_to_json(report)

    def _reports_from_json(self, items: Any) -> NDArray[np.int64]:
        return self._validate(codecs.subset_from_json(items, self.omega, self.k) if items else [])
