"""Adapters that run the peer LDP libraries the way their own code intends.

One function per (peer, workload). Each takes the domain size ``k`` (values
are the ints ``0..k-1``) and ``epsilon`` and returns a :class:`Peer`: how to
privatize a batch of values with the library's client, how to get the
library's own frequency estimate from those reports, and the library's own
theory for that estimate (formula (A) of the mechanism notes with the
library's ``p*`` and ``q*``), so that ``compare.py`` can hold every library
to its own promise.

The adapters were written from the installed sources (the versions pinned in
``requirements.txt``); ``python benchmarks/peers.py`` checks each one on a
small skewed population (its estimate must be close to the truth), so the
comparison is of correct usage.

Conventions the peers impose, kept visible here:

* pure-LDP maps items to indexes with ``x - 1`` by default; we pass the
  identity. Its estimates are counts, divided by n here.
* multi-freq-ldpy and ldp-toolbox ship only a post-processed estimate (clip
  negatives and rescale to sum 1, "Norm-Mul"). For GRR and unary encoding we
  also compute the plain linear estimate from their reports with their own
  ``p`` and ``q`` (``linear``), which is what formula (A) describes.
* The peers draw from numpy's global Mersenne Twister or :mod:`random`
  (predictable, not a CSPRNG); OpenDP draws from an OS-seeded CSPRNG.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable._estimate import pure_variance

__all__ = ["Peer", "PEERS", "LIBRARIES", "peers_for", "missing_libraries", "HeavyPeer", "heavy_peers"]

Values = NDArray[np.int64]
Freqs = NDArray[np.float64]

#: importable module and the PyPI name of each peer
LIBRARIES = {
    "opendp": "opendp",
    "pure-ldp": "pure_ldp.frequency_oracles",
    "multi-freq-ldpy": "multi_freq_ldpy",
    "ldp-toolbox": "ldp_toolbox",
}

NUMPY_RNG = "numpy global Mersenne Twister (not a CSPRNG)"
PY_RNG = "Python random / numpy global Mersenne Twister (not a CSPRNG)"
OPENDP_RNG = "OS-seeded CSPRNG (OpenDP)"


@dataclass(frozen=True)
class Peer:
    """One library's implementation of one workload.

    ``estimate`` returns frequencies aligned with ``0..k-1``. ``unbiased``
    says whether that estimate is the linear (unbiased) one; ``theory_p``,
    ``theory_q`` are the library's own support probabilities (None where its
    mechanism is not a pure frequency oracle). ``linear`` (optional) is the
    linear estimate from the same reports, for peers whose shipped estimate
    is post-processed. ``bytes_per_report`` bounds memory when the harness
    sizes a run. ``own_estimator`` is False where the library ships no
    estimator and ``estimate`` is the textbook formula written here (then it
    is not timed against deniable).
    """

    library: str
    mechanism: str
    privatize: Callable[[Values], Any]
    estimate: Callable[[Any], Freqs]
    unbiased: bool
    theory_p: float | None
    theory_q: float | None
    randomness: str
    note: str = ""
    linear: Callable[[Any], Freqs] | None = None
    bytes_per_report: int = 100
    own_estimator: bool = True  # False: the library ships none, ``estimate`` is ours

    def theory_mse(self, n: int, truth: Freqs) -> float | None:
        """Sum over categories of formula (A) with this library's ``p*``, ``q*``."""
        if self.theory_p is None or self.theory_q is None:
            return None
        return float(pure_variance(n, self.theory_p, self.theory_q, truth).sum())


def _linear(counts: Any, n: int, p: float, q: float) -> Freqs:
    return (np.asarray(counts, dtype=float) / n - q) / (p - q)


def _grr_pq(k: int, epsilon: float) -> tuple[float, float]:
    e = math.exp(epsilon)
    return e / (e + k - 1), 1.0 / (e + k - 1)


def _olh_g(epsilon: float) -> int:
    return int(round(math.exp(epsilon))) + 1


# ---------------------------------------------------------------- pure-LDP
def _pure_ldp_run(client: Any, server: Any, k: int) -> tuple[Callable, Callable]:
    def privatize(values: Values) -> list[Any]:
        return [client.privatise(v) for v in values.tolist()]

    def estimate(reports: list[Any]) -> Freqs:
        server.reset()
        server.aggregate_all(reports)
        counts = server.estimate_all(range(k), suppress_warnings=True, normalization=0)
        return np.asarray(counts, dtype=float) / server.n

    return privatize, estimate


