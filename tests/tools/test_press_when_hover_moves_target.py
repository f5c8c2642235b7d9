"""A press never lands on another element than the one its id names, whatever the page
does to its layout when the pointer arrives (issue 25, point 1): on a jQuery-UI-shaped
autocomplete whose hover state makes the list overflow, and for random hover-induced
shifts, in a real headless Chromium."""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any

import attrs
import pytest
import trio
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pycdp_bridge import Browser, PageTarget, launch_browser
from tests.support import TEST_PAGES, StaticServer, serve_static
from tests.support.targets import HitTestedAFrameLate, PressedAFrameLate, WrappedTarget
from tests.support.xmltree import eid_of
from tests.tools.test_tools import act, open_tab, parse
from trimtab.tab import Tab
from trimtab.tools import run_tool

pytestmark = pytest.mark.browser

PAGE = "press-autocomplete.html"
SUGGESTIONS = (
    "Rapids City, IL",
    "Rapid River, MI",
    "Iowa Rapids, IA",
    "Rapid City, SD",
    "Rapid Valley, SD",
    "Rapid Bay, AK",
)
PRESSES = ("mousedown", "mouseup", "click", "dblclick")


async def heard(page: PageTarget) -> list[tuple[str, str]]:
    """The presses the page heard, each with the suggestion (or tag) it reached."""
    log = json.loads(await page.evaluate("JSON.stringify(window.heard)"))
    return [(kind, where) for kind, where in log if kind in PRESSES]


