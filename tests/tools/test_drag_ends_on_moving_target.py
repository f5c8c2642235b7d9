"""A drag ends on the element its `to` names even when the drag moves it (issue 25,
point 1, a drag's end): on a jQuery-UI-sortable-shaped list whose rows close up while
one is lifted, in a real headless Chromium."""

from __future__ import annotations

import pytest

from pycdp_bridge import PageTarget
from tests.support import StaticServer
from tests.support.xmltree import eid_of
from tests.tools.test_tools import act, open_tab, parse

pytestmark = pytest.mark.browser

PAGE = "press-sortable.html"


async def test_a_drop_follows_the_row_that_moved_up_under_the_dragged_one(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """Lifting Moby-Dick closes its gap, so Walden moves up from where it was aimed at:
    the pointer follows Walden with the button held, and the list drops Moby-Dick before
    Walden, not beside it; the answer says so and nothing else."""
    tab, xml = await open_tab(page, pages_server.url(PAGE))
    source = eid_of(xml, "clickable", "Moby-Dick")
    goal = eid_of(xml, "clickable", "Walden")
    result = await act(tab, "drag", {"id": source, "to": goal})
    parse(result.content)
    assert "Moby-Dick now comes before Walden" in result.content
    note = result.content.split("<note>")[1].split("</note>")[0]
    assert note == (
        f'&lt;li id="{source}"&gt;Moby-Dick&lt;/li&gt; landed before '
        f'&lt;li id="{goal}"&gt;Walden&lt;/li&gt;'
    )
    rows = await page.evaluate(
        "Array.from(document.querySelectorAll('#books li'), (row) => row.textContent)"
    )
    assert rows == ["Middlemarch", "Persuasion", "Bleak House", "Moby-Dick", "Walden"]
