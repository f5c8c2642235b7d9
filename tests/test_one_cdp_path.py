"""One way to speak CDP: no module sends a raw method name; the generators name them."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# The modules that name CDP commands: pycdp_bridge.protocol (see its docstring) and
# the two domain groups it re-exports.
PROTOCOL = frozenset((REPO / "pycdp_bridge").glob("_protocol*.py"))
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
    """No module but pycdp_bridge/_protocol*.py sends a CDP method by its name: every
    command goes through a generator of `pycdp_bridge.protocol`."""
    found = [
        line
        for path in sorted((REPO / folder).rglob("*.py"))
        if path not in PROTOCOL
        for line in raw_sends(path)
    ]
    assert not found, "raw CDP sends (add a generator to pycdp_bridge/_protocol*.py):\n" + (
        "\n".join(found)
    )
