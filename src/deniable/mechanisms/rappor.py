"""RAPPOR (Erlingsson, Pihur, Korolova, CCS 2014) over a known candidate domain.

Device, per report of value ``v``:

1. cohort ``c`` (uniform in ``[m]``, drawn once per client) and Bloom filter
   ``B`` of ``v``: ``h`` bits of ``num_bits`` set by SHA-256 of ``(c, v)``;
2. permanent randomized response (PRR): each bit becomes 1 w.p. ``f/2``, 0
   w.p. ``f/2`` and stays ``B_i`` otherwise; a :class:`RapporClient` memoizes
   it per value (derived from the client's secret, as google/rappor's
   ``flag_oneprr``), so that repeated reports of one value leak at most
   ``epsilon_infinity = 2h ln((1 - f/2) / (f/2))``;
3. instantaneous randomized response (IRR), fresh each time: report bit
   ``S_i = 1`` w.p. ``q`` if ``B'_i = 1`` and w.p. ``p`` if ``B'_i = 0``.

With ``q* = f(p+q)/2 + (1-f) q`` and ``p* = f(p+q)/2 + (1-f) p`` (the
probabilities of a reported 1 given ``B_i = 1`` / ``0``), one report is
``epsilon = h ln(q*(1-p*) / (p*(1-q*)))``-LDP. ``RAPPOR(..., epsilon=e)``
sets ``f`` so that ``epsilon_infinity = e``. ``f/2``, ``p`` and ``q`` are
sampled as multiples of 2**-32 (``f/2`` rounded up, ``p`` and ``q`` to the
nearest), and both epsilons are computed from those integers.

Server: per cohort ``j`` with ``N_j`` reports and ``c_ij`` set bits,
``t_ij = (c_ij - p* N_j) / (q* - p*)`` estimates how many of those reports
have Bloom bit ``i`` set, whose expectation is ``N_j sum_v X[j,i,v] f_v``.
The frequencies are the least-squares solution of that linear system
(unbiased; standard errors from the bit-level noise, Google's
``EstimateBloomCounts`` variances, through the sandwich formula). That is the
variance for a fixed set of respondents (``target="respondents"``); the
population target adds the sampling term ``f (1 - f) / n``, as for every
frequency oracle (:mod:`deniable.estimate`). Both are approximations here:
cross-bit covariances within a report are left out.
"""

from __future__ import annotations

import hashlib
import hmac
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable import privacy, randomness
from deniable.estimate import Estimate, SupportCounts, Target, check_target, sampling_variance
from deniable.mechanisms.domain import Domain
from deniable.mechanisms.frequency import FrequencyOracle
from deniable.mechanisms.registry import register
from deniable.randomness import Source

__all__ = ["RAPPOR", "RapporClient"]

_BITS = 32
_ONE = 1 << _BITS
REPORT_DTYPE = np.dtype([("cohort", "<u4"), ("bits", "<u8")])


