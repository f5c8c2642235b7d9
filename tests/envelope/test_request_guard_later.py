"""The request guard after an action and for what the agent typed: an autosave the page
sends after typing stops is held in a trailing window and asked about after the call
answered (a no fails it, a yes sends it once, Stop withdraws it); text the agent typed,
or a secret field's value, does not leave for another site by a GET."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import trio

from pycdp_bridge import PageTarget
from tests.envelope.test_request_guard import eid, snapshot
from tests.support.handlers_host import SESSION, Host, open_host
from tests.support.link_host import TAB, open_link_host
from tests.support.recorder import Recorder
from trimtab.tab import TRAILING_SECONDS, trailing_windows

pytestmark = pytest.mark.browser

FORUM = "forum.test"
TRACKER = "tracker.test"
# The page saves a draft this long after typing stops.
AUTOSAVE = 1.2


@pytest.fixture
async def host(page: PageTarget, site: Recorder, nursery: trio.Nursery) -> AsyncIterator[Host]:
    """Handlers of a host on the forum's reply page."""
    async with open_host(page, site.url(FORUM, "guard-later.html"), nursery) as host:
        yield host


def later_questions(host: Host) -> list[dict[str, Any]]:
    return [dict(q) for q in host.person.asked if q.get("after")]


async def text_of(host: Host, element: str) -> str:
    return str(await host.evaluate(f"document.getElementById('{element}').textContent"))


async def until(host: Host, element: str, text: str) -> None:
    """Wait until the page shows ``text`` in ``element``."""
    with trio.fail_after(15):
        while text not in await text_of(host, element):
            await trio.sleep(0.05)


async def windows_closed() -> None:
    with trio.fail_after(15):
        while trailing_windows():
            await trio.sleep(0.05)


async def test_an_autosave_after_typing_is_asked_after_the_call_and_a_no_keeps_it(
    host: Host, site: Recorder
) -> None:
    """Typing into a comment whose page saves a draft 1.2 s after typing stops: the POST
    the page sends once the action is over is held and asked about in Trimtab's words as
    sent after the action; the no fails it (the forum never sees it, the page sees it
    fail), and the next answer tells the model."""
    comment = eid(await snapshot(host), "textarea", "Comment")
    host.person.allow = False
    answered = await host.tool("type", id=comment, text="Try a double uni knot")
    await until(host, "status", "Draft not saved (TypeError)")
    (question,) = later_questions(host)
    assert question["what"] == "request"
    assert question["reason"] == (
        f"After the agent typed into it, the page sends a POST request to http://{FORUM}, "
        "where it may change something"
    )
    assert question["request"]["url"] == site.url(FORUM, "api/drafts")
    assert question["element"] == f'<textarea id="{comment}"/>'
    assert site.sent("/api/drafts") == []
    await windows_closed()
    after = await host.tool("capture_snapshot")
    # Told in the answer being built when the window held it, or in the next one.
    told = [a for a in (answered, after) if a["held"]]
    assert len(told) == 1
    note = f"After your earlier action: POST {site.url(FORUM, 'api/drafts')} was held: not sent"
    assert note in told[0]["content"]
    assert [(h["method"], h["sent"]) for h in told[0]["held"]] == [("POST", False)]


async def test_a_yes_after_the_call_sends_the_autosave_once(host: Host, site: Recorder) -> None:
    """The person's yes to the autosave asked after the call sends it once: the forum
    gets the draft, the page shows it saved."""
    comment = eid(await snapshot(host), "textarea", "Comment")
    await host.tool("type", id=comment, text="Try a double uni knot")
    await until(host, "status", "Draft saved")
    assert len(later_questions(host)) == 1
    assert [r.body for r in site.sent("/api/drafts")] == ['{"draft":"Try a double uni knot"}']


async def test_a_page_too_busy_to_run_its_debounce_in_time_is_still_held(
    host: Host, site: Recorder
) -> None:
    """A renderer kept busy past the window's seconds (a starved machine, a heavy page)
    runs the autosave's timer only after them: the window waits for the page's clock,
    so the POST is still held and asked about, and the no keeps it from the forum."""
    comment = eid(await snapshot(host), "textarea", "Comment")
    host.person.allow = False
    await host.tool("type", id=comment, text="Try a double uni knot")
    busy = TRAILING_SECONDS + 0.5
    await host.evaluate(f"{{ const end = Date.now() + {busy * 1000}; while (Date.now() < end); }}")
    await until(host, "status", "Draft not saved (TypeError)")
    assert [q["request"]["url"] for q in later_questions(host)] == [site.url(FORUM, "api/drafts")]
    assert site.sent("/api/drafts") == []
    await windows_closed()


