"""Targets that wrap a real one, for tests that need the browser to misbehave."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from typing import Any

import trio

from pycdp_bridge import CDPError, Event, PageTarget, Target

__all__ = [
    "FailingTarget",
    "HitTestedAFrameLate",
    "NavigatingTarget",
    "PressedAFrameLate",
    "RecordingTarget",
    "WrappedTarget",
]


class WrappedTarget(Target):
    """Passes everything to an inner target; subclasses change `before_send`."""

    def __init__(self, inner: Target) -> None:
        self.inner = inner

    @property
    def closed(self) -> bool:
        return self.inner.closed

    @property
    def crashed(self) -> bool:
        return self.inner.crashed

    @property
    def open_dialog(self) -> Mapping[str, Any] | None:
        return self.inner.open_dialog

    async def before_send(
        self, method: str, params: Mapping[str, Any] | None, session_id: str | None
    ) -> None:
        """Runs before each command is passed on."""

    async def send(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        session_id: str | None = None,
    ) -> dict[str, Any]:
        await self.before_send(method, params, session_id)
        return await self.inner.send(method, params, session_id=session_id)

    def listen(
        self, *methods: str, session_id: str | None = None, buffer_size: int = 1024
    ) -> AbstractAsyncContextManager[trio.MemoryReceiveChannel[Event]]:
        return self.inner.listen(*methods, session_id=session_id, buffer_size=buffer_size)

    def follow(
        self, deliver: Callable[[Event], None], *methods: str
    ) -> AbstractContextManager[None]:
        return self.inner.follow(deliver, *methods)

    def child_sessions(self) -> Mapping[str, Mapping[str, Any]]:
        return self.inner.child_sessions()

    def holding(self, group: str) -> tuple[str | None, ...]:
        return self.inner.holding(group)


class FailingTarget(WrappedTarget):
    """A target that refuses chosen CDP methods, to simulate a broken capture part."""

    def __init__(self, inner: Target, refuse: set[str]) -> None:
        super().__init__(inner)
        self.refuse = refuse

    async def before_send(
        self, method: str, params: Mapping[str, Any] | None, session_id: str | None
    ) -> None:
        if method in self.refuse:
            raise CDPError(method, -32000, "refused by the test")


class NavigatingTarget(WrappedTarget):
    """A tab whose page navigates in the middle of each capture, at the next of `urls`:
    once every frame tree asked so far has been answered (the capture has read which
    document it captures), and before its DOMSnapshot is sent."""

    def __init__(self, page: PageTarget, urls: list[str]) -> None:
        super().__init__(page)
        self.page = page
        self.urls = urls  # where to go at each snapshot, in turn; empty: stay
        self._frame_trees: list[trio.Event] = []  # set once each is answered

    async def send(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        session_id: str | None = None,
    ) -> dict[str, Any]:
        if method == "DOMSnapshot.captureSnapshot" and self.urls:
            for answered in self._frame_trees:
                await answered.wait()
            await self.page.navigate(self.urls.pop(0))
        if method != "Page.getFrameTree":
            return await self.inner.send(method, params, session_id=session_id)
        answered = trio.Event()
        self._frame_trees.append(answered)
        try:
            return await self.inner.send(method, params, session_id=session_id)
        finally:
            answered.set()


class RecordingTarget(WrappedTarget):
    """Notes the method of every command, in the order they are sent."""

    def __init__(self, inner: Target) -> None:
        super().__init__(inner)
        self.methods: list[str] = []

    async def before_send(
        self, method: str, params: Mapping[str, Any] | None, session_id: str | None
    ) -> None:
        self.methods.append(method)


class PressedAFrameLate(WrappedTarget):
    """A link on which each press reaches the page one rendered frame after it was sent
    (a relay on a loaded machine): whatever the page's layout does at that frame, the
    press meets."""

    def late(self, method: str, params: Mapping[str, Any]) -> bool:
        """Whether this command reaches the page a frame late."""
        return method == "Input.dispatchMouseEvent" and params.get("type") == "mousePressed"

    async def before_send(
        self, method: str, params: Mapping[str, Any] | None, session_id: str | None
    ) -> None:
        if self.late(method, params or {}):
            await self.inner.send(
                "Runtime.evaluate",
                {"expression": "new Promise(requestAnimationFrame)", "awaitPromise": True},
                session_id=session_id,
            )


class HitTestedAFrameLate(PressedAFrameLate):
    """A link on which each hit test, too, reaches the page a frame late: a frame always
    falls between the start of the pointer's watch and the hit test."""

    def late(self, method: str, params: Mapping[str, Any]) -> bool:
        return method == "DOM.getNodeForLocation" or super().late(method, params)
