"""What the envelope's price paid off the answer's path could break: the gate on tabs an
action opens is set beside the tool's first steps and lifted after the call, in the
background, so the action's input must still wait for it, a lift must never overtake
the tab's next gate, and between actions nothing of the page is held; and a request
the guard paused is never left hanging when the guard's session goes away."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import pytest
import trio

from pycdp_bridge import Browser, PageTarget
from pycdp_bridge import protocol as cdp
from tests.envelope.test_request_guard import eid, request_questions, snapshot, status
from tests.support.handlers_host import Host, open_host
from tests.support.recorder import Recorder
from trimtab.tab import trailing_windows
from trimtab.tab._paused import PATTERNS

pytestmark = pytest.mark.browser

SHOP = "shop.test"
# Seconds the relay peer takes to answer a gate: longer than the tool's steps before
# its input on a small page, so an input that did not wait would come first.
GATE_DELAY = 0.6


@pytest.fixture
async def inputs() -> list[float]:
    """When each of the host's mouse events reached the page (trio clock)."""
    return []


@pytest.fixture
async def host(
    page: PageTarget, site: Recorder, nursery: trio.Nursery, inputs: list[float]
) -> AsyncIterator[Host]:
    """Handlers of a host on the shop's account page, whose relay answers each gate
    after `GATE_DELAY` and notes when the host's input reaches the page."""

    async def noted(method: str) -> None:
        if method == "Input.dispatchMouseEvent":
            inputs.append(trio.current_time())

    async with open_host(
        page, site.url(SHOP, "guard-shop.html"), nursery, before_command=noted
    ) as host:
        host.peer.gate_delay = GATE_DELAY
        yield host


def gate_turns(log: list[tuple[str, float, object]]) -> list[tuple[object, float, float]]:
    """The gate requests in the order the relay got them, each (domains, asked, answered);
    asserts that each was asked only once the one before it was answered."""
    turns: list[tuple[object, float, float]] = []
    asked: tuple[float, object] | None = None
    for kind, when, domains in log:
        if kind == "asked":
            assert asked is None, f"a gate request ({domains}) overtook an unanswered one"
            asked = (when, domains)
        else:
            assert asked is not None
            assert asked[1] == domains
            turns.append((domains, asked[0], when))
            asked = None
    return turns


async def until(condition: Callable[[], bool], seconds: float = 10) -> None:
    with trio.fail_after(seconds):
        while not condition():
            await trio.sleep(0.02)


async def test_the_input_waits_for_the_gate_and_the_answer_not_for_its_lift(
    host: Host, inputs: list[float]
) -> None:
    """A click's input reaches the page only once its gate is up, however slow the
    extension is to set it; the answer does not wait for the gate's lift, and the next
    click's gate goes only once that lift was answered (set and lift alternate)."""
    details = eid(await snapshot(host), "button", "Show details")
    await host.tool("click", id=details)
    answered = trio.current_time()
    turns = gate_turns(host.peer.gate_log)
    (domains, _, gate_up), *rest = turns
    assert isinstance(domains, list)
    assert SHOP in domains
    assert inputs
    assert min(inputs) >= gate_up
    assert "Weighs 310 g" in str(await host.evaluate("document.body.innerText"))
    # The lift was still on its way (or not asked yet) when the answer came.
    assert all(done > answered for _, _, done in rest)
    inputs.clear()
    await host.tool("click", id=details)
    await until(lambda: len(host.peer.gate_log) == 8)
    (_, _, first_up), (lifted, _, lift_done), (again, second_asked, second_up), (last, _, _) = (
        gate_turns(host.peer.gate_log)
    )
    assert (lifted, last) == (None, None)
    assert isinstance(again, list)
    assert SHOP in again
    assert second_asked >= lift_done > first_up
    assert min(inputs) >= second_up


async def test_a_request_the_action_sends_is_held_while_its_gate_is_slow(
    host: Host, site: Recorder
) -> None:
    """With the gate slow to be set, what the click makes the page send is held and asked
    about as before: refused, it never reaches the site."""
    buy = eid(await snapshot(host), "button", "1-Click buy")
    host.person.allow = False
    answer = await host.tool("click", id=buy)
    assert [q["request"]["url"] for q in request_questions(host)] == [site.url(SHOP, "api/buy")]
    assert site.sent("/api/buy") == []
    assert await status(host) == "The purchase failed (TypeError)"
    assert "was held: not sent" in answer["content"]