async def test_stop_withdraws_the_question_and_fails_the_autosave(
    host: Host, site: Recorder
) -> None:
    """While the autosave's question is open after the call answered, the person's Stop
    (``task_stop``) withdraws it at once and fails the request: nothing reaches the forum."""
    comment = eid(await snapshot(host), "textarea", "Comment")
    host.person.allow = None
    await host.tool("type", id=comment, text="Try a double uni knot")
    with trio.fail_after(15):
        await host.person.question.wait()
    assert await host.request("task_stop", session=SESSION) == {"ended": 1}
    await until(host, "status", "Draft not saved (TypeError)")
    assert len(host.person.withdrawn) == 1
    assert site.sent("/api/drafts") == []
    await windows_closed()


async def test_the_window_ends_and_the_page_sends_on_its_own_afterwards(
    host: Host, site: Recorder
) -> None:
    """A click that sets nothing off opens a window that holds nothing and ends after
    `TRAILING_SECONDS`: then the page's own POST goes straight through, unasked."""
    await host.tool("click", id=eid(await snapshot(host), "button", "Preview"))
    assert trailing_windows() == 1
    await trio.sleep(TRAILING_SECONDS)
    await windows_closed()
    sent = "fetch('/api/after', {method: 'POST', body: 'later'}).then((r) => r.status)"
    assert await host.evaluate(sent) == 200
    assert host.person.asked == []


async def test_the_next_action_takes_over_the_window(host: Host, site: Recorder) -> None:
    """Typing, then clicking at once: the window ends at the next action, whose own
    guard holds the autosave (asked as that click's request), so nothing leaves unasked."""
    content = await snapshot(host)
    host.person.allow = False
    await host.tool("type", id=eid(content, "textarea", "Comment"), text="A blood knot")
    clicked = await host.tool("click", id=eid(content, "button", "Preview"))
    await until(host, "status", "Draft not saved (TypeError)")
    assert site.sent("/api/drafts") == []
    assert [q["what"] for q in host.person.asked] == ["request"]
    del clicked


async def test_typed_text_does_not_leave_for_another_site_by_a_get(
    host: Host, site: Recorder
) -> None:
    """An "instant search" widget that loads what the agent typed as an image from its
    own site: the GET carrying the typed text is held and goes to the site question,
    naming it as the agent's typed text; a no keeps it from the tracker; the widget's
    pixel that carries nothing typed goes unasked."""
    content = await snapshot(host)
    host.person.allow = False
    await host.tool("click", id=eid(content, "button", "Preview"))
    assert [r.path for r in site.sent("/api/pixel")] == ["/api/pixel?page=thread"]
    assert host.person.asked == []
    await host.tool("type", id=eid(content, "input", "Search"), text="light tippet knot")
    await until(host, "search-status", "Searched")
    (question,) = host.person.asked
    assert (question["what"], question["site"]) == ("site", f"http://{TRACKER}")
    assert (
        "sends text the agent typed in a GET request to http://tracker.test" in (question["reason"])
    )
    assert site.sent("/api/suggest") == []


async def test_a_secret_fields_value_does_not_leave_for_another_site(
    host: Host, site: Recorder
) -> None:
    """A widget that sends the password field's value (masked in the XML) to its own
    site in a GET is held and asked about; a no keeps it from the tracker."""
    content = await snapshot(host)
    assert "trout-season-42" not in content
    host.person.allow = False
    answer = await host.tool("click", id=eid(content, "button", "Check password strength"))
    (question,) = host.person.asked
    assert question["what"] == "site"
    assert "sends a secret field's value in a GET request to" in question["reason"]
    assert site.sent("/api/strength") == []
    assert "Strength unknown" in answer["content"]


async def test_an_outside_clients_autosave_is_asked_after_its_call(
    page: PageTarget, site: Recorder
) -> None:
    """Over the link (``trimtab call``), the autosave the client's typing set off is
    asked about in the side panel after the call answered; the no keeps it from the
    forum, and the client's next call is told."""
    async with open_link_host(page, site.url(FORUM, "guard-later.html")) as link:
        await link.share(TAB)
        code, out, err = await link.trimtab("snapshot")
        assert code == 0, err
        comment = eid(out, "textarea", "Comment")
        code, typed, err = await link.trimtab("call", "type", f"id={comment}", "text=A clinch knot")
        assert code == 0, err
        question = await link.answer(allow=False)
        assert question["after"] is True
        assert question["reason"].startswith("After the agent typed into it, the page sends")
        with trio.fail_after(15):
            while "Draft not saved" not in str(
                await page.evaluate("document.getElementById('status').textContent")
            ):
                await trio.sleep(0.05)
        assert site.sent("/api/drafts") == []
        code, out, err = await link.trimtab("snapshot")
        assert code == 0, err
        # Told with the answer being built when it was held, or with the next one.
        assert "After your earlier action: POST" in typed + out, (typed, out)
