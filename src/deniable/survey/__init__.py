"""Survey analysis of randomized-response designs, as RRreg and rr do it in R.

Designs with RRreg's model names and ``p`` conventions (:mod:`.designs`),
the prevalence (:mod:`.prevalence`; ``deniable.survey.prevalence`` is that module, and
calling it calls its function :func:`~deniable.survey.prevalence.prevalence`), by the levels of a plain covariate
(:mod:`.groups`), power and sample size (:mod:`.power`). Logistic regression
(:func:`logit`, :func:`lr_test`) and linear regression on a randomized
predictor (:func:`linear`), in :mod:`.regression`, need the ``survey``
extra (pandas, statsmodels, patsy) and are imported on first use, so
``import deniable.survey`` needs numpy only.
"""

from typing import TYPE_CHECKING, Any

from deniable.survey.custom import Custom
from deniable.survey.designs import (
    MODELS,
    CheatingDetection,
    Crosswise,
    Design,
    ForcedResponse,
    Kuk,
    Mangat,
    StochasticLieDetector,
    SymmetricCheatingDetection,
    Triangular,
    UnrelatedQuestion,
    UnrelatedQuestionUnknown,
    Warner,
    design,
)
from deniable.survey.groups import GroupedPrevalence, prevalence_by
from deniable.survey.power import prevalence_power, prevalence_sample_size, simulated_power, standard_error
from deniable.survey.prevalence import (
    PrevalenceFit,
    answer_counts,
    loglik,
    prevalence_from_counts,
)
from deniable.survey.regression_power import SimulatedPower, logit_power

if TYPE_CHECKING:
    from deniable.survey.prevalence import prevalence
else:  # the module, which calls its function prevalence when called (see deniable._callable_module)
    from deniable.survey import prevalence

__all__ = [
    "MODELS",
    "CheatingDetection",
    "Crosswise",
    "Custom",
    "Design",
    "ForcedResponse",
    "Kuk",
    "Mangat",
    "StochasticLieDetector",
    "SymmetricCheatingDetection",
    "Triangular",
    "UnrelatedQuestion",
    "UnrelatedQuestionUnknown",
    "Warner",
    "design",
    "PrevalenceFit",
    "answer_counts",
    "loglik",
    "prevalence",
    "prevalence_from_counts",
    "GroupedPrevalence",
    "prevalence_by",
    "prevalence_power",
    "prevalence_sample_size",
    "simulated_power",
    "standard_error",
    "logit",
    "linear",
    "lr_test",
    "logit_power",
    "SimulatedPower",
]

_REGRESSION = ("logit", "linear", "lr_test", "LRTest", "RRLogit", "RRLogitResults", "RRLinear", "RRLinearResults")


def __getattr__(name: str) -> Any:
    """``logit``, ``linear`` and the other regression names, imported from :mod:`.regression` when first asked for."""
    if name in _REGRESSION:
        try:
            from deniable.survey import regression
        except ImportError as err:
            raise ImportError(f"deniable.survey.{name} needs the survey extra: pip install 'deniable[survey]' "
                              f"({err})") from err
        return getattr(regression, name)
    raise AttributeError(f"module 'deniable.survey' has no attribute {name!r}")
