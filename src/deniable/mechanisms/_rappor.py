"""RAPPOR (Erlingsson, Pihur, Korolova, CCS 2014) over a known candidate domain.

Device, per report of value ``v``:

1. cohort ``c`` (uniform in ``[m]``, drawn once per client) and Bloom filter
   ``B`` of ``v``: ``h`` bits of ``num_bits`` (at most 256) set by a hash of
   ``(c, v)``: ``hashing="sha256"`` (the default, and what configurations
   without a choice mean) takes 4-byte words of SHA-256 of
   ``c NUL type NUL v``; ``hashing="google"`` computes the bits exactly as
   google/rappor's clients do (:func:`google_bloom_bits`: byte ``i`` of
   MD5 of the cohort as 4 big-endian bytes followed by ``v`` in UTF-8, modulo
   ``num_bits``), so reports of Google's clients decode here
   (:meth:`RAPPOR.reports_from_google`);
2. permanent randomized response (PRR): each bit becomes 1 w.p. ``f/2``, 0
   w.p. ``f/2`` and stays ``B_i`` otherwise; a :class:`RapporClient` memoizes
   it per value (derived from the client's secret, as google/rappor's
   ``flag_oneprr``), so that repeated reports of one value leak at most
   ``epsilon_infinity = 2h ln((1 - f/2) / (f/2))``;
3. instantaneous randomized response (IRR), fresh each time: report bit
   ``S_i = 1`` w.p. ``q`` if ``B'_i = 1`` and w.p. ``p`` if ``B'_i = 0``.

With ``q* = f(p+q)/2 + (1-f) q`` and ``p* = f(p+q)/2 + (1-f) p`` (the
probabilities of a reported 1 given ``B_i = 1`` / ``0``), one report is
``epsilon = h ln(q*(1-p*) / (p*(1-q*)))``-LDP when two filters of ``h``
bits are disjoint in some cohort; when the hashes collide the loss is
smaller, and both epsilons are the ones the actual filters realise
(:mod:`deniable.mechanisms._rappor_privacy`). ``RAPPOR(..., epsilon=e)``
sets ``f`` so that the realised ``epsilon_infinity = e``. ``f/2``, ``p`` and ``q`` are
sampled as multiples of 2**-32 (``f/2`` rounded up, ``p`` and ``q`` to the
nearest), and both epsilons are computed from those integers. A one-time
report (``privatize_many``, no memoized PRR) draws each bit once with
probability ``q*`` or ``p*`` (multiples of 2**-64): the law of the two steps,
from fewer random bits.

Server: per cohort ``j`` with ``N_j`` reports and ``c_ij`` set bits,
``t_ij = (c_ij - p* N_j) / (q* - p*)`` estimates how many of those reports
have Bloom bit ``i`` set, whose expectation is ``N_j sum_v X[j,i,v] f_v``.
The frequencies are the least-squares solution of that linear system
(unbiased; standard errors from the bit-level noise, Google's
``EstimateBloomCounts`` variances, through the sandwich formula). That is the
variance for a fixed set of respondents (``target="respondents"``); the
population target adds the sampling term ``f (1 - f) / n``, as for every
frequency oracle (:mod:`deniable._estimate`). Both are approximations here:
cross-bit covariances within a report are left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from deniable import _columns as columns
from deniable import _privacy as privacy
from deniable import _randomness as randomness
from deniable._client_state import StateLike
from deniable._estimate import SupportCounts, Target, check_target, sampling_variance
from deniable._randomness import Source
from deniable.mechanisms import _rappor_bloom as bloom
from deniable.mechanisms._contract import CheckedReports
from deniable.mechanisms._domain import Domain
from deniable.mechanisms._frequency import FrequencyOracle
from deniable.mechanisms._rappor_bloom import HASHINGS, google_bloom_bits
from deniable.mechanisms._rappor_client import RapporClient
from deniable.mechanisms._rappor_decode import RapporEstimate, least_squares, select
from deniable.mechanisms._rappor_manipulation import rappor_manipulation
from deniable.mechanisms._rappor_privacy import lifetime_loss, one_time_loss, widest
from deniable.mechanisms.registry import register
from deniable.wire import _codecs as codecs

__all__ = ["RAPPOR", "RapporClient", "RapporEstimate", "google_bloom_bits", "HASHINGS", "MAX_BITS"]

_BITS = 32
_ONE = 1 << _BITS
_WORD = 64
MAX_BITS = 256  #: a Bloom filter of Google's clients addresses its bits with one byte
REPORT_DTYPE = np.dtype([("cohort", "<u4"), ("bits", "<u8")])
"""Reports of up to 64 bits; wider filters hold ``bits`` as 64-bit words, least significant first."""

def _report_dtype(words: int) -> np.dtype[Any]:
    return REPORT_DTYPE if words == 1 else np.dtype([("cohort", "<u4"), ("bits", "<u8", (words,))])


def _dyadic(x: Fraction, up: bool = False) -> int:
    """``x`` in units of 2**-32 (rounded up, or to nearest); epsilon follows the result."""
    scaled = x * _ONE
    return int(-((-scaled.numerator) // scaled.denominator)) if up else round(scaled)


@register(decode_cost="O(n num_bits) + least squares over the candidates", browser=True)
class RAPPOR(FrequencyOracle):
    r"""Bloom-filter RAPPOR with cohorts, permanent and instantaneous randomized response.

    Each device hashes its value into a Bloom filter of ``num_bits`` bits with
    ``num_hashes`` hash functions salted by its cohort (one of ``num_cohorts``),
    then randomizes the filter twice (Erlingsson, Pihur & Korolova 2014): a
    permanent response that sets each bit to 1 w.p. ``f/2``, to 0 w.p. ``f/2``
    and keeps it otherwise, and an instantaneous response that reports a 1-bit
    as 1 w.p. ``q`` and a 0-bit as 1 w.p. ``p``. The analyst debiases the bit
    counts of each cohort and solves for the candidates' frequencies by least
    squares.

    Parameters
    ----------
    categories : int or sequence
        The candidate values: ``k`` (the values ``0 .. k-1``) or the list of
        them. The decoder estimates these candidates only.
    epsilon : float, optional
        The lifetime bound :math:`\varepsilon_\infty` of any number of reports
        of one value through a memoized permanent response (``m.client()``);
        ``f`` is chosen to meet it. Give exactly one of ``epsilon`` and ``f``.
    f : float, optional
        The permanent response's noise, in ``(0, 1]``, instead of ``epsilon``.
    p, q : float
        The instantaneous response's probabilities of reporting 1 for a 0-bit
        and for a 1-bit (``0 <= p < q <= 1``); default 0.5 and 0.75, as in
        the paper.
    num_bits : int
        Bits of the Bloom filter (``1 .. 2**16``); default 16.
    num_hashes : int
        Hash functions per value (at most ``num_bits``); default 2.
    num_cohorts : int
        Cohorts, each with its own hash salt; a device draws one; default 64.
    hashing : str
        ``"sha256"`` (the default) or another name of the shipped hashings.

    Raises
    ------
    TypeError
        Neither or both of ``epsilon`` and ``f``.
    ValueError
        A size out of range, ``num_hashes > num_bits``, ``q <= p``, or a
        probability outside ``[0, 1]``.

    Notes
    -----
    With :math:`r_1 = f (p + q)/2 + (1 - f) q` and :math:`r_0 = f (p + q)/2 + (1 - f) p`
    the probabilities of a reported 1 given Bloom bit 1 and 0, one report is
    :math:`\varepsilon_1`-LDP and a memoized value's reports together
    :math:`\varepsilon_\infty`-LDP, for two candidates whose filters differ in
    :math:`s` bits (:math:`s = 2h` when disjoint):

    .. math::

        \varepsilon_1 = \tfrac{s}{2} \ln \frac{r_1 (1 - r_0)}{r_0 (1 - r_1)}, \qquad
        \varepsilon_\infty = s \ln \frac{1 - f/2}{f/2}.

    ``m.epsilon`` is :math:`\varepsilon_1` and ``m.epsilon_infinity`` is
    :math:`\varepsilon_\infty`, both computed from the actual filters (see
    the [frequency oracles](../math/frequency-oracles.md#rappor) page).

    Examples
    --------
    >>> import numpy as np
    >>> from deniable.mechanisms import RAPPOR
    >>> m = RAPPOR(["a", "b", "c", "d"], epsilon=4.0, num_bits=32, num_hashes=2, num_cohorts=8)
    >>> round(m.epsilon_infinity, 6), round(m.epsilon, 4)
    (4.0, 0.9919)
    >>> rng = np.random.default_rng(0)
    >>> values = rng.choice(["a", "b", "c", "d"], size=20_000, p=[0.5, 0.3, 0.2, 0.0])
    >>> est = m.estimate(m.privatize_many(values, rng=rng))
    >>> bool(np.all(np.abs(est.frequencies - [0.5, 0.3, 0.2, 0.0]) < 5 * est.std_errors))
    True
    """

    wire_id = "rappor"
    report_kind = "structured"
    wide_fields = ("bits",)
    _block_reports = 1 << 13  # secure batches: 8,192 reports at a time (about 0.5 MiB of working memory)
    param_defaults: ClassVar[dict[str, Any]] = {"hash": HASHINGS["sha256"]}  # configs without a hashing
    _own_manipulation = rappor_manipulation  # m.manipulation(targets): from the decode's weights

    def __init__(
        self,
        categories: Any,
        *,
        epsilon: float | None = None,
        f: float | None = None,
        p: float = 0.5,
        q: float = 0.75,
        num_bits: int = 16,
        num_hashes: int = 2,
        num_cohorts: int = 64,
        hashing: str = "sha256",
    ) -> None:
        domain = Domain(categories, "RAPPOR")
        if hashing not in HASHINGS:
            raise ValueError(f"hashing must be one of {sorted(HASHINGS)} for RAPPOR; got {hashing!r}")
        for name, value, low, high in (
            ("num_bits", num_bits, 1, MAX_BITS),
            ("num_hashes", num_hashes, 1, bloom._MAX_HASHES[hashing]),
            ("num_cohorts", num_cohorts, 1, 1 << 16),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ValueError(f"{name} must be an int in {low}..{high} for RAPPOR; got {value!r}")
        if num_hashes > num_bits:
            raise ValueError(f"num_hashes ({num_hashes}) cannot exceed num_bits ({num_bits})")
        if (epsilon is None) == (f is None):
            raise TypeError("RAPPOR needs exactly one of epsilon (lifetime, epsilon_infinity) or f")
        zero, one = Fraction(0), Fraction(1)
        pp = privacy.check_probability(p, "p", zero, one, "RAPPOR", closed=True)
        qq = privacy.check_probability(q, "q", zero, one, "RAPPOR", closed=True)
        if qq <= pp:
            raise ValueError(f"q must exceed p for RAPPOR; got p={p!r}, q={q!r}")
        filters = bloom._filters(domain, hashing, num_bits, num_hashes, num_cohorts)
        if epsilon is not None:
            eps = privacy.check_epsilon(epsilon, owner="RAPPOR")
            # realised epsilon_inf = s ln((1 - f/2)/(f/2)), s the widest filter difference (2h when two are
            # disjoint): f/2 = b/(a+b) with a/b <= e^(eps/s)
            spread = max(a + b for a, b in filters[1])
            a, b = privacy.exp_ratio(eps / spread, 1)
            half_f = -((-b * _ONE) // (a + b))  # ceil: more noise
        else:
            ff = privacy.check_probability(f, "f", zero, one + Fraction(1, _ONE), "RAPPOR")
            half_f = _dyadic(ff / 2, up=True)
        self._setup(domain, num_bits, num_hashes, num_cohorts, half_f, _dyadic(pp), _dyadic(qq), hashing, filters)

    def _setup(
        self, domain: Domain, bits: int, hashes: int, cohorts: int, half_f: int, p: int, q: int, hashing: str,
        filters: bloom.Filters | None = None,
    ) -> None:
        table, found = filters or bloom._filters(domain, hashing, bits, hashes, cohorts)
        self.domain_obj = domain
        self.num_bits, self.num_hashes, self.num_cohorts = bits, hashes, cohorts
        self.hashing = hashing
        self._words = -(-bits // _WORD)
        self._run_bits = _WORD * self._words  # one lazy comparison per bit of the report's words
        self._dtype = _report_dtype(self._words)
        keep = [(1 << _WORD) - 1] * self._words
        keep[-1] = (1 << (bits - _WORD * (self._words - 1))) - 1
        self._keep = np.array(keep, dtype=np.uint64)
        self._half_f, self._p, self._q = half_f, p, q
        f2, pp, qq = Fraction(half_f, _ONE), Fraction(p, _ONE), Fraction(q, _ONE)
        self.q_star = f2 * (pp + qq) + (1 - 2 * f2) * qq
        self.p_star = f2 * (pp + qq) + (1 - 2 * f2) * pp
        if not 0 < self.p_star < self.q_star < 1:
            raise ValueError("RAPPOR parameters give no signal: need 0 < p* < q* < 1 (f < 1, p < q)")
        # (a, b): the filter difference of the realised one-time loss ((h, h) when two filters are disjoint)
        self.separation = widest(found, self.p_star, self.q_star)
        self._widest_pair = found[self.separation]
        self._epsilon = one_time_loss(*self.separation, self.p_star, self.q_star)
        self.epsilon_infinity = max(lifetime_loss(a, b, f2) for a, b in found)
        self._irr_tables = np.stack([randomness.expansion_table(p, _BITS), randomness.expansion_table(q, _BITS)])
        stars = [star * randomness.TWO64 for star in (self.p_star, self.q_star)]  # integers: f/2, p, q are /2^32
        assert all(star.denominator == 1 for star in stars)
        self._one_time_tables = np.stack([randomness.expansion_table(int(star), _WORD) for star in stars])
        self._bloom3 = table  # [cohort, position, word]; self.bloom is [cohort, position] when num_bits <= 64
        self.bloom = self._bloom3[:, :, 0] if self._words == 1 else self._bloom3

    def support_probabilities(self) -> tuple[list[Fraction], list[Fraction]]:
        raise NotImplementedError("RAPPOR is decoded by regression, not by support counts")

    # -------------------------------------------------------------- sampling
    def _prr(self, blooms: NDArray[np.uint64], source: Source) -> NDArray[np.uint64]:
        """Permanent randomized response of ``(n, words)`` Bloom filters.

        A client derives its PRR from its secret through this function, so
        the bytes it reads and how it uses them must never change (a changed
        PRR for the same secret would be a fresh permanent response).
        """
        n = blooms.size
        noisy = randomness.bernoulli_words(2 * self._half_f, _BITS, n, source).reshape(blooms.shape)
        coins = np.frombuffer(source.random_bytes(8 * n), dtype=np.uint64).reshape(blooms.shape)
        return (blooms & ~noisy) | (coins & noisy)

    def _irr(self, prr: NDArray[np.uint64], source: Source) -> NDArray[np.uint64]:
        """Instantaneous randomized response of ``(n, words)`` permanent responses.

        Each bit is 1 with probability ``q`` where the PRR has a 1 and ``p``
        where it has a 0: one exact lazy comparison per bit against the
        threshold its PRR bit selects (2 random bits per bit on average).
        """
        return self._per_bit(self._irr_tables, prr, source)

    def _per_bit(
        self, tables: NDArray[np.uint8], select: NDArray[np.uint64], source: Source
    ) -> NDArray[np.uint64]:
        """``(n, words)`` words whose bits are Bernoulli with ``tables[1]``'s threshold where ``select`` has
        a 1 and ``tables[0]``'s where it has a 0 (:func:`~deniable._randomness.dyadic_packed`), masked to
        ``num_bits``."""
        select = np.ascontiguousarray(select, dtype=np.uint64)
        packed = randomness.dyadic_packed(tables, 64 * select.size, source, select.view(np.uint8).ravel())
        return packed.view(np.uint64).reshape(select.shape) & self._keep

    def _reports(self, cohorts: NDArray[np.uint64], bits: NDArray[np.uint64]) -> NDArray[np.void]:
        out = np.empty(len(bits), dtype=self._dtype)
        out["cohort"], out["bits"] = cohorts, bits[:, 0] if self._words == 1 else bits
        return out

    def _bit_words(self, reports: NDArray[np.void]) -> NDArray[np.uint64]:
        """The reports' bits as ``(n, words)`` 64-bit words, least significant first."""
        return np.asarray(reports["bits"], dtype=np.uint64).reshape(len(reports), self._words)

    def _sample(self, idx: NDArray[np.int64], source: Source) -> NDArray[np.void]:
        """One-time reports: a fresh cohort, PRR and IRR for every report (epsilon each).

        A fresh PRR followed by an IRR sets each bit independently, with
        probability ``q*`` where the Bloom filter has a 1 and ``p*`` where it
        has a 0 (both multiples of ``2**-64``), so each bit is drawn once
        from that law by an exact lazy comparison: the same distribution as
        the two steps, from a third of their random bits.
        """
        cohorts = randomness.uniform_below(self.num_cohorts, idx.size, source)
        blooms = self._bloom3[cohorts.astype(np.int64), idx]
        return self._reports(cohorts, self._per_bit(self._one_time_tables, blooms, source))

    def client(
        self,
        state: StateLike | None = None,
        *,
        secret: bytes | None = None,
        cohort: int | None = None,
    ) -> RapporClient:
        """A device-side client with a fixed cohort and a memoized PRR per value.

        ``state`` (a file path or a :class:`~deniable._client_state.StateStore`)
        keeps the client's secret and cohort across processes and restarts:
        created on first use (a file with mode 0600), reused afterwards, and
        refused (:class:`~deniable._client_state.StateError`) if it was written
        for another configuration. Without ``state`` the client lives only as
        long as the object (or pass an explicit ``secret`` and ``cohort``):
        a client re-created without its state draws new permanent responses,
        and the lifetime guarantee ``epsilon_infinity`` no longer holds.
        """
        return RapporClient(self, state, secret=secret, cohort=cohort)

    # --------------------------------------------------------------- reports
    def _validate(self, reports: Any) -> NDArray[np.void]:
        if isinstance(reports, np.ndarray) and reports.dtype.names:
            shape = () if self._words == 1 else (self._words,)
            if set(reports.dtype.names) != {"cohort", "bits"} or reports.ndim != 1 or (
                reports.dtype["bits"].shape != shape
            ):
                raise ValueError(
                    f"RAPPOR reports need fields 'cohort' and 'bits' ({self._words} 64-bit word(s)); "
                    f"got {reports.dtype}"
                )
            arr = reports.astype(self._dtype, copy=False)
        else:
            parsed = codecs.rappor_from_json(list(reports), self.num_cohorts, self.num_bits)
            arr = np.empty(len(parsed), dtype=self._dtype)
            for i, (cohort, bits) in enumerate(parsed):
                words = [(bits >> (_WORD * w)) & ((1 << _WORD) - 1) for w in range(self._words)]
                arr[i] = (cohort, words[0] if self._words == 1 else words)
        if arr.size:
            if int(arr["cohort"].max()) >= self.num_cohorts:
                raise ValueError(f"RAPPOR report cohort must be below {self.num_cohorts}")
            if np.any(self._bit_words(arr) & ~self._keep):
                raise ValueError(f"RAPPOR report bits must be below 2**{self.num_bits}")
        return arr

    def _bit_counts(self, reports: NDArray[np.void]) -> NDArray[np.int64]:
        """``[N_j, c_j0 .. c_j(b-1)]`` per cohort, flattened (the mergeable statistic): ``c_ji`` the reports
        of cohort ``j`` with bit ``i`` set, counted by :func:`deniable._columns.column_counts` over the
        words' little-endian bytes (bit ``i`` is bit ``i % 8`` of byte ``i // 8``), grouped by cohort."""
        table = np.empty((self.num_cohorts, self.num_bits + 1), dtype=np.int64)
        cohorts = reports["cohort"].astype(np.int64)
        table[:, 0] = np.bincount(cohorts, minlength=self.num_cohorts)
        octets = np.ascontiguousarray(self._bit_words(reports), dtype="<u8").view(np.uint8)
        octets = octets.reshape(len(reports), 8 * self._words)[:, : -(-self.num_bits // 8)]  # the bytes with bits
        counts = columns.column_counts(octets, cohorts, self.num_cohorts, bitorder="little")
        table[:, 1:] = counts[:, : self.num_bits]
        return table.ravel()

    _support_counts = _bit_counts

    def _supports(self, reports: NDArray[np.void], position: int) -> NDArray[np.bool_]:
        """Whether the report has every Bloom bit of the category (in its cohort) set."""
        need = self._bloom3[reports["cohort"].astype(np.int64), position]
        return np.all((self._bit_words(reports) & need) == need, axis=1)

    def audit_pairs(self) -> list[tuple[Any, Any]]:
        """Two categories whose filters realise ``epsilon`` in some cohort, both ways round (the audit's inputs)."""
        _, i, j = self._widest_pair
        return [(self.domain[i], self.domain[j]), (self.domain[j], self.domain[i])]

    def audit_events(self, reports: NDArray[np.void], x: Any, other: Any) -> NDArray[np.int64]:
        """Audit cells: all Bloom bits of ``x`` not in ``x'`` set / none of ``x'``'s own bits set.

        Counted only in the cohorts where the pair's filter difference
        (``a = |B(x) - B(x')|``, ``b = |B(x') - B(x)|``) carries its largest
        one-time loss ``a ln(q*/p*) + b ln((1-p*)/(1-q*))``; there the corner
        cell carries that loss (``epsilon`` itself for :meth:`audit_pairs`).
        """
        checked = self._checked(reports)
        bx = self._bloom3[:, self.domain_obj.encode_one(x)]
        bo = self._bloom3[:, self.domain_obj.encode_one(other)]
        only_x, only_o = bx & ~bo, bo & ~bx  # [cohort, word]
        ps, qs = float(self.p_star), float(self.q_star)
        loss = np.bitwise_count(only_x).sum(axis=1) * np.log(qs / ps) + np.bitwise_count(only_o).sum(
            axis=1
        ) * np.log((1 - ps) / (1 - qs))
        cohort = checked["cohort"].astype(np.int64)
        pure = ((loss == loss.max()) & (loss > 0))[cohort]
        bits = self._bit_words(checked)
        hit_x = np.all((bits & only_x[cohort]) == only_x[cohort], axis=1) & pure
        miss_o = np.all((bits & only_o[cohort]) == 0, axis=1) & pure
        return 2 * hit_x.astype(np.int64) + miss_o

    def estimate_from(self, stat: SupportCounts, target: Target = "population") -> RapporEstimate:
        """Least-squares decode of the per-cohort Bloom bit counts (module docstring)."""
        target = check_target(target)
        stat.require(SupportCounts, self.fingerprint)
        table = stat.counts.reshape(self.num_cohorts, self.num_bits + 1)
        sizes, ones = table[:, 0].astype(float), table[:, 1:].astype(float)
        ps, qs = float(self.p_star), float(self.q_star)
        t = (ones - ps * sizes[:, None]) / (qs - ps)
        with np.errstate(invalid="ignore", divide="ignore"):
            rate = np.clip(ones / sizes[:, None], 0, 1)
        rate = np.nan_to_num(rate)
        noise = (sizes[:, None] * rate * (1 - rate) / (qs - ps) ** 2).ravel()
        design = self._design(sizes)
        selected = None
        if self.k > design.shape[0]:  # underdetermined: select candidates first (_rappor_decode)
            freqs, var, selected = select(design, t.ravel(), noise)
        else:
            freqs, var = least_squares(design, t.ravel(), noise)
        n = stat.n
        var = var + (sampling_variance(n, np.clip(freqs, 0, 1), target) if n else 0.0)
        return RapporEstimate.decoded(self, freqs, np.sqrt(np.clip(var, 0, None)), n, target, selected)

    def variance(
        self, n: int, frequencies: Any = None, target: Target = "population"
    ) -> NDArray[np.float64]:
        """Approximate per-category variance for n reports spread evenly over cohorts.

        ``"population"`` (the default) adds ``f (1 - f) / n`` to the fixed
        respondents' variance.
        """
        target = check_target(target)
        f = self._variance_frequencies(n, frequencies)
        sizes = np.full(self.num_cohorts, n / self.num_cohorts)
        design = self._design(sizes)
        ps, qs = float(self.p_star), float(self.q_star)
        rate = ps + (qs - ps) * (self._design(np.ones(self.num_cohorts)) @ f)
        noise = np.repeat(sizes, self.num_bits) * rate * (1 - rate) / (qs - ps) ** 2
        fixed = least_squares(design, np.zeros(design.shape[0]), noise)[1]
        return np.asarray(fixed + sampling_variance(n, f, target), dtype=float)

    def _design(self, sizes: NDArray[np.float64]) -> Any:
        """Sparse ``(cohorts * num_bits, k)`` design: ``N_j`` where category ``v``'s Bloom filter in
        cohort ``j`` sets bit ``i`` (row ``j * num_bits + i``), 0 elsewhere."""
        from scipy import sparse

        pattern = self.__dict__.get("_bloom_pattern")
        if pattern is None:  # the 0/1 matrix, built once per mechanism
            shifts = np.arange(_WORD, dtype=np.uint64)
            bits = (self._bloom3[:, :, :, None] >> shifts) & np.uint64(1)  # [cohort, value, word, bit]
            bits = bits.reshape(self.num_cohorts, self.k, self._words * _WORD)[:, :, : self.num_bits]
            cohort, value, bit = np.nonzero(bits)
            shape = (self.num_cohorts * self.num_bits, self.k)
            pattern = sparse.csr_matrix((np.ones(cohort.size), (cohort * self.num_bits + bit, value)), shape=shape)
            self.__dict__["_bloom_pattern"] = pattern
        return sparse.diags(np.repeat(sizes, self.num_bits)) @ pattern

    def transition_matrix(self) -> tuple[list[Any], NDArray[np.float64]]:
        """Over outputs (cohort, bits): P = (1/m) prod_i P(S_i | B_i) with q*, p* per bit."""
        if self.num_bits > 10 or self.num_cohorts * (1 << self.num_bits) > 1 << 16:
            raise NotImplementedError("transition_matrix enumerates every (cohort, bits); too many")
        words = np.arange(1 << self.num_bits, dtype=np.uint64)
        shifts = np.arange(self.num_bits, dtype=np.uint64)
        s_bits = ((words[:, None] >> shifts) & np.uint64(1)).astype(bool)
        ps, qs = float(self.p_star), float(self.q_star)
        outputs = [(c, int(w)) for c in range(self.num_cohorts) for w in words]
        matrix = np.empty((self.k, len(outputs)))
        for x in range(self.k):
            rows = []
            for c in range(self.num_cohorts):
                b_bits = ((self.bloom[c, x] >> shifts) & np.uint64(1)).astype(bool)
                one = np.where(b_bits, qs, ps)
                rows.append(np.prod(np.where(s_bits, one, 1 - one), axis=1) / self.num_cohorts)
            matrix[x] = np.concatenate(rows)
        return outputs, matrix

    # ------------------------------------------------------------------ wire
    def _params(self) -> dict[str, Any]:
        return {
            "bits": _BITS,
            "num_bits": self.num_bits,
            "num_hashes": self.num_hashes,
            "num_cohorts": self.num_cohorts,
            "half_f_numerator": self._half_f,
            "p_numerator": self._p,
            "q_numerator": self._q,
            "hash": HASHINGS[self.hashing],
        }

    @classmethod
    def _from_params(cls, domain: Any, params: dict[str, Any]) -> RAPPOR:
        recorded = params.get("hash", cls.param_defaults["hash"])
        hashing = next((name for name, text in HASHINGS.items() if text == recorded), None)
        if hashing is None:
            raise ValueError(
                f"config field 'params.hash' for rappor must be one of {sorted(HASHINGS.values())}; "
                f"got {recorded!r} (a hashing this reader does not know)"
            )
        self = cls.__new__(cls)
        self._setup(
            Domain(domain, "RAPPOR"),
            int(params["num_bits"]),
            int(params["num_hashes"]),
            int(params["num_cohorts"]),
            int(params["half_f_numerator"]),
            int(params["p_numerator"]),
            int(params["q_numerator"]),
            hashing,
        )
        return self

    @property
    def report_bits(self) -> int:
        return self.num_bits + max(1, (self.num_cohorts - 1).bit_length())

    def _report_to_json(self, report: Any) -> dict[str, int]:
        return codecs.rappor_to_json(report["cohort"], bloom._as_int(report["bits"]))

    # ------------------------------------------------------- google/rappor
    def reports_from_google(self, cohorts: Sequence[int], irrs: Sequence[int | str]) -> CheckedReports:
        """Reports of google/rappor's clients, checked: each ``(cohort, irr)``.

        ``irr`` is what Google's ``Encoder.encode`` returns (an int whose bit
        ``i`` is Bloom bit ``i``) or its bit string (``num_bits`` characters
        ``0``/``1``, most significant bit first, as in Google's simulation
        CSV files and ``sum_bits.py``). Use ``hashing="google"`` and the
        parameters of the collection (``f``, ``p``, ``q``, ``num_bits``,
        ``num_hashes``, ``num_cohorts``). Raises
        :class:`~deniable.errors.ReportError` naming the first bad row.
        """
        return self.reports_from_json(bloom.google_irrs(cohorts, irrs, self.num_bits))

    def reports_to_google(self, reports: Any, bit_strings: bool = False) -> list[tuple[int, int | str]]:
        """``(cohort, irr)`` per report in Google's forms: ints, or MSB-first bit strings."""
        return [(item["cohort"], format(item["bits"], f"0{self.num_bits}b") if bit_strings else item["bits"])
                for item in self.reports_to_json(reports)]

    def __repr__(self) -> str:
        hashing = ", hashing='google'" if self.hashing == "google" else ""
        return (
            f"RAPPOR(k={self.k}, bits={self.num_bits}, hashes={self.num_hashes}, "
            f"cohorts={self.num_cohorts}{hashing}, epsilon={self.epsilon:.6g}, "
            f"epsilon_infinity={self.epsilon_infinity:.6g})"
        )
