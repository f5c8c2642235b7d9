"""Ids that cannot move: within a page's life an id stays on the element it was issued
for, and a tool never acts on another element through it."""

from __future__ import annotations

import json
from collections.abc import Mapping

import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pycdp_bridge import PageTarget
from tests.support import StaticServer
from tests.support.xmltree import eid_of
from tests.tools.test_tools import act, open_tab
from trimtab.tab import Tab
from trimtab.tools import run_tool

pytestmark = pytest.mark.browser


async def test_popup_ok_does_not_take_the_covered_ok_id(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """A pop-up's OK gets an id of its own while the form's OK it covers still exists,
    and a click with the form's OK id from the earlier snapshot is refused as covered by
    the pop-up, unpressed."""
    tab, xml = await open_tab(page, pages_server.url("ids-popup.html"))
    form_ok = eid_of(xml, "button", "OK")
    opened = await act(tab, "click", {"id": form_ok})
    assert "Replace it?" in opened.content
    popup_ok = eid_of(opened.content, "button", "OK")
    assert popup_ok != form_ok
    covered = await run_tool(tab, "click", {"id": form_ok})
    assert covered.is_error
    # Still in the document under the pop-up: refused as covered by it, not as gone.
    assert covered.content.startswith(f'<button id="{form_ok}"/> is covered by an open pop-up')
    assert "Replace it?" in covered.content, covered.content
    assert await page.evaluate("document.getElementById('status').textContent") == ""
    replaced = await act(tab, "click", {"id": popup_ok})
    assert "Replaced report.pdf" in replaced.content


async def test_replaced_element_is_refused(page: PageTarget, pages_server: StaticServer) -> None:
    """An id whose element the page replaced by a different one (another name) is
    refused as stale, and nothing is clicked."""
    tab, xml = await open_tab(page, pages_server.url("ids-list.html"))
    first_delete = eid_of(xml, "button", "Delete")
    # Each item re-rendered with another title: the delete buttons are new nodes.
    await page.evaluate(
        "(() => { for (const li of [...document.querySelectorAll('#list li')])"
        " { const b = li.querySelector('.destroy'); const c = b.cloneNode(true);"
        " c.textContent = 'Remove'; b.replaceWith(c); } })()"
    )
    result = await run_tool(tab, "click", {"id": first_delete})
    assert result.is_error
    assert result.content.startswith(f"stale id {first_delete}"), result.content
    assert await page.evaluate("document.querySelectorAll('#list li').length") == 3


# --- the property, over random DOM changes ------------------------------------------------

# What the page's own code does to the list; `i` picks an item (modulo their number).
_CHANGES: Mapping[str, str] = {
    "add": "list.insertBefore(renderTodo(arg), items[i] || null)",
    "remove": "items[i] && items[i].remove()",
    "rename": "items[i] && (items[i].querySelector('label').textContent = arg)",
    "move": "items[i] && list.prepend(items[i])",
    "hide": "items[i] && items[i].classList.toggle('hidden')",
    "rerender": "items[i] && items[i].replaceWith(renderTodo(arg))",
    "heading": "document.querySelector('h1').textContent = arg",
}
_change = st.tuples(
    st.sampled_from(sorted(_CHANGES)),
    st.integers(min_value=0, max_value=6),
    st.sampled_from(["Buy milk", "Call mum", "Pay rent", "Buy milk (2)"]),
)


async def _connected(tab: Tab, backend_id: int) -> bool:
    """Whether the node is still in the document."""
    try:
        resolved = await tab.target.send("DOM.resolveNode", {"backendNodeId": backend_id})
    except Exception:
        return False
    reply = await tab.target.send(
        "Runtime.callFunctionOn",
        {
            "functionDeclaration": "function() { return this.isConnected; }",
            "objectId": resolved["object"]["objectId"],
            "returnByValue": True,
        },
    )
    return reply.get("result", {}).get("value") is True


async def _page_life(page: PageTarget, url: str, changes: list[tuple[str, int, str]]) -> None:
    """Load the page, apply the changes one by one with a snapshot after each, and check
    that no id ever names two elements while both exist, nor leaves a live element."""
    tab, _ = await open_tab(page, url)
    owner: dict[str, int] = {}  # eid → the node it last named
    held: dict[int, str] = {}  # node → the eid it last had
    for step, (kind, index, arg) in enumerate([("start", 0, ""), *changes]):
        if kind != "start":
            await page.evaluate(
                "(() => { const list = document.getElementById('list');"
                " const items = [...list.children];"
                f" const i = {index} % Math.max(items.length, 1); const arg = {json.dumps(arg)};"
                f" {_CHANGES[kind]}; }})()"
            )
        await tab.snapshot()
        latest = tab.latest
        assert latest is not None
        for eid, control in latest.controls.items():
            node = control.backend_node_id
            before = owner.get(eid)
            if before is not None and before != node:
                assert not await _connected(tab, before), (
                    f"step {step} {kind}: {eid} moved from node {before} (still on the page) "
                    f"to node {node}"
                )
            assert held.get(node, eid) == eid, (
                f"step {step} {kind}: node {node} had {held.get(node)} and now has {eid}"
            )
            owner[eid] = node
            held[node] = eid


async def test_an_id_never_names_two_live_elements(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """Over random DOM changes (items added, removed, renamed, moved, hidden, re-rendered),
    an id is never given to another element while the first still exists, and an element
    keeps its id for the page's life."""
    url = pages_server.url("ids-list.html")
    token = trio.lowlevel.current_trio_token()

    @settings(
        max_examples=12,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(changes=st.lists(_change, min_size=1, max_size=10))
    def check(changes: list[tuple[str, int, str]]) -> None:
        trio.from_thread.run(_page_life, page, url, changes, trio_token=token)

    await trio.to_thread.run_sync(check)
