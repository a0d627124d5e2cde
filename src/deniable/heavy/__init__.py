"""Discovery of frequent values over an unbounded domain (heavy hitters).

:class:`HeavyHitters` finds the frequent strings or integers among devices
that each send one randomized report, by PEM or Apple's SFP over a
count-mean sketch (values become fixed-length items of symbols);
:class:`HeavyStat` is its mergeable aggregate and :class:`Discovery` its
result. :func:`discovery_sweep` measures recall and precision on simulated
Zipf data (:func:`zipf_strings`), as the plot
:func:`deniable.plot.discovery_quality` draws them.

:class:`FrequentItems` (SVIM) and :class:`FrequentItemsets` (SVSM) find the
frequent items and itemsets of set-valued answers over a known item domain,
in groups of users by padding and sampling (:class:`~deniable.SetValued`);
their result is a :class:`FrequentSets`.
"""

from deniable.heavy._hitters import HeavyHitters
from deniable.heavy._itemsets import FrequentItemsets
from deniable.heavy._quality import discovery_sweep, zipf_strings
from deniable.heavy._results import Discovery, HeavyStat
from deniable.heavy._set_mining import FrequentItems, FrequentSets

__all__ = ["HeavyHitters", "HeavyStat", "Discovery", "discovery_sweep", "zipf_strings", "FrequentItems",
           "FrequentItemsets", "FrequentSets"]
