"""What an action does before it acts, sent together: the reads share round trips, the
checks keep their order, and the call's remote objects are released once."""

from __future__ import annotations

from typing import Any

import pytest
import trio

from pycdp_bridge import PageTarget
from tests.support import StaticServer
from tests.support.xmltree import eid_of
from tests.tools.test_tools import act, open_tab, parse
from trimtab.driver import click_element, click_reason, gather, locate_with_info, point_and_consent
from trimtab.tools import run_tool


async def test_gather_runs_calls_together_and_raises_in_call_order() -> None:
    """`gather` runs its calls at once (the first waits for what the second does) and,
    when several fail, raises the failure of the first call in order, not the earliest."""
    handed = trio.Event()

    async def waits() -> str:
        await handed.wait()
        return "first"

    async def hands() -> int:
        handed.set()
        return 2

    assert await gather(waits, hands) == ("first", 2)

    async def fails_late() -> None:
        await trio.sleep(0)
        await trio.sleep(0)
        raise ValueError("first in order")

    async def fails_at_once() -> None:
        raise KeyError("second in order")

    with pytest.raises(ValueError, match="first in order"):
        await gather(fails_late, fails_at_once)


class Recorder:
    """Wraps a page's `send`: every command, how many were in flight as it went out,
    and when it went out and was answered (positions in one count of both)."""

    def __init__(self, page: PageTarget) -> None:
        self.sent: list[tuple[str, int]] = []
        self.params: list[Any] = []
        self.spans: list[tuple[int, int]] = []  # (sent at, answered at)
        self._in_flight = 0
        self._clock = 0
        self._send = page.send
        page.send = self.send  # type: ignore[method-assign]

    async def send(self, method: str, params: Any = None, **kwargs: Any) -> Any:
        index = len(self.sent)
        self.sent.append((method, self._in_flight))
        self.params.append(params)
        self.spans.append((self._tick(), -1))
        self._in_flight += 1
        try:
            return await self._send(method, params, **kwargs)
        finally:
            self._in_flight -= 1
            self.spans[index] = (self.spans[index][0], self._tick())

    def _tick(self) -> int:
        self._clock += 1
        return self._clock

    def overlapping(self, index: int) -> list[int]:
        """The indexes of the commands in flight at some moment together with `index`."""
        start, end = self.spans[index]
        return [i for i, (s, e) in enumerate(self.spans) if i != index and s < end and start < e]

    def methods(self) -> list[str]:
        return [method for method, _ in self.sent]


@pytest.mark.browser
async def test_click_reads_go_out_together(page: PageTarget, pages_server: StaticServer) -> None:
    """Before a click's first input event, the element's quads and the viewport were read
    while other reads were in flight; the click lands, and the call's objects are
    released exactly once, alongside the answer's snapshot."""
    tab, xml = await open_tab(page, pages_server.url("tools-round-trips.html"))
    recorder = Recorder(page)
    result = await act(tab, "click", {"id": eid_of(xml, "button", "Plain")})
    assert "Plain clicked" in result.content
    methods = recorder.methods()
    first_input = methods.index("Input.dispatchMouseEvent")
    # Where the element is and how large the viewport is: read alongside other reads.
    alongside = [
        in_flight
        for method, in_flight in recorder.sent[:first_input]
        if method in ("DOM.getContentQuads", "Page.getLayoutMetrics")
    ]
    assert len(alongside) == 2
    assert max(alongside) >= 1
    assert methods.count("Runtime.releaseObjectGroup") == 1
    release = methods.index("Runtime.releaseObjectGroup")
    assert release > first_input
    # Alongside the answer's snapshot: its capture, or the check that the capture
    # taken while the settle waited still stands (`Tab.snapshot`: the revision token).
    alongside_release = recorder.overlapping(release)
    assert any(
        recorder.sent[i][0] == "Page.getFrameTree"
        or "revision token" in str((recorder.params[i] or {}).get("expression", ""))
        for i in alongside_release
    )
    parse(result.content)


