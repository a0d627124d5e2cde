"""Discovery of frequent values nobody listed: :class:`HeavyHitters`.

Strings (UTF-8, cut at ``max_length`` bytes as :mod:`deniable.heavy._items`
says) or 64-bit integers, found by one of the protocols of
:mod:`deniable.heavy._protocols` (PEM or SFP) over one of Apple's count-mean
sketches.

**Choosing** (``method=None``, ``oracle=None``). With ``V(e)`` a sketch's
variance per report at frequency 0 and epsilon ``e``, the least share a
protocol finds is ``sqrt(n)``-proportional:

* PEM: ``z(0.05 / (o top_k)) sqrt(L V(eps))`` (a level holds ``n / L``
  devices and tests ``o top_k`` prefixes, ``o`` the most extensions of a
  prefix: 256 for integers, 180 for text, ``|alphabet| + 1`` with one);
* SFP: the larger of ``z(0.05 / 65536) sqrt(L V(eps / 2))`` (a position's
  fragments) and ``z(0.05 / top_k) sqrt(V(eps / 2))`` (the word sketch).

With an ``alphabet`` PEM tests at most ``(|alphabet| + 1) top_k`` prefixes per
level; SFP does not take an alphabet (its one-byte fragments range
over every byte), so ``method=None`` then means PEM and ``method="sfp"`` is
refused.

The default takes the (protocol, sketch) pair of the smallest such share;
``n`` cancels, so the choice depends on epsilon, the item length and
``top_k`` only. While ``o top_k <= 65536`` (``top_k`` up to 256 for
integers, 364 for text) SFP loses to PEM at every epsilon: PEM's z is then
at most SFP's fragment z, and a sketch's variance falls with its epsilon
(SFP's runs at half). With more prefixes per level and a high epsilon,
where halving it barely raises the variance, SFP's fixed 65,536 tests win
(text with ``top_k`` 512: from epsilon about 24; 4,096: about 16) and the
default is SFP. Otherwise SFP is there to run Apple's protocol, or to
compare.

**Wire form.** :meth:`HeavyHitters.to_config` is versioned JSON like a
mechanism's, in the discovery format (``format`` ``"deniable.discovery"``,
version 1): the method, kind, ``max_length``, ``top_k``, the realised
epsilon and the sketch's own configuration, and ``alphabet`` only when one
is set (so a configuration without one is what it was before alphabets
existed). It is what devices, the browser client and stored surveys hold.

:class:`HeavyHitters` is also a
:class:`~deniable.mechanisms._contract.Mechanism` with the wire id
``"heavy-hitters"``, whose mechanism form carries the same parts: the
``domain`` is the values a device takes (``kind``, ``max_length``, and
``alphabet`` when set) and the ``params`` the method, ``top_k`` and the
sketch's configuration::

    {"format": "deniable.mechanism", "version": 1, "mechanism": "heavy-hitters",
     "domain": {"kind": "text", "max_length": 8}, "epsilon": 4.0,
     "params": {"method": "pem", "top_k": 32, "sketch": {...}}}

:meth:`HeavyHitters.from_config` reads either form and rebuilds it exactly,
rejecting what it does not understand; the readers take the mechanism form
before any writer sends it, so that devices already read it when it becomes
what :meth:`~HeavyHitters.to_config` writes. A report is a JSON object
``{"level": i, "sketch": {...}}`` (SFP adds ``"word": {...}``), the
sketches' reports in their own JSON form; the aggregate is
:class:`~deniable.heavy.HeavyStat` and the estimate
(:meth:`~HeavyHitters.estimate_from`) what :meth:`~HeavyHitters.identify`
finds, a :class:`~deniable.heavy.Discovery`.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable import _randomness as randomness
from deniable import wire
from deniable._estimate import check_target
from deniable._intervals import z_for
from deniable.errors import AggregateError, ConfigError, ReportError
from deniable.heavy._items import Items
from deniable.heavy._protocols import PROTOCOLS, Protocol
from deniable.heavy._results import Discovery, HeavyStat
from deniable.mechanisms._contract import Mechanism
from deniable.mechanisms._sketch import CountMeanSketch, HadamardCountMeanSketch, Sketch
from deniable.mechanisms.registry import register

__all__ = ["HeavyHitters", "default_width", "WIDTHS"]

ORACLES: dict[str, Any] = {"hcms": HadamardCountMeanSketch, "cms": CountMeanSketch}
CONFIG_FORMAT, CONFIG_VERSION = "deniable.discovery", 1
"""The ``format`` and ``version`` of :meth:`HeavyHitters.to_config` (the discovery format)."""
_CONFIG_FIELDS = {"format", "version", "method", "kind", "max_length", "top_k", "epsilon", "sketch"}
_DOMAIN_FIELDS = {"kind", "max_length"}
_OPTIONAL_FIELDS = {"alphabet"}
WIDTHS = (64, 128, 256, 512, 1024)
"""The sketch widths ``width=None`` chooses from (:func:`default_width`)."""


def _check_top_k(top_k: Any) -> None:
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= 4096:
        raise ValueError(f"top_k must be an integer in 1..4096; got {top_k!r}")


def _check_alphabet_method(alphabet: str | None, method: str | None) -> None:
    if alphabet is not None and method == "sfp":
        raise ValueError("alphabet applies to method 'pem' only (SFP's one-byte fragments range over every byte)")


def _per_report_variance(oracle: str, epsilon: float, width: int = 8) -> float:
    """A sketch's variance per report at frequency 0 (no collisions), at ``epsilon``, with ``width`` buckets."""
    return float(ORACLES[oracle](epsilon=epsilon, rows=1, width=width, seed=bytes(32)).variance(1))