def pure_ldp_grr(k: int, epsilon: float) -> Peer:
    from pure_ldp.frequency_oracles.direct_encoding import DEClient, DEServer

    ident = lambda x: x  # noqa: E731
    privatize, estimate = _pure_ldp_run(
        DEClient(epsilon, k, index_mapper=ident), DEServer(epsilon, k, index_mapper=ident), k
    )
    p, q = _grr_pq(k, epsilon)
    return Peer("pure-ldp", "GRR", privatize, estimate, True, p, q, PY_RNG, "DEClient/DEServer")


def _pure_ldp_ue(k: int, epsilon: float, oue: bool) -> Peer:
    from pure_ldp.frequency_oracles.unary_encoding import UEClient, UEServer

    ident = lambda x: x  # noqa: E731
    client = UEClient(epsilon, k, use_oue=oue, index_mapper=ident)
    server = UEServer(epsilon, k, use_oue=oue, index_mapper=ident)
    privatize, estimate = _pure_ldp_run(client, server, k)
    return Peer(
        "pure-ldp", "OUE" if oue else "SUE", privatize, estimate, True, client.p, client.q,
        NUMPY_RNG, f"UEClient/UEServer(use_oue={oue})", bytes_per_report=8 * k + 112,
    )


def pure_ldp_oue(k: int, epsilon: float) -> Peer:
    return _pure_ldp_ue(k, epsilon, True)


def pure_ldp_sue(k: int, epsilon: float) -> Peer:
    return _pure_ldp_ue(k, epsilon, False)


def pure_ldp_olh(k: int, epsilon: float) -> Peer:
    from pure_ldp.frequency_oracles.local_hashing import LHClient, LHServer

    ident = lambda x: x  # noqa: E731
    client = LHClient(epsilon, k, use_olh=True, index_mapper=ident)
    server = LHServer(epsilon, k, use_olh=True, index_mapper=ident)
    privatize, estimate = _pure_ldp_run(client, server, k)
    p = math.exp(epsilon) / (math.exp(epsilon) + client.g - 1)
    return Peer(
        "pure-ldp", "OLH", privatize, estimate, True, p, 1.0 / client.g, PY_RNG,
        f"LHClient/LHServer(use_olh=True), g={client.g}, xxhash32; decode hashes every "
        "report against every item in Python",
    )


def pure_ldp_hr(k: int, epsilon: float) -> Peer:
    from pure_ldp.frequency_oracles.hadamard_response import (
        HadamardResponseClient,
        HadamardResponseServer,
    )

    ident = lambda x: x  # noqa: E731
    server = HadamardResponseServer(epsilon, k, index_mapper=ident)
    client = HadamardResponseClient(epsilon, k, server.get_hash_funcs(), index_mapper=ident)
    privatize, estimate = _pure_ldp_run(client, server, k)
    high = epsilon <= 1
    e = math.exp(epsilon)
    return Peer(
        "pure-ldp", "HR", privatize, estimate, True,
        e / (e + 1) if high else None, 0.5 if high else None, PY_RNG,
        "HadamardResponseClient/Server; "
        + ("high-privacy form (same as deniable)" if high else "general form for eps > 1 "
           "(blocked, not a pure oracle: no formula (A))"),
    )


# -------------------------------------------------------- multi-freq-ldpy
def mfl_grr(k: int, epsilon: float) -> Peer:
    from multi_freq_ldpy.pure_frequency_oracles.GRR import GRR_Aggregator_MI, GRR_Client

    p, q = _grr_pq(k, epsilon)
    return Peer(
        "multi-freq-ldpy", "GRR",
        lambda values: [GRR_Client(v, k, epsilon) for v in values.tolist()],
        lambda reports: np.asarray(GRR_Aggregator_MI(reports, k, epsilon), dtype=float),
        False, p, q, NUMPY_RNG, "GRR_Client / GRR_Aggregator_MI (ships Norm-Mul only)",
        linear=lambda reports: _linear(np.bincount(reports, minlength=k), len(reports), p, q),
    )


def mfl_oue(k: int, epsilon: float) -> Peer:
    from multi_freq_ldpy.pure_frequency_oracles.UE import UE_Aggregator_MI, UE_Client

    p, q = 0.5, 1.0 / (math.exp(epsilon) + 1)
    return Peer(
        "multi-freq-ldpy", "OUE",
        lambda values: [UE_Client(v, k, epsilon, True) for v in values.tolist()],
        lambda reports: np.asarray(UE_Aggregator_MI(reports, epsilon, True), dtype=float),
        False, p, q, NUMPY_RNG, "UE_Client / UE_Aggregator_MI(optimal=True) (ships Norm-Mul only)",
        linear=lambda reports: _linear(np.sum(reports, axis=0), len(reports), p, q),
        bytes_per_report=8 * k + 112,
    )


