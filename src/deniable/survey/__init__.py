"""Survey analysis of randomized-response designs, as RRreg and rr do it in R.

Designs with RRreg's model names and ``p`` conventions (:func:`design`,
:class:`Warner` ... :class:`Custom`), the prevalence (:func:`prevalence`), by
the levels of a plain covariate (:func:`prevalence_by`), power and sample
size (:func:`prevalence_power`, :func:`prevalence_sample_size`). Logistic
regression (:func:`logit`, :func:`lr_test`) and linear regression on a
randomized predictor (:func:`linear`) and the random-effects logit
(:func:`glmer`, GLMMRR's ``RRglmer``) need the ``survey``
extra (pandas, statsmodels, patsy) and are imported on first use, so
``import deniable.survey`` needs numpy only. Weighted and complex samples
(``weights=``, ``strata=``, ``cluster=``, ``fpc=``, ``repweights=``): design-based
standard errors as R's ``survey`` package computes them
(:class:`WeightedPrevalenceFit`, ``design_effect`` on the regressions).
Randomized answers as covariates (``rr_predictors=`` of :func:`logit` and
:func:`linear`, rr's ``rrreg.predictor`` and RRreg's ``RRlin``) and
correlations of randomized answers with each other and with plain columns
(:func:`correlation`, RRreg's ``RRcor``).
"""

from typing import Any

from deniable.survey._correlation import Correlation, correlation
from deniable.survey._custom import Custom
from deniable.survey._designs import (
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
from deniable.survey._groups import GroupedPrevalence, prevalence_by
from deniable.survey._ict_test import DesignEffectTest, ict_test
from deniable.survey._list import ListDifference, ListExperiment, list_difference
from deniable.survey._power import (
    MARGIN,
    MIN_N,
    TOLERANCE,
    approximation_margin,
    prevalence_power,
    prevalence_sample_size,
    simulated_power,
    standard_error,
)
from deniable.survey._prevalence import (
    PrevalenceFit,
    answer_counts,
    loglik,
    prevalence_from_counts,
)
from deniable.survey._regression_power import SimulatedPower, logit_power
from deniable.survey._weighted import WeightedPrevalenceFit, prevalence

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
    "approximation_margin",
    "MARGIN",
    "MIN_N",
    "TOLERANCE",
    "prevalence_sample_size",
    "simulated_power",
    "standard_error",
    "logit",
    "linear",
    "lr_test",
    "logit_power",
    "SimulatedPower",
    "WeightedPrevalenceFit",
    "ListExperiment",
    "ListDifference",
    "list_difference",
    "ictreg",
    "ict_test",
    "DesignEffectTest",
    "glmer",
    "GLMMResults",
    "correlation",
    "Correlation",
]

_REGRESSION = ("logit", "linear", "lr_test", "LRTest", "RRLogit", "RRLogitResults", "RRLinear", "RRLinearResults",
               "RRPredictorResults")


_LIST_REGRESSION = ("ictreg", "ICTRegResults")
_MIXED = ("glmer", "GLMMResults")


def __getattr__(name: str) -> Any:
    """``logit``, ``linear``, ``ictreg``, ``glmer`` and the other regression names, imported when first asked for."""
    if name in _REGRESSION or name in _LIST_REGRESSION or name in _MIXED:
        try:
            from deniable.survey import _glmer, _ictreg, _regression
        except ImportError as err:
            raise ImportError(f"deniable.survey.{name} needs the survey extra: pip install 'deniable[survey]' "
                              f"({err})") from err
        module = _regression if name in _REGRESSION else _ictreg if name in _LIST_REGRESSION else _glmer
        return getattr(module, name)
    raise AttributeError(f"module 'deniable.survey' has no attribute {name!r}")