@pytest.mark.browser
async def test_a_settle_waits_in_the_observers_world_it_already_has(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """An action's wait for quiet runs in the page observer's world the tab already
    knows (made once per document), not in one asked for on every action; after a
    navigation it is found again, and the click after it still settles."""
    tab, xml = await open_tab(page, pages_server.url("tools-round-trips.html"))
    await act(tab, "click", {"id": eid_of(xml, "button", "Inner")})
    recorder = Recorder(page)
    result = await act(tab, "click", {"id": eid_of(xml, "button", "Plain")})
    assert "Plain clicked" in result.content
    worlds = [
        params["worldName"]
        for method, params in zip(recorder.methods(), recorder.params, strict=True)
        if method == "Page.createIsolatedWorld"
    ]
    assert "trimtab-revisions" not in worlds, worlds
    navigated = await act(tab, "navigate", {"url": pages_server.url("tools-round-trips.html")})
    assert not navigated.is_error, navigated.content
    again = await act(tab, "click", {"id": eid_of(navigated.content, "button", "Plain")})
    assert "Plain clicked" in again.content


@pytest.mark.browser
async def test_the_main_frame_is_known_without_asking(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """Once the page observer is in, the tab names its main frame without a round trip,
    as the browser names it, also after a navigation; an element of the main document
    is located with it, so reading where and whether to press, and pressing, ask the
    browser for no frame tree."""
    tab, xml = await open_tab(page, pages_server.url("tools-round-trips.html"))
    for _ in range(2):
        recorder = Recorder(page)
        frame = await tab.main_frame_id()
        assert recorder.methods() == []
        tree = await page.send("Page.getFrameTree")
        assert frame == tree["frameTree"]["frame"]["id"]
        element, info = await locate_with_info(tab, eid_of(xml, "button", "Plain"))
        assert element.frame_id == frame
        # The press's own steps, outside an action's watch (whose capture taken ahead
        # reads the frame tree for its own reasons, at a time of its own).
        recorder = Recorder(page)
        aim, reason, watched = await point_and_consent(tab, element, info, click_reason)
        assert (reason, watched) == (None, frame)
        assert await click_element(page, element, info, tab.latest, aim) is None
        assert "Page.getFrameTree" not in recorder.methods()
        # One world of Trimtab's own, for the submit check and the press witness.
        assert recorder.methods().count("Page.createIsolatedWorld") == 1
        assert await page.evaluate("document.getElementById('plain').textContent") == (
            "Plain clicked"
        )
        await act(tab, "navigate", {"url": pages_server.url("tools-round-trips.html")})
        tab.forget()  # the next snapshot shows the page whole, not "as you last saw it"
        xml = (await tab.snapshot()).xml


@pytest.mark.browser
async def test_the_submit_check_and_the_press_witness_share_one_object(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """A click reads whether it may submit and watches where its presses land from one
    object of the element in Trimtab's own world, made once per call: one world and one
    resolve into it, not one each; the next click makes its own, and lands too."""
    tab, xml = await open_tab(page, pages_server.url("tools-round-trips.html"))
    for _ in range(2):
        await page.evaluate("document.getElementById('plain').textContent = 'Plain'")
        recorder = Recorder(page)
        result = await act(tab, "click", {"id": eid_of(xml, "button", "Plain")})
        assert not result.is_error, result.content
        assert await page.evaluate("document.getElementById('plain').textContent") == (
            "Plain clicked"
        )
        sent = list(zip(recorder.methods(), recorder.params, strict=True))
        worlds = [p["worldName"] for m, p in sent if m == "Page.createIsolatedWorld"]
        assert worlds.count("trimtab-driver") == 1, worlds
        # (The settle resolves the element once more, in the page observer's world.)
        resolves = [p for m, p in sent if m == "DOM.resolveNode"]
        resolved = [p for p in resolves if p.get("objectGroup") and "executionContextId" in p]
        assert len(resolved) == 1, resolved


@pytest.mark.browser
async def test_typing_reads_the_listeners_of_the_fields_own_objects(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """To tell whether the page hears keys on a field's way up (here on its parent),
    `type` asks the browser for the listeners of the field's own objects, without
    finding each node of the path again; it then types key by key, and the page hears
    them."""
    tab, xml = await open_tab(page, pages_server.url("tools-round-trips.html"))
    recorder = Recorder(page)
    result = await act(tab, "type", {"id": eid_of(xml, "input", 'type="search"'), "text": "hat"})
    assert "typed key by key" in (parse(result.content).findtext(".//note") or "")
    assert "Keys heard" in result.content
    methods = recorder.methods()
    # The field, its label, the div, main, body, html, the document and the window.
    assert methods.count("DOMDebugger.getEventListeners") == 8
    assert "DOM.describeNode" not in methods


@pytest.mark.browser
async def test_click_on_a_child_of_the_element_reaches_it(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """A button whose inside is a span: the hit test finds the span, which is inside
    the button, so the click goes ahead and the button's handler runs."""
    tab, xml = await open_tab(page, pages_server.url("tools-round-trips.html"))
    result = await act(tab, "click", {"id": eid_of(xml, "button", "Inner")})
    assert "Inner clicked" in result.content


@pytest.mark.browser
async def test_covered_submit_is_refused_before_consent_is_asked(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """A submit button under a banner: read together with the consent facts, the cover
    still decides the answer (a refusal naming the banner, no consent asked), nothing is
    submitted, and the call's objects are released though it was refused."""
    tab, _ = await open_tab(page, pages_server.url("tools-round-trips.html"))
    # The pipeline hides what is covered, so the id comes from the page uncovered.
    await page.evaluate("document.getElementById('cover').style.display = 'none'")
    xml = (await act(tab, "capture_snapshot", {})).content
    send = eid_of(xml, "button", "Send the form")
    await page.evaluate("document.getElementById('cover').style.display = ''")
    recorder = Recorder(page)
    result = await run_tool(tab, "click", {"id": send})
    assert result.is_error
    assert result.consent is None
    assert "is covered by" in result.content
    assert 'dom-id="cover"' in result.content
    assert recorder.methods().count("Runtime.releaseObjectGroup") == 1
    assert "Input.dispatchMouseEvent" not in recorder.methods()
    assert await page.evaluate("location.pathname.endsWith('tools-round-trips.html')")
