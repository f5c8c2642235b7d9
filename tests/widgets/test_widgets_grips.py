"""Small icons, grips and covering pickers, compacted and operated in a real headless
Chromium on a page built with jQuery UI itself (``tests/pages/vendor``).

A click on a control under an open colour picker is refused with the picker named in
words and what closes it; Escape closes it and the click then goes through.
"""

from __future__ import annotations

import pytest
import trio

from pycdp_bridge import PageTarget
from tests.support import StaticServer
from tests.widgets.test_widgets import TIMEOUT, act, eid, open_tab, page_says
from trimtab.tools import run_tool

pytestmark = pytest.mark.browser

PAGE = "widgets-grips.html"
LOG = "document.getElementById('log').textContent"
PICKER_OPEN = "getComputedStyle(document.getElementById('picker')).display !== 'none'"


async def test_a_covering_picker_is_named_and_escape_closes_it(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """A click on a button under an open colour picker is refused naming the picker in
    words and that Escape or a click outside closes it; Escape closes it, and the click
    then reaches the button."""
    tab, now = await open_tab(page, pages_server.url(PAGE))
    await act(tab, "click", id=eid(now, "Colour"))
    assert await page_says(page, PICKER_OPEN) is True
    with trio.fail_after(TIMEOUT):
        refused = await run_tool(tab, "click", {"id": eid(now, "Apply colour")})
    assert refused.is_error, refused.content
    assert (
        'is covered by an open colour picker <div dom-id="picker"/> '
        "(press Escape or click outside it to close it)"
    ) in refused.content, refused.content
    assert await page_says(page, LOG) == ""
    await act(tab, "press", key="Escape")
    assert await page_says(page, PICKER_OPEN) is False
    await act(tab, "click", id=eid(now, "Apply colour"))
    assert await page_says(page, LOG) == "applied"
