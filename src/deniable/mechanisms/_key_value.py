"""Key-value answers ("for each site you visited, how long did it take?") by PCKV (Gu et al., USENIX Security 2020).

Each respondent holds up to ``max_pairs`` pairs ``<key, value>`` with distinct keys from ``d`` declared keys
and values in ``[-1, 1]``. On the device:

1. **Padding and sampling** to ``ell``: a set of fewer than ``ell`` pairs is padded with the dummy pairs
   ``<d, 0>, <d + 1, 0>, ...`` (keys ``d .. d + ell - 1``) to ``ell`` pairs; one pair of the padded set is
   drawn uniformly (of the set itself when it is longer than ``ell``).
2. **Discretization**: the value ``v`` becomes ``v* = +1`` with probability ``(1 + v) / 2``, else ``-1``.
3. **Correlated perturbation** of key and value over the ``d + ell`` keys:

   * PCKV-UE: a ternary vector ``y``: ``y_k = v*`` w.p. ``a p``, ``-v*`` w.p. ``a (1 - p)``, 0 w.p. ``1 - a``
     at the sampled key; ``+1``, ``-1`` w.p. ``b / 2`` each and 0 w.p. ``1 - b`` at every other key.
   * PCKV-GRR: one pair: w.p. ``a`` the sampled key with ``v*`` (kept w.p. ``p``, flipped otherwise), else
     one of the other ``d + ell - 1`` keys uniformly with a fair random sign.

**The budget split** is the paper's optimized allocation (:func:`ue_parameters`, :func:`grr_parameters`);
``epsilon`` is computed exactly from the sampler's integers and never understated (for GRR it includes the
amplification of sampling one of ``ell`` pairs). The estimators are in
:mod:`deniable.mechanisms._key_value_estimate`.

**Reports.** PCKV-UE: ``2 ceil((d + ell) / 8)`` bytes, the packed ``+1`` bits then the packed ``-1`` bits
(``numpy.packbits`` order; hex on the wire). PCKV-GRR: one integer ``2 j + (s == +1)`` for key position ``j``
and sign ``s``.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable import _randomness as randomness
from deniable._aggregates import SupportCounts
from deniable._estimate import check_target
from deniable._privacy import check_epsilon
from deniable._randomness import Source
from deniable.errors import CategoryError
from deniable.mechanisms._contract import Mechanism
from deniable.mechanisms._domain import Domain
from deniable.mechanisms._key_value_estimate import (
    UE_BITS,
    KeyValueEstimate,
    estimate_counts,
    grr_epsilon,
    grr_parameters,
    rates,
    ue_epsilon,
    ue_parameters,
    variances,
)
from deniable.mechanisms.registry import add_recipe, register
from deniable.wire import _codecs as codecs

__all__ = ["PCKV"]

VARIANTS = ("ue", "grr")
_BLOCK = 1 << 22  # UE report cells drawn at a time


def _build(variant: str) -> Any:
    return lambda domain, params: PCKV(domain, variant=variant, **params)


@register(
    kind="keyvalue",
    browser=True,
    decode_cost="O(n (d + ell)) bit sums (UE) or O(n) (GRR)",
    required={"epsilon", "max_pairs"},
    optional={"ell"},
    name="pckv-ue",
    build=_build("ue"),
)
class PCKV(Mechanism):
    r"""Key-value data by PCKV-UE or PCKV-GRR: key frequencies and per-key mean values.

    A true value is one respondent's pairs: a mapping ``{key: value}`` or a sequence of ``(key, value)``
    pairs with distinct keys, at most ``max_pairs`` of them, each value in ``[-1, 1]`` (rescale other ranges
    first). See the module docstring for the padding, sampling and perturbation.

    Parameters
    ----------
    keys : int or sequence
        ``d`` (the keys are the ints ``0 .. d-1``) or the list of keys (at least 2).
    epsilon : float
        The privacy loss of one report, ``> 0``; the budget is split between key and value as the paper
        optimizes it. The realised ``m.epsilon`` is within 1% of it and never above.
    max_pairs : int
        The most pairs one respondent may hold (``1 .. d``).
    ell : int, optional
        The padding length, ``1 .. max_pairs`` (default ``max_pairs``: unbiased). Longer sets than ``ell``
        are sampled from themselves and their keys are then underestimated.
    variant : {"ue", "grr"}
        Unary encoding (a ternary vector over ``d + ell`` keys, best for many keys) or generalized randomized
        response (one pair, best for few keys).

    Raises
    ------
    ValueError
        Fewer than two keys, ``max_pairs`` or ``ell`` out of range, an unknown ``variant``, or an epsilon the
        integer probabilities cannot realise.

    Notes
    -----
    PCKV-UE: :math:`a = 1/2`, :math:`b = 2/(e^\varepsilon + 3)`, :math:`p = e^\varepsilon/(e^\varepsilon+1)`.
    PCKV-GRR: :math:`e^{\varepsilon_2} = \ell (e^\varepsilon - 1) + 1`, :math:`p = e^{\varepsilon_2}/
    (e^{\varepsilon_2} + 1)`, :math:`a = e^{\varepsilon_1}/(e^{\varepsilon_1} + d + \ell - 1)` with
    :math:`e^{\varepsilon_1} = (e^{\varepsilon_2} + 1)/2`. The frequency estimate is
    :math:`\hat f_k = \ell ((n_1 + n_2)/n - b)/(a - b)` and the mean
    :math:`\hat m_k = (\hat N_1 - \hat N_2)/\hat N` (clipped counts, in :math:`[-1, 1]`).

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> m = dn.PCKV(["a.com", "b.org", "c.net"], epsilon=2.0, max_pairs=2)
    >>> round(m.epsilon, 6)
    2.0
    >>> users = [{"a.com": 0.5, "b.org": -0.2}, {"a.com": 0.9}, {}] * 4000
    >>> est = m.estimate(m.privatize_many(users, rng=np.random.default_rng(0)))
    >>> bool(abs(est.frequencies[0] - 2 / 3) < 5 * est.std_errors[0])
    True
    >>> bool(abs(est.means[0] - 0.7) < 5 * est.mean_std_errors[0])
    True
    """

    wire_id = "pckv"
    stat_type = SupportCounts

    def __init__(
        self, keys: Any, *, epsilon: float, max_pairs: int, ell: int | None = None, variant: str = "ue"
    ) -> None:
        keyset = Domain(keys, "PCKV")
        max_pairs = _positive(max_pairs, "max_pairs", keyset.k)
        ell = max_pairs if ell is None else _positive(ell, "ell", max_pairs)
        eps = check_epsilon(epsilon, owner="PCKV")
        if variant == "ue":
            keep, agree, other = ue_parameters(eps)
            params = {"keep_numerator": keep, "agree_numerator": agree, "other_numerator": other}
        elif variant == "grr":
            agree, flip, other = grr_parameters(eps, keyset.k + ell, ell)
            params = {"agree_numerator": agree, "flip_numerator": flip, "other_numerator": other}
        else:
            raise ValueError(f"variant must be 'ue' or 'grr' for PCKV; got {variant!r}")
        self._setup(keyset, max_pairs, ell, variant, params)

    def _setup(self, keyset: Domain, max_pairs: int, ell: int, variant: str, params: dict[str, int]) -> None:
        self._keys, self.max_pairs, self.ell, self.variant, self._ints = keyset, max_pairs, ell, variant, params
        self.cells = keyset.k + ell
        if variant == "ue":
            self._epsilon = ue_epsilon(params["keep_numerator"], params["agree_numerator"], params["other_numerator"])
            self._bytes = (self.cells + 7) // 8
        else:
            self._epsilon = grr_epsilon(
                params["agree_numerator"], params["flip_numerator"], params["other_numerator"], ell
            )
            self._total = (
                params["agree_numerator"] + params["flip_numerator"] + 2 * (self.cells - 1) * params["other_numerator"]
            )
        self.a, self.b, self.p = rates(variant, params, self.cells)

    # ------------------------------------------------------------- identity
    @property
    def name(self) -> str:
        return f"PCKV-{self.variant.upper()}"

    @property
    def keys(self) -> tuple[Any, ...]:
        """The declared keys, in order; estimates are aligned with them."""
        return tuple(self._keys.values)

    @property
    def epsilon(self) -> float:
        return self._epsilon

    @property
    def report_bits(self) -> int:
        return 2 * self.cells if self.variant == "ue" else int(2 * self.cells - 1).bit_length()

    @property
    def report_kind(self) -> str:  # type: ignore[override]
        """``"bits"`` (PCKV-UE: hex of the packed ``+1`` and ``-1`` bits) or ``"int"`` (PCKV-GRR)."""
        return "bits" if self.variant == "ue" else "int"

    # ------------------------------------------------------------ privatize
    def _pairs(self, users: Any) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.int64]]:
        """Each user's key positions and values (rows padded with -1 and 0) and pair counts."""
        rows = [users] if isinstance(users, Mapping) else list(users)
        names: list[Any] = []
        numbers: list[Any] = []
        lengths = np.zeros(len(rows), dtype=np.int64)
        for i, user in enumerate(rows):
            pairs = _as_pairs(user, i)
            if len(pairs) > self.max_pairs:
                raise ValueError(f"users[{i}] has {len(pairs)} pairs; at most max_pairs={self.max_pairs} are allowed")
            names.extend(k for k, _ in pairs)
            numbers.extend(v for _, v in pairs)
            lengths[i] = len(pairs)
        owner = np.repeat(np.arange(len(rows)), lengths)  # the user of each pair, for messages
        try:
            positions = self._keys.encode(names) if names else np.zeros(0, dtype=np.int64)
        except CategoryError as exc:
            i = int(owner[exc.index or 0])
            raise CategoryError(f"users[{i}]: key {exc}", exc.value, i) from None
        bad = [
            j
            for j, v in enumerate(numbers)
            if type(v) is not float
            and (isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)))
        ]
        values = np.asarray(numbers if not bad else [0.0], dtype=float)
        outside = np.flatnonzero(~((values >= -1) & (values <= 1)))  # NaN too
        if bad or outside.size:
            j = bad[0] if bad else int(outside[0])
            raise ValueError(
                f"users[{int(owner[j])}]: the value of key {names[j]!r} must be a number in [-1, 1]; got {numbers[j]!r}"
            )
        mask = np.arange(self.max_pairs) < lengths[:, None]
        keys = np.full((len(rows), self.max_pairs), -1, dtype=np.int64)
        padded = np.zeros((len(rows), self.max_pairs))
        keys[mask], padded[mask] = positions, values
        ordered = np.sort(keys, axis=1)
        twice = np.flatnonzero(((ordered[:, 1:] == ordered[:, :-1]) & (ordered[:, 1:] >= 0)).any(axis=1))
        if twice.size:
            raise ValueError(f"users[{int(twice[0])}] holds a key twice; a user's keys must be distinct")
        return keys, padded, lengths

    def sample(self, users: Any, rng: randomness.RNGLike = None) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """Padding, sampling and discretization: each user's key position (``0 .. d + ell - 1``) and ``v*``."""
        keys, values, lengths = self._pairs(users)
        source = randomness.resolve(rng)
        bound = np.maximum(lengths, self.ell)
        draw = np.zeros(lengths.size, dtype=np.int64)
        for size in np.unique(bound):  # at most max_pairs distinct bounds
            rows = np.flatnonzero(bound == size)
            draw[rows] = randomness.uniform_below(int(size), rows.size, source).astype(np.int64)
        rows, column = np.arange(lengths.size), np.minimum(draw, self.max_pairs - 1)
        real = draw < lengths
        key = np.where(real, keys[rows, column], self._keys.k + draw - lengths)
        value = np.where(real, values[rows, column], 0.0)
        sign = 2 * randomness.randomized_round((1 + value) / 2, source, overwrite=True) - 1
        return key, sign

    def privatize_many(self, users: Any, rng: randomness.RNGLike = None) -> NDArray[Any]:
        """Randomize many users' pairs (secure randomness unless ``rng`` is given); one report each."""
        source = randomness.resolve(rng)
        key, sign = self.sample(users, source)
        return self._perturb_ue(key, sign, source) if self.variant == "ue" else self._perturb_grr(key, sign, source)

    def privatize(self, value: Any, rng: randomness.RNGLike = None) -> Any:
        """Randomize one user's pairs."""
        return self.privatize_many([value], rng=rng)[0]

    def _perturb_ue(self, key: NDArray[np.int64], sign: NDArray[np.int64], source: Source) -> NDArray[np.uint8]:
        n, cells = key.size, self.cells
        keep, agree, other = (
            np.uint32(self._ints[f]) for f in ("keep_numerator", "agree_numerator", "other_numerator")
        )
        out = np.zeros((n, 2 * self._bytes), dtype=np.uint8)
        step = max(1, _BLOCK // cells)
        for start in range(0, n, step):
            k, s = key[start : start + step], sign[start : start + step]
            r = randomness.uniform_words(k.size * cells, np.uint32, source).reshape(k.size, cells)
            plus, minus = r < other, (r >= other) & (r < 2 * other)
            u = randomness.uniform_words(k.size, np.uint32, source)
            shown = np.where(u < agree, s, np.where(u < keep, -s, 0))
            rows = np.arange(k.size)
            plus[rows, k], minus[rows, k] = shown > 0, shown < 0
            out[start : start + step] = np.concatenate([np.packbits(plus, axis=1), np.packbits(minus, axis=1)], axis=1)
        return out

    def _perturb_grr(self, key: NDArray[np.int64], sign: NDArray[np.int64], source: Source) -> NDArray[np.int64]:
        agree, flip, other = (self._ints[f] for f in ("agree_numerator", "flip_numerator", "other_numerator"))
        r = randomness.uniform_below(self._total, key.size, source).astype(np.int64)  # total <= 2**63
        j = np.maximum(r - (agree + flip), 0) // other  # 0 .. 2 (cells - 1) - 1: another key and a sign
        moved = j // 2
        moved += moved >= key
        out_key = np.where(r < agree + flip, key, moved)
        out_sign = np.where(r < agree, sign, np.where(r < agree + flip, -sign, 1 - 2 * (j % 2)))
        return 2 * out_key + (out_sign > 0)

    # ----------------------------------------------------------------- wire
    def _domain_json(self) -> Any:
        return self._keys.to_json()

    def _domain_key(self) -> Any:
        return self._keys

    def _params(self) -> dict[str, Any]:
        return {"variant": self.variant, "max_pairs": self.max_pairs, "ell": self.ell, **self._ints}

    @classmethod
    def _from_params(cls, domain: Any, params: dict[str, Any]) -> PCKV:
        keyset = Domain(domain, "PCKV")
        max_pairs = _positive(params.get("max_pairs"), "max_pairs", keyset.k)
        ell = _positive(params.get("ell"), "ell", max_pairs)
        variant = params.get("variant")
        names = ("keep", "agree", "other") if variant == "ue" else ("agree", "flip", "other")
        if variant not in VARIANTS:
            raise ValueError(f"config field 'params.variant' must be 'ue' or 'grr'; got {variant!r}")
        given = {f"{n}_numerator": params.get(f"{n}_numerator") for n in names}
        ints: dict[str, int] = {k: v for k, v in given.items() if type(v) is int and v > 0}
        if len(ints) != len(given):
            raise ValueError(f"config fields {sorted(given)} of PCKV-{variant.upper()} must be positive integers")
        ue_ok = variant != "ue" or (
            2 * ints["other_numerator"] < 1 << UE_BITS
            and ints["agree_numerator"] < ints["keep_numerator"] < 1 << UE_BITS
        )
        if not ue_ok:
            raise ValueError(
                "config fields params.keep_numerator, params.agree_numerator and params.other_numerator of PCKV-UE "
                "need agree_numerator < keep_numerator < 2**32 and 2 other_numerator < 2**32"
            )
        self = cls.__new__(cls)
        self._setup(keyset, max_pairs, ell, variant, ints)
        return self

    # -------------------------------------------------------------- reports
    def _validate(self, reports: Any) -> NDArray[Any]:
        arr = np.asarray(reports)
        if self.variant == "grr":
            if arr.size == 0:
                return np.zeros(0, dtype=np.int64)
            if arr.ndim != 1 or arr.dtype.kind not in "iu":
                raise ValueError(
                    f"{self.name} reports must be a 1-D array of integers; got shape {arr.shape} and dtype {arr.dtype}"
                )
            bad = np.flatnonzero((arr < 0) | (arr >= 2 * self.cells))
            if bad.size:
                raise ValueError(
                    f"{self.name} report {int(bad[0])} must be an integer in 0..{2 * self.cells - 1}; "
                    f"got {arr[bad[0]]!r}"
                )
            return arr.astype(np.int64)
        width = 2 * self._bytes
        if arr.size == 0:
            return np.zeros((0, width), dtype=np.uint8)
        if arr.ndim == 2 and arr.dtype.kind == "i" and arr.shape[1] == self.cells:  # ternary, as unpack gives
            if arr.min() < -1 or arr.max() > 1:
                raise ValueError(f"{self.name} ternary reports must hold only -1, 0 and 1")
            return np.concatenate([np.packbits(arr > 0, axis=1), np.packbits(arr < 0, axis=1)], axis=1)
        if arr.ndim != 2 or arr.dtype != np.uint8 or arr.shape[1] != width:
            raise ValueError(
                f"{self.name} reports must be {width} packed bytes (uint8) per row; got shape "
                f"{arr.shape} and dtype {arr.dtype}"
            )
        spare = np.uint8((1 << (8 * self._bytes - self.cells)) - 1)
        plus, minus = arr[:, : self._bytes], arr[:, self._bytes :]
        wrong = (plus[:, -1] & spare) | (minus[:, -1] & spare) | (plus & minus).any(axis=1)
        if wrong.any():
            raise ValueError(
                f"{self.name} report {int(np.flatnonzero(wrong)[0])} sets a padding bit or both +1 and -1 at one key"
            )
        return np.ascontiguousarray(arr)

    def unpack(self, reports: Any) -> NDArray[np.int8]:
        """PCKV-UE reports as an ``(n, d + ell)`` array of -1, 0 and 1."""
        if self.variant != "ue":
            raise ValueError("unpack is for PCKV-UE reports; a PCKV-GRR report is 2 key + (sign == +1)")
        packed = self._checked(reports)
        bits = [
            np.unpackbits(packed[:, s], axis=1, count=self.cells).astype(np.int8)
            for s in (slice(0, self._bytes), slice(self._bytes, None))
        ]
        return bits[0] - bits[1]

    def _reports_from_json(self, items: list[Any]) -> NDArray[Any]:
        if self.variant == "ue":
            return self._validate(codecs.hex_from_json(items, 2 * self._bytes, self.name, 2 * self.cells))
        for i, item in enumerate(items):
            if type(item) is not int:
                raise ValueError(f"{self.name} report {i} must be an integer; got {item!r:.60}")
        return self._validate(np.asarray(items, dtype=np.int64))

    def _report_to_json(self, report: Any) -> Any:
        return codecs.hex_to_json(report) if self.variant == "ue" else int(report)

    # ------------------------------------------------------------ aggregate
    def _aggregate_checked(self, checked: NDArray[Any]) -> SupportCounts:
        d = self._keys.k
        if self.variant == "grr":
            counts = np.bincount(checked, minlength=2 * self.cells)
            plus, minus = counts[1 : 2 * d : 2], counts[0 : 2 * d : 2]
        else:
            plus = np.unpackbits(checked[:, : self._bytes], axis=1, count=d).sum(axis=0, dtype=np.int64)
            minus = np.unpackbits(checked[:, self._bytes :], axis=1, count=d).sum(axis=0, dtype=np.int64)
        return SupportCounts(self.fingerprint, np.concatenate([plus, minus]).astype(np.int64), len(checked))

    def estimate_from(self, stat: SupportCounts, target: Any = "population") -> KeyValueEstimate:
        """Key frequencies and means with standard errors from an aggregate (module docstrings)."""
        if check_target(target) != "population":
            raise ValueError("a PCKV estimate is for target 'population' only; got 'respondents'")
        stat.require(SupportCounts, self.fingerprint)
        if stat.n == 0:
            raise ValueError("no reports: a PCKV estimate needs n >= 1")
        d = self._keys.k
        e = estimate_counts(stat.counts[:d], stat.counts[d:], stat.n, self.ell, (self.a, self.b, self.p))
        return KeyValueEstimate(
            self.name,
            self.epsilon,
            self.keys,
            e["frequencies"],
            e["frequency_se"],
            e["means"],
            e["mean_se"],
            e["sums"],
            e["sum_se"],
            stat.n,
            self.ell,
        )

    def variance(self, n: int, frequencies: Any, means: Any) -> dict[str, NDArray[np.float64]]:
        """Variances for ``n`` respondents at the keys' true shares and means (sets of at most ``ell`` pairs).

        ``"frequency"`` and ``"sum"`` (of ``f^_k`` and of the mean's numerator ``s^_k``) are exact;
        ``"mean"`` is the delta method's, of the ratio ``s^ / f^``.
        """
        f, m = np.asarray(frequencies, dtype=float), np.asarray(means, dtype=float)
        if f.shape != (self._keys.k,) or m.shape != f.shape:
            raise ValueError(
                f"frequencies and means must have one entry per key ({self._keys.k}); got shapes "
                f"{f.shape} and {m.shape}"
            )
        var_f, var_s, var_m = variances(f, m, n, self.ell, (self.a, self.b, self.p))
        return {"frequency": var_f, "sum": var_s, "mean": var_m}

    def transition_matrix(self, users: Sequence[Any]) -> tuple[list[Any], NDArray[np.float64]]:
        """The outputs and ``P[u, y]``, each output's exact probability for each of ``users`` (small only).

        Outputs are the integer reports (GRR) or the ternary vectors (UE, ``d + ell <= 8``).
        """
        keys, values, lengths = self._pairs(users)
        law = self._entry_law()  # (cells, 2, outputs): the report law of each key and sign
        out = np.zeros((lengths.size, law.shape[2]))
        for i in range(lengths.size):
            bound = max(int(lengths[i]), self.ell)
            for j in range(bound):
                real = j < lengths[i]
                k = keys[i, j] if real else self._keys.k + j - lengths[i]
                up = (1 + values[i, j]) / 2 if real else 0.5
                out[i] += (up * law[k, 1] + (1 - up) * law[k, 0]) / bound
        return self._outputs(), out

    def _outputs(self) -> list[Any]:
        if self.variant == "grr":
            return list(range(2 * self.cells))
        if self.cells > 8:
            raise NotImplementedError("transition_matrix enumerates 3**(d + ell) UE outputs; d + ell <= 8 only")
        return list(itertools.product((-1, 0, 1), repeat=self.cells))

    def _entry_law(self) -> NDArray[np.float64]:
        """``law[k, s, o]``: the probability of output ``o`` from the sampled pair ``<k, 2 s - 1>``."""
        a, b, p = self.a, self.b, self.p
        if self.variant == "grr":  # an output o is the key o // 2 with the sign 2 (o % 2) - 1
            y = np.stack([np.arange(2 * self.cells) // 2, 2 * (np.arange(2 * self.cells) % 2) - 1], axis=1)
        else:
            y = np.array(self._outputs())
        law = np.zeros((self.cells, 2, len(y)))
        for k, s in itertools.product(range(self.cells), (0, 1)):
            sign = 2 * s - 1
            if self.variant == "grr":
                law[k, s] = np.where(y[:, 0] == k, np.where(y[:, 1] == sign, a * p, a * (1 - p)), b / 2)
            else:
                rest = np.where(y == 0, 1 - b, b / 2)
                rest[:, k] = np.where(y[:, k] == sign, a * p, np.where(y[:, k] == -sign, a * (1 - p), 1 - a))
                law[k, s] = rest.prod(axis=1)
        return law

    def __repr__(self) -> str:
        return (
            f"PCKV({len(self.keys)} keys, max_pairs={self.max_pairs}, ell={self.ell}, "
            f"variant={self.variant!r}, epsilon={self.epsilon:.4g})"
        )


add_recipe("pckv-grr", "pckv", _build("grr"), required={"epsilon", "max_pairs"}, optional=frozenset({"ell"}))


def _positive(value: Any, name: str, most: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 1 <= value <= most:
        raise ValueError(f"{name} must be an integer in 1..{most} for PCKV; got {value!r}")
    return int(value)


def _as_pairs(user: Any, i: int) -> list[tuple[Any, Any]]:
    """One user's ``(key, value)`` pairs from a mapping or a sequence of pairs; errors name ``users[i]``."""
    if isinstance(user, dict | Mapping):
        return list(user.items())
    if isinstance(user, (str, bytes)) or not hasattr(user, "__iter__"):
        raise ValueError(
            f"users[{i}] must be a mapping {{key: value}} or a list of (key, value) pairs; got {user!r:.60}"
        )
    pairs = list(user)
    for pair in pairs:
        if isinstance(pair, (str, bytes)) or not hasattr(pair, "__len__") or len(pair) != 2:
            raise ValueError(f"users[{i}] must hold (key, value) pairs; got {pair!r:.60}")
    return [(k, v) for k, v in pairs]
