"""Exceptions of the toolkit (kept free of heavy imports, so that ``import theory`` stays light), and the check
that the package itself, not a folder of the same name, was imported."""

import sys


class NonFiniteError(ValueError, FloatingPointError):
    """A computation overflowed to NaN or inf; the message says what and what to change."""


class ShadowedPackageError(ImportError):
    """``theory`` was imported from a folder named ``theory`` without ``__init__.py`` (a namespace package), not
    from the package: typically the checkout itself, found first because Python looks in the current folder."""


def check_package() -> None:
    """Raise :class:`ShadowedPackageError` in one line, with the fix, if ``theory`` is a namespace package.

    Every module of the package imports this one, so a script run from the folder that holds a checkout named
    ``theory`` stops at its first import of a submodule instead of failing later on a missing attribute.
    """
    package = sys.modules.get(__name__.rpartition(".")[0])
    if package is not None and getattr(package, "__file__", None) is None:
        where = ", ".join(str(p) for p in getattr(package, "__path__", [])) or "a folder"
        raise ShadowedPackageError(
            f"`import theory` found {where}, a folder named theory without __init__.py, instead of the package "
            f"(Python looks in the current folder first, and this folder holds a checkout named theory): run the "
            f"script from another folder, or from inside the checkout, or rename the checkout")


check_package()
