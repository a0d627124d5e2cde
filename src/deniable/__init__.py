"""deniable: local differential privacy by randomized response.

>>> import deniable as dn
>>> m = dn.BinaryRR(prob=0.75)
>>> round(m.epsilon, 6)
1.098612

Importing the package is light: every module imported here needs only numpy
at import time (scipy is imported inside the functions that use it), so the
names below are imported eagerly. The optional parts (``deniable.scale``,
``deniable.plot``, ``deniable.server``, ``deniable.client``, the command
line) are imported by name and import the core, never the other way round.
Exceptions raised on purpose derive from :class:`DeniableError`, warnings
from :class:`DeniableWarning` (see :mod:`deniable.errors`). ``dn.audit`` and
``dn.simulate`` are the modules :mod:`deniable.audit` and
:mod:`deniable.simulate`; calling one calls its function of the same name.
"""

from typing import TYPE_CHECKING

from deniable import survey
from deniable._accelerate import accelerator, numba_available, set_accelerator
from deniable._allocation import AllocationComparison, compare_allocations
from deniable._client_state import ClientState, FileStore, MemoryStore, StateStore, load_or_create
from deniable._compare import (
    ChiSquareTest,
    Comparison,
    SlicedComparison,
    adjust_p_values,
    compare,
    difference_sample_size,
)
from deniable._consistency import project_simplex
from deniable._debias import debias_binary, debias_categorical
from deniable._detection import (
    Detection,
    change_test,
    frequency_test,
    repeated_reports_test,
    supporting_all_test,
    unary_count_test,
)
from deniable._estimate import Estimate, HistogramEstimate, MeanEstimate, SupportCounts
from deniable._joint import IndependenceTest, Joint, JointEstimate, MarginalEstimate
from deniable._manipulation import Manipulation
from deniable._marginal_release import MarginalRelease
from deniable._marginals import Association, MarginalTable
from deniable._plan import MechanismChoice, best_mechanism, best_numeric_mechanism, sample_size
from deniable._privacy import PrivacyBudget, compose
from deniable._range_plan import RangeChoice, best_range_mechanism
from deniable._recovery import estimate_fake_fraction, recover
from deniable._release_estimate import ReleaseEstimate
from deniable._results import ConfidenceInterval
from deniable._sequences import ConfidenceSequence
from deniable._shuffle import shuffle_epsilon
from deniable._slices import SlicedEstimate
from deniable._weighted_estimate import WeightedEstimate, WeightedMeanEstimate
from deniable.audit import AuditResult
from deniable.errors import (
    AggregateError,
    BudgetError,
    CategoryError,
    ConfigError,
    ConvergenceWarning,
    DeniableError,
    DeniableWarning,
    FieldReportError,
    PowerApproximationWarning,
    ReportError,
    SeparationError,
    StateError,
)
from deniable.heavy import Discovery, FrequentItems, FrequentItemsets, FrequentSets, HeavyHitters
from deniable.mechanisms import (
    BLH,
    GRR,
    LGRR,
    LOSUE,
    OLH,
    OUE,
    PCKV,
    RAPPOR,
    SUE,
    BinaryRR,
    CountMeanSketch,
    DBitFlip,
    Duchi,
    FrequencyOracle,
    Gaussian,
    HaarHRR,
    HadamardCountMeanSketch,
    HadamardResponse,
    HierarchicalHistogram,
    Hybrid,
    ItemEstimate,
    KeyValueEstimate,
    Laplace,
    MeanStat,
    NumericMechanism,
    OneBitMean,
    Piecewise,
    QuantileEstimate,
    QueryEstimate,
    RangeEstimate,
    RapporEstimate,
    SetValued,
    SquareWave,
    SubsetSelection,
    best_set_length,
)
from deniable.wire import from_config

if TYPE_CHECKING:
    from deniable.audit import audit
    from deniable.simulate import simulate
else:  # the modules, which call these functions when called (see deniable._callable_module)
    from deniable import audit, simulate

__version__ = "0.1.0"

__all__ = [
    "survey",
    "BinaryRR",
    "GRR",
    "SUE",
    "OUE",
    "BLH",
    "OLH",
    "HadamardResponse",
    "SubsetSelection",
    "RAPPOR",
    "CountMeanSketch",
    "HadamardCountMeanSketch",
    "LGRR",
    "LOSUE",
    "OneBitMean",
    "DBitFlip",
    "HeavyHitters",
    "Joint",
    "JointEstimate",
    "MarginalEstimate",
    "IndependenceTest",
    "MarginalRelease",
    "ReleaseEstimate",
    "Discovery",
    "FrequencyOracle",
    "Laplace",
    "Gaussian",
    "Duchi",
    "Piecewise",
    "Hybrid",
    "SquareWave",
    "NumericMechanism",
    "MeanEstimate",
    "MeanStat",
    "HistogramEstimate",
    "best_numeric_mechanism",
    "Estimate",
    "RapporEstimate",
    "ConfidenceInterval",
    "SupportCounts",
    "AuditResult",
    "MechanismChoice",
    "PrivacyBudget",
    "audit",
    "best_mechanism",
    "compare_allocations",
    "AllocationComparison",
    "compose",
    "debias_binary",
    "debias_categorical",
    "from_config",
    "project_simplex",
    "sample_size",
    "shuffle_epsilon",
    "simulate",
    "accelerator",
    "numba_available",
    "set_accelerator",
    "ClientState",
    "StateStore",
    "FileStore",
    "MemoryStore",
    "load_or_create",
    "DeniableError",
    "BudgetError",
    "ConfigError",
    "ReportError",
    "CategoryError",
    "AggregateError",
    "StateError",
    "FieldReportError",
    "SeparationError",
    "DeniableWarning",
    "ConvergenceWarning",
    "PowerApproximationWarning",
    "Manipulation",
    "Detection",
    "unary_count_test",
    "frequency_test",
    "change_test",
    "supporting_all_test",
    "repeated_reports_test",
    "recover",
    "estimate_fake_fraction",
    "SlicedEstimate",
    "compare",
    "Comparison",
    "ChiSquareTest",
    "adjust_p_values",
    "difference_sample_size",
    "ConfidenceSequence",
    "MarginalTable",
    "Association",
    "SlicedComparison",
    "HierarchicalHistogram",
    "HaarHRR",
    "RangeEstimate",
    "QueryEstimate",
    "QuantileEstimate",
    "RangeChoice",
    "best_range_mechanism",
    "SetValued",
    "ItemEstimate",
    "best_set_length",
    "FrequentItems",
    "FrequentItemsets",
    "FrequentSets",
    "PCKV",
    "KeyValueEstimate",
    "WeightedEstimate",
    "WeightedMeanEstimate",
]
