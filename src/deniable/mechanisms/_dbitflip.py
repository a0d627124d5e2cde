"""dBitFlip (Ding, Kulkarni, Yekhanin 2017): histograms, ``d`` sampled buckets and one bit each per report.

**dBitFlip** (:class:`DBitFlip`), a value in one of ``k`` buckets: the device
samples ``d`` distinct buckets ``j_1 < ... < j_d`` uniformly and reports, for
each, a bit that is 1 with probability ``p = e^(eps/2) / (e^(eps/2) + 1)`` if
its value is in ``j_p`` and ``q = 1 - p`` otherwise (for ``d = 1`` the one bit
uses ``e^eps``: two bits never differ in one report). Between two values at
most two sampled bits change distribution, so a report is ``eps``-LDP. The
estimate of bucket ``v`` averages the debiased bits of the devices that
sampled it, scaled by the sampling rate ``d/k``:

    h_v = (k / (n d)) sum_{devices that sampled v} (b (e^(eps/2)+1) - 1) / (e^(eps/2) - 1),

unbiased, with variance (``e = e^(eps/2)``, respondents fixed)

    (k / (n d)) e / (e - 1)^2 + h_v (k/d - 1) / n,

and ``+ h_v (1 - h_v) / n`` for a population. A device's client samples its
buckets once and memoizes one answer vector per *slot* (its value's bucket
is ``j_p``, or none of them): at most ``d + 1`` distinct reports ever.

Memoization, the privacy of repeated collection and output perturbation:
:mod:`deniable.mechanisms._perturbation`.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from deniable import _privacy as privacy
from deniable import _randomness as randomness
from deniable._aggregates import Mergeable, SupportCounts
from deniable._client_state import StateLike
from deniable._estimate import Estimate, Target, check_target, sampling_variance
from deniable._randomness import TWO64, Source
from deniable.mechanisms import _perturbation as perturbation
from deniable.mechanisms._domain import Domain
from deniable.mechanisms._frequency import FrequencyOracle
from deniable.mechanisms._permanent import PermanentClient
from deniable.mechanisms.registry import register
from deniable.wire import _codecs as codecs

__all__ = ["DBitFlip", "DBitFlipClient", "sample_subsets"]

_SIMULATE_CHUNK = 1 << 20


def sample_subsets(n: int, k: int, d: int, source: Source) -> NDArray[np.int64]:
    """``n`` uniformly random ``d``-subsets of ``0..k-1``, sorted, one per row (Floyd's algorithm).

    For ``j = k-d .. k-1``: draw ``t`` uniform in ``[0, j]`` and add ``t``,
    or ``j`` if ``t`` is already in; each ``d``-subset has probability
    ``1 / C(k, d)`` exactly. Vectorized over the rows, ``d`` draws each.
    """
    chosen = np.empty((n, d), dtype=np.int64)
    for i, j in enumerate(range(k - d, k)):
        t = randomness.uniform_below(j + 1, n, source).astype(np.int64)
        taken = (chosen[:, :i] == t[:, None]).any(axis=1)
        chosen[:, i] = np.where(taken, j, t)
    chosen.sort(axis=1)
    return chosen


def _build_dbitflip(domain: Any, params: Any) -> DBitFlip:
    d = params.get("d", 1)
    if isinstance(d, float) and d.is_integer():
        d = int(d)  # survey files write numbers
    return DBitFlip(domain, d=d, epsilon=params["epsilon"], gamma=params.get("gamma", 0.0))


@register(decode_cost="O(n d + k)", browser=True, required={"epsilon"}, optional={"d", "gamma"},
          build=_build_dbitflip)
class DBitFlip(FrequencyOracle):
    r"""dBitFlip (Ding et al. 2017): ``d`` sampled buckets, one randomized bit each.

    ``DBitFlip(buckets, d=4, epsilon=1.0)``: ``buckets`` are the categories
    (an int ``k`` or a list), ``1 <= d <= k``. Reports are structured:
    ``buckets`` (the ``d`` sampled bucket positions, increasing) and ``bits``.
    ``e^(eps / min(d, 2)) = a / b`` exactly; a bit is 1 with probability
    ``a / (a + b)`` for the value's bucket and ``b / (a + b)`` otherwise.
    ``estimate`` gives an :class:`~deniable.Estimate` with the paper's
    estimator (module docstring); its ``support_counts`` are the reports
    with ``v`` sampled and its bit 1, whose rate is ``q* + (p* - q*) h_v``
    with ``p* = (d/k) a/(a+b)``, ``q* = (d/k) b/(a+b)`` (what the Wilson and
    Clopper-Pearson intervals and the MLE use). The aggregate's counts are
    these ``k`` counts followed by the ``k`` numbers of reports that sampled
    each bucket. ``gamma`` (default 0: none) adds output perturbation
    (module docstring): every report flips each memoized bit w.p. ``gamma``;
    ``epsilon`` is then the memoized bits' (:attr:`epsilon_perm`), one
    report's :attr:`epsilon` is smaller, and the probabilities above are the
    perturbed ``a' / (a' + b')``.

    Parameters
    ----------
    buckets : int or sequence
        ``k`` (the buckets are ``0 .. k-1``) or the list of buckets.
    d : int
        The buckets each report samples, ``1 <= d <= k`` (keyword only).
    epsilon : float
        The privacy loss of one report, or of the memoized bits with
        ``gamma > 0``; ``> 0``.
    gamma : float, default 0.0
        Output perturbation: the probability of flipping each memoized bit
        afresh in every report, in ``[0, 1/2)``.

    Raises
    ------
    ValueError
        Fewer than two buckets, ``d`` out of range, or a bad ``epsilon`` or
        ``gamma``.

    Notes
    -----
    With :math:`e = e^{\varepsilon/2}` (for :math:`d \ge 2`), the estimate of
    bucket :math:`v` is
    :math:`\hat h_v = \frac{k}{n d} \sum_{\text{devices that sampled } v} \frac{b (e + 1) - 1}{e - 1}`,
    unbiased with variance :math:`\frac{k}{n d} \frac{e}{(e - 1)^2} + h_v (k/d - 1) / n`
    for fixed respondents, plus :math:`h_v (1 - h_v) / n` for a population.

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> rng = np.random.default_rng(0)
    >>> m = dn.DBitFlip(16, d=4, epsilon=2.0)
    >>> m
    DBitFlip(k=16, d=4, epsilon=2)
    >>> est = m.estimate(m.privatize_many(rng.choice(16, size=20_000), rng=rng))
    >>> bool(np.all(np.abs(est.frequencies - 1 / 16) < 5 * est.std_errors))
    True
    >>> perturbed = dn.DBitFlip(16, d=4, epsilon=2.0, gamma=0.1)
    >>> round(perturbed.epsilon_perm, 4), perturbed.epsilon < 2.0
    (2.0, True)
    """

    wire_id = "dbitflip"
    report_kind = "structured"
    _FIELDS: ClassVar[frozenset[str]] = frozenset({"buckets", "bits"})

    def __init__(self, buckets: Any, *, d: int, epsilon: float, gamma: float = 0.0) -> None:
        domain = Domain(buckets, "DBitFlip")
        dd = perturbation.check_int(d, "d", 1, domain.k, "DBitFlip")
        eps = privacy.check_epsilon(epsilon, owner="DBitFlip")
        a, b = privacy.exp_ratio(eps / min(dd, 2), 1)
        self._setup(domain, dd, a, b, perturbation.flip_numerator(gamma, "DBitFlip"))
        perturbation.check_close("DBitFlip", self.epsilon_perm, eps)

    def _setup(self, domain: Domain, d: int, a: int, b: int, g: int = 0) -> None:
        self.domain_obj = domain
        self.d, self._a, self._b, self._g = d, a, b, g
        # one report's bits: the memoized channel a:b through the flips (a' : b')
        self._ra, self._rb = perturbation.perturbed(a, b, g)
        self.epsilon_perm = privacy.ln_up(Fraction(a, b) ** min(d, 2))
        self._epsilon = privacy.ln_up(Fraction(self._ra, self._rb) ** min(d, 2))
        self.report_dtype = np.dtype([("buckets", "<u4", (d,)), ("bits", "u1", (d,))])

    @property
    def gamma(self) -> Fraction:
        """Output perturbation's flip probability (0: none)."""
        return Fraction(self._g, perturbation.FLIP_ONE)

    @property
    def time_epsilon(self) -> float:
        """``d ln((1 - gamma) / gamma)``: the privacy of when the memoized answers change, per round moved."""
        return perturbation.time_epsilon(self._g, self.d)

    @property
    def report_bits(self) -> int:
        """``ceil(log2 C(k, d))`` bits for the sampled buckets plus ``d`` answer bits."""
        return max(1, (math.comb(self.k, self.d) - 1).bit_length()) + self.d

    def support_probabilities(self) -> tuple[list[Fraction], list[Fraction]]:
        rate = Fraction(self.d, self.k)
        total = self._ra + self._rb
        return [rate * Fraction(self._ra, total)] * self.k, [rate * Fraction(self._rb, total)] * self.k

    def lifetime_epsilon(self, distinct: int = 1) -> float:
        """Privacy loss of all reports of a device whose slot took ``distinct`` values.

        The slot is which sampled bucket holds the value, or none of them;
        ``min(distinct, d + 1) * epsilon_perm`` (module docstring;
        ``epsilon_perm == epsilon`` without output perturbation).
        """
        return perturbation.lifetime(distinct, self.d + 1, self.epsilon_perm)

    def client(self, state: StateLike | None = None, *, secret: bytes | None = None) -> DBitFlipClient:
        """A device-side client: buckets sampled once, one memoized answer vector per slot.

        ``state`` (a file path or a store) keeps the device's secret across
        restarts (:mod:`deniable.mechanisms._permanent`).
        """
        return DBitFlipClient(self, state, secret=secret)

    # -------------------------------------------------------------- sampling
    def _answers(self, sampled: NDArray[np.int64], truth: NDArray[np.int64], source: Source) -> NDArray[np.uint8]:
        """The bits for rows of sampled buckets and each row's true bucket position (``-1``: none)."""
        n = sampled.shape[0]
        r = randomness.uniform_below(self._a + self._b, n * self.d, source).reshape(n, self.d)
        hit = sampled == truth[:, None]
        return (r < np.where(hit, self._a, self._b).astype(np.uint64)).astype(np.uint8)

    def _perturb(self, bits: NDArray[np.uint8], source: Source) -> NDArray[np.uint8]:
        """Output perturbation: each bit flipped w.p. ``gamma``, fresh (unchanged without it)."""
        return bits ^ perturbation.flips(bits.shape, self._g, source) if self._g else bits

    def _records(self, sampled: NDArray[np.int64], bits: NDArray[np.uint8]) -> NDArray[np.void]:
        out = np.empty(sampled.shape[0], dtype=self.report_dtype)
        out["buckets"], out["bits"] = sampled, bits
        return out

    def _sample(self, idx: NDArray[np.int64], source: Source) -> NDArray[np.void]:
        sampled = sample_subsets(idx.size, self.k, self.d, source)
        return self._records(sampled, self._perturb(self._answers(sampled, idx, source), source))

    # --------------------------------------------------------------- reports
    def _validate(self, reports: Any) -> NDArray[np.void]:
        if not isinstance(reports, np.ndarray):
            reports = list(reports)
            if reports and all(isinstance(r, np.void) for r in reports):  # privatize's reports, listed
                reports = np.array(reports)
        if isinstance(reports, np.ndarray) and reports.dtype.names:
            if set(reports.dtype.names) != self._FIELDS or reports.ndim != 1:
                raise ValueError(f"DBitFlip reports need fields 'buckets' and 'bits'; got {reports.dtype}")
            try:
                arr = reports.astype(self.report_dtype, casting="same_kind")
            except (TypeError, ValueError):
                raise ValueError(
                    f"DBitFlip reports need d={self.d} buckets and bits each; got {reports.dtype}"
                ) from None
        else:
            arr = codecs.dbitflip_from_json(list(reports), self.d, self.report_dtype)
        if arr.size:
            buckets = arr["buckets"].astype(np.int64).reshape(-1, self.d)
            bad = (buckets >= self.k).any(axis=1) | (np.diff(buckets, axis=1) <= 0).any(axis=1)
            bad |= (arr["bits"].reshape(-1, self.d) > 1).any(axis=1)
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise ValueError(
                    f"DBitFlip report {i}: buckets must be {self.d} increasing positions below k={self.k} "
                    f"and bits 0 or 1; got {self._report_to_json(arr[i])!r:.80}"
                )
        return arr

    def _support_counts(self, reports: NDArray[np.void]) -> NDArray[np.int64]:
        """``[C_0 .. C_(k-1), N_0 .. N_(k-1)]``: reports sampling each bucket with bit 1, and sampling it."""
        buckets = reports["buckets"].astype(np.int64).reshape(-1, self.d)
        ones = reports["bits"].reshape(-1, self.d).astype(bool)
        sampled = np.bincount(buckets.ravel(), minlength=self.k)
        return np.concatenate([np.bincount(buckets[ones], minlength=self.k), sampled])

    def _supports(self, reports: NDArray[np.void], position: int) -> NDArray[np.bool_]:
        buckets = reports["buckets"].reshape(-1, self.d)
        return ((buckets == position) & (reports["bits"].reshape(-1, self.d) == 1)).any(axis=1)

    def max_support(self, positions: NDArray[np.int64]) -> int:
        """A report holds ``d`` sampled buckets, each with one bit: ``min(|T|, d)``."""
        return min(int(np.unique(positions).size), self.d)

    def _own_manipulation(self, targets: Any = None) -> Any:
        """:meth:`manipulation` from this estimate's own per-report term (not ``(1[v in S] - q*)/(p* - q*)``):
        ``z_v = (k/d) [v sampled] (bit (a+b) - b)/(a-b)`` adds at most ``(k/d) a/(a-b)`` (``v`` sampled with
        bit 1) and at least ``-(k/d) b/(a-b)``; a report samples at most ``d`` of the targets."""
        from deniable._manipulation import Manipulation, target_positions

        a, b, ratio = float(self._ra), float(self._rb), self.k / self.d
        output = np.full(self.k, ratio * a / (a - b))
        gain, chosen = None, ()
        if targets is not None:
            positions = target_positions(self, targets)
            gain, chosen = float(min(positions.size, self.d) * output[0]), tuple(self.domain[i] for i in positions)
        spread = np.full(self.k, ratio * (a + b) / (a - b))
        return Manipulation(self.name, output, np.ones(self.k), spread, chosen, gain, self.domain)

    def audit_events(self, reports: Any, x: Any, other: Any) -> NDArray[np.int64]:
        """Cells of (``x`` sampled with bit 1, ``x'`` sampled with bit 0): the corner carries the full ``e^eps``."""
        checked = self._checked(reports)
        buckets = checked["buckets"].reshape(-1, self.d)
        bits = checked["bits"].reshape(-1, self.d)
        px, po = self.domain_obj.encode_one(x), self.domain_obj.encode_one(other)
        hit_x = ((buckets == px) & (bits == 1)).any(axis=1)
        miss_o = ((buckets == po) & (bits == 0)).any(axis=1)
        return 2 * hit_x.astype(np.int64) + miss_o

    # -------------------------------------------------------------- estimate
    def _debiased_sums(self, stat: SupportCounts) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Per bucket, the sums over reports of ``Z`` and ``Z^2``, ``Z = [v sampled] (bit (a+b) - b) / (a - b)``."""
        counts = np.asarray(stat.counts, dtype=float)
        ones, sampled = counts[..., : self.k], counts[..., self.k :]
        a, b = float(self._ra), float(self._rb)
        total = ((a + b) * ones - b * sampled) / (a - b)
        squares = (a * a * ones + b * b * (sampled - ones)) / (a - b) ** 2
        return total, squares

    def estimate_from(self, stat: SupportCounts, target: Target = "population") -> Estimate:
        """The paper's estimate ``h_v = sum Z / (n d / k)`` from a (merged) aggregate.

        Standard errors: for ``"population"`` the devices' ``Z`` are i.i.d.,
        so ``(mean(Z^2) - mean(Z)^2) / (n (d/k)^2)`` from the aggregate; for
        ``"respondents"`` the formula of :meth:`variance` at ``clip(h_v, 0, 1)``.
        """
        target = check_target(target)
        if not isinstance(stat, Mergeable):
            raise TypeError(f"estimate_from needs a SupportCounts aggregate; got {type(stat).__name__}")
        stat.require(SupportCounts, self.fingerprint)
        if np.shape(stat.counts)[-1:] != (2 * self.k,):
            raise ValueError(f"aggregate has {np.shape(stat.counts)[-1:]} counts; DBitFlip needs 2k={2 * self.k}")
        p, q = self.support_rates()
        n, rate = stat.n, self.d / self.k
        ones = np.asarray(stat.counts, dtype=np.int64)[..., : self.k]
        with np.errstate(invalid="ignore", divide="ignore"):
            total, squares = self._debiased_sums(stat)
            freqs = total / (n * rate)
            if target == "population":
                var = (squares / n - (total / n) ** 2) / (n * rate**2)
            else:
                var = self._respondents_variance(n, np.clip(freqs, 0, 1))
            observed = ones / n
        if not n:
            freqs = observed = np.full(self.k, np.nan)
            var = np.full(self.k, np.nan)
        return Estimate(
            mechanism=self.name,
            epsilon=self.epsilon,
            domain=self.domain,
            frequencies=freqs,
            std_errors=np.sqrt(np.maximum(var, 0.0)),
            n=n,
            observed=observed,
            support_counts=ones,
            p_star=p,
            q_star=q,
            target=target,
        )

    def _respondents_variance(self, n: int, f: NDArray[np.float64]) -> NDArray[np.float64]:
        a, b, ratio = float(self._ra), float(self._rb), self.k / self.d
        return np.asarray(ratio * a * b / (a - b) ** 2 / n + f * (ratio - 1) / n, dtype=float)

    def variance(self, n: int, frequencies: Any = None, target: Target = "population") -> NDArray[np.float64]:
        """Per-bucket variance of the estimate from ``n`` reports.

        ``"respondents"``: ``(k/d) e / (n (e - 1)^2) + h (k/d - 1) / n`` with
        ``e = a / b`` (``e^(eps/2)`` for ``d >= 2``); ``"population"`` adds
        ``h (1 - h) / n``. ``frequencies=None`` evaluates it at ``h -> 0``.
        """
        target = check_target(target)
        f = self._variance_frequencies(n, frequencies)
        return self._respondents_variance(n, f) + sampling_variance(n, f, target)

    def simulate_support_counts(
        self, true_counts: NDArray[np.int64], rng: np.random.Generator
    ) -> NDArray[np.int64] | None:
        """The aggregate's ``2k`` counts for a simulated survey, from real reports (``O(n)``, in chunks)."""
        positions = np.repeat(np.arange(self.k), true_counts)
        source = randomness.resolve(rng)
        total = np.zeros(2 * self.k, dtype=np.int64)
        for start in range(0, positions.size, _SIMULATE_CHUNK):
            total += self._support_counts(self._sample(positions[start : start + _SIMULATE_CHUNK], source))
        return total

    def transition_matrix(self) -> tuple[list[Any], NDArray[np.float64]]:
        """Over outputs (sampled buckets, bits): ``P = prod_p P(bit_p) / C(k, d)``."""
        subsets = list(itertools.combinations(range(self.k), self.d))
        if len(subsets) << self.d > 1 << 12:
            raise NotImplementedError("transition_matrix enumerates C(k, d) 2**d outputs; too many")
        p = self._ra / (self._ra + self._rb)
        patterns = list(itertools.product((0, 1), repeat=self.d))
        outputs = [(s, bits) for s in subsets for bits in patterns]
        matrix = np.empty((self.k, len(outputs)))
        for x in range(self.k):
            for j, (s, bits) in enumerate(outputs):
                one = [p if v == x else 1 - p for v in s]
                matrix[x, j] = np.prod([o if bit else 1 - o for o, bit in zip(one, bits, strict=True)])
        return outputs, matrix / len(subsets)

    # ------------------------------------------------------------------ wire
    def _params(self) -> dict[str, Any]:
        flip = {"flip_numerator": self._g} if self._g else {}  # written only when used
        return {"d": self.d, "truth_numerator": self._a, "other_numerator": self._b, **flip}

    @classmethod
    def _from_params(cls, domain: Any, params: dict[str, Any]) -> DBitFlip:
        dom = Domain(domain, "DBitFlip")
        d = perturbation.check_int(params["d"], "d", 1, dom.k, "DBitFlip")
        a, b = int(params["truth_numerator"]), int(params["other_numerator"])
        if not 0 < b < a or a + b > TWO64:
            raise ValueError(
                f"DBitFlip params need 0 < other_numerator < truth_numerator and a sum up to 2**64; got {params!r}"
            )
        self = cls.__new__(cls)
        self._setup(dom, d, a, b, perturbation.check_flip(params, "DBitFlip"))
        return self

    def _report_to_json(self, report: Any) -> dict[str, list[int]]:
        return codecs.dbitflip_to_json(report)

    def __repr__(self) -> str:
        flip = f", gamma={float(self.gamma):.6g}" if self._g else ""
        return f"DBitFlip(k={self.k}, d={self.d}, epsilon={self.epsilon:.6g}{flip})"


class DBitFlipClient(PermanentClient):
    """One device of dBitFlip: ``d`` buckets sampled for life, one memoized answer vector per slot.

    The slot is the position among the sampled buckets of the value's
    bucket, or ``d`` when none of them holds it; each slot's ``d`` bits are
    drawn once (from the client's keyed stream) and reused, so the device
    ever sends at most ``d + 1`` distinct reports (before output
    perturbation, which flips each bit afresh w.p. ``gamma``).
    ``DBitFlip.client`` makes it.

    Parameters
    ----------
    mechanism : DBitFlip
        The mechanism configuration.
    state : str, os.PathLike or StateStore, optional
        Where the device keeps its secret across restarts
        (:mod:`deniable.mechanisms._permanent`).
    secret : bytes, optional
        The secret itself (at least 16 bytes), instead of ``state``; with
        neither, a fresh one for this process only.

    Raises
    ------
    TypeError
        Both ``state`` and ``secret``.
    ValueError
        A ``secret`` shorter than 16 bytes.
    StateError
        A ``state`` written for another configuration.

    Examples
    --------
    >>> import deniable as dn
    >>> m = dn.DBitFlip(16, d=4, epsilon=2.0)
    >>> device = m.client(dn.MemoryStore())
    >>> first, again = device.privatize(3), device.privatize(3)
    >>> len(device.buckets), bool((first == again).all())
    (4, True)
    """

    def __init__(self, mechanism: DBitFlip, state: StateLike | None = None, *, secret: bytes | None = None) -> None:
        super().__init__(mechanism, state, secret=secret)
        self.buckets = sample_subsets(1, mechanism.k, mechanism.d, self._stream("buckets"))[0]

    def slot(self, value: Any) -> int:
        """Which sampled bucket holds ``value`` (its index), or ``d`` for none."""
        position = self.mechanism.domain_obj.encode_one(value)
        where = np.flatnonzero(self.buckets == position)
        return int(where[0]) if where.size else self.mechanism.d

    def privatize(self, value: Any) -> Any:
        """One report: the sampled buckets and the memoized answers of ``value``'s slot."""
        m: DBitFlip = self.mechanism
        slot = self.slot(value)
        truth = np.array([self.buckets[slot] if slot < m.d else -1], dtype=np.int64)
        bits = m._answers(self.buckets[None, :], truth, self._stream(f"slot {slot}"))
        return m._records(self.buckets[None, :], m._perturb(bits, randomness.SECURE))[0]
