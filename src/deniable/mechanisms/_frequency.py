"""Frequency oracles: randomizers over categories and their unbiased estimator.

A subclass supplies the device-side sampler for category positions, the
support counts of a batch of (validated) reports, the support probabilities
``p*`` and ``q*`` (exact rationals), and its wire parameters. Everything else,
the estimator, its variance, confidence intervals, merging and configs, lives
here once.
"""

from __future__ import annotations

from abc import abstractmethod
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction
from typing import Any, ClassVar, overload

import numpy as np
from numpy.typing import NDArray

from deniable import _accelerate as accelerate
from deniable import _randomness as randomness
from deniable._aggregates import Mergeable, SupportCounts
from deniable._cores import cores
from deniable._estimate import Estimate, Target, check_target, pure_variance
from deniable._randomness import Source
from deniable._slices import SlicedEstimate, estimate_by
from deniable.mechanisms._contract import Mechanism
from deniable.mechanisms._domain import Domain

__all__ = ["FrequencyOracle"]

_PARALLEL_FROM = 1 << 16  # secure batches at least this large are split over threads
_PART = 1 << 15  # ... into parts of at least this many reports, one thread each, up to the cores
_BLOCK = 1 << 16  # ... each sampled this many reports at a time per two threads (at most 2**20), unless the
# mechanism sets its own block: a block's working memory stays in the cache, and the more threads take turns
# at the GIL between numpy's calls, the fewer calls each makes (16 threads: 2.4x faster with 2**20 than 2**16)
_BLOCK_MAX = 1 << 20


