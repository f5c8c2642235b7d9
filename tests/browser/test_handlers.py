"""The host's request handlers over a fake relay peer in front of a real headless page."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import lxml.etree
import pytest
import trio
import trio.testing

from pycdp_bridge import PageTarget, protocol
from tests.support import StaticServer
from tests.support.handlers_host import SESSION, TAB, Host, open_host
from trimtab.browser import ToolCall, read_format_page
from trimtab.envelope import Answer, Question
from trimtab.native import HostContext, build_setup
from trimtab.tools import TOOLS
from trimtab.wire import Outbox, Request, RequestError

pytestmark = pytest.mark.browser

# One element with an id: its start tag and the text up to the next tag.
_ELEMENT = re.compile(r'<\w+ id="([^"]+)"[^>]*>[^<\n]*')
_ELEMENT_ID = re.compile(r' id="([^"]+)"')


@pytest.fixture
async def host(
    page: PageTarget, pages_server: StaticServer, nursery: trio.Nursery
) -> AsyncIterator[Host]:
    """Handlers of a host whose relay reaches the test page, loaded with the shop page."""
    async with open_host(page, pages_server.url("handlers-shop.html"), nursery) as host:
        yield host


def element_id(xml: str, text: str) -> str:
    """The eid of the first element of ``xml`` whose tag or text contains ``text``."""
    for match in _ELEMENT.finditer(xml):
        if text in match.group(0):
            return match.group(1)
    raise AssertionError(f"no element with {text!r} in:\n{xml}")


async def wait_until(host: Host, condition: str) -> None:
    """Poll the page until a JS condition holds (the page's own timers run meanwhile)."""
    with trio.fail_after(10):
        while not await host.evaluate(condition):
            await trio.sleep(0.02)


async def quiet(host: Host) -> None:
    """Wait until no frame of the tab reports its DOM as still changing (a load ended)."""
    state = host.state.tab(TAB)
    assert state is not None
    with trio.fail_after(10):
        while state.revisions.statistics().open_windows:
            await trio.sleep(0.02)


async def test_snapshot_returns_xml_and_stats(host: Host) -> None:
    """A snapshot is XML a real parser accepts, with the protocol's stats."""
    result = await host.request("snapshot", tab=TAB)
    root = lxml.etree.fromstring(result["xml"].encode())
    assert root.tag == "page"
    assert root.get("title") == "Handlers shop"
    assert result["kind"] == "baseline"
    stats = result["stats"]
    for field in ("tokens", "raw_tokens", "text_tokens", "dedup_saved", "trim_saved"):
        assert isinstance(stats[field], int), field
    assert stats["elements_in"] >= stats["elements_out"] > 0
    assert stats["raw_tokens"] > stats["tokens"] > 0
    assert 0 < stats["text_tokens"] < stats["raw_tokens"]
    assert "Trail tent" in result["xml"]


async def test_snapshot_reads_long_pages_in_slices(host: Host) -> None:
    """raw_tokens also counts a page whose HTML is longer than one relayed slice."""
    await host.evaluate(
        "document.getElementById('list').insertAdjacentHTML('beforeend',"
        " '<li>' + 'word '.repeat(250000) + '</li>'); 0"
    )
    result = await host.request("snapshot", tab=TAB)
    assert result["stats"]["raw_tokens"] > 250_000


async def test_tools_lists_every_tool_and_the_format_page(host: Host) -> None:
    """`tools` lists every tool with a JSON schema, and the model's format page."""
    result = await host.request("tools")
    assert [t["name"] for t in result["tools"]] == [spec.name for spec in TOOLS]
    for tool in result["tools"]:
        assert tool["description"]
        assert tool["input_schema"]["type"] == "object"
        assert isinstance(tool["input_schema"]["properties"], dict)
    assert result["format"] == read_format_page()
    assert "<page" in result["format"]


async def test_repeated_read_is_cached_and_an_action_never(host: Host) -> None:
    """A repeated read comes from cache, marked as such; an action always runs."""
    first = await host.tool("capture_snapshot")
    again = await host.tool("capture_snapshot")
    assert first["cached"] is False
    assert again["cached"] is True
    assert again["cached_from"] == first["call_id"]
    assert isinstance(again["cached_at"], float)
    assert again["note"]
    assert again["content"] == first["content"]
    assert again["side_effects"] is False

    found = await host.tool("find", text="Add  TO bag")
    found_again = await host.tool("find", text="add to bag")
    assert found_again["cached"] is True
    assert found_again["cached_from"] == found["call_id"]

    button = element_id(first["content"], "Details")
    clicks = [await host.tool("click", id=button) for _ in range(2)]
    assert [c["cached"] for c in clicks] == [False, False]
    assert all(c["side_effects"] and not c["is_error"] for c in clicks)


async def test_an_action_invalidates_cached_reads(host: Host) -> None:
    """After a click, the same read runs again: the click's diff showed what it changed,
    and the fresh look finds main exactly as that diff left it."""
    before = await host.tool("capture_snapshot")
    clicked = await host.tool("click", id=element_id(before["content"], "Add to bag"))
    assert "Clicks: 1" in clicked["content"]
    after = await host.tool("capture_snapshot")
    assert after["cached"] is False
    assert '<region name="main" unchanged="true"' in after["content"]


async def test_the_pages_own_change_invalidates(host: Host) -> None:
    """A change the page makes by itself later (a timer) makes the cached read run again."""
    before = await host.tool("capture_snapshot")
    assert (await host.tool("capture_snapshot"))["cached"] is True
    await host.evaluate("changeLater(50, 'Status: shipped'); 0")
    await wait_until(host, "document.getElementById('status').textContent.includes('shipped')")
    after = await host.tool("capture_snapshot")
    assert after["cached"] is False
    assert "Status: shipped" in after["content"]
    assert "Status: shipped" not in before["content"]


async def test_a_value_set_by_script_invalidates(host: Host) -> None:
    """A field value set by a script (no DOM mutation, no event) is not served stale."""
    snapshot = await host.tool("capture_snapshot")
    email = element_id(snapshot["content"], 'type="email"')
    first = await host.tool("read", id=email)
    assert (await host.tool("read", id=email))["cached"] is True
    await host.evaluate("document.getElementById('email').value = 'hiker@example.com'; 0")
    second = await host.tool("read", id=email)
    assert second["cached"] is False
    assert "hiker@example.com" in second["content"]
    assert "hiker@example.com" not in first["content"]


async def test_changes_in_shadow_roots_and_frames_invalidate(host: Host) -> None:
    """A change inside an open shadow root or a same-origin iframe is a page change."""
    await host.tool("capture_snapshot")
    await host.evaluate(
        "document.getElementById('host').shadowRoot.getElementById('inner')"
        ".textContent = 'Shadow changed'; 0"
    )
    shadow = await host.tool("capture_snapshot")
    assert shadow["cached"] is False
    assert "Shadow changed" in shadow["content"]
    await host.evaluate(
        "document.getElementById('frame').contentDocument.getElementById('review')"
        ".textContent = 'Two stars'; 0"
    )
    framed = await host.tool("capture_snapshot")
    assert framed["cached"] is False
    assert "Two stars" in framed["content"]


async def test_navigation_invalidates(host: Host, pages_server: StaticServer) -> None:
    """A navigation, to another document or within one, makes cached reads run again."""
    await host.tool("capture_snapshot")
    await host.evaluate("location.hash = 'deals'; 0")
    assert (await host.tool("capture_snapshot"))["cached"] is False
    await quiet(host)
    await host.tool("capture_snapshot")
    assert (await host.tool("capture_snapshot"))["cached"] is True
    await host.page.navigate(pages_server.url("handlers-other.html"))
    other = await host.tool("capture_snapshot")
    assert other["cached"] is False
    assert "Sleeping bags" in other["content"]
    # Right after a load the page is still changing; once quiet, reads are cached again.
    await quiet(host)
    await host.tool("capture_snapshot")
    assert (await host.tool("capture_snapshot"))["cached"] is True


async def test_errors_are_not_cached_and_refusals_are_content(host: Host) -> None:
    """A refused call answers is_error content (not an error reply) and is not cached."""
    await host.tool("capture_snapshot")
    refused = [await host.tool("read", id="nope") for _ in range(2)]
    assert all(r["is_error"] for r in refused)
    assert [r["cached"] for r in refused] == [False, False]
    clicked = await host.tool("click", id="zz9")
    assert clicked["is_error"] is True
    assert "zz9" in clicked["content"]


async def test_sessions_do_not_share_cached_results(host: Host) -> None:
    """Another agent session does not get this session's cached answer."""
    await host.tool("capture_snapshot", session="a")
    other = await host.tool("capture_snapshot", session="b")
    assert other["cached"] is False


async def test_bad_requests_are_refused_clearly(host: Host) -> None:
    """Missing or invalid fields and unknown tools are bad_request replies naming them."""
    unknown = await host.error("tool", session=SESSION, tab=TAB, name="fly", args={})
    assert unknown.code == "bad_request"
    assert "fly" in unknown.message
    assert "capture_snapshot" in unknown.message
    no_tab = await host.error("tool", session=SESSION, name="find", args={})
    assert (no_tab.code, "tab" in no_tab.message) == ("bad_request", True)
    text_tab = await host.error("snapshot", tab="7")
    assert (text_tab.code, "tab" in text_tab.message) == ("bad_request", True)
    negative = await host.error("highlight", tab=-1, eid=None)
    assert negative.code == "bad_request"
    bad_args = await host.error("tool", session=SESSION, tab=TAB, name="find", args=[1])
    assert (bad_args.code, "args" in bad_args.message) == ("bad_request", True)
    no_session = await host.error("tool", tab=TAB, name="find", args={})
    assert (no_session.code, "session" in no_session.message) == ("bad_request", True)
    no_eid = await host.error("highlight", tab=TAB)
    assert (no_eid.code, "eid" in no_eid.message) == ("bad_request", True)


async def test_forget_views_shows_every_region_whole_with_the_same_ids(host: Host) -> None:
    """After the panel's agent compacted its history (``forget_views``), its next
    capture_snapshot is taken afresh, not from the cache, and collapses no region, with
    the ids the agent was given before; an action's answer is still a diff."""
    first = await host.tool("capture_snapshot")
    add = element_id(first["content"], "Add to bag")
    await host.tool("click", id=add)
    seen = await host.tool("capture_snapshot")
    assert 'unchanged="true"' in seen["content"]
    assert await host.request("forget_views", session=SESSION, tab=TAB) == {"tabs": [TAB]}
    fresh = await host.tool("capture_snapshot")
    assert fresh["cached"] is False
    assert fresh["kind"] == "baseline"
    assert 'unchanged="true"' not in fresh["content"]
    assert "Footer text of the shop" in fresh["content"]
    assert set(_ELEMENT_ID.findall(fresh["content"])) == set(_ELEMENT_ID.findall(first["content"]))
    clicked = await host.tool("click", id=add)
    assert clicked["kind"] == "diff"
    assert "Clicks: 2" in clicked["content"]


async def test_forget_views_of_a_tab_the_host_does_not_hold_and_bad_fields(host: Host) -> None:
    """``forget_views`` names the tabs it forgot (none for a tab the host never held),
    and refuses an empty session or a bad tab by name."""
    assert await host.request("forget_views", session="other", tab=TAB + 1) == {"tabs": []}
    empty = await host.error("forget_views", session="", tab=TAB)
    assert (empty.code, "session" in empty.message) == ("bad_request", True)
    text_tab = await host.error("forget_views", session=SESSION, tab="7")
    assert (text_tab.code, "tab" in text_tab.message) == ("bad_request", True)


async def test_tab_shown_hides_credentials_in_the_url(host: Host) -> None:
    """``tab_shown`` gives the panel's agent its tab's URL with credentials hidden by the
    one rule (a sign-in token in the URL never reaches its first message), the rest of
    it and the title as they are, and refuses a URL that is not a string by name."""
    token = "Zx9" + "q7Lm2Vb8Rt4Yw1Kp6Hs3Nd5" * 2
    shown = await host.request(
        "tab_shown",
        title="Inbox — mail",
        url=f"https://mail.test/inbox?access_token={token}&folder=work",
    )
    assert shown["title"] == "Inbox — mail"
    assert token not in shown["url"]
    assert shown["url"].startswith("https://mail.test/inbox?access_token=")
    assert shown["url"].endswith("&folder=work")
    bad = await host.error("tab_shown", title="t", url=7)
    assert (bad.code, "url" in bad.message) == ("bad_request", True)


async def test_highlight_known_and_unknown_ids(host: Host) -> None:
    """Highlight draws the overlay on a known eid, errors on an unknown one, and clears."""
    early = await host.error("highlight", tab=TAB, eid="k3x")
    assert early.code == "stale_id"
    snapshot = await host.request("snapshot", tab=TAB)
    eid = element_id(snapshot["xml"], "Add to bag")
    assert await host.request("highlight", tab=TAB, eid=eid) == {"found": True}
    highlight = [m for m in host.peer.sent if m.get("method") == "Overlay.highlightNode"]
    assert highlight[-1]["params"]["backendNodeId"] > 0
    assert "highlightConfig" in highlight[-1]["params"]
    unknown = await host.error("highlight", tab=TAB, eid="zz9")
    assert unknown.code == "stale_id"
    assert "zz9" in unknown.message
    assert await host.request("highlight", tab=TAB, eid=None) == {"found": False}
    assert host.peer.kinds()[-1] == "Overlay.hideHighlight"


async def test_highlight_uses_the_agents_ids_too(host: Host) -> None:
    """An eid the agent saw (not the inspector) can be highlighted as well."""
    snapshot = await host.tool("capture_snapshot")
    eid = element_id(snapshot["content"], "Add to bag")
    assert await host.request("highlight", tab=TAB, eid=eid) == {"found": True}


async def test_highlight_finds_an_outside_clients_ids(host: Host) -> None:
    """An eid only an outside client's own view of the tab holds (the element its
    question is about) can be highlighted too."""
    call = ToolCall(session="link-1", tab=TAB, name="capture_snapshot", view="link-1")

    async def never(question: Question) -> Answer:
        raise AssertionError(f"a snapshot asked {question}")

    seen = await host.state.call_tool(call, never)
    eid = element_id(seen.content, "Add to bag")
    assert await host.request("highlight", tab=TAB, eid=eid) == {"found": True}


async def test_inspector_shows_what_the_agent_would_see(host: Host) -> None:
    """The inspector shows the whole page, collapsed as the agent saw it, every time."""
    first = await host.request("snapshot", tab=TAB)
    again = await host.request("snapshot", tab=TAB)
    assert first["kind"] == again["kind"] == "baseline"
    assert "Trail tent" in again["xml"]
    await host.tool("capture_snapshot")
    after_agent = await host.request("snapshot", tab=TAB)
    assert 'unchanged="true"' in after_agent["xml"]
    assert after_agent["stats"]["dedup_saved"] > 0


async def test_inspector_snapshots_do_not_move_the_agents_diff_base(host: Host) -> None:
    """The side panel's snapshot is not the base of the agent's next diff."""
    before = await host.tool("capture_snapshot")
    await host.evaluate("addToBag(); 0")
    await host.request("snapshot", tab=TAB)
    clicked = await host.tool("click", id=element_id(before["content"], "Details"))
    # The click's diff is against what the model last saw, so it includes the change
    # the page made before the inspector looked.
    assert clicked["kind"] == "diff"
    assert '<del lines="1">Clicks: 0</del>' in clicked["content"]
    assert "Clicks: 1" in clicked["content"]


async def test_an_id_only_the_inspector_showed_is_not_the_agents(host: Host) -> None:
    """The side panel's snapshot leaves the agent's id memory as it was: an id that
    only the inspector showed is stale to the agent, and the agent's next diff still
    shows the control it never saw as new."""
    first = await host.tool("capture_snapshot")
    # A control the agent has not seen yet, which the inspector shows with an id.
    await host.evaluate(
        "const later = Object.assign(document.createElement('button'),"
        " {type: 'button', textContent: 'Save for later'});"
        " later.onclick = () => { window.saved = true; };"
        " document.getElementById('add').after(later); 0"
    )
    shown = await host.request("snapshot", tab=TAB)
    inspector_id = element_id(shown["xml"], "Save for later")
    agent = host.state.tab(TAB)
    assert agent is not None
    assert inspector_id not in agent.memory.issued
    clicked = await host.tool("click", id=inspector_id)
    assert clicked["is_error"]
    assert f"stale id {inspector_id}" in clicked["content"]
    assert await host.evaluate("window.saved === true") is False
    diff = await host.tool("click", id=element_id(first["content"], "Details"))
    assert diff["kind"] == "diff"
    assert "Save for later" in diff["content"]


async def test_release_forgets_the_tab(host: Host) -> None:
    """Release drops the tab's state, detaches the debugger, and invalidates its reads."""
    first = await host.tool("capture_snapshot")
    await host.request("snapshot", tab=TAB)
    assert host.state.tab(TAB) is not None
    assert await host.request("release", tab=TAB) == {}
    assert host.state.tab(TAB) is None
    assert host.state.tracker.page_revision(TAB) is None
    assert host.peer.kinds()[-1] == "cdp_detach"
    with pytest.raises(RequestError) as caught:
        await host.request("highlight", tab=TAB, eid=element_id(first["content"], "Add to bag"))
    assert caught.value.code == "stale_id"
    again = await host.tool("capture_snapshot")
    assert again["cached"] is False
    assert host.peer.kinds().count("cdp_attach") == 2


async def test_release_of_an_unknown_tab_is_harmless(host: Host) -> None:
    """Releasing a tab the host never touched answers {} and sends nothing."""
    assert await host.request("release", tab=TAB + 1) == {}
    assert host.peer.sent == []


async def test_a_detached_tab_answers_target_closed_then_recovers(host: Host) -> None:
    """After the debugger detaches, a request re-attaches; a closed tab is target_closed."""
    await host.tool("capture_snapshot")
    host.peer.hub.feed({"type": "cdp_detached", "tab": TAB, "reason": "canceled_by_user"})
    again = await host.tool("capture_snapshot")
    assert again["cached"] is False
    assert host.peer.kinds().count("cdp_attach") == 2


async def test_a_crashed_tab_answers_page_crashed_then_recovers(
    host: Host, pages_server: StaticServer
) -> None:
    """Once the tab's page crashed a snapshot is a page_crashed error at once, a tool
    says so in its content, and navigate brings the page back."""
    await host.request("snapshot", tab=TAB)
    async with host.page.listen("Inspector.targetCrashed") as crashes:
        await host.page.execute(protocol.page_navigate("chrome://crash"))
        await crashes.__anext__()
    crashed = await host.error("snapshot", tab=TAB)
    assert crashed.code == "page_crashed"
    assert "navigate or reload" in crashed.message
    refused = await host.tool("find", text="Trail tent")
    assert refused["is_error"] is True
    assert "the page crashed" in refused["content"]
    back = await host.tool("navigate", url=pages_server.url("handlers-shop.html"))
    assert back["is_error"] is False
    # The page's changes are followed again: a repeated read is cached until it changes.
    await quiet(host)
    reads = [await host.tool("find", text="Trail tent") for _ in range(2)]
    assert [r["cached"] for r in reads] == [False, True]
    await host.evaluate("document.body.append('Trail tent, again')")
    assert (await host.tool("find", text="Trail tent"))["cached"] is False


async def test_a_dialog_answers_dialog_open_and_the_agent_can_answer_it(host: Host) -> None:
    """While the page shows a dialog a snapshot is a dialog_open error naming it, a tool
    answers with the dialog, and answer_dialog lets the page go on."""
    await host.request("snapshot", tab=TAB)
    await host.evaluate("setTimeout(() => { document.title = String(confirm('Sure?')); }, 0)")
    while host.page.open_dialog is None:
        await trio.sleep(0.02)
    blocked = await host.error("snapshot", tab=TAB)
    assert blocked.code == "dialog_open"
    assert "Sure?" in blocked.message
    found = await host.tool("find", text="Trail tent")
    assert found["is_error"] is True
    assert '<js-dialog type="confirm" message="Sure?"/>' in found["content"]
    # OK on a confirm commits: the host asks the person first, then runs it on their yes.
    host.person.allow = False
    refused = await host.tool("answer_dialog", accept=True)
    assert refused["consent"] == {"required": True, "granted": False}
    assert host.page.open_dialog is not None
    host.person.allow = True
    answered = await host.tool("answer_dialog", accept=True)
    assert [q["tool"] for q in host.person.asked] == ["answer_dialog", "answer_dialog"]
    assert answered["is_error"] is False
    assert answered["consent"]["granted"] is True
    assert await host.evaluate("document.title") == "true"


async def test_a_page_stuck_in_a_script_answers_page_unresponsive(
    host: Host, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A snapshot of a page whose script keeps the main thread busy ends with a
    page_unresponsive error after the page timeout (TRIMTAB_PAGE_TIMEOUT) instead of
    waiting for ever."""
    monkeypatch.setenv("TRIMTAB_PAGE_TIMEOUT", "1")
    await host.request("snapshot", tab=TAB)
    # Busy for a few seconds only: later tests may share this renderer process.
    await host.evaluate(
        "setTimeout(() => { const end = Date.now() + 4000; while (Date.now() < end); }, 0)"
    )
    await trio.sleep(0.2)
    stuck = await host.error("snapshot", tab=TAB)
    assert stuck.code == "page_unresponsive"
    assert "did not answer within 1 s" in stuck.message


async def test_the_production_setup_registers_the_handlers() -> None:
    """build_setup registers every request type of the protocol and connects the relay."""
    sink, _ = trio.testing.memory_stream_pair()
    context = HostContext(origin=None, outbox=Outbox(sink), debug=False)
    async with build_setup(context) as setup:
        assert {"snapshot", "tools", "tool", "highlight", "release", "answer"} <= set(
            setup.handlers
        )
        assert setup.on_relay_message is not None
        tools = await setup.handlers["tools"](Request("tools", 1, {"type": "tools", "id": 1}))
        assert len(tools["tools"]) == len(TOOLS)