def mfl_olh(k: int, epsilon: float) -> Peer:
    from multi_freq_ldpy.pure_frequency_oracles.LH import LH_Aggregator_MI, LH_Client

    g = _olh_g(epsilon)
    return Peer(
        "multi-freq-ldpy", "OLH",
        lambda values: [LH_Client(v, k, epsilon, True) for v in values.tolist()],
        lambda reports: np.asarray(LH_Aggregator_MI(reports, k, epsilon, True), dtype=float),
        False, math.exp(epsilon) / (math.exp(epsilon) + g - 1), 1.0 / g, NUMPY_RNG,
        f"LH_Client / LH_Aggregator_MI(optimal=True), g={g}, xxhash32 (ships Norm-Mul only)",
    )


# ------------------------------------------------------------ ldp-toolbox
def ldp_toolbox_grr(k: int, epsilon: float) -> Peer:
    from ldp_toolbox.protocols.frequency.grr import GeneralizedRandomizedResponse

    proto = GeneralizedRandomizedResponse(k, epsilon)
    return Peer(
        "ldp-toolbox", "GRR",
        lambda values: [proto.obfuscate(v) for v in values.tolist()],
        lambda reports: np.asarray(proto.estimate(reports), dtype=float),
        False, proto.p, proto.q, NUMPY_RNG,
        "GeneralizedRandomizedResponse (ships Norm-Mul only)",
        linear=lambda reports: _linear(
            np.bincount(reports, minlength=k), len(reports), proto.p, proto.q
        ),
    )


def ldp_toolbox_oue(k: int, epsilon: float) -> Peer:
    from ldp_toolbox.protocols.frequency.ue import UnaryEncoding

    proto = UnaryEncoding(k, epsilon, optimal=True)
    return Peer(
        "ldp-toolbox", "OUE",
        lambda values: [proto.obfuscate(v) for v in values.tolist()],
        lambda reports: np.asarray(proto.estimate(reports), dtype=float),
        False, proto.p, proto.q, NUMPY_RNG, "UnaryEncoding(optimal=True) (ships Norm-Mul only)",
        linear=lambda reports: _linear(np.sum(reports, axis=0), len(reports), proto.p, proto.q),
        bytes_per_report=8 * k + 112,
    )


def ldp_toolbox_olh(k: int, epsilon: float) -> Peer:
    from ldp_toolbox.protocols.frequency.lh import LocalHashing

    proto = LocalHashing(k, epsilon, optimal=True)
    return Peer(
        "ldp-toolbox", "OLH",
        lambda values: [proto.obfuscate(v) for v in values.tolist()],
        lambda reports: np.asarray(proto.estimate(reports), dtype=float),
        False, proto.p, proto.q, NUMPY_RNG,
        f"LocalHashing(optimal=True), g={proto.g}, xxhash32; decode is one joblib task per "
        "report on all cores (ships Norm-Mul only)",
    )


# ----------------------------------------------------------------- OpenDP
def _opendp() -> Any:
    import opendp.prelude as dp

    dp.enable_features("contrib")
    return dp


def opendp_grr(k: int, epsilon: float) -> Peer:
    """``make_randomized_response`` called once per value; OpenDP ships no estimator,
    so the documented GRR debias ``(C/n - q) / (p - q)`` is applied to the counts."""
    dp = _opendp()
    p, q = _grr_pq(k, epsilon)
    meas = dp.m.make_randomized_response(list(range(k)), prob=p)
    return Peer(
        "opendp", "GRR",
        lambda values: [meas(v) for v in values.tolist()],
        lambda reports: _linear(np.bincount(reports, minlength=k), len(reports), p, q),
        True, p, q, OPENDP_RNG,
        "make_randomized_response, one call per value (estimate: textbook debias, "
        "OpenDP ships none)",
        own_estimator=False,
    )


def opendp_sue(k: int, epsilon: float) -> Peer:
    """``make_randomized_response_bitvec`` (max weight 1) per value, with
    ``f = 2 / (e^(eps/2) + 1)`` so that its privacy map gives ``epsilon``;
    ``debias_randomized_response_bitvec`` estimates counts."""
    dp = _opendp()
    f = 2.0 / (math.exp(epsilon / 2) + 1)
    meas = dp.m.make_randomized_response_bitvec(
        dp.bitvector_domain(max_weight=1), dp.discrete_distance(), f=f
    )
    nbytes = (k + 7) // 8
    eye = np.packbits(np.eye(k, dtype=bool), axis=1, bitorder="little")
    onehot = [bytes(row) for row in eye]

    def estimate(reports: list[bytes]) -> Freqs:
        counts = np.asarray(dp.m.debias_randomized_response_bitvec(reports, f), dtype=float)
        return counts[:k] / len(reports)

    return Peer(
        "opendp", "SUE",
        lambda values: [meas(onehot[v]) for v in values.tolist()],
        estimate, True, 1 - f / 2, f / 2, OPENDP_RNG,
        "make_randomized_response_bitvec + debias_randomized_response_bitvec, one call per value",
        bytes_per_report=nbytes + 40,
    )


