"""Mechanisms that misstate their epsilon, for the power checks of privacy audits."""

from __future__ import annotations

from typing import Any


def claiming(m: Any, claimed: float) -> Any:
    """``m`` as a subclass instance whose ``epsilon`` property lies: it says ``claimed``."""
    cls = type(m)
    liar_cls = type(f"Lying{cls.__name__}", (cls,), {"epsilon": property(lambda self: claimed)})
    liar = liar_cls.__new__(liar_cls)
    liar.__dict__.update(m.__dict__)
    return liar
