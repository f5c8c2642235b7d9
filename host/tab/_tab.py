"""`Tab`: one tab as the host holds it, for the tools and the request handlers."""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Callable, Mapping
from typing import Any, Final

import attrs
import trio

from pycdp_bridge import (
    CDPError,
    DialogOpenError,
    JavaScriptError,
    PageModel,
    Target,
    TargetClosedError,
)
from pycdp_bridge import protocol as cdp

from ..pipeline import Compaction
from ._devtools import DevtoolsLog, LogRead
from ._revisions import PageRevisions
from ._settle import QUIET_MS, Ahead
from ._snapshots import RenderedAhead, SnapshotMemory
from ._values import Snapshot, SnapshotOptions

__all__ = ["Tab"]

# An action's answer is captured (and rendered) while its settle waits, this long (in
# times the page's last capture, and rendering, took) before the settle's quiet would
# end, at the earliest this many seconds after the action began; and not at all when
# that takes longer than `_MOST_AHEAD`: it would hold the page up as it settles.
_LEAD: Final = 1.5
_EARLIEST: Final = 0.05
_MOST_AHEAD: Final = (QUIET_MS / 1000 - _EARLIEST) / _LEAD
# Until a capture of the tab was timed.
_FIRST_GUESS: Final = 0.1
_FAILURES: Final = (CDPError, JavaScriptError, TargetClosedError, DialogOpenError, KeyError)


def _ignore(reason: str) -> None:
    del reason


@attrs.frozen
class _Prepared:
    """A capture taken ahead of the snapshot, the page's revision token when it began
    (which names the document too), and the answer rendered from it ahead (None when it
    was not)."""

    token: str
    model: PageModel
    capture_ms: float
    rendered: RenderedAhead | None = None


