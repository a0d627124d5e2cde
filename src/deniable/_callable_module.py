"""Modules named after their main function, and callable as it: ``dn.audit(m)``, ``dn.simulate(m, f, n)``.

``deniable.audit`` is a module (``from deniable.audit import AuditResult``,
``import deniable.audit as a``) and ``dn.audit(m, ...)`` calls the function
``deniable.audit.audit``. A package attribute cannot be both the module and
the function: ``import deniable.audit as a`` binds the package's attribute
``audit``, so a package that re-exported the function under the module's name
would hand the function to ``import ... as`` and to
``deniable.audit.AuditResult``. The package binds the module instead, and the
module, made callable by :func:`make_callable` at its end, calls its function.
Type checkers, which cannot call a module, are shown the function (an ``if
TYPE_CHECKING:`` import beside the runtime one).
"""

from __future__ import annotations

import sys
import types
from typing import Any

__all__ = ["CallableModule", "make_callable"]


class CallableModule(types.ModuleType):
    """A module whose call is a call of its function of the same name (``deniable.audit.audit``)."""

    def _function(self) -> Any:
        return getattr(self, self.__name__.rpartition(".")[2])

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._function()(*args, **kwargs)

    @property
    def __signature__(self) -> Any:
        """The function's signature, for :func:`inspect.signature` and ``help`` in notebooks."""
        import inspect

        return inspect.signature(self._function())


def make_callable(name: str) -> None:
    """Make the module ``name`` (already in :data:`sys.modules`) a :class:`CallableModule`."""
    sys.modules[name].__class__ = CallableModule