def _threads(size: int) -> int:
    """Threads for a secure batch of ``size`` reports: 1 below ``2**16``, else parts of at least ``2**15``
    reports over every core (and at least two)."""
    return 1 if size < _PARALLEL_FROM else max(2, min(cores(), size // _PART))


def _block(threads: int) -> int:
    """Reports sampled per call by each of ``threads`` threads: ``2**15`` per thread, from ``2**16`` to
    ``2**20``."""
    return min(_BLOCK * max(1, threads // 2), _BLOCK_MAX)


class FrequencyOracle(Mechanism):
    r"""A randomizer over a categorical domain and its unbiased frequency estimator.

    Subclasses set ``wire_id`` (stable mechanism id on the wire, never reused)
    and ``report_kind`` (how a report looks in numpy). GRR, the unary and
    local-hashing encodings, Hadamard response, subset selection, RAPPOR and
    the sketches are its kinds.

    Notes
    -----
    A pure oracle's report :math:`y` supports a set :math:`S(y)` of
    categories, with :math:`P(v \in S(y)) = p^*` when :math:`v` is the
    respondent's value and :math:`q^*` otherwise; with :math:`C_v` the
    support count of :math:`v` among :math:`n` reports,
    :math:`\hat f_v = (C_v / n - q^*) / (p^* - q^*)` is unbiased.

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> from deniable.mechanisms import FrequencyOracle
    >>> m = dn.OUE(["a", "b", "c"], epsilon=1.0)
    >>> isinstance(m, FrequencyOracle), m.domain
    (True, ('a', 'b', 'c'))
    >>> rng = np.random.default_rng(0)
    >>> values = rng.choice(["a", "b", "c"], size=5000, p=[0.6, 0.3, 0.1])
    >>> est = m.estimate(m.privatize_many(values, rng=rng))
    >>> bool(np.all(np.abs(est.frequencies - [0.6, 0.3, 0.1]) < 5 * est.std_errors))
    True
    """

    stat_type: ClassVar[type[SupportCounts]] = SupportCounts
    _block_reports: int | None = None
    """Secure batches are sampled this many reports at a time into one output array (None: ``2**15`` per
    thread, from ``2**16`` to ``2**20``), so the working memory is a block's, not the batch's."""
    _run_bits = 0  # bits per report drawn by the run decoder of :func:`deniable._randomness.dyadic_packed`

    domain_obj: Domain

    _epsilon: float

    @property
    def epsilon(self) -> float:
        """Pure LDP parameter realised by the integer probabilities (rounded up)."""
        return self._epsilon

    # ---------------------------------------------------------------- abstract

    @abstractmethod
    def support_probabilities(self) -> tuple[list[Fraction], list[Fraction]]:
        """Exact ``(p*, q*)`` per category (lists of length k)."""

    @abstractmethod
    def _sample(self, idx: NDArray[np.int64], source: Source) -> NDArray[Any]:
        """Reports for the category positions ``idx``."""

    @abstractmethod
    def _support_counts(self, reports: NDArray[Any]) -> NDArray[np.int64]:
        """``C_v`` for validated reports."""

    @abstractmethod
    def _supports(self, reports: NDArray[Any], position: int) -> NDArray[np.bool_]:
        """Whether each validated report supports the category at ``position``."""

    def max_support(self, positions: NDArray[np.int64]) -> int:
        """The most of the categories at ``positions`` that one well-formed report can support.

        ``max_y |S(y) ∩ T|``: what decides how far one fake report moves the
        targets' summed estimate (:func:`deniable._manipulation.manipulation`).
        """
        raise NotImplementedError(f"{self.name} does not state how many categories one report can support")

    def manipulation(self, targets: Any = None) -> Any:
        """How far fake reports can move this mechanism's estimates (:class:`deniable.Manipulation`).

        Per fake report, in units of ``1/N`` for ``N`` reports: ``output``
        ``(1-q*)/(p*-q*)`` (a chosen report), ``input`` 1 (a chosen true
        value), ``spread`` ``1/(p*-q*)`` (the realised worst case); with
        ``targets``, the maximal-gain attack's gain on their summed estimate.
        """
        from deniable._manipulation import manipulation

        return manipulation(self, targets)

    # ------------------------------------------------------------------ domain
    @property
    def domain(self) -> tuple[Any, ...]:
        """The categories, in order; estimates are aligned with it."""
        return self.domain_obj.values

    @property
    def k(self) -> int:
        return self.domain_obj.k

    @property
    def report_bits(self) -> int:
        """Bits to index one report: ``ceil(log2 k)`` unless the mechanism says otherwise."""
        return max(1, (self.k - 1).bit_length())

    def _domain_json(self) -> Any:
        return self.domain_obj.to_json()

    def _domain_key(self) -> Any:
        return self.domain_obj

    # ------------------------------------------------------------- privatize
    def privatize(self, value: Any, rng: randomness.RNGLike = None) -> Any:
        """Randomize one respondent's value (secure randomness unless ``rng`` given)."""
        position = self.domain_obj.encode_one(value)
        source = randomness.resolve(rng)
        return self._sample_one(position, source)

    def _sample_one(self, position: int, source: Source) -> Any:
        return self._sample(np.array([position], dtype=np.int64), source)[0]

    def privatize_many(self, values: Any, rng: randomness.RNGLike = None) -> NDArray[Any]:
        """Randomize many values at once; one report (row) per value.

        ``rng=None`` uses the OS CSPRNG; a seed or numpy Generator is for
        simulation only (its output is predictable, hence not private).

        A secure batch is sampled ``_block_reports`` reports at a time (by
        default ``2**15`` per thread, from ``2**16`` to ``2**20``: the working
        memory stays in the cache) and, from ``2**16`` reports, split over one
        thread per core (one thread where numpy decodes the sampler's runs:
        :meth:`_parallel`); a 1-D array of values is also checked and
        encoded part by part in those threads. Reports are independent, so the
        law of the output is that of one draw of the whole batch.
        """
        source = randomness.resolve(rng)
        if not source.secure:
            return self._sample(self.domain_obj.encode(values), source)
        split = isinstance(values, np.ndarray) and values.ndim == 1 and self._parallel(values.size) > 1
        idx = values if split else self.domain_obj.encode(values)
        threads = self._parallel(idx.size)
        block = self._block_reports or _block(threads)
        if threads == 1 and idx.size <= block:
            return self._sample(idx, source)
        first = self._sample(self.domain_obj.encode(idx[:1]) if split else idx[:1], source)  # shape and dtype
        out = np.empty((idx.size, *first.shape[1:]), dtype=first.dtype)

        def fill(part: slice) -> None:
            positions = self.domain_obj.encode(idx[part]) if split else idx[part]
            for start in range(0, positions.size, block):
                stop = min(start + block, positions.size)
                out[part.start + start:part.start + stop] = self._sample(positions[start:stop], source)

        out[:1] = first
        bounds = np.linspace(1, idx.size, threads + 1).astype(int)
        parts = [slice(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
        if threads == 1:
            fill(parts[0])
            return out
        try:  # the OS CSPRNG, numpy and the compiled sampler release the GIL: use every core
            with ThreadPoolExecutor(threads) as pool:
                list(pool.map(fill, parts))
        except ValueError:
            if split:  # a bad value: raise the whole batch's error (the first bad value, its index in values)
                self.domain_obj.encode(values)
            raise
        return out

    def _parallel(self, size: int) -> int:
        """Threads for a secure batch of ``size`` reports: :func:`_threads`, but one where the sampler's
        run decoder (``_run_bits`` bits per report) runs in numpy, whose many small calls per draw hold the
        GIL (two threads took 1.3-1.9x the CPU of one, and more wall time)."""
        threads = _threads(size)
        if threads > 1 and self._run_bits and not accelerate.runs_compiled(size * self._run_bits):
            return 1
        return threads

    # ------------------------------------------------------------- aggregate
    def aggregate(self, reports: Any) -> SupportCounts:
        """Mergeable sufficient statistic (support counts and n) of a batch of reports."""
        stat: SupportCounts = self._aggregate_checked(self._checked(reports))
        return stat

    def _aggregate_checked(self, checked: NDArray[Any]) -> SupportCounts:
        counts = self._support_counts(checked).astype(np.int64, copy=False)
        return SupportCounts(self.fingerprint, counts, int(len(checked)))

    def supports(self, reports: Any, value: Any) -> NDArray[np.bool_]:
        """Whether each report supports ``value`` (``value in S(y)``)."""
        return self._supports(self._checked(reports), self.domain_obj.encode_one(value))

    # -------------------------------------------------------------- estimate
    def support_rates(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """:meth:`support_probabilities` as read-only float64 arrays, computed once per mechanism.

        ``p*[v] = P(v in S(y) | x = v)`` and ``q*[v] = P(v in S(y) | x != v)``,
        where ``S(y)`` is the set of categories report ``y`` supports; the
        expected share of reports supporting ``v`` is ``q*[v] + (p*[v] - q*[v]) f[v]``.
        """
        cached = self.__dict__.get("_support_rates")
        if cached is None:
            p, q = self.support_probabilities()
            cached = (np.array([float(x) for x in p]), np.array([float(x) for x in q]))
            for arr in cached:
                arr.setflags(write=False)
            self.__dict__["_support_rates"] = cached
        return cached

    @overload
    def estimate(self, reports: Any, target: Target = ..., *, by: None = None, **sample: Any) -> Estimate: ...
    @overload
    def estimate(self, reports: Any, target: Target = ..., *, by: Any, **sample: Any) -> SlicedEstimate: ...

    def estimate(self, reports: Any, target: Target = "population", *, by: Any = None, **sample: Any) -> Any:
        """Unbiased frequency estimate from reports (see :class:`deniable.Estimate`).

        ``target="population"`` (the default) estimates the shares in the
        population the respondents were sampled from; ``"respondents"`` the
        shares among these respondents. Only the standard errors differ.
        ``by`` (one plain label per report) estimates each slice on its own:
        a :class:`~deniable.SlicedEstimate` (:mod:`deniable._slices`).
        ``sample``: survey weights and a complex sample (``weights``,
        ``strata``, ``cluster``, ``fpc``, ``repweights``, ``rep_type``, ...,
        one entry per report): the weighted estimate with design-based
        standard errors (:mod:`deniable._weighted_estimate`).
        """
        target = check_target(target)  # before any work on the reports
        if by is not None:
            if sample:
                raise ValueError(f"by: slices and survey weights ({', '.join(sample)}) are not supported together")
            return estimate_by(self, reports, by, target)
        if sample:
            if type(self).estimate_from is not FrequencyOracle.estimate_from:
                raise ValueError(f"weights: {self.name} has its own estimator; survey weights and complex samples "
                                 "are not supported for it")
            from deniable._weighted_estimate import weighted_frequencies

            return weighted_frequencies(self, self._checked(reports), target, sample)
        est: Estimate = self.estimate_from(self.aggregate(reports), target=target)
        return est

    def estimate_from(self, stat: SupportCounts, target: Target = "population") -> Estimate:
        """Unbiased frequency estimate from a (merged) aggregate.

        Standard errors: for ``"population"`` the plug-in of
        ``lambda (1 - lambda) / (n (p*-q*)^2)`` at the observed share
        ``lambda = C_v / n``; for ``"respondents"`` [formula (A)][formula-a] at
        ``clip(f_v, 0, 1)`` (:func:`deniable._estimate.pure_variance`).
        """
        target = check_target(target)
        if not isinstance(stat, Mergeable):
            raise TypeError(f"estimate_from needs a SupportCounts aggregate; got {type(stat).__name__}")
        stat.require(SupportCounts, self.fingerprint)
        if np.shape(stat.counts)[-1:] != (self.k,):
            raise ValueError(f"aggregate has {np.shape(stat.counts)[-1:]} counts; {self.name} needs k={self.k}")
        p, q = self.support_rates()
        n = stat.n
        with np.errstate(invalid="ignore", divide="ignore"):
            observed = stat.counts / n if n else np.full(self.k, np.nan)
            freqs = (observed - q) / (p - q)
            # population: (A) + f(1-f)/n = lambda(1-lambda)/(n gap^2), plugged in at lambda = C/n
            plug_in = freqs if target == "population" else np.clip(freqs, 0, 1)
            se = np.sqrt(np.maximum(pure_variance(n, p, q, plug_in, target), 0.0)) if n else observed
        return Estimate(
            mechanism=self.name,
            epsilon=self.epsilon,
            domain=self.domain,
            frequencies=freqs,
            std_errors=se,
            n=n,
            observed=observed,
            support_counts=stat.counts,
            p_star=p,
            q_star=q,
            target=target,
        )

    def variance(
        self, n: int, frequencies: Any = None, target: Target = "population"
    ) -> NDArray[np.float64]:
        """Per-category variance of the estimate for ``n`` reports.

        ``"respondents"``: [formula (A)][formula-a],
        ``q*(1-q*) / (n (p*-q*)^2) + f_v (1-p*-q*) / (n (p*-q*))``, for the
        fixed set of ``n`` respondents. ``"population"`` (the default) adds
        the sampling term ``f_v (1 - f_v) / n``. ``frequencies=None``
        evaluates it at ``f -> 0`` (``Var*/n``, the planning convention: the
        variance of a rare category, the same for both targets).
        """
        target = check_target(target)
        f = self._variance_frequencies(n, frequencies)
        p, q = self.support_rates()
        return pure_variance(n, p, q, f, target)

    def _variance_frequencies(self, n: int, frequencies: Any) -> NDArray[np.float64]:
        """Check ``variance``'s arguments; the frequencies as an array (zeros for None)."""
        if n <= 0:
            raise ValueError(f"n must be positive; got {n}")
        f = np.zeros(self.k) if frequencies is None else np.asarray(frequencies, dtype=float)
        if f.shape != (self.k,):
            raise ValueError(f"frequencies must have length k={self.k}; got shape {f.shape}")
        return f

    # ------------------------------------------------------------ exact view
    def transition_matrix(self) -> tuple[list[Any], NDArray[np.float64]]:
        """``(outputs, P)`` with ``P[x, j] = P(report = outputs[j] | value = domain[x])``.

        Enumerates the whole output space, so it is offered only where that
        space is small; used to check privacy exactly.
        """
        raise NotImplementedError(f"{self.name} does not enumerate its outputs")

    def simulate_support_counts(
        self, true_counts: NDArray[np.int64], rng: np.random.Generator
    ) -> NDArray[np.int64] | None:
        """Support counts of a simulated survey drawn without making reports.

        Returns None where no exact joint draw is implemented.
        """
        return None

    def __repr__(self) -> str:
        dom = self.k if self.domain_obj.is_range else list(self.domain)
        if isinstance(dom, list) and len(dom) > 6:
            dom = [*dom[:6], "..."]
        return f"{self.name}({dom!r}, epsilon={self.epsilon:.6g})"

