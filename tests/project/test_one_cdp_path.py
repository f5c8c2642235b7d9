"""One way to speak CDP: no module sends a raw method name; the generators name them."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# The module that names CDP commands: pycdp_bridge.protocol (see its docstring).
PROTOCOL = REPO / "pycdp_bridge" / "_protocol.py"
METHOD_NAME = re.compile(r"[A-Z][A-Za-z]+\.[a-z][A-Za-z]+")


def raw_sends(path: Path, root: Path = REPO) -> list[str]:
    """``file:line: Domain.method`` for each CDP method name written as a string literal
    in the arguments of a call to ``.send(`` (or to any function whose name has
    ``send`` in it, such as a wrapper that forwards its method name to ``send``)."""
    found: list[str] = []
    for call in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if not isinstance(call, ast.Call):
            continue
        func = call.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if "send" not in name:
            continue
        for arg in [*call.args, *(k.value for k in call.keywords)]:
            if (
                isinstance(arg, ast.Constant)
                and isinstance(arg.value, str)
                and METHOD_NAME.fullmatch(arg.value)
            ):
                found.append(f"{path.relative_to(root)}:{arg.lineno}: {arg.value}")
    return found


def test_the_check_finds_a_raw_send(tmp_path: Path) -> None:
    """The scan reports a method name sent raw, also split over lines or via a wrapper,
    and leaves generator calls and event names alone."""
    module = tmp_path / "sample.py"
    module.write_text(
        "async def f(target, events):\n"
        "    await target.send('Page.enable')\n"
        "    await target.send(\n        'Runtime.evaluate', {'expression': '1'}\n    )\n"
        "    await _send_evaluate(target, 'Runtime.callFunctionOn', {})\n"
        "    await target.execute(protocol.page_enable())\n"
        "    async with target.listen('Page.loadEventFired'):\n        pass\n"
        "    raise CDPError('DOM.getDocument', 0, 'no document')\n",
        encoding="utf-8",
    )
    found = raw_sends(module, tmp_path)
    assert [line.rsplit(": ", 1)[1] for line in found] == [
        "Page.enable",
        "Runtime.evaluate",
        "Runtime.callFunctionOn",
    ]


@pytest.mark.parametrize(
    "folder",
    ["pycdp_bridge", "host"],
)
def test_no_raw_cdp_method_is_sent(folder: str) -> None:
    """No module but pycdp_bridge/_protocol.py sends a CDP method by its name: every
    command goes through a generator of `pycdp_bridge.protocol`."""
    found = [
        line
        for path in sorted((REPO / folder).rglob("*.py"))
        if path != PROTOCOL
        for line in raw_sends(path)
    ]
    assert not found, "raw CDP sends (add a command to pycdp_bridge/_protocol.py):\n" + (
        "\n".join(found)
    )


def protocol_parameters(path: Path = PROTOCOL) -> list[tuple[str, list[str]]]:
    """Each ``call("Domain.method", name=...)`` of the protocol table: the method and
    the names of the parameters it sends."""
    found: list[tuple[str, list[str]]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if (
            isinstance(node, ast.Call)
            and getattr(node.func, "id", "") == "call"
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            assert all(k.arg is not None for k in node.keywords), f"a ** in {node.args[0].value}"
            found.append((str(node.args[0].value), [str(k.arg) for k in node.keywords]))
    return found


def test_every_parameter_the_table_sends_is_in_the_protocol() -> None:
    """Every parameter name a command of pycdp_bridge.protocol sends is one the
    protocol gives that method (cdp-use's TypedDicts of today's protocol), so a
    misspelt optional parameter, which the browser would ignore, fails here."""
    table = protocol_parameters()
    assert len(table) > 60
    wrong: list[str] = []
    for method, names in table:
        domain, command = method.split(".")
        commands = importlib.import_module(f"cdp_use.cdp.{domain.lower()}.commands")
        typed = getattr(commands, f"{command[0].upper()}{command[1:]}Parameters", None)
        known = set(typed.__annotations__) if typed is not None else set()
        wrong.extend(f"{method}: {name}" for name in names if name not in known)
    assert not wrong, "parameters the protocol does not have:\n" + "\n".join(wrong)
