"""Discovery of frequent values over an unbounded domain (heavy hitters).

:class:`HeavyHitters` (:mod:`deniable.heavy.hitters`) finds the frequent
strings or integers among devices that each send one randomized report, by
PEM or Apple's SFP (:mod:`deniable.heavy.protocols`) over a count-mean
sketch; :class:`HeavyStat` is its mergeable aggregate and :class:`Discovery`
its result (:mod:`deniable.heavy.results`); :mod:`deniable.heavy.items`
says how values become fixed-length items.
"""

from deniable.heavy.hitters import HeavyHitters
from deniable.heavy.results import Discovery, HeavyStat

__all__ = ["HeavyHitters", "HeavyStat", "Discovery"]