async def sent_by_page(host: Host, site: Recorder, paused: list[str]) -> float:
    """The page sends a POST of its own (a timer's, no action of the agent's): the
    seconds until the page saw its answer. ``paused`` gets any pause of it."""
    before = len(site.sent("/api/buy"))
    script = (
        "(async () => { const t = performance.now();"
        " await fetch('/api/buy', {method: 'POST', body: 'sku=page'});"
        " return performance.now() - t; })()"
    )
    async with host.page.listen(cdp.events.FETCH_REQUEST_PAUSED) as events:
        with trio.fail_after(10):
            ms = float(await host.evaluate(script))
        while True:
            try:
                event = events.receive_nowait()
            except trio.WouldBlock:
                break
            paused.append(str(event.params.get("request", {}).get("url", "")))
    assert len(site.sent("/api/buy")) == before + 1
    return ms / 1000


async def test_a_request_the_page_sends_between_actions_is_neither_held_nor_delayed(
    host: Host, site: Recorder
) -> None:
    """Between actions the page's own POST to its site, which an action's guard would
    hold, is never paused and goes at once: after a scroll (no trailing window) and
    after a click once its trailing window ended, as before any action."""
    paused: list[str] = []
    details = eid(await snapshot(host), "button", "Show details")
    before = await sent_by_page(host, site, paused)
    await host.tool("scroll", direction="down")
    after_scroll = await sent_by_page(host, site, paused)
    await host.tool("click", id=details)
    host.state.set_off.end()  # the click's trailing window ends, as after 3 s
    await until(lambda: trailing_windows() == 0)
    after_click = await sent_by_page(host, site, paused)
    assert paused == []
    assert request_questions(host) == []
    # Nothing stands between the page and the site: no more than a local round trip.
    assert max(before, after_scroll, after_click) < 1.0, (before, after_scroll, after_click)


async def test_gates_stay_in_turn_when_the_tab_crashes_and_comes_back(
    host: Host, site: Recorder
) -> None:
    """A tab that crashed after an action (its gate's lift on its way) comes back with a
    reload whose gate goes after that lift, and the action after it is gated and holds
    what it sends as before."""
    details = eid(await snapshot(host), "button", "Show details")
    await host.tool("click", id=details)
    async with host.page.listen("Inspector.targetCrashed") as crashes:
        await host.page.execute(cdp.page_navigate("chrome://crash"))
        with trio.fail_after(10):
            await crashes.__anext__()
    reloaded = await host.tool("reload")
    assert not reloaded["is_error"], reloaded["content"]
    host.person.allow = False
    # The reload's answer is a new baseline, with the page's ids.
    await host.tool("click", id=eid(str(reloaded["content"]), "button", "1-Click buy"))
    await until(lambda: len(host.peer.gate_log) == 12)
    kinds = [
        "lift" if domains is None else "gate" for domains, _, _ in gate_turns(host.peer.gate_log)
    ]
    assert kinds == ["gate", "lift"] * 3
    assert site.sent("/api/buy") == []


async def test_a_request_paused_when_the_guards_session_goes_away_is_not_left_hanging(
    browser: Browser, site: Recorder
) -> None:
    """A request the guard's session paused (a host that died while the person was
    asked) does not hang the page once that session is gone: the browser lets it go on
    (Chrome sends it), and the page gets its answer."""
    page = await browser.new_page()
    await page.navigate(site.url(SHOP, "guard-shop.html"))
    attached = await browser.execute(cdp.target_attach_to_target(page.target_id, flatten=True))
    session = str(attached["sessionId"])
    async with browser.listen(cdp.events.FETCH_REQUEST_PAUSED, session_id=session) as paused:
        await browser.execute(cdp.fetch_enable(PATTERNS), session_id=session)
        await page.evaluate(
            "window.answered = null; void fetch('/api/buy', {method: 'POST', body: 'x'})"
            ".then((r) => { window.answered = r.status; }, (e) => { window.answered = e.name; });"
            " true"
        )
        with trio.fail_after(10):
            # The page's own requests (its favicon, fetched after the load) go on.
            while (event := await paused.receive()).params["request"]["url"] != site.url(
                SHOP, "api/buy"
            ):
                request_id = str(event.params["requestId"])
                await browser.execute(cdp.fetch_continue_request(request_id), session_id=session)
    assert await page.evaluate("window.answered") is None  # held
    await browser.execute(cdp.target_detach_from_target(session))
    with trio.fail_after(10):
        while (answered := await page.evaluate("window.answered")) is None:
            await trio.sleep(0.05)
    assert answered == 200
    assert [r.body for r in site.sent("/api/buy")] == ["x"]
