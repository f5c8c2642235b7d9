"""The answer to an action captured while its settle waits: used when the page has not
changed since the capture began, taken again when it has."""

from __future__ import annotations

from typing import Any

import pytest
import trio

from pycdp_bridge import PageTarget
from tests.support import StaticServer
from tests.support.xmltree import eid_of
from tests.tools.test_tools import act, open_tab, parse
from trimtab.tab import _tab

pytestmark = pytest.mark.browser

# How often the page may be loaded again before two loads in a row are alike.
_LOADS = 10


def _ahead_after(monkeypatch: pytest.MonkeyPatch, seconds: float) -> None:
    """Capture ahead on any page, `seconds` after the action began, however long this
    machine's captures take."""
    monkeypatch.setattr(_tab, "_EARLIEST", seconds)
    monkeypatch.setattr(_tab, "_MOST_AHEAD", 60.0)
    monkeypatch.setattr(_tab, "_LEAD", 1e6)  # so `after` is `_EARLIEST`


@pytest.fixture
def ahead_from_200ms(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ahead 200 ms after the action began (the click's own change comes first)."""
    _ahead_after(monkeypatch, 0.2)


@pytest.fixture
def ahead_from_50ms(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ahead 50 ms after the action began: well before a change the page makes 250 ms
    after the click (its timer fires before the settle's 300 ms of quiet end)."""
    _ahead_after(monkeypatch, 0.05)


class Recorder:
    """Wraps a page's `send`: each command's method and parameters, and when each was
    sent and answered, in one sequence (``("sent", i)``, ``("answered", i)``).

    With ``quiet_lasts``, the settle's wait for quiet is answered only once a capture
    was sent, or after that many seconds: a page whose quiet comes late, whatever
    this machine's load does to the host's timers."""

    def __init__(self, page: PageTarget, *, quiet_lasts: float = 0.0) -> None:
        self.sent: list[tuple[str, Any]] = []
        self.sequence: list[tuple[str, int]] = []
        self._send = page.send
        self._quiet_lasts = quiet_lasts
        self._captured = trio.Event()
        page.send = self.send  # type: ignore[method-assign]

    async def send(self, method: str, params: Any = None, **kwargs: Any) -> Any:
        index = len(self.sent)
        self.sent.append((method, params))
        self.sequence.append(("sent", index))
        if method == "DOMSnapshot.captureSnapshot":
            self._captured.set()
        try:
            answer = await self._send(method, params, **kwargs)
            if _is_quiet(method, params):
                with trio.move_on_after(self._quiet_lasts):
                    await self._captured.wait()
            return answer
        finally:
            self.sequence.append(("answered", index))

    def indexes(self, method: str) -> list[int]:
        return [i for i, (m, _) in enumerate(self.sent) if m == method]


def _is_quiet(method: str, params: Any) -> bool:
    """Whether a command is the settle's wait for quiet (the page observer's ``quiet``)."""
    declaration = (params or {}).get("functionDeclaration", "")
    return method == "Runtime.callFunctionOn" and ".quiet(" in str(declaration)


def _quiet_call(recorder: Recorder) -> int:
    """The index of the settle's wait for quiet."""
    [index] = [i for i, (method, params) in enumerate(recorder.sent) if _is_quiet(method, params)]
    return index


@pytest.mark.usefixtures("ahead_from_200ms")
async def test_answer_is_captured_while_the_settle_waits(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """A click whose effect is immediate: the page is captured once, while the settle
    still waits for quiet, and the answer (from that capture) shows the effect."""
    tab, xml = await open_tab(page, pages_server.url("tools-ahead.html"))
    # The page's quiet lasts until the capture was sent, or 5 s: a capture that waited
    # for the settle instead of starting while it waits still comes after it.
    recorder = Recorder(page, quiet_lasts=5.0)
    result = await act(tab, "click", {"id": eid_of(xml, "button", "Click once")})
    assert "Clicked once" in result.content
    [captured] = recorder.indexes("DOMSnapshot.captureSnapshot")
    quiet = _quiet_call(recorder)
    released = max(recorder.indexes("Input.dispatchMouseEvent"))
    # Sent once the press was in and before the wait for quiet ended. Not necessarily
    # after the wait's own call: the settle reaches it through round trips of its own
    # (the observer, an isolated world), which the capture, begun meanwhile, can outrun
    # on a loaded machine. On this page quiet came 300 ms after the click, and the
    # capture (200 ms after the action began, then a round trip) came after it when the
    # machine was busy: hence the quiet held above.
    order = recorder.sequence.index
    assert order(("answered", released)) < order(("sent", captured)) < order(("answered", quiet))
    parse(result.content)


async def test_the_early_capture_waits_for_the_press_to_be_sent(
    page: PageTarget, pages_server: StaticServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ahead as soon as the action began, sooner than the click's own aiming and press
    take: the capture still waits until the press is sent and the settle waits, so the
    page is captured once, with the effect (as on a loaded machine, where a press
    outlasts 200 ms)."""
    _ahead_after(monkeypatch, 0.0)
    tab, xml = await open_tab(page, pages_server.url("tools-ahead.html"))
    recorder = Recorder(page)
    result = await act(tab, "click", {"id": eid_of(xml, "button", "Click once")})
    assert "Clicked once" in result.content
    [captured] = recorder.indexes("DOMSnapshot.captureSnapshot")
    released = max(recorder.indexes("Input.dispatchMouseEvent"))
    assert recorder.sequence.index(("answered", released)) < recorder.sequence.index(
        ("sent", captured)
    )


@pytest.mark.usefixtures("ahead_from_50ms")
async def test_change_after_the_early_capture_is_in_the_answer(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """A click that changes, 250 ms later, a part of the page the settle does not wait
    for: the capture taken meanwhile is no longer the page, so the answer is captured
    again and shows the late change."""
    tab, xml = await open_tab(page, pages_server.url("tools-ahead.html"))
    result = await act(tab, "click", {"id": eid_of(xml, "button", "Click for late news")})
    assert "Clicked late" in result.content
    assert "Late news" in result.content
    assert "No news" not in result.content


async def test_a_capture_ahead_is_not_used_once_the_page_was_loaded_again(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """A capture taken ahead answers the next snapshot while the page is as it was; once
    the page is loaded again, to the same state (the same changes since it loaded, the
    same address, form, scroll and size), the new document's revision token is not the
    old one's, so the snapshot captures the new document."""
    url = pages_server.url("tools-ahead.html")
    tab, _ = await open_tab(page, url)

    async def load_quietly() -> str:
        await page.navigate(url, timeout=30)
        with trio.fail_after(10):
            while await tab.revisions.token() is None:
                await trio.sleep(0.05)
        await tab.quiet(5.0)
        token = await tab.revisions.token()
        assert token is not None
        return token

    await load_quietly()
    await tab.prepare()
    recorder = Recorder(page)
    await tab.snapshot()
    assert recorder.indexes("DOMSnapshot.captureSnapshot") == []  # the capture ahead
    # A capture ahead, then the page loaded again, until all but the document's own key
    # is alike in the two tokens (without it they would be equal): the changes counted
    # since a load differ now and then on a loaded machine.
    before = await load_quietly()
    for _ in range(_LOADS):
        await tab.prepare()
        after = await load_quietly()
        if after.split("|")[1:] == before.split("|")[1:]:
            break
        before = after
    assert after.split("|")[1:] == before.split("|")[1:], (before, after)
    assert after != before
    recorder = Recorder(page)
    await tab.snapshot()
    assert len(recorder.indexes("DOMSnapshot.captureSnapshot")) == 1


async def test_a_capture_ahead_is_not_used_once_another_sites_frame_changed(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """A capture taken ahead is not the answer once the partner's frame, out of process
    (a session of its own), changed after it: the snapshot captures the page again and
    shows the change."""
    tab, xml = await open_tab(page, pages_server.url("partner-offers.html"))
    assert "Ten percent off tents" in xml
    (frame,) = page.child_sessions()  # attached by the capture
    await tab.revisions.token()  # the frame's observer goes in
    await tab.prepare()
    with trio.fail_after(10):
        await page.send(
            "Runtime.evaluate",
            {"expression": "document.getElementById('offer').textContent = 'Sold out'"},
            session_id=frame,
        )
    recorder = Recorder(page)
    snapshot = await tab.snapshot()
    assert recorder.indexes("DOMSnapshot.captureSnapshot")  # the page's, and the frame's
    assert "Sold out" in snapshot.xml
