"""The protocol's method table (`_method_table`) says each method's params and result class
twice on one line: in the type mypy checks a handler against (`MethodSpec[P, R]`) and in
the name the daemon imports the class by at run time. Both must name the same class."""

from __future__ import annotations

import importlib
import typing
from typing import Any, Union

from tether_protocol import _method_table
from tether_protocol._method_table import MODULES, V1_SPECS, MethodSpec


def _annotated(name: str) -> tuple[Any, Any]:
    """The `MethodSpec[P, R]` annotation of the table's constant ``name``, evaluated."""
    scope: dict[str, Any] = {
        alias: importlib.import_module(f"tether_protocol.{module}") for alias, module in MODULES.items()
    }
    scope["MethodSpec"] = MethodSpec
    hint = eval(_method_table.__annotations__[name], scope)
    params, result = typing.get_args(hint)
    return params, result


def test_every_method_is_a_typed_constant_of_the_table() -> None:
    constants = {value.name: name for name, value in vars(_method_table).items() if isinstance(value, MethodSpec)}
    assert len(constants) == len(V1_SPECS) == 54  # 51, and per-item cancel (§12.4)
    assert sorted(constants) == sorted(spec.name for spec in V1_SPECS)
    assert set(constants.values()) <= set(_method_table.__annotations__)


def test_the_type_mypy_checks_names_the_class_the_daemon_structures() -> None:
    for name, spec in vars(_method_table).items():
        if not isinstance(spec, MethodSpec):
            continue
        params, result = _annotated(name)
        assert params is spec.params_class.load() is _method_table.resolve(spec.params), name
        if spec.result is None:
            assert result is type(None), name
        else:
            expected = _method_table.resolve(spec.result)
            assert result == (Union[expected, None] if spec.result_or_null else expected), name  # noqa: UP007