def default_width(oracle: str, epsilon: float) -> int:
    """The sketch width ``width=None`` means: CMS's narrowest within 10% of the widest's variance; HCMS 1,024.

    A CMS's variance per report at frequency 0 falls with its width ``m``
    towards that of an unbounded sketch (a report's bucket is hit by chance
    ``1/m`` of the time), while a device's report and work grow with ``m``
    (a CMS report is ``m`` bits). The variance at ``m = 1024`` is within a
    few percent of the limit, so the first width of ``WIDTHS`` within 10% of
    it costs at most 5% in standard error: at a sketch epsilon up to 3 that
    is 64 buckets, at 4 128, at 6 256, at 8 512. The seed term of the
    variance, ``sum of the other values' squared shares / (rows (m - 1))``,
    also grows as ``m`` falls; :meth:`~HeavyHitters.identify` removes the
    frequent values' part of it, and with 256 rows the rest is small next to
    the privacy noise. An HCMS report (a row, a coefficient's index of
    ``log2 m`` bits and one bit) is about as short at any width, so a
    narrower HCMS saves a device little: it keeps 1,024.
    """
    if oracle == "hcms":
        return WIDTHS[-1]
    widest = _per_report_variance(oracle, epsilon, WIDTHS[-1])
    return next(w for w in WIDTHS if _per_report_variance(oracle, epsilon, w) <= 1.1 * widest)


