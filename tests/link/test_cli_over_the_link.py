"""``trimtab snapshot`` and ``trimtab call`` as a shell agent runs them, against a real
host state and link on a headless page: values taken as the tool's schema says, exit
codes a script can tell apart, errors on stderr only, and diffs across commands."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import trio

from pycdp_bridge import PageTarget
from tests.support import StaticServer
from tests.support.link_host import TAB, open_link_host
from tests.support.outside import eid_on_line

pytestmark = pytest.mark.browser


async def test_a_string_argument_is_taken_as_text_even_when_it_looks_like_json(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """``type text=12345`` types the text 12345 (the schema wants a string); a boolean
    argument is still read as JSON; an argument the tool does not take is bad usage."""
    async with open_link_host(page, pages_server.url("handlers-shop.html")) as host:
        await host.share(TAB)
        code, out, err = await host.trimtab("snapshot")
        assert code == 0, err
        email = eid_on_line(out, 'type="email"')
        code, out, err = await host.trimtab(
            "call", "type", f"id={email}", "text=12345", "clear=true"
        )
        assert code == 0, err
        assert await page.evaluate("document.getElementById('email').value") == "12345"
        code, out, err = await host.trimtab(
            "call", "type", f"id={email}", "text=null", "clear=false"
        )
        assert code == 0, err
        assert await page.evaluate("document.getElementById('email').value") == "12345null"
        code, out, err = await host.trimtab("call", "type", f"id={email}", "txt=hello")
        assert (code, out) == (2, "")
        assert err == (
            "trimtab: usage: type has no argument 'txt'; it takes: id, text, submit, clear\n"
        )
        code, out, err = await host.trimtab("call", "type", f"id={email}", "clear=yes")
        assert (code, out) == (2, "")
        assert "type's clear is boolean, written as JSON" in err


async def test_arguments_are_checked_against_the_schema_in_one_line(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """A missing argument, one of the wrong type or range, or ``tab=`` for a tool that
    has none is bad usage (exit 2) in one stderr line before the link, and what the host
    itself refuses about the arguments is one line of Trimtab's words (exit 1), with no
    page-data block."""
    async with open_link_host(page, pages_server.url("handlers-shop.html")) as host:
        await host.share(TAB)
        for args, said in (
            (("type", "id=x"), "type needs the argument 'text' (it needs: id, text)"),
            (("check", "id=x", "on=3"), "check's on must be true or false, not 3"),
            (
                ("select_text", "id=x", "text=y", "occurrence=0"),
                "select_text's occurrence must be at least 1, not 0",
            ),
            (("click", "id=x", "tab=5"), "click has no argument 'tab': name the tab with --tab"),
        ):
            code, out, err = await host.trimtab("call", *args)
            assert (code, out, err) == (2, "", f"trimtab: usage: {said}\n"), args
        code, out, err = await host.trimtab("call", "find")
        assert (code, out) == (1, "")
        assert err == (
            "trimtab: tool_error: bad arguments for find: find needs at least one of text, "
            "role or region\n"
        )
        # close_tab's tab is --tab (or the only shared tab), as every tool's.
        code, out, err = await host.trimtab("call", "close_tab", "--tab", str(TAB))
        assert (code, out, err) == (
            1,
            "",
            "trimtab: tool_error: close_tab: this is the task's only tab\n",
        )


async def test_exit_codes_and_errors_on_stderr_only(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """Nothing shared: tabs lists none and says how to share, snapshot refuses saying
    the same (4); an unknown tool is bad usage
    (2); a tool's error goes to stderr only (1); a submit the person refuses is 4, with
    nothing submitted."""
    async with open_link_host(page, pages_server.url("consent-shop.html")) as host:
        code, out, err = await host.trimtab("tabs")
        assert (code, out) == (0, "")
        assert err.startswith("trimtab: no tab is shared with agents. ")
        code, out, err = await host.trimtab("snapshot")
        assert (code, out) == (4, "")
        assert err.startswith("trimtab: not_shared: no tab is shared with agents. ")
        assert '"Share this tab with agents"' in err
        assert err.count("\n") == 1
        await host.share(TAB)
        code, out, err = await host.trimtab("call", "frobnicate", "id=x")
        assert (code, out) == (2, "")
        assert err.startswith("trimtab: usage: unknown tool 'frobnicate'; the tools are: ")
        code, out, err = await host.trimtab("call", "click", "id=zz999")
        assert (code, out) == (1, "")
        assert err.startswith("trimtab: tool_error: ")
        assert "zz999" in err
        code, out, err = await host.trimtab("snapshot")
        assert code == 0, err
        email = eid_on_line(out, 'type="email"')
        code, out, err = await host.trimtab("call", "type", f"id={email}", "text=a@b.c")
        assert code == 0, err
        results: list[tuple[int, str, str]] = []
        async with trio.open_nursery() as nursery:

            async def press() -> None:
                results.append(await host.trimtab("call", "press", "key=Enter"))

            nursery.start_soon(press)
            ask = await host.answer(allow=False)
            assert ask["what"] == "submit"
        code, out, err = results[0]
        assert (code, out) == (4, "")
        assert err.startswith("trimtab: refused: ")
        assert "refused" in err
        assert await page.evaluate("location.search") == ""


async def test_consecutive_calls_answer_with_diffs(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """A click after a snapshot, each its own ``trimtab`` process, answers with a diff
    against that snapshot, as in one MCP session; another --session has its own view."""
    async with open_link_host(page, pages_server.url("handlers-shop.html")) as host:
        await host.share(TAB)
        code, out, err = await host.trimtab("snapshot")
        assert code == 0, err
        button = eid_on_line(out, "Add to bag")
        code, out, err = await host.trimtab("call", "click", f"id={button}", "--json")
        assert code == 0, err
        clicked = json.loads(out)
        assert clicked["kind"] == "diff", clicked["content"]
        assert "Clicks: 1" in clicked["content"]
        code, out, err = await host.trimtab("snapshot", "--session", "other", "--json")
        assert code == 0, err
        assert json.loads(out)["kind"] == "baseline"


def test_the_command_line_starts_without_the_mcp_sdk_or_the_host() -> None:
    """`trimtab call`, `tabs` and `snapshot` load neither the MCP SDK nor Trimtab's MCP
    server (only `trimtab mcp` does), nor the host's side of the link and the browser's
    state behind it: a shell agent pays their start-up on every step otherwise."""
    check = (
        "import sys, trimtab.cli; "
        "print(sorted(m for m in sys.modules if m == 'mcp' or m.startswith(("
        "'mcp.', 'trimtab.mcp', 'trimtab.link.server', 'trimtab.browser', 'trimtab.envelope'"
        "))))"
    )
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", done.stdout