def _dyadic(x: Fraction, up: bool = False) -> int:
    """``x`` in units of 2**-32 (rounded up, or to nearest); epsilon follows the result."""
    scaled = x * _ONE
    return int(-((-scaled.numerator) // scaled.denominator)) if up else round(scaled)


def _least_squares(
    design: Any, target: NDArray[np.float64], noise: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Least squares ``f = G^+ X' t`` with ``G = X'X`` (``X`` sparse), and ``diag(G^+ X' W X G^+)``.

    ``W = diag(noise)``: the sandwich variance of each coefficient. ``G``
    and ``X' W X`` are built from the sparse design (each
    column has ``num_hashes`` entries per cohort) and inverted through its
    Cholesky factor when it is well conditioned (reciprocal condition number
    at least 1e-10, so ``G^+ = G^-1``); otherwise by the pseudo-inverse.
    """
    from scipy import linalg

    gram = (design.T @ design).toarray()
    inverse = None
    factor, info = linalg.lapack.dpotrf(gram, lower=1)
    if info == 0:
        rcond, info = linalg.lapack.dpocon(factor, np.linalg.norm(gram, 1), uplo="L")
    if info == 0 and rcond >= 1e-10:
        inverse, info = linalg.lapack.dpotri(factor, lower=1)  # the lower triangle of G^-1
        inverse = np.tril(inverse) + np.tril(inverse, -1).T
    else:
        inverse = np.linalg.pinv(gram)
    freqs = inverse @ (design.T @ target)
    weighted = (design.T @ design.multiply(noise[:, None]).tocsr()).toarray()  # X' W X
    return freqs, np.einsum("ij,ij->i", inverse @ weighted, inverse)


@register(decode_cost="O(n num_bits) + least squares over the candidates")
class RAPPOR(FrequencyOracle):
    """Bloom-filter RAPPOR with cohorts, permanent and instantaneous randomized response."""

    wire_id = "rappor"
    report_kind = "structured"

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
    ) -> None:
        domain = Domain(categories, "RAPPOR")
        for name, value, low, high in (
            ("num_bits", num_bits, 1, 64),
            ("num_hashes", num_hashes, 1, 16),
            ("num_cohorts", num_cohorts, 1, 1 << 16),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ValueError(f"{name} must be an int in {low}..{high} for RAPPOR; got {value!r}")
        if num_hashes > num_bits:
            raise ValueError(f"num_hashes ({num_hashes}) cannot exceed num_bits ({num_bits})")
        if (epsilon is None) == (f is None):
            raise TypeError("RAPPOR needs exactly one of epsilon (lifetime, epsilon_infinity) or f")
        zero, one = Fraction(0), Fraction(1)
        pp = privacy.check_probability(p, "p", zero - Fraction(1, _ONE), one, "RAPPOR")
        qq = privacy.check_probability(q, "q", zero, one + Fraction(1, _ONE), "RAPPOR")
        if qq <= pp:
            raise ValueError(f"q must exceed p for RAPPOR; got p={p!r}, q={q!r}")
        if epsilon is not None:
            eps = privacy.check_epsilon(epsilon, owner="RAPPOR")
            # epsilon_inf = 2h ln((1 - f/2)/(f/2)): f/2 = b/(a+b) with a/b <= e^(eps/2h)
            a, b = privacy.exp_ratio(eps / (2 * num_hashes), 1)
            half_f = -((-b * _ONE) // (a + b))  # ceil: more noise
        else:
            ff = privacy.check_probability(f, "f", zero, one + Fraction(1, _ONE), "RAPPOR")
            half_f = _dyadic(ff / 2, up=True)
        self._setup(domain, num_bits, num_hashes, num_cohorts, half_f, _dyadic(pp), _dyadic(qq))

    def _setup(
        self, domain: Domain, bits: int, hashes: int, cohorts: int, half_f: int, p: int, q: int
    ) -> None:
        self.domain_obj = domain
        self.num_bits, self.num_hashes, self.num_cohorts = bits, hashes, cohorts
        self._half_f, self._p, self._q = half_f, p, q
        f2, pp, qq = Fraction(half_f, _ONE), Fraction(p, _ONE), Fraction(q, _ONE)
        self.q_star = f2 * (pp + qq) + (1 - 2 * f2) * qq
        self.p_star = f2 * (pp + qq) + (1 - 2 * f2) * pp
        if not 0 < self.p_star < self.q_star < 1:
            raise ValueError("RAPPOR parameters give no signal: need 0 < p* < q* < 1 (f < 1, p < q)")
        ratio = self.q_star * (1 - self.p_star) / (self.p_star * (1 - self.q_star))
        self._epsilon = privacy.ln_up(ratio**hashes)
        self.epsilon_infinity = privacy.ln_up(((1 - f2) / f2) ** (2 * hashes)) if f2 else float("inf")
        self.bloom = self._bloom_table()

    def _bloom_table(self) -> NDArray[np.uint64]:
        """``bloom[cohort, position]``: the Bloom filter of each category in each cohort."""
        table = np.zeros((self.num_cohorts, self.k), dtype=np.uint64)
        for c in range(self.num_cohorts):
            for i, value in enumerate(self.domain):
                digest = hashlib.sha256(f"{c}\x00{type(value).__name__}\x00{value}".encode()).digest()
                word = 0
                for j in range(self.num_hashes):
                    word |= 1 << (int.from_bytes(digest[4 * j : 4 * j + 4], "big") % self.num_bits)
                table[c, i] = word
        return table

    def support_probabilities(self) -> tuple[list[Fraction], list[Fraction]]:
        raise NotImplementedError("RAPPOR is decoded by regression, not by support counts")

    # -------------------------------------------------------------- sampling
    def _prr(self, blooms: NDArray[np.uint64], source: Source) -> NDArray[np.uint64]:
        n = blooms.size
        noisy = randomness.bernoulli_words(2 * self._half_f, _BITS, n, source)
        coins = np.frombuffer(source.random_bytes(8 * n), dtype=np.uint64)
        return (blooms & ~noisy) | (coins & noisy)

    def _irr(self, prr: NDArray[np.uint64], source: Source) -> NDArray[np.uint64]:
        n = prr.size
        ones = randomness.bernoulli_words(self._q, _BITS, n, source)
        zeros = randomness.bernoulli_words(self._p, _BITS, n, source)
        keep = np.uint64((1 << self.num_bits) - 1)
        return ((prr & ones) | (~prr & zeros)) & keep

    def _reports(self, cohorts: NDArray[np.uint64], bits: NDArray[np.uint64]) -> NDArray[np.void]:
        out = np.empty(bits.size, dtype=REPORT_DTYPE)
        out["cohort"], out["bits"] = cohorts, bits
        return out

    def _sample(self, idx: NDArray[np.int64], source: Source) -> NDArray[np.void]:
        """One-time reports: a fresh cohort, PRR and IRR for every report (epsilon each)."""
        cohorts = randomness.uniform_below(self.num_cohorts, idx.size, source)
        prr = self._prr(self.bloom[cohorts.astype(np.int64), idx], source)
        return self._reports(cohorts, self._irr(prr, source))

    def client(self, secret: bytes | None = None, cohort: int | None = None) -> RapporClient:
        """A device-side client with a fixed cohort and a memoized PRR per value."""
        return RapporClient(self, secret, cohort)

    # --------------------------------------------------------------- reports
    def _validate(self, reports: Any) -> NDArray[np.void]:
        if isinstance(reports, np.ndarray) and reports.dtype.names:
            if set(reports.dtype.names) != {"cohort", "bits"} or reports.ndim != 1:
                raise ValueError(f"RAPPOR reports need fields 'cohort' and 'bits'; got {reports.dtype}")
            arr = reports.astype(REPORT_DTYPE, copy=False)
        else:
            items = list(reports)
            arr = np.empty(len(items), dtype=REPORT_DTYPE)
            for i, item in enumerate(items):
                if not isinstance(item, dict) or set(item) != {"cohort", "bits"}:
                    raise ValueError(f"RAPPOR report {i} must be {{'cohort': int, 'bits': int}}; got {item!r:.60}")
                if any(type(item[key]) is not int or item[key] < 0 for key in ("cohort", "bits")):
                    raise ValueError(f"RAPPOR report {i}: cohort and bits must be non-negative ints")
                if item["cohort"] >= self.num_cohorts or item["bits"] >> self.num_bits:
                    raise ValueError(
                        f"RAPPOR report {i}: cohort must be below {self.num_cohorts} and bits below "
                        f"2**{self.num_bits}; got {item!r:.60}"
                    )
                arr[i] = (item["cohort"], item["bits"])
        if arr.size:
            if int(arr["cohort"].max()) >= self.num_cohorts:
                raise ValueError(f"RAPPOR report cohort must be below {self.num_cohorts}")
            if self.num_bits < 64 and int(arr["bits"].max()) >> self.num_bits:
                raise ValueError(f"RAPPOR report bits must be below 2**{self.num_bits}")
        return arr

    def _bit_counts(self, reports: NDArray[np.void]) -> NDArray[np.int64]:
        """``[N_j, c_j0 .. c_j(b-1)]`` per cohort, flattened (the mergeable statistic)."""
        table = np.zeros((self.num_cohorts, self.num_bits + 1), dtype=np.int64)
        cohorts = reports["cohort"].astype(np.int64)
        table[:, 0] = np.bincount(cohorts, minlength=self.num_cohorts)
        for i in range(self.num_bits):
            bit = ((reports["bits"] >> np.uint64(i)) & np.uint64(1)).astype(bool)
            table[:, i + 1] = np.bincount(cohorts[bit], minlength=self.num_cohorts)
        return table.ravel()

    _support_counts = _bit_counts

    def _supports(self, reports: NDArray[np.void], position: int) -> NDArray[np.bool_]:
        """Whether the report has every Bloom bit of the category (in its cohort) set."""
        need = self.bloom[reports["cohort"].astype(np.int64), position]
        return (reports["bits"] & need) == need

    def audit_events(self, reports: NDArray[np.void], x: Any, other: Any) -> NDArray[np.int64]:
        """Audit cells: all Bloom bits of ``x`` not in ``x'`` set / none of ``x'``'s own bits set.

        Counted only in the report's cohort when the two filters there are
        disjoint with ``h`` bits each; then the corner cell carries the full
        per-report privacy loss ``h ln(q*(1-p*)/(p*(1-q*)))``.
        """
        checked = self._checked(reports)
        cohort = checked["cohort"].astype(np.int64)
        bx = self.bloom[cohort, self.domain_obj.encode_one(x)]
        bo = self.bloom[cohort, self.domain_obj.encode_one(other)]
        only_x, only_o = bx & ~bo, bo & ~bx
        bits = checked["bits"]
        # only cohorts where the two filters are disjoint with h bits each
        pure = (np.bitwise_count(only_x) == self.num_hashes) & (
            np.bitwise_count(only_o) == self.num_hashes
        )
        hit_x = ((bits & only_x) == only_x) & pure
        miss_o = ((bits & only_o) == 0) & pure
        return 2 * hit_x.astype(np.int64) + miss_o

    def estimate_from(self, stat: SupportCounts, target: Target = "population") -> Estimate:
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
        freqs, var = _least_squares(design, t.ravel(), noise)
        n = stat.n
        var = var + (sampling_variance(n, np.clip(freqs, 0, 1), target) if n else 0.0)
        nan = np.full(self.k, np.nan)  # no per-category support share: decoded by regression
        return Estimate(
            mechanism=self.name,
            epsilon=self.epsilon,
            domain=self.domain,
            frequencies=freqs,
            std_errors=np.sqrt(np.clip(var, 0, None)),
            n=n,
            observed=nan,
            support_counts=np.zeros(self.k, dtype=np.int64),
            p_star=nan,
            q_star=nan,
            target=target,
        )

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
        fixed = _least_squares(design, np.zeros(design.shape[0]), noise)[1]
        return np.asarray(fixed + sampling_variance(n, f, target), dtype=float)

    def _design(self, sizes: NDArray[np.float64]) -> Any:
        """Sparse ``(cohorts * num_bits, k)`` design: ``N_j`` where category ``v``'s Bloom filter in
        cohort ``j`` sets bit ``i`` (row ``j * num_bits + i``), 0 elsewhere."""
        from scipy import sparse

        pattern = self.__dict__.get("_bloom_pattern")
        if pattern is None:  # the 0/1 matrix, built once per mechanism
            bits = (self.bloom[:, :, None] >> np.arange(self.num_bits, dtype=np.uint64)) & np.uint64(1)
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
            "hash": "sha256(cohort NUL type NUL value)",
        }

    @classmethod
    def _from_params(cls, domain: Any, params: dict[str, Any]) -> RAPPOR:
        self = cls.__new__(cls)
        self._setup(
            Domain(domain, "RAPPOR"),
            int(params["num_bits"]),
            int(params["num_hashes"]),
            int(params["num_cohorts"]),
            int(params["half_f_numerator"]),
            int(params["p_numerator"]),
            int(params["q_numerator"]),
        )
        return self

    @property
    def report_bits(self) -> int:
        return self.num_bits + max(1, (self.num_cohorts - 1).bit_length())

    def _report_to_json(self, report: Any) -> dict[str, int]:
        return {"cohort": int(report["cohort"]), "bits": int(report["bits"])}

    def __repr__(self) -> str:
        return (
            f"RAPPOR(k={self.k}, bits={self.num_bits}, hashes={self.num_hashes}, "
            f"cohorts={self.num_cohorts}, epsilon={self.epsilon:.6g}, "
            f"epsilon_infinity={self.epsilon_infinity:.6g})"
        )


class RapporClient:
    """One device: a fixed cohort and a permanent (memoized) response per value.

    The PRR of a value is derived from ``HMAC-SHA256(secret, value)``, so it
    is the same on every report without being stored; only the IRR is drawn
    fresh (from the OS CSPRNG). Keep ``secret`` on the device.
    """

    def __init__(self, mechanism: RAPPOR, secret: bytes | None = None, cohort: int | None = None):
        self.mechanism = mechanism
        self.secret = secret if secret is not None else randomness.SECURE.random_bytes(32)
        if cohort is None:
            cohort = randomness.scalar_below(mechanism.num_cohorts, randomness.SECURE)
        if not 0 <= cohort < mechanism.num_cohorts:
            raise ValueError(f"cohort must be in 0..{mechanism.num_cohorts - 1}; got {cohort!r}")
        self.cohort = cohort

    def _permanent(self, position: int) -> NDArray[np.uint64]:
        value = self.mechanism.domain[position]
        key = hmac.new(self.secret, f"{type(value).__name__}\x00{value}".encode(), "sha256").digest()
        stream = _HashStream(key)
        bloom = self.mechanism.bloom[self.cohort, position : position + 1]
        return self.mechanism._prr(bloom, stream)

    def privatize(self, value: Any) -> Any:
        """One report: the memoized PRR of ``value`` through a fresh IRR."""
        m = self.mechanism
        position = m.domain_obj.encode_one(value)
        bits = m._irr(self._permanent(position), randomness.SECURE)
        return m._reports(np.array([self.cohort], dtype=np.uint64), bits)[0]


class _HashStream:
    """Deterministic byte source: SHAKE-256 of a key (for the memoized PRR only)."""

    secure = True

    def __init__(self, key: bytes) -> None:
        self._key = key
        self._used = 0

    def random_bytes(self, n: int) -> bytes:
        out = hashlib.shake_256(self._key).digest(self._used + n)[self._used :]
        self._used += n
        return out
