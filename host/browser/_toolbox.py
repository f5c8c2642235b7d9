"""The agent's tools as the host serves them: specs, the runner, the format page."""

from __future__ import annotations

import importlib.resources
from collections.abc import Awaitable, Mapping
from typing import Protocol

import attrs

from ..tab import Guarding, Tab
from ..tools import TOOLS, ArgumentError, ToolResult, ToolSpec, check_arguments, run_tool
from ..wire import RequestError
from ._task_calls import TASK_HANDLERS, TaskHandler

__all__ = ["RunTool", "Toolbox", "read_format_page"]


class RunTool(Protocol):
    """How the host runs a tool in a tab (`trimtab.tools.run_tool`): with the person's
    yes to this one call (``consented``) and under the call's request ``guard``."""

    def __call__(
        self,
        tab: Tab,
        name: str,
        args: Mapping[str, object],
        *,
        consented: bool = False,
        guard: Guarding | None = None,
    ) -> Awaitable[ToolResult]: ...


def read_format_page() -> str:
    """The model's format page, ``FORMAT.md``, read as package data."""
    return (importlib.resources.files("trimtab") / "FORMAT.md").read_text(encoding="utf-8")


@attrs.frozen
class Toolbox:
    """The agent's tools as the host sees them: specs, the runner of the tools that act
    in a tab, the handlers of those that act on the task, the format page."""

    specs: tuple[ToolSpec, ...]
    run: RunTool
    format_page: str

    def __attrs_post_init__(self) -> None:
        names = [spec.name for spec in self.specs]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise ValueError(f"tool names must be unique; repeated: {duplicates}")

    @classmethod
    def load(cls) -> Toolbox:
        """The production tools (`trimtab.tools`) and ``FORMAT.md`` from the package."""
        return cls(specs=TOOLS, run=run_tool, format_page=read_format_page())

    def spec(self, name: str) -> ToolSpec | None:
        for spec in self.specs:
            if spec.name == name:
                return spec
        return None

    def task_handler(self, spec: ToolSpec) -> TaskHandler | None:
        """The handler of a task tool (`ToolSpec.on_task`: it takes the task); None for a
        tool that acts in a tab (`run`)."""
        return TASK_HANDLERS[spec.name] if spec.on_task else None

    def check_arguments(self, name: str, arguments: Mapping[str, object]) -> None:
        """Refuse a call to tool ``name`` whose arguments do not fit its schema, with a
        ``bad_request`` in Trimtab's words naming the argument (the link's check, before
        the call runs; an unknown tool is left to `HostState.call_tool` to name)."""
        spec = self.spec(name)
        if spec is None:
            return
        try:
            check_arguments(spec, arguments)
        except ArgumentError as exc:
            raise RequestError("bad_request", str(exc)) from None