@register(kind="discovery", decode_cost="O(levels x top_k x options) sketch estimates")
class HeavyHitters(Mechanism):
    r"""Find the frequent strings (or integers) among devices that each send one randomized report.

    ``epsilon``: each device's privacy loss. ``method``: ``"pem"``, ``"sfp"``
    or None (the better for this workload, see the module docstring).
    ``kind``: ``"text"`` or ``"integer"``. ``max_length``: bytes of UTF-8
    kept (text). ``top_k``: values kept per level (find at most that many).
    ``oracle`` (``"cms"``, ``"hcms"`` or None), ``rows``, ``width``, ``seed``:
    the sketch (``width=None``: ``default_width``'s choice for the
    epsilon: CMS 64 to 512 buckets, HCMS 1,024). ``alphabet`` (text, PEM
    only): a string of distinct single-byte ASCII characters that every
    value consists of; PEM then extends a prefix by those bytes (and the end
    marker) only.

    Parameters
    ----------
    epsilon : float
        Each device's privacy loss, ``> 0`` (keyword only, as all).
    method : {"pem", "sfp"}, optional
        The protocol; None picks the one that finds smaller shares for this
        workload (module docstring).
    kind : {"text", "integer"}, default "text"
        Strings (UTF-8) or 64-bit integers.
    max_length : int, default 8
        Bytes of UTF-8 kept of a text value.
    top_k : int, default 32
        Values kept per level: the most that can be found.
    oracle : {"cms", "hcms"}, optional
        The count-mean sketch; None picks one.
    rows : int, default 256
        The sketch's rows (hash functions).
    width : int, optional
        The sketch's buckets per row; None: ``default_width``'s choice for
        the epsilon.
    seed : bytes or str, optional
        The sketch's hash seed; None draws one.
    alphabet : str, optional
        Text with PEM only: the distinct single-byte ASCII characters every
        value consists of.

    Raises
    ------
    ValueError
        An unknown ``method`` or ``oracle``, a bad ``top_k`` or
        ``alphabet``, or an ``alphabet`` with SFP.

    Notes
    -----
    With :math:`V(e)` a sketch's variance per report at frequency 0, PEM
    finds shares above about :math:`z_{0.05 / (o \cdot \mathrm{top\_k})} \sqrt{L \, V(\varepsilon) / n}`,
    with :math:`L` levels and :math:`o` extensions per prefix.

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> rng = np.random.default_rng(0)
    >>> hh = dn.HeavyHitters(epsilon=4.0, method="pem", max_length=2, top_k=4, alphabet="abc", rows=16,
    ...                      seed=bytes(32))
    >>> values = rng.choice(["ab", "ba", "c"], size=4000, p=[0.5, 0.3, 0.2])
    >>> found = hh.estimate(hh.privatize_many(values, rng=rng))
    >>> found.values
    ('ab', 'ba', 'c')
    >>> bool(abs(found.counts[0] - 2000) < 5 * found.std_errors[0])
    True
    """

    wire_id = "heavy-hitters"
    config_formats = (CONFIG_FORMAT,)  # dn.from_config hands a "deniable.discovery" configuration to from_config
    report_kind = "structured"
    stat_type = HeavyStat

    def __init__(
        self, *, epsilon: float, method: str | None = None, kind: str = "text", max_length: int = 8,
        top_k: int = 32, oracle: str | None = None, rows: int = 256, width: int | None = None,
        seed: bytes | str | None = None, alphabet: str | None = None,
    ) -> None:
        if method is not None and method not in PROTOCOLS:
            raise ValueError(f"method must be one of {list(PROTOCOLS)} or None; got {method!r}")
        if oracle is not None and oracle not in ORACLES:
            raise ValueError(f"oracle must be one of {list(ORACLES)} or None; got {oracle!r}")
        _check_top_k(top_k)
        _check_alphabet_method(alphabet, method)
        self.items_of = Items(kind, max_length, alphabet)
        self.kind, self.max_length, self.top_k, self.alphabet = kind, max_length, top_k, alphabet
        sketch_shape = {"rows": 1, "width": 8, "seed": bytes(32)}
        choices = []
        for name in [method] if method else ["pem"] if alphabet is not None else list(PROTOCOLS):
            for o in [oracle] if oracle else list(ORACLES):
                share = PROTOCOLS[name].budget_share
                probe = PROTOCOLS[name](self.items_of, ORACLES[o](epsilon=epsilon / share, **sketch_shape), top_k)
                choices.append((probe.detectable(_per_report_variance(o, epsilon / share)), name, o))
        _, method, oracle = min(choices)
        assert method is not None and oracle is not None
        share = PROTOCOLS[method].budget_share
        if width is None:
            width = default_width(oracle, epsilon / share)
        self._setup(method, ORACLES[oracle](epsilon=epsilon / share, rows=rows, width=width, seed=seed))

    def _setup(self, method: str, sketch: Sketch) -> None:
        self.method = method
        self.oracle: Sketch = sketch
        self.protocol: Protocol = PROTOCOLS[method](self.items_of, sketch, self.top_k)
        self.levels = self.protocol.levels
        self.dtype = self.protocol.dtype
        self._fingerprint = f"{sketch.fingerprint}:{method}:{self.kind}:{self.max_length}:{self.top_k}"
        if self.alphabet is not None:
            self._fingerprint += f":alphabet={self.alphabet.encode('ascii').hex()}"

    # ------------------------------------------------------------ wire form
    @property
    def fingerprint(self) -> str:
        """Names the configuration in its aggregates: the sketch's fingerprint, method, kind, length, ``top_k``
        (and alphabet), as it always has (stored aggregates stay readable)."""
        return self._fingerprint

    def to_config(self) -> dict[str, Any]:
        """Versioned JSON-ready configuration in the discovery format (what devices and browsers read).

        ``{"format": "deniable.discovery", "version": 1, "method", "kind", "max_length", "top_k", "epsilon",
        "sketch"[, "alphabet"]}``: see the module docstring, which also gives the mechanism form that
        :meth:`from_config` and :func:`deniable.from_config` read as well.
        """
        return {
            "format": CONFIG_FORMAT, "version": CONFIG_VERSION, "method": self.method, "kind": self.kind,
            "max_length": self.max_length, "top_k": self.top_k, "epsilon": self.epsilon,
            "sketch": self.oracle.to_config(), **({} if self.alphabet is None else {"alphabet": self.alphabet}),
        }

    def _domain_json(self) -> dict[str, Any]:
        """The values a device takes: ``{"kind", "max_length"}``, and ``"alphabet"`` only when one is set."""
        return {"kind": self.kind, "max_length": self.max_length,
                **({} if self.alphabet is None else {"alphabet": self.alphabet})}

    def _params(self) -> dict[str, Any]:
        return {"method": self.method, "top_k": self.top_k, "sketch": self.oracle.to_config()}

    @classmethod
    def _from_params(cls, domain: Any, params: dict[str, Any]) -> HeavyHitters:
        if not isinstance(domain, dict) or not _DOMAIN_FIELDS <= set(domain) <= _DOMAIN_FIELDS | _OPTIONAL_FIELDS:
            raise ConfigError(f"config field 'domain' must be an object with fields {sorted(_DOMAIN_FIELDS)} "
                              f"(optionally {sorted(_OPTIONAL_FIELDS)}) for heavy-hitters; got {domain!r:.60}")
        return cls._built(params["method"], domain, params["top_k"], params["sketch"])

    @classmethod
    def _built(cls, method: Any, values: dict[str, Any], top_k: Any, sketch_config: Any) -> HeavyHitters:
        """The discovery of a configuration's parts (either format); ConfigError naming the field."""
        if method not in PROTOCOLS:
            raise ConfigError(f"config field 'method' must be one of {list(PROTOCOLS)}; got {method!r}")
        sketch = wire.from_config(sketch_config)
        if not isinstance(sketch, Sketch):
            raise ConfigError(f"config field 'sketch' must configure one of {list(ORACLES)}; got {sketch.name}")
        self = cls.__new__(cls)
        try:
            self.items_of = Items(values["kind"], values["max_length"], values.get("alphabet"))
            _check_top_k(top_k)
            _check_alphabet_method(values.get("alphabet"), method)
            if "alphabet" in values and values["alphabet"] is None:
                raise ValueError("alphabet must be a non-empty string of distinct ASCII characters (or absent); "
                                 "got None")
        except ValueError as exc:
            raise ConfigError(f"discovery config: {exc}") from None
        self.kind, self.max_length, self.top_k = values["kind"], values["max_length"], top_k
        self.alphabet = values.get("alphabet")
        self._setup(method, sketch)
        return self

    @classmethod
    def from_config(cls, config: dict[str, Any] | str) -> HeavyHitters:
        """Rebuild from :meth:`to_config` (the discovery format) or the mechanism form (a dict or its JSON);
        ConfigError naming the field otherwise."""
        if isinstance(config, str):
            try:
                config = json.loads(config)
            except json.JSONDecodeError as exc:
                raise ConfigError(f"discovery config is not valid JSON: {exc}") from None
        if isinstance(config, dict) and config.get("format") == wire.CONFIG_FORMAT and "mechanism" in config:
            built = wire.from_config(config)
            if not isinstance(built, cls):
                raise ConfigError(f"config field 'mechanism' must be {cls.wire_id!r}; got {config.get('mechanism')!r}")
            return built
        if not isinstance(config, dict) or not _CONFIG_FIELDS <= set(config) <= _CONFIG_FIELDS | _OPTIONAL_FIELDS:
            got = sorted(config) if isinstance(config, dict) else type(config).__name__
            raise ConfigError(f"discovery config must be an object with fields {sorted(_CONFIG_FIELDS)} "
                              f"(optionally {sorted(_OPTIONAL_FIELDS)}); got {got}")
        if config["format"] != CONFIG_FORMAT or config["version"] != CONFIG_VERSION:
            raise ConfigError(
                f"config fields 'format'/'version' must be {CONFIG_FORMAT!r}/{CONFIG_VERSION}; "
                f"got {config['format']!r}/{config['version']!r}"
            )
        self = cls._built(config["method"], config, config["top_k"], config["sketch"])
        claimed = config["epsilon"]
        if not isinstance(claimed, (int, float)) or not math.isclose(claimed, self.epsilon, rel_tol=1e-12):
            raise ConfigError(f"config field 'epsilon' says {claimed!r} but the parameters give {self.epsilon!r}")
        return self

    # -------------------------------------------------------------- reports
    def _reports_from_json(self, items: list[Any]) -> NDArray[Any]:
        """Structured reports from JSON objects ``{"level", "sketch"[, "word"]}``; ReportError names the first bad."""
        parts = ("level", "sketch", "word") if self.method == "sfp" else ("level", "sketch")
        for i, item in enumerate(items):
            if not isinstance(item, dict) or set(item) != set(parts):
                reason = f"report must be an object with fields {list(parts)}; got {item!r:.60}"
                raise ReportError(f"report {i}: {reason}", i, reason)
            level = item["level"]
            if isinstance(level, bool) or not isinstance(level, int) or not 1 <= level <= self.levels:
                reason = f"report level must be an integer in 1..{self.levels}; got {level!r:.20}"
                raise ReportError(f"report {i}: {reason}", i, reason)
        out = np.empty(len(items), dtype=self.dtype)
        out["level"] = [item["level"] for item in items]
        for part, prefix in (("sketch", ""), ("word", "word_"))[: len(parts) - 1]:
            sketch = np.asarray(self.oracle.reports_from_json([item[part] for item in items]))
            for f in self.oracle.dtype.names or ():
                out[prefix + f] = sketch[f]
        return out

    def _report_error(self, items: list[Any], exc: Exception) -> ReportError:
        """A ReportError from :meth:`_reports_from_json` already names the report (and its sketch's reason)."""
        return exc if isinstance(exc, ReportError) else super()._report_error(items, exc)

    def _checked_to_json(self, checked: NDArray[Any]) -> list[dict[str, Any]]:
        """Reports as JSON objects ``{"level", "sketch"[, "word"]}``."""
        parts = {"sketch": ""} if self.method == "pem" else {"sketch": "", "word": "word_"}
        as_json = {
            name: self.oracle.reports_to_json(self.protocol.sketch_part(checked, prefix))
            for name, prefix in parts.items()
        }
        return [
            {"level": int(level), **{name: as_json[name][i] for name in parts}}
            for i, level in enumerate(checked["level"].tolist())
        ]

    def _report_to_json(self, report: Any) -> dict[str, Any]:
        return self._checked_to_json(self._validate(np.asarray([report])))[0]

    def __repr__(self) -> str:
        return (f"HeavyHitters(method={self.method!r}, kind={self.kind!r}, max_length={self.max_length}, "
                f"top_k={self.top_k}, oracle={self.oracle!r}, epsilon={self.epsilon:.6g}"
                + ("" if self.alphabet is None else f", alphabet={self.alphabet!r}") + ")")

    @property
    def epsilon(self) -> float:
        """Each device's privacy loss: its sketch report's epsilon (SFP: the sum of its two reports')."""
        return self.oracle.epsilon * self.protocol.budget_share

    def items(self, values: Any) -> tuple[list[bytes], NDArray[np.int64]]:
        """The distinct values' items and each value's position among them."""
        return self.items_of.encode(values)

    @property
    def report_bits(self) -> int:
        """Bits of a report: its level, and the sketch report (SFP: two of them)."""
        return math.ceil(math.log2(self.levels)) + self.oracle.report_bits * self.protocol.budget_share

    def privatize(self, value: Any, rng: randomness.RNGLike = None) -> Any:
        """One device's report (a structured scalar); ``rng=None`` uses the OS CSPRNG."""
        return self.privatize_many([value], rng=rng)[0]

    def privatize_many(self, values: Any, rng: randomness.RNGLike = None) -> NDArray[Any]:
        """One structured report per value; ``rng=None`` uses the OS CSPRNG (a seed is for simulation only)."""
        items, inverse = self.items(values)
        return self.protocol.privatize(items, inverse, randomness.resolve(rng))

    def _validate(self, reports: Any) -> NDArray[Any]:
        arr = np.asarray(reports)
        if arr.dtype.names is None or set(arr.dtype.names) != set(self.dtype.names or ()):
            raise ValueError(
                f"reports must be a structured array with fields {list(self.dtype.names or ())}; got {arr.dtype}"
            )
        level = arr["level"].astype(np.int64)
        if arr.size and (level.min() < 1 or level.max() > self.levels):
            bad = int(np.flatnonzero((level < 1) | (level > self.levels))[0])
            raise ValueError(f"report {bad}: level must be in 1..{self.levels}; got {int(level[bad])}")
        return arr

    # ------------------------------------------------------------ aggregate
    def _aggregate_checked(self, checked: NDArray[Any]) -> HeavyStat:
        """The mergeable aggregate (with ``+``): one sketch per level (and SFP's word sketch)."""
        return self.protocol.aggregate(checked, self.fingerprint)

    def aggregate_from_json(self, data: Any) -> HeavyStat:
        """An aggregate of this configuration from its ``to_json`` form (AggregateError otherwise)."""
        stat = HeavyStat.from_json(data)
        stat.require(HeavyStat, self.fingerprint)
        if len(stat.levels) != self.levels:
            raise AggregateError(f"discovery aggregate has {len(stat.levels)} levels; this one needs {self.levels}")
        if (stat.word is None) != (self.method == "pem"):
            raise AggregateError(f"discovery aggregate: 'word' is {'missing' if stat.word is None else 'unexpected'}")
        for sketch in (*stat.levels, *([stat.word] if stat.word is not None else [])):
            self.oracle._check_stat(sketch)
        return stat

    def identify(self, stat: HeavyStat, top: int | None = None, threshold: float | None = None,
                 level: float = 0.95) -> Discovery:
        """The discovered values, most frequent first, with counts, SEs and ``level`` CIs.

        ``threshold``: the least estimated count reported; None reports the
        values whose count is significantly above 0 (one-sided z test at 5%,
        Bonferroni over every candidate value: PEM's every found item,
        SFP's every candidate of the word sketch). What it controls: the family-wise error per call, the
        probability that any reported value has true count 0, is at most 5%.
        The test is valid for this sketch's fixed hashes: the tested
        estimates (and PEM's at every level) are freed of the collision bias
        of the significant values first
        (:meth:`~deniable.mechanisms._sketch.Sketch.without_collisions`);
        without that, a candidate sharing buckets with a frequent value is
        shifted by a fixed amount the seed-averaged variance does not cover.
        ``top``: at most that many. A string cut at ``max_length`` and the same text uncut are
        different rows (``truncated`` tells them apart).
        """
        if not isinstance(stat, HeavyStat):
            raise TypeError(f"identify needs a HeavyStat aggregate; got {type(stat).__name__}")
        stat.require(HeavyStat, self.fingerprint)
        kept, f, se, tests = self.protocol.candidates(stat)
        n = stat.n
        order = np.argsort(-f, kind="stable")[: self.top_k]
        if threshold is None:
            keep = f[order] > z_for(0.05 / max(tests, 1), two_sided=False) * se[order]
        else:
            keep = f[order] * n >= threshold
        idx = order[np.flatnonzero(keep)][:top]
        decoded = [self.items_of.decode(kept[i]) for i in idx]
        z = z_for(1 - level)
        return Discovery(
            tuple(v for v, _ in decoded), np.array([c for _, c in decoded], dtype=bool), f[idx] * n, se[idx] * n,
            (f[idx] - z * se[idx]) * n, (f[idx] + z * se[idx]) * n, n, level,
        )

    def estimate_from(self, stat: HeavyStat, target: Any = "population") -> Discovery:
        """What :meth:`identify` finds with its defaults (the contract's estimate; ``target``: the population
        of devices, the only one discovery estimates for)."""
        if check_target(target) != "population":
            raise ValueError("heavy-hitter discovery estimates for target 'population' only; got 'respondents'")
        return self.identify(stat)
