"""Every public module's ``__all__`` matches what it defines, and the inventory matches the code."""

from __future__ import annotations

import importlib
import inspect
import types

import pytest

from api import check

MODULES = check._module_names()


@pytest.mark.parametrize("modname", MODULES)
def test_all_names_exist(modname: str) -> None:
    """Every name in ``__all__`` is an attribute of its module."""
    module = importlib.import_module(modname)
    missing = [name for name in module.__all__ if not hasattr(module, name)]
    assert missing == []


@pytest.mark.parametrize("modname", MODULES)
def test_public_definitions_are_exported(modname: str) -> None:
    """Every public class or function defined in a module or its private parts is in ``__all__``."""
    module = importlib.import_module(modname)
    unexported = []
    for name, obj in vars(module).items():
        if name.startswith("_") or isinstance(obj, types.ModuleType):
            continue
        if not (inspect.isclass(obj) or inspect.isfunction(obj)):
            continue
        home = getattr(obj, "__module__", "")
        if (home == modname or home.startswith(modname + "._")) and name not in module.__all__:
            unexported.append(name)
    assert unexported == []


def test_inventory_matches_code() -> None:
    """The recorded inventory lists exactly the public names and signatures of the code."""
    recorded = check.INVENTORY.read_text(encoding="utf-8").splitlines()
    assert check.inventory() == recorded
