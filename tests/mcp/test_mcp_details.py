"""What an MCP client nobody here wrote meets in ``trimtab mcp``: a real server process
and the ``mcp`` SDK's client, against a real host state and link on a headless page
(no extension): sharing explained, hints on the tools, arguments checked as the schema
says, JSON-RPC errors with their codes, and a call whose browser went away."""

from __future__ import annotations

import re

import pytest
import trio
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from pycdp_bridge import PageTarget
from tests.support import StaticServer
from tests.support.link_host import TAB, TIMEOUT, open_link_host
from tests.support.outside import call
from trimtab.tools import TOOLS, may_commit

pytestmark = pytest.mark.browser


async def test_nothing_shared_says_how_to_share_and_tools_carry_hints(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """With no tab shared, `tabs` answers an empty list (in its block) and how to share
    one, as the instructions do; reads are marked read-only and actions destructive; an unknown
    resource is invalid params naming the URI."""
    async with (
        open_link_host(page, pages_server.url("handlers-shop.html")) as host,
        host.mcp_client() as client,
    ):
        instructions = client.instructions or ""
        assert '"Share this tab with agents"' in instructions
        assert "side panel must stay open" in instructions
        text, is_error, _ = await call(client, "tabs")
        assert not is_error
        listing, _, how = text.partition(">>>\nNo tab is shared with agents yet. ")
        assert re.fullmatch(r"<<<PAGE DATA (\w+)>>>\n<tabs>\n</tabs>\n<<<END PAGE DATA \1", listing)
        assert how, text
        assert '"Share this tab with agents"' in text
        assert "side panel must stay open" in text
        text, is_error, _ = await call(client, "capture_snapshot")
        assert is_error
        assert text.startswith("not_shared: no tab is shared with agents. ")

        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        # `tabs` is the link's own listing over MCP (the shared tabs and those opened
        # from them), and every tool names its tab: no task listing, no switch_tab.
        for spec in (s for s in TOOLS if s.name not in ("tabs", "switch_tab")):
            hints = tools[spec.name].annotations
            assert hints is not None
            assert hints.read_only_hint is not spec.policy.side_effects, spec.name
            assert hints.destructive_hint is may_commit(spec), spec.name
        assert tools["capture_snapshot"].annotations.read_only_hint  # type: ignore[union-attr]
        assert tools["click"].annotations.destructive_hint  # type: ignore[union-attr]
        # Moving around never submits: not read-only, not destructive either.
        for name in ("navigate", "hover", "scroll"):
            hints = tools[name].annotations
            assert hints is not None
            assert not hints.read_only_hint
            assert not hints.destructive_hint, name
        assert tools["tabs"].annotations.read_only_hint  # type: ignore[union-attr]

        with pytest.raises(MCPError) as caught:
            await client.read_resource("trimtab://nothing-here")
        assert caught.value.code == INVALID_PARAMS
        assert "'trimtab://nothing-here'" in caught.value.message


async def test_tab_id_as_a_string_is_taken_and_unknown_arguments_refused(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """A tab id sent as a string of digits reads the tab; an argument the tool's schema
    does not have is refused by name before anything runs; a tab id that is not one is
    refused naming the value."""
    async with (
        open_link_host(page, pages_server.url("handlers-shop.html")) as host,
        host.mcp_client() as client,
    ):
        await host.share(TAB)
        text, is_error, meta = await call(client, "capture_snapshot", tab=str(TAB))
        assert not is_error, text
        assert "Outdoor shop" in text
        assert meta["kind"] == "baseline"
        text, is_error, _ = await call(client, "click", tab=TAB, id="x", force=True)
        assert is_error
        assert text == "click has no argument 'force'; it takes: id, tab"
        text, is_error, _ = await call(client, "tabs", all=True)
        assert is_error
        assert "tabs takes no arguments, not 'all'" in text
        text, is_error, _ = await call(client, "capture_snapshot", tab="seven")
        assert is_error
        assert text == "'tab' must be a tab id from `tabs`, not 'seven'"


async def test_every_tool_takes_the_one_optional_tab_and_the_schema_is_checked(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """Every tool offered that acts in a tab has the same ``tab`` property and none
    requires it, close_tab included (one rule: the only shared tab when absent), and a
    call whose arguments miss one the schema requires, or give one of the wrong type or
    range, is refused naming it before anything runs, in Trimtab's words (no page-data
    block)."""
    async with (
        open_link_host(page, pages_server.url("handlers-shop.html")) as host,
        host.mcp_client() as client,
    ):
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert "close_tab" in tools
        tabs = {name: tool.input_schema["properties"].get("tab") for name, tool in tools.items()}
        # The listings and saving a routine name no tab; running one does.
        for name in ("tabs", "routines", "save_routine"):
            del tabs[name]
        assert len({repr(prop) for prop in tabs.values()}) == 1, tabs
        assert tabs["click"] == {
            "type": "integer",
            "description": "A tab id from `tabs`; optional when one tab is shared.",
        }
        for name, tool in tools.items():
            assert "tab" not in tool.input_schema.get("required", []), name
        # The catalogue's own schemas are unchanged: the side panel's close_tab needs it.
        [close_tab] = [spec for spec in TOOLS if spec.name == "close_tab"]
        assert close_tab.input_schema["required"] == ["tab"]

        await host.share(TAB)
        text, is_error, _ = await call(client, "type", id="x")
        assert is_error
        assert text == "type needs the argument 'text' (it needs: id, text)"
        text, is_error, _ = await call(client, "check", id="x", on="yes")
        assert is_error
        assert text == "check's on must be true or false, not 'yes'"
        text, is_error, _ = await call(client, "select_text", id="x", text="y", occurrence=0)
        assert is_error
        assert text == "select_text's occurrence must be at least 1, not 0"
        text, is_error, _ = await call(client, "fill", fields=[{"id": "x"}])
        assert is_error
        assert text == "fill's fields[0] must have 'value'"
        # No tab named: the only shared one, whose task has no other tab to close.
        text, is_error, _ = await call(client, "close_tab")
        assert is_error
        assert text == "close_tab: this is the task's only tab"


async def test_a_call_in_flight_when_the_browser_goes_away_says_so(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """A `wait_for` waiting in the host when the host goes away (the browser quit)
    answers that the browser went away during the call; it is not sent again."""
    async with (
        open_link_host(page, pages_server.url("handlers-shop.html")) as host,
        host.mcp_client() as client,
    ):
        await host.share(TAB)
        results: list[tuple[str, bool, dict[str, object]]] = []
        async with trio.open_nursery() as nursery:

            async def wait() -> None:
                results.append(
                    await call(client, "wait_for", tab=TAB, text="never on this page", timeout=30)
                )

            nursery.start_soon(wait)
            with trio.fail_after(TIMEOUT):
                while not any(session.calls for session in host.link.sessions.values()):
                    await trio.sleep(0.02)
            host.closed.cancel()
        text, is_error, _ = results[0]
        assert is_error
        assert text.startswith(
            "link_closed: the browser or its extension went away during the call ("
        ), text
        assert "during hello" not in text