@attrs.define(eq=False)
class Tab:
    """A tab's target, what the model has seen of it, and its page observer.

    The tools act through it, the handlers keep one per browser tab, and the command
    line makes one for the page it inspects. `lock` runs one tool at a time: actions
    and reads share the snapshot memory. `revisions` is the single page observer:
    the call tracker learns of page changes from it, and `settle` waits on it.
    `devtools` is the tab's console and network log (collected while its `run` runs),
    `seen` how far this view of the tab has read it.
    """

    target: Target
    memory: SnapshotMemory
    revisions: PageRevisions
    lock: trio.Lock = attrs.field(factory=trio.Lock)
    devtools: DevtoolsLog = attrs.field(
        default=attrs.Factory(lambda self: DevtoolsLog(self.target), takes_self=True)
    )
    log_read: LogRead = attrs.field(factory=LogRead)
    _prepared: _Prepared | None = attrs.field(default=None, init=False)
    # How long the last capture (and rendering ahead, `prepare`) took.
    _capture_seconds: float = attrs.field(default=_FIRST_GUESS, init=False)
    _render_seconds: float = attrs.field(default=0.0, init=False)
    # Whether the last capture taken ahead was the answer's (see `prepare`).
    _ahead_used: bool = attrs.field(default=True, init=False)

    @classmethod
    def open(
        cls,
        target: Target,
        *,
        options: SnapshotOptions | None = None,
        on_change: Callable[[str], None] = _ignore,
    ) -> Tab:
        """A tab over `target`; `on_change(reason)` hears of every page change."""
        memory = SnapshotMemory(target, options) if options else SnapshotMemory(target)
        return cls(target=target, memory=memory, revisions=PageRevisions(target, on_change))

    @property
    def latest(self) -> Compaction | None:
        """The compaction behind the last snapshot the model received, if any."""
        return self.memory.latest

    def ahead(self) -> Ahead | None:
        """For an action's `watch`: the answer's capture, taken while the settle waits
        (`prepare`), timed to end before the settle's quiet would; None for a page whose
        captures take too long for that."""
        lead = self._capture_seconds
        render = self._ahead_used and lead + self._render_seconds <= _MOST_AHEAD
        if render:
            lead += self._render_seconds
        if lead > _MOST_AHEAD:
            return None
        return Ahead(
            functools.partial(self.prepare, render=render),
            max(_EARLIEST, QUIET_MS / 1000 - _LEAD * lead),
        )

    async def main_frame_id(self) -> str:
        """The id of the tab's main frame: as the page observer follows it from the
        page's events, or read from the browser when the tab has no observer."""
        return await self.revisions.main_frame_id()

    async def quiet(self, cap: float) -> None:
        """Wait, at most ``cap`` seconds, until the page's DOM has been quiet for
        `QUIET_MS`: for a change set off elsewhere, such as the message a pop-up sent
        its opener as it closed (no action of this tab to settle after)."""
        with contextlib.suppress(*_FAILURES):
            frame = await self.main_frame_id()
            await self.revisions.quiet(frame, QUIET_MS, max(QUIET_MS, round(cap * 1000)))

    async def prepare(self, *, render: bool = False) -> None:
        """Capture the page now for the next `snapshot`, which uses this capture only
        if the page's revision token and document are still those read before it began
        (the page changed nothing the observer sees since), and captures afresh
        otherwise. With ``render``, the answer is rendered from it too, on a fork of the
        memory (`SnapshotMemory.render_ahead`): the settle's wait is idle time, and the
        answer then only has to check it. `ahead` asks for that unless the tab's last
        capture ahead went unused: on a page that changes under every capture, the
        rendering would only be thrown away."""
        self._prepared = None
        failed = False
        try:
            token, loader, tree = await self._state()
            if token is None:
                return  # the observer cannot tell whether the page changes
            started = time.perf_counter()
            # The tree just read is the capture's first (the document it captures).
            model = await self.memory.capture(tree)
        except* _FAILURES:
            # Only a head start: the action's own steps meet whatever went wrong (the
            # capture's concurrent commands fail together, as a group: a dialog).
            failed = True
        if failed or token is None:
            return
        if model.navigated or model.document_id != loader:
            return
        captured = time.perf_counter()
        capture_ms = (captured - started) * 1000
        self._capture_seconds = capture_ms / 1000
        rendered = None
        if render:
            rendered = self.memory.render_ahead(model, capture_ms=capture_ms)
            self._render_seconds = time.perf_counter() - captured
        self._ahead_used = False  # until `snapshot` uses it
        self._prepared = _Prepared(token, model, capture_ms, rendered)

    async def snapshot(self, *, baseline: bool = False) -> Snapshot:
        """Capture the page and answer with a baseline or a diff (`SnapshotMemory`)."""
        prepared, self._prepared = self._prepared, None
        if prepared is not None and await self._unchanged(prepared):
            self._ahead_used = True
            if prepared.rendered is not None and not baseline:
                rendered = self.memory.adopt(prepared.rendered)
                if rendered is not None:
                    return rendered
            return self.memory.render(
                prepared.model, capture_ms=prepared.capture_ms, baseline=baseline
            )
        snapshot = await self.memory.snapshot(baseline=baseline)
        self._capture_seconds = snapshot.capture_ms / 1000
        return snapshot

    async def _unchanged(self, prepared: _Prepared) -> bool:
        """Whether the page is as it was when `prepared` began: the same revision token,
        which names its document too (no frame tree to read). Whatever fails to say so
        means a fresh capture."""
        try:
            token = await self.revisions.token()
        except _FAILURES:
            return False
        return token is not None and token == prepared.token

    async def _state(self) -> tuple[str | None, str, Mapping[str, Any]]:
        """The page's revision token, its main frame's loader and the frame tree that
        names it, read together (one round trip); raises the first failure of the two."""
        token: str | None = None
        loader = ""
        tree: Mapping[str, Any] = {}
        failures: list[Exception] = []

        async def read_tree() -> None:
            nonlocal loader, tree
            try:
                tree = await self.target.execute(cdp.page_get_frame_tree())
                loader = str(tree["frameTree"]["frame"].get("loaderId", ""))
            except Exception as exc:  # raised below, outside the nursery
                failures.append(exc)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(read_tree)
            try:
                token = await self.revisions.token()
            except Exception as exc:  # raised below, outside the nursery
                failures.insert(0, exc)
        if failures:
            raise failures[0]
        return token, loader, tree

    def expand(self, region: str, at: int = 0) -> str:
        """Everything of one region of the latest snapshot (a page of it from line
        `at` when it is over the budget)."""
        return self.memory.expand(region, at)

    def read_text(self, key: str, at: int) -> str:
        """A page of a long text the latest snapshot showed cut, from character `at`."""
        return self.memory.read_text(key, at)

    def forget(self) -> None:
        """Drop what the model has seen (after an error, or a released tab)."""
        self._prepared = None
        self.memory.forget()