def opendp_laplace(low: float, high: float, epsilon: float) -> Peer:
    """Local Laplace mean: ``make_laplace`` (scale ``(high - low) / epsilon``) once per
    clamped value; the estimate is the plain mean of the noisy values (length-1 array)."""
    dp = _opendp()
    meas = dp.m.make_laplace(
        dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float),
        scale=(high - low) / epsilon,
    )
    return Peer(
        "opendp", "Laplace",
        lambda values: [meas(v) for v in np.clip(values, low, high).tolist()],
        lambda reports: np.array([np.mean(reports)]),
        True, None, None, OPENDP_RNG,
        "make_laplace on each clamped value, one call per value; mean of the outputs",
        own_estimator=False,
    )


# ---------------------------------------------------------------- registry
PEERS: dict[str, list[tuple[str, Callable[[int, float], Peer]]]] = {
    "GRR": [
        ("opendp", opendp_grr),
        ("pure-ldp", pure_ldp_grr),
        ("multi-freq-ldpy", mfl_grr),
        ("ldp-toolbox", ldp_toolbox_grr),
    ],
    "OUE": [
        ("pure-ldp", pure_ldp_oue),
        ("multi-freq-ldpy", mfl_oue),
        ("ldp-toolbox", ldp_toolbox_oue),
    ],
    "SUE": [("opendp", opendp_sue), ("pure-ldp", pure_ldp_sue)],
    "OLH": [
        ("pure-ldp", pure_ldp_olh),
        ("multi-freq-ldpy", mfl_olh),
        ("ldp-toolbox", ldp_toolbox_olh),
    ],
    "HR": [("pure-ldp", pure_ldp_hr)],
}


# ------------------------------------------------------- heavy hitters
@dataclass(frozen=True)
class HeavyPeer:
    """A peer's heavy-hitter discovery: ``privatize(values) -> reports`` (its client, value by value),
    ``aggregate(reports)`` (its server, report by report) and ``find(top) -> (values, counts)`` (its
    own search, the ``top`` best of its last step)."""

    library: str
    method: str
    privatize: Callable[[list[str]], list[Any]]
    aggregate: Callable[[list[Any]], None]
    find: Callable[[int], tuple[list[str], list[float]]]
    notes: str


class _ZerosOfNone:
    """numpy, except ``zeros(None)`` is the 0-d array numpy 1 made (numpy 2 rejects a None shape)."""

    def __getattr__(self, name: str) -> Any:
        return getattr(np, name)

    @staticmethod
    def zeros(shape: Any, *args: Any, **kwargs: Any) -> Any:
        return np.zeros(() if shape is None else shape, *args, **kwargs)


def _pure_ldp_numpy2() -> None:
    """pure-LDP 1.2.0's sketch server calls ``np.zeros(None)`` (no domain size): give its base module the
    numpy-1 meaning of that call, leaving every other call to numpy itself."""
    from pure_ldp.core import _freq_oracle_server

    _freq_oracle_server.np = _ZerosOfNone()  # type: ignore[attr-defined]