async def test_click_picks_the_suggestion_named_when_the_hover_wraps_the_list(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """The hover border makes the list overflow and every suggestion wrap, so the point
    aimed at before the move is over the suggestion above: the click re-aims and picks
    the suggestion its id names, and the page hears no press anywhere else."""
    tab, xml = await open_tab(page, pages_server.url(PAGE))
    result = await act(tab, "click", {"id": eid_of(xml, "option", "Rapid City, SD")})
    parse(result.content)
    assert "Driving to Rapid City, SD" in result.content
    assert await heard(page) == [
        ("mousedown", "Rapid City, SD"),
        ("mouseup", "Rapid City, SD"),
        ("click", "Rapid City, SD"),
    ]
    assert await page.evaluate("document.getElementById('destination').value") == "Rapid City, SD"


async def test_hover_stays_on_the_suggestion_named(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """Hovering a suggestion whose list re-wraps under the pointer ends with the pointer
    on that suggestion (the one the page marks active), not on its neighbour."""
    tab, xml = await open_tab(page, pages_server.url(PAGE))
    await act(tab, "hover", {"id": eid_of(xml, "option", "Rapid Valley, SD")})
    active = await page.evaluate(
        "document.querySelector('.ui-menu-item-wrapper:hover').textContent"
    )
    assert active == "Rapid Valley, SD"
    assert await heard(page) == []


async def test_a_suggestion_that_keeps_leaving_the_pointer_is_refused_unpressed(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """When every move onto the suggestion moves it away again (a preview inserted
    above it on each hover), the click is refused with what is under the pointer now,
    and the page hears no press at all."""
    tab, xml = await open_tab(page, pages_server.url(PAGE))
    await page.evaluate(
        """(() => {
          // Each time the pointer enters a suggestion, one more row goes in above it;
          // the list grows instead of scrolling (scroll anchoring would hold it still).
          const menu = document.getElementById('ui-id-1');
          menu.style.maxHeight = 'none';
          menu.addEventListener('mouseover', (event) => {
            const item = event.target.closest('.ui-menu-item');
            if (!item) return;
            const nearby = document.createElement('li');
            nearby.className = 'ui-autocomplete-preview';
            nearby.style.height = '40px';
            nearby.textContent = 'Also nearby';
            item.before(nearby);
          });
        })()"""
    )
    result = await run_tool(
        tab, "click", {"id": eid_of(xml, "option", "Rapid Bay, AK")}, consented=True
    )
    assert result.is_error, result.content
    assert "moved away from under the pointer" in result.content
    assert "nothing was pressed" in result.content
    parse(f"<r>{result.content}</r>")
    assert await heard(page) == []
    assert await page.evaluate("document.getElementById('destination').value") == "Rap"


_LATE_LINKS = {"press": PressedAFrameLate, "hit test": HitTestedAFrameLate}


@pytest.mark.parametrize("late", list(_LATE_LINKS))
async def test_a_suggestion_that_swaps_with_its_neighbour_at_every_frame_is_pressed_where_it_stays(
    page: PageTarget, pages_server: StaticServer, late: str
) -> None:
    """With a 6 px preview row and an 11 px hover font, hovering "Rapid River, MI" moves
    "Rapids City, IL" under the still pointer and hovering that moves it back, at every
    frame; with each press (and each hit test) reaching the page a frame after it was
    sent, the click re-aims at a point that stays on the suggestion named, and no press
    reaches its neighbour (both found under load in CI: a round trip outlasted a frame,
    and a frame fell between the end of the pointer's watch and the hit test, which
    then saw the suggestion back under a pointer that would leave it again)."""
    tab = Tab.open(_LATE_LINKS[late](page))
    result = await run_tool(tab, "navigate", {"url": pages_server.url(PAGE)})
    assert not result.is_error, result.content
    await page.evaluate(
        """(() => {
          const menu = document.getElementById('ui-id-1');
          menu.style.setProperty('--hover-border', '0px');
          menu.style.setProperty('--hover-padding', '0px');
          menu.style.setProperty('--hover-font', '11px');
          menu.dataset.preview = 'above';
          menu.dataset.previewHeight = '6px';
        })()"""
    )
    named = "Rapid River, MI"
    result = await act(tab, "click", {"id": eid_of(result.content, "option", named)})
    assert await heard(page) == [("mousedown", named), ("mouseup", named), ("click", named)]
    assert f"Driving to {named}" in result.content


# Lays a new sheet over the whole page at every frame until stopped: the element under
# the still pointer changes at every frame, so the browser sends a trusted mouseover
# (on the new sheet) when each frame begins. Answered once a sheet has been laid out.
_FLICKER_JS = """new Promise((laidOut) => {
  if (window.flicker) window.flicker.stop();
  let sheet = null;
  const lay = () => {
    if (sheet) sheet.remove();
    sheet = document.createElement('div');
    sheet.id = 'sheet';
    sheet.style.cssText = 'position:fixed;inset:0;z-index:2147483647;background:white';
    document.body.append(sheet);
    frame = requestAnimationFrame(lay);
  };
  let frame = 0;
  lay();
  window.flicker = {stop() { cancelAnimationFrame(frame); sheet.remove(); }};
  requestAnimationFrame(() => requestAnimationFrame(() => laidOut(true)));
})"""


class _FlickerAtEverySteadyCheck(WrappedTarget):
    """A page whose layout flips under the still pointer at every check, however late
    the check comes: before the witness asks whether the pointer stays on the element,
    a new sheet comes over the whole page at every frame (so whenever the check
    listens, the frame it waits for begins with a mouseover outside the element), and
    before the hit test that follows, the sheets stop and go (so it finds the element
    again, wherever the pointer aims)."""

    async def before_send(
        self, method: str, params: Mapping[str, Any] | None, session_id: str | None
    ) -> None:
        # The pointer's watch begins as the witness is made, or on its own.
        steady = method == "Runtime.callFunctionOn" and "watchPointer(limit)" in str(
            (params or {}).get("functionDeclaration", "")
        )
        if steady or method == "DOM.getNodeForLocation":
            expression = _FLICKER_JS if steady else "window.flicker && window.flicker.stop()"
            await self.inner.send(
                "Runtime.evaluate",
                {"expression": expression, "awaitPromise": True},
                session_id=session_id,
            )


async def test_an_element_that_never_stays_under_the_pointer_is_refused_naming_the_flip(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """When at every try the pointer went over something else during a frame and the
    element came back under it, the click presses nothing and its refusal says the
    layout changes back and forth under the still pointer, naming what came over it."""
    tab = Tab.open(_FlickerAtEverySteadyCheck(page))
    opened = await run_tool(tab, "navigate", {"url": pages_server.url("handlers-shop.html")})
    assert not opened.is_error, opened.content
    result = await run_tool(tab, "click", {"id": eid_of(opened.content, "button", "Add to bag")})
    assert result.is_error, result.content
    assert "does not stay under the pointer" in result.content, result.content
    assert '<div dom-id="sheet"/> comes under the still pointer' in result.content, result.content
    assert "nothing was pressed" in result.content
    assert await page.evaluate("document.getElementById('count').textContent") == "Clicks: 0"


@attrs.frozen
class Chromium:
    """A headless Chromium and the pages server, run by their own trio loop in a thread,
    so that every hypothesis example (each a call of its own) acts in the same browser."""

    token: trio.lowlevel.TrioToken
    browser: Browser
    server: StaticServer

    def run(self, call: Callable[[], Awaitable[object]]) -> object:
        """Run `call` in the browser's loop and return what it returns."""
        return trio.from_thread.run(call, trio_token=self.token)


@pytest.fixture(scope="module")
def chromium() -> Iterator[Chromium]:
    """One browser for the module's property test, closed at its end."""
    started: queue.Queue[Chromium | BaseException] = queue.Queue()
    stop = threading.Event()

    async def serve() -> None:
        async with trio.open_nursery() as nursery:
            server: StaticServer = await nursery.start(serve_static, TEST_PAGES)
            async with launch_browser() as browser:
                started.put(Chromium(trio.lowlevel.current_trio_token(), browser, server))
                while not stop.is_set():
                    await trio.sleep(0.05)
            nursery.cancel_scope.cancel()

    def main() -> None:
        try:
            trio.run(serve)
        except BaseException as exc:  # told to the test instead of lost in the thread
            started.put(exc)

    thread = threading.Thread(target=main, name="chromium", daemon=True)
    thread.start()
    ready = started.get(timeout=60)
    if isinstance(ready, BaseException):
        raise ready
    try:
        yield ready
    finally:
        stop.set()
        thread.join(30)


@st.composite
def hover_shifts(draw: st.DrawFn) -> dict[str, object]:
    """What a site's hover state does to a suggestion: a border, padding, a font size,
    and, or not, a preview row inserted above the hovered item; and whether each press
    (and each hit test) reaches the page a rendered frame late (`_LATE_LINKS`)."""
    return {
        "border": draw(st.integers(0, 4)),
        "padding": draw(st.integers(0, 12)),
        "font": draw(st.integers(11, 22)),
        "preview": draw(st.none() | st.integers(6, 60)),
        "item": draw(st.integers(0, len(SUGGESTIONS) - 1)),
        "action": draw(st.sampled_from(["click", "double_click"])),
        "late": draw(st.sampled_from([None, *_LATE_LINKS])),
    }


@settings(max_examples=15, suppress_health_check=[HealthCheck.too_slow])
@given(shift=hover_shifts())
# Found in CI: the re-aim picked a point a third of a pixel below the list's clip edge,
# which the whole-pixel hit test gave to the suggestion and the mouse gave to <main>.
@example(
    shift={
        "border": 4,
        "padding": 3,
        "font": 16,
        "preview": 30,
        "item": 5,
        "action": "double_click",
        "late": None,
    }
)
# Found in CI under load: each suggestion's hover moves the other under the pointer, at
# every frame; a press a round trip after the hit test met the other phase.
@example(
    shift={
        "border": 0,
        "padding": 0,
        "font": 11,
        "preview": 6,
        "item": 1,
        "action": "double_click",
        "late": "press",
    }
)
@pytest.mark.long
def test_no_press_lands_outside_the_named_suggestion(
    chromium: Chromium, shift: dict[str, object]
) -> None:
    """For any hover-induced shift of the list (border, padding, font size, a row
    inserted above), on a link whose presses arrive at once or a frame late, every
    press, release and click the page hears reaches the suggestion the id names, or the
    tool refused and the page heard none."""
    chromium.run(lambda: _press_shifted(chromium, shift))


async def _press_shifted(chromium: Chromium, shift: dict[str, object]) -> None:
    """One example of the property, in a fresh tab of the shared browser."""
    page = await chromium.browser.new_page()
    try:
        with trio.fail_after(60):
            late = shift["late"]
            tab = Tab.open(page if late is None else _LATE_LINKS[str(late)](page))
            opened = await run_tool(tab, "navigate", {"url": chromium.server.url(PAGE)})
            assert not opened.is_error, opened.content
            xml = opened.content
            await page.evaluate(
                f"""(() => {{
                  const menu = document.getElementById('ui-id-1');
                  menu.style.setProperty('--hover-border', '{shift["border"]}px');
                  menu.style.setProperty('--hover-padding', '{shift["padding"]}px');
                  menu.style.setProperty('--hover-font', '{shift["font"]}px');
                  if ({json.dumps(shift["preview"])} !== null) {{
                    menu.dataset.preview = 'above';
                    menu.dataset.previewHeight = '{shift["preview"]}px';
                  }}
                }})()"""
            )
            named = SUGGESTIONS[int(str(shift["item"]))]
            eid = eid_of(xml, "option", named)
            result = await run_tool(tab, str(shift["action"]), {"id": eid}, consented=True)
            presses = await heard(page)
            if result.is_error:
                assert presses == [], result.content
                assert "nothing was pressed" in result.content
                return
            assert presses, result.content
            assert {where for _, where in presses} == {named}, (presses, result.content)
            value = await page.evaluate("document.getElementById('destination').value")
            assert value == named
    finally:
        await page.close()


async def test_a_press_lands_on_the_pixels_it_tested_at_a_clip_edge(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """A button clipped by its panel's edge at a fraction of a pixel shows a 3.4 px
    sliver: the point the hit test gives to the button is the point pressed, so the
    press lands on the button (never on the page under the clip edge) or is refused."""
    tab, xml = await open_tab(page, pages_server.url("press-clipped-edge.html"))
    result = await run_tool(
        tab, "click", {"id": eid_of(xml, "button", "Delete all saved searches")}, consented=True
    )
    log = json.loads(await page.evaluate("JSON.stringify(window.heard)"))
    if result.is_error:
        assert "nothing was pressed" in result.content
        assert log == []
    else:
        assert log == [["mousedown", "delete"], ["mouseup", "delete"], ["click", "delete"]]
