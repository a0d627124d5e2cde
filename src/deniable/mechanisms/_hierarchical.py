"""Hierarchical histograms for range queries (Cormode, Kulkarni & Srivastava, VLDB 2019; Hay et al. 2010).

The ``D = B^h`` bins of ``[low, high]`` are the leaves of a tree of branching factor ``B``; level
``l = 1..h`` has ``B^l`` nodes, each the union of ``B^(h-l)`` bins (the root, level 0, holds everyone).
**Level sampling**: each respondent picks one level uniformly at random and reports the node holding
their value through that level's frequency oracle (OUE or OLH over the ``B^l`` nodes) at the full
``epsilon``; the level is drawn independently of the value, so the report is ``epsilon``-LDP.

**Estimate.** Level ``l`` has ``n_l`` reports and the oracle's unbiased node shares ``y_l`` with node
variance ``sigma_l^2 = Var*/n_l`` (up to the shares' own term). **Constrained inference** (Hay et al.,
weighted for unequal levels) makes the tree consistent (every node the sum of its children, the root 1)
by generalized least squares, in two linear passes: bottom-up, ``z_h = y_h`` and
``z_l = alpha_l y_l + (1 - alpha_l) C z_{l+1}`` (``C`` sums each node's children) with
``alpha_l = S_l / (sigma_l^2 + S_l)``, ``S_l = B tau_{l+1}^2``, ``tau_h^2 = sigma_h^2`` and
``tau_l^2 = alpha_l sigma_l^2``; top-down from the root ``x_0 = 1``,
``x_{l+1} = z_{l+1} + E (x_l - C z_{l+1}) / B`` (``E`` copies a node to its children). The leaves
``x_h`` are linear in the ``y_l`` with weights that depend only on the ``n_l``, so every query
``w^T x_h = sum_l u_l^T y_l + u_0`` is unbiased given the ``n_l``; the weights ``u_l`` come from the
adjoint of the two passes.

**Variance** of a query (population target), exactly for OUE (its bits are independent given the
value): ``Var = sum_l u_l^T Sigma_l u_l`` with
``Sigma_l = [diag(lambda (1 - lambda)) - g^2 (f f^T - diag(f^2))] / (n_l g^2)``,
``g = p* - q*``, ``lambda = q* + g f`` the support rates. For OLH the off-diagonal term is that of
hashes independent on three points; the linear hash family is only pairwise independent, so this is an
approximation there (checked in simulation). Plugged in at ``lambda^ = C/n_l`` and ``clip(y_l, 0, 1)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable import _privacy as privacy
from deniable import _randomness as randomness
from deniable import wire
from deniable._aggregates import SupportCounts
from deniable.mechanisms._frequency import FrequencyOracle
from deniable.mechanisms._hashing import OLH, REPORT_DTYPE
from deniable.mechanisms._ranges import RangeEstimate, RangeMechanism
from deniable.mechanisms._unary import OUE
from deniable.mechanisms.registry import register

__all__ = ["HierarchicalHistogram", "HIERARCHY_ORACLES", "OUE_MAX_BINS"]

HIERARCHY_ORACLES: dict[str, Any] = {"oue": OUE, "olh": OLH}
"""The level oracles: OUE (lowest variance, ``B^l`` bits per report) and OLH (a seed and a bucket)."""
OUE_MAX_BINS = 4096
"""``oracle="auto"`` takes OUE (the lower variance) up to this many bins and OLH (short reports) above."""


def _levels_of(bins: int, branching: int) -> int:
    h, size = 0, 1
    while size < bins:
        size *= branching
        h += 1
    if size != bins:
        raise ValueError(f"bins must be a power of branching={branching} for HierarchicalHistogram; got {bins!r}")
    return h


@register(kind="range", decode_cost="O(n) support counts per level", browser=True, required={"epsilon"},
          optional={"bins", "branching"}, name="hierarchical")
class HierarchicalHistogram(RangeMechanism):
    r"""Hierarchical histogram over ``bins`` bins of ``[low, high]`` with level sampling (module docstring).

    ``HierarchicalHistogram(low, high, bins=1024, epsilon=1.0, branching=4, oracle="auto")``: ``bins``
    must be a power of ``branching``; ``oracle`` is ``"oue"``, ``"olh"`` or ``"auto"`` (OUE up to
    :data:`OUE_MAX_BINS` bins, else OLH). A true value is a number in ``[low, high]``; a report is
    ``(level, the level oracle's report)``; ``estimate`` returns a :class:`~deniable.RangeEstimate`.

    Parameters
    ----------
    low, high : float
        The range of the values, ``low < high``.
    epsilon : float
        The privacy loss of one report, ``> 0``.
    bins : int, default 1024
        The number of equal bins, a power of ``branching``.
    branching : int, default 4
        The tree's branching factor (at least 2).
    oracle : {"auto", "oue", "olh"}, default "auto"
        The frequency oracle of every level; ``"auto"`` is OUE up to
        :data:`OUE_MAX_BINS` bins, else OLH.

    Raises
    ------
    ValueError
        A bad range, ``bins`` not a power of ``branching``, an unknown
        ``oracle`` or a bad ``epsilon``.

    Notes
    -----
    Each respondent reports the node holding their value at one level
    drawn uniformly, at the full :math:`\varepsilon`. Constrained inference
    makes the tree consistent; a query :math:`w^\top x_h = \sum_l u_l^\top y_l + u_0`
    has variance :math:`\sum_l u_l^\top \Sigma_l u_l` (module docstring).

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> rng = np.random.default_rng(0)
    >>> m = dn.HierarchicalHistogram(0, 100, bins=16, epsilon=2.0, branching=4)
    >>> m
    HierarchicalHistogram([0, 100], bins=16, branching=4, OUE, epsilon=2)
    >>> est = m.estimate(m.privatize_many(rng.uniform(0, 100, 20_000), rng=rng))
    >>> below = est.cdf([25, 50, 75])
    >>> bool(np.all(np.abs(below.estimate - [0.25, 0.5, 0.75]) < 5 * below.std_error))
    True
    """

    wire_id = "hierarchical-histogram"
    report_kind = "level"

    def __init__(
        self, low: float, high: float, *, epsilon: float, bins: int = 1024, branching: int = 4,
        oracle: str = "auto",
    ) -> None:
        self._set_bounds(low, high, bins, "HierarchicalHistogram")
        if isinstance(branching, bool) or not isinstance(branching, (int, np.integer)) or branching < 2:
            raise ValueError(f"branching must be an integer >= 2 for HierarchicalHistogram; got {branching!r}")
        self.branching = int(branching)
        h = _levels_of(self._bins, self.branching)
        eps = privacy.check_epsilon(epsilon, owner="HierarchicalHistogram")
        if oracle == "auto":
            oracle = "oue" if self._bins <= OUE_MAX_BINS else "olh"
        if oracle not in HIERARCHY_ORACLES:
            raise ValueError(f"oracle must be 'auto', 'oue' or 'olh' for HierarchicalHistogram; got {oracle!r}")
        cls = HIERARCHY_ORACLES[oracle]
        self._set_oracles([cls(self.branching**level, epsilon=eps) for level in range(1, h + 1)])

    def _set_oracles(self, oracles: list[FrequencyOracle]) -> None:
        self.oracles = tuple(oracles)
        self.oracle = "oue" if isinstance(oracles[0], OUE) else "olh"
        self.height = len(oracles)
        if self.oracle == "oue":
            self._width = (self._bins + 7) // 8
            self._dtype = np.dtype([("level", "u1"), ("bits", "u1", (self._width,))])
        else:
            self._dtype = np.dtype([("level", "u1"), ("seed", "<u8"), ("value", "<u4")])

    @property
    def epsilon(self) -> float:
        return max(float(o.epsilon) for o in self.oracles)

    @property
    def report_bits(self) -> int:
        return max(1, (self.height - 1).bit_length()) + max(int(o.report_bits) for o in self.oracles)

    # ------------------------------------------------------------ privatize
    def privatize_many(self, values: Any, rng: randomness.RNGLike = None) -> NDArray[Any]:
        """Randomize many values: each picks a level uniformly and reports its node there."""
        leaves = self.bin_of(values)
        source = randomness.resolve(rng)
        levels = randomness.uniform_below(self.height, leaves.size, source).astype(np.int64) + 1
        out = np.zeros(leaves.size, dtype=self._dtype)
        out["level"] = levels
        for level, oracle in enumerate(self.oracles, start=1):
            rows = np.flatnonzero(levels == level)
            if rows.size == 0:
                continue
            nodes = leaves[rows] // self.branching ** (self.height - level)
            reports = oracle._sample(nodes, source)
            if self.oracle == "oue":
                out["bits"][rows, : reports.shape[1]] = reports
            else:
                out["seed"][rows], out["value"][rows] = reports["seed"], reports["value"]
        return out

    # -------------------------------------------------------------- reports
    def _inner(self, checked: NDArray[Any], level: int, rows: Any) -> NDArray[Any]:
        """The level oracle's own reports of ``rows`` (all at ``level``)."""
        if self.oracle == "oue":
            width = self.oracles[level - 1].report_bytes  # type: ignore[attr-defined]
            return np.ascontiguousarray(checked["bits"][rows, :width])
        inner = np.empty(np.size(rows), dtype=REPORT_DTYPE)
        inner["seed"], inner["value"] = checked["seed"][rows], checked["value"][rows]
        return inner

    def _validate(self, reports: Any) -> NDArray[Any]:
        arr = reports if isinstance(reports, np.ndarray) else np.asarray(reports)
        if arr.dtype.names is None or set(arr.dtype.names) != set(self._dtype.names or ()) or arr.ndim != 1:
            if isinstance(reports, (list, tuple)) and all(isinstance(r, dict) for r in reports):
                return self._reports_from_json(list(reports))
            raise ValueError(
                f"{self.name} reports must be a 1-D structured array with fields {list(self._dtype.names or ())}; "
                f"got {arr.dtype} with shape {arr.shape}"
            )
        arr = arr.astype(self._dtype, copy=False)
        bad = (arr["level"] < 1) | (arr["level"] > self.height)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{self.name} report {i}: level must be in 1..{self.height}; got {int(arr['level'][i])}")
        for level, oracle in enumerate(self.oracles, start=1):
            rows = np.flatnonzero(arr["level"] == level)
            if rows.size == 0:
                continue
            if self.oracle == "oue":
                width = oracle.report_bytes  # type: ignore[attr-defined]
                spill = arr["bits"][rows, width:].any(axis=1)
                if spill.any():
                    i = int(rows[np.flatnonzero(spill)[0]])
                    raise ValueError(f"{self.name} report {i} sets bits beyond level {level}'s {oracle.k} nodes")
            try:
                oracle._validate(self._inner(arr, level, rows))
            except ValueError as exc:
                raise ValueError(f"{self.name} level-{level} {exc}") from None
        return np.ascontiguousarray(arr)

    def _report_to_json(self, report: Any) -> dict[str, Any]:
        level = int(report["level"])
        oracle = self.oracles[level - 1]
        if self.oracle == "oue":
            inner: Any = oracle._report_to_json(report["bits"][: oracle.report_bytes])  # type: ignore[attr-defined]
        else:
            inner = {"seed": int(report["seed"]), "value": int(report["value"])}
        return {"level": level, "report": inner}

    def _reports_from_json(self, items: list[Any]) -> NDArray[Any]:
        out = np.zeros(len(items), dtype=self._dtype)
        levels = np.zeros(len(items), dtype=np.int64)
        for i, item in enumerate(items):
            if not isinstance(item, dict) or item.keys() != {"level", "report"}:
                raise ValueError(f"{self.name} report {i} must be {{'level': int, 'report': ...}}; got {item!r:.60}")
            level = item["level"]
            if type(level) is not int or not 1 <= level <= self.height:
                raise ValueError(f"{self.name} report {i}: level must be an integer in 1..{self.height}; got {level!r}")
            levels[i] = level
        out["level"] = levels
        for level, oracle in enumerate(self.oracles, start=1):
            rows = np.flatnonzero(levels == level)
            if rows.size == 0:
                continue
            try:
                inner = oracle._reports_from_json([items[i]["report"] for i in rows])
            except ValueError as exc:
                raise ValueError(f"{self.name} level-{level} {exc}") from None
            if self.oracle == "oue":
                out["bits"][rows, : inner.shape[1]] = inner
            else:
                out["seed"][rows], out["value"][rows] = inner["seed"], inner["value"]
        return out

    # ------------------------------------------------------------ aggregate
    def _aggregate_checked(self, checked: NDArray[Any]) -> SupportCounts:
        """``[n_1..n_h, C_1, ..., C_h]``: each level's report count, then its oracle's support counts."""
        per_level, counts = [], []
        for level, oracle in enumerate(self.oracles, start=1):
            rows = np.flatnonzero(checked["level"] == level)
            per_level.append(rows.size)
            counts.append(oracle._support_counts(self._inner(checked, level, rows)) if rows.size
                          else np.zeros(oracle.k, dtype=np.int64))
        return SupportCounts(self.fingerprint, np.concatenate([np.array(per_level, dtype=np.int64), *counts]),
                             int(len(checked)))

    @property
    def _size(self) -> int:
        return self.height + sum(o.k for o in self.oracles)

    # ------------------------------------------------------------- estimate
    def _gap(self) -> tuple[float, float]:
        p, q = self.oracles[0].support_rates()
        return float(p[0]), float(q[0])

    def _alphas(self, per_level: NDArray[Any]) -> NDArray[np.float64]:
        """``alpha_l`` of the bottom-up pass (index ``l - 1``; the leaves' is 1, or 0 without reports).

        A level without reports has infinite variance: weight 0 on it, and its parent takes only its own
        estimate.
        """
        p, q = self._gap()
        with np.errstate(divide="ignore"):
            sigma2 = q * (1 - q) / (p - q) ** 2 / np.asarray(per_level, dtype=float)
        alpha = np.ones(self.height)
        tau2 = sigma2[-1]
        if not np.isfinite(tau2):
            alpha[-1] = 0.0
        for level in range(self.height - 1, 0, -1):
            spread, own = self.branching * tau2, sigma2[level - 1]
            if np.isfinite(own):
                alpha[level - 1] = 1.0 if not np.isfinite(spread) else spread / (own + spread)
                tau2 = alpha[level - 1] * own
            else:
                alpha[level - 1], tau2 = 0.0, spread
        return alpha

    def _children_sum(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        return x.reshape(x.shape[0] // self.branching, self.branching, *x.shape[1:]).sum(axis=1)

    def _consistent(self, ys: list[NDArray[np.float64]], alpha: NDArray[np.float64]) -> NDArray[np.float64]:
        """The leaves after constrained inference (module docstring)."""
        z = [np.empty(0)] * (self.height + 1)
        z[self.height] = alpha[-1] * ys[-1]
        for level in range(self.height - 1, 0, -1):
            a = alpha[level - 1]
            z[level] = a * ys[level - 1] + (1 - a) * self._children_sum(z[level + 1])
        x = np.ones(1)
        for level in range(1, self.height + 1):
            x = z[level] + np.repeat(x - self._children_sum(z[level]), self.branching, axis=0) / self.branching
        return x

    def _adjoint(self, w: NDArray[np.float64], alpha: NDArray[np.float64]) -> tuple[list[NDArray[np.float64]],
                                                                                    NDArray[np.float64]]:
        """Weights ``u_l`` (level ``l``: nodes x queries) and the constant ``u_0`` of queries ``w`` (bins x queries)."""
        B = self.branching
        gx = [np.empty(0)] * (self.height + 1)
        gx[self.height] = w
        for level in range(self.height - 1, -1, -1):
            gx[level] = self._children_sum(gx[level + 1]) / B

        def centred(g: NDArray[np.float64]) -> NDArray[np.float64]:  # (I - E C / B) g
            return g - np.repeat(self._children_sum(g), B, axis=0) / B

        gz = centred(gx[1])
        u = []
        for level in range(1, self.height + 1):
            if level > 1:
                gz = centred(gx[level]) + (1 - alpha[level - 2]) * np.repeat(gz, B, axis=0)
            u.append(gz)
        weights = [alpha[level - 1] * u[level - 1] for level in range(1, self.height + 1)]  # the leaves' alpha: 1
        return weights, gx[0][0]

    def _level_variance(self, u: NDArray[np.float64], rate: NDArray[np.float64], f: NDArray[np.float64],
                        n_level: float) -> NDArray[np.float64]:
        """``u^T Sigma_l u`` for each column of ``u`` (module docstring)."""
        p, q = self._gap()
        g = p - q
        u2 = u * u
        diag = (rate * (1 - rate)) @ u2 + g * g * (f * f) @ u2
        return (diag - g * g * (f @ u) ** 2) / (n_level * g * g)

    def estimate_from(self, stat: SupportCounts, target: Any = "population") -> RangeEstimate:
        """The bins' consistent estimate, with every query's standard error (module docstring)."""
        self._population(target)
        stat = self._check_stat(stat, self._size)
        per_level = self._levels(stat, self.height)
        p, q = self._gap()
        rates, ys, start = [], [], self.height
        for level, oracle in enumerate(self.oracles, start=1):
            counts = stat.counts[start : start + oracle.k]
            start += oracle.k
            rate = counts / max(1, per_level[level - 1])
            rates.append(rate)
            ys.append((rate - q) / (p - q) if per_level[level - 1] else np.zeros(oracle.k))
        alpha = self._alphas(per_level)
        leaves = self._consistent(ys, alpha)
        plug = [np.clip(y, 0.0, 1.0) for y in ys]

        def moments(w: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
            weights, constant = self._adjoint(w, alpha)
            if (per_level == 0).any():  # not unbiased: no standard error
                return w.T @ leaves, np.full(w.shape[1], np.nan)
            var = sum(self._level_variance(u, r, f, m)
                      for u, r, f, m in zip(weights, rates, plug, per_level, strict=True))
            return w.T @ leaves, np.sqrt(np.maximum(var, 0.0))

        return RangeEstimate(self.name, self.epsilon, self.edges, leaves, stat.n, moments,
                             f"hierarchical, B={self.branching}, {self.oracle.upper()}")

    def _theory_variance(self, n: int, f: NDArray[np.float64], w: NDArray[np.float64]) -> NDArray[np.float64]:
        p, q = self._gap()
        per_level = np.full(self.height, n / self.height)
        weights, _ = self._adjoint(w, self._alphas(per_level))
        total = np.zeros(w.shape[1])
        for level, u in enumerate(weights, start=1):
            shares = f.reshape(-1, self.branching ** (self.height - level)).sum(axis=1)
            total += self._level_variance(u, q + (p - q) * shares, shares, per_level[level - 1])
        return total

    def _draw_levels(self, f: NDArray[np.float64], n: int, rng: np.random.Generator) -> list[Any] | None:
        """OUE: level counts multinomial, node counts multinomial, support counts binomial given them."""
        if self.oracle != "oue":
            return None
        p, q = self._gap()
        per_level = rng.multinomial(n, np.full(self.height, 1.0 / self.height))
        parts = [per_level]
        for level, oracle in enumerate(self.oracles, start=1):
            true = rng.multinomial(per_level[level - 1], f.reshape(oracle.k, -1).sum(axis=1))
            parts.append(rng.binomial(true, p) + rng.binomial(per_level[level - 1] - true, q))
        return parts

    # ----------------------------------------------------------- exact view
    def transition_matrix(self) -> tuple[list[Any], NDArray[np.float64]]:
        """``(outputs, P)``: ``P[x, (l, y)] = P_l(y | node_l(x)) / h`` over the bins ``x`` (small trees only)."""
        outputs: list[Any] = []
        blocks = []
        for level, oracle in enumerate(self.oracles, start=1):
            outs, matrix = oracle.transition_matrix()
            nodes = np.arange(self._bins) // self.branching ** (self.height - level)
            outputs += [(level, o) for o in outs]
            blocks.append(matrix[nodes] / self.height)
        return outputs, np.concatenate(blocks, axis=1)

    # ----------------------------------------------------------------- wire
    def _params(self) -> dict[str, Any]:
        return {"bins": self._bins, "branching": self.branching, "levels": [o.to_config() for o in self.oracles]}

    @classmethod
    def _from_params(cls, domain: Any, params: dict[str, Any]) -> HierarchicalHistogram:
        if not (isinstance(domain, list) and len(domain) == 2):
            raise ValueError(f"config field 'domain' must be [low, high] for {cls.wire_id}; got {domain!r:.60}")
        self = cls.__new__(cls)
        self._set_bounds(domain[0], domain[1], params.get("bins"), "HierarchicalHistogram")
        branching = params.get("branching")
        if isinstance(branching, bool) or not isinstance(branching, int) or branching < 2:
            raise ValueError(f"config field 'params.branching' must be an integer >= 2; got {branching!r}")
        self.branching = branching
        h = _levels_of(self._bins, branching)
        configs = params.get("levels")
        if not isinstance(configs, list) or len(configs) != h:
            raise ValueError(f"config field 'params.levels' must list {h} level oracles; got {configs!r:.60}")
        oracles = [wire.from_config(c) for c in configs]
        kinds = {type(o) for o in oracles}
        for level, o in enumerate(oracles, start=1):
            if type(o) not in HIERARCHY_ORACLES.values() or len(kinds) != 1 or not (
                o.domain_obj.is_range and o.k == branching**level
            ):
                raise ValueError(
                    f"config field 'params.levels' entry {level - 1} must configure the level oracle (OUE or OLH, "
                    f"the same for every level) on {branching**level} nodes; got {o!r:.60}"
                )
        self._set_oracles(oracles)
        return self

    def __repr__(self) -> str:
        return (f"HierarchicalHistogram([{self.low:.6g}, {self.high:.6g}], bins={self._bins}, "
                f"branching={self.branching}, {self.oracle.upper()}, epsilon={self.epsilon:.4g})")