def pure_ldp_heavy(method: str, epsilon: float, max_length: int, alphabet: str, top_k: int,
                   rows: int = 256, width: int = 1024) -> HeavyPeer:
    """pure-LDP's PEM or SFP over its count-mean sketch (CMSClient/CMSServer), shaped like deniable's.

    pure-LDP's default oracle (OLH) decodes by looping over the whole domain (``|alphabet| ** length``)
    per report, which no workload of interest finishes; its CMS estimates a candidate from the sketch.
    Strings are padded with ``*`` to ``max_length`` and searched over ``alphabet`` plus ``*`` (PEM one
    character per level from the first; SFP one-character fragments at every position, like deniable's
    one-byte ones); the search keeps ``top_k`` prefixes (PEM) or fragments (SFP) per step, and the
    values found are the ``top`` best of the last step, padding stripped.
    """
    from pure_ldp.frequency_oracles.apple_cms import CMSClient, CMSServer

    _pure_ldp_numpy2()
    server_fo = CMSServer(epsilon, rows, width)
    client_fo = CMSClient(epsilon, server_fo.get_hash_funcs(), width)
    if method == "pem":
        from pure_ldp.heavy_hitters.prefix_extending import PEMClient, PEMServer

        letters = [*alphabet, "*"]
        client = PEMClient(epsilon, 0, max_length, 1, alphabet=letters, fo_client=client_fo)
        server: Any = PEMServer(epsilon, 0, max_length, 1, alphabet=letters, fo_server=server_fo)
    else:
        from pure_ldp.heavy_hitters.apple_sfp import SFPClient, SFPServer

        client = SFPClient(epsilon, 1, max_length, alphabet=set(alphabet), fo_client=client_fo)
        server = SFPServer(epsilon, 1, max_length, alphabet=set(alphabet), fo_server=server_fo)

    def privatize(values: list[str]) -> list[Any]:
        return [client.privatise(v) for v in values]

    def aggregate(reports: list[Any]) -> None:
        for report in reports:
            server.aggregate(report)

    def find(top: int) -> tuple[list[str], list[float]]:
        found, counts = server.find_heavy_hitters(k=top_k)
        ranked = sorted(zip(found, np.asarray(counts, dtype=float), strict=True), key=lambda vc: -vc[1])[:top]
        return [v.rstrip("*") for v, _ in ranked], [float(c) for _, c in ranked]

    return HeavyPeer("pure-ldp", method.upper(), privatize, aggregate, find,
                     f"{method.upper()}Client/{method.upper()}Server over CMSClient/CMSServer "
                     f"(rows={rows}, width={width}), alphabet {len(alphabet)} letters + padding; Python random")


def heavy_peers(epsilon: float, max_length: int, alphabet: str, top_k: int) -> list[HeavyPeer]:
    """The installed peers' PEM and SFP (none when pure-LDP is missing)."""
    if "pure-ldp" in missing_libraries():
        return []
    return [pure_ldp_heavy(m, epsilon, max_length, alphabet, top_k) for m in ("pem", "sfp")]


def missing_libraries() -> dict[str, str]:
    """PyPI name -> reason, for each peer library that cannot be imported here."""
    missing = {}
    for name, module in LIBRARIES.items():
        try:
            importlib.import_module(module)
        except Exception as exc:  # an import of a third-party library can fail many ways
            missing[name] = f"{type(exc).__name__}: {exc}"
    return missing


def peers_for(mechanism: str, k: int, epsilon: float) -> list[Peer]:
    """The installed peers' implementations of ``mechanism`` at ``(k, epsilon)``."""
    missing = missing_libraries()
    return [make(k, epsilon) for lib, make in PEERS.get(mechanism, []) if lib not in missing]


def _check(n: int = 20_000, k: int = 16, epsilon: float = 2.0) -> int:
    """Each adapter's estimate on a skewed population must be near the truth.

    The tolerance is 6 standard deviations of the worst category under the
    adapter's own theory (1.5x the GRR-at-this-k one where it has none).
    """
    import deniable as dn
    from deniable.simulate import population_counts

    weights = 1.0 / np.arange(1, k + 1)
    counts = population_counts(weights / weights.sum(), n, k)
    truth = counts / n
    rng = np.random.default_rng(1)
    values = rng.permutation(np.repeat(np.arange(k), counts))
    bad = 0
    for mech, makers in PEERS.items():
        for lib, make in makers:
            if lib in missing_libraries():
                print(f"skip {lib} {mech}: not installed")
                continue
            for eps in (1.0, epsilon):
                peer = make(k, eps)
                reports = peer.privatize(values)
                est = peer.estimate(reports)
                if peer.theory_p is not None:
                    sd = np.sqrt(pure_variance(n, peer.theory_p, peer.theory_q, truth).max())
                else:
                    sd = 1.5 * np.sqrt(dn.GRR(k, epsilon=eps).variance(n, truth).max())
                err = float(np.abs(est - truth).max())
                ok = err < 6 * sd
                bad += not ok
                print(f"{'ok ' if ok else 'BAD'} {lib:16s} {mech:4s} eps={eps:g} "
                      f"max|err|={err:.4f} (6 sd = {6 * sd:.4f}){'' if peer.unbiased else ' [norm-mul]'}")
                if peer.linear is not None:
                    lin = float(np.abs(peer.linear(reports) - truth).max())
                    bad += lin >= 6 * sd
                    print(f"{'ok ' if lin < 6 * sd else 'BAD'} {lib:16s} {mech:4s} eps={eps:g} "
                          f"linear estimate from its reports: max|err|={lin:.4f}")
    return bad


if __name__ == "__main__":
    raise SystemExit(1 if _check() else 0)
