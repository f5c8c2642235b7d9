"""Slider handles that write no ARIA (jQuery UI's), compacted in a real headless
Chromium from the library itself (``tests/pages/vendor``).

Each handle is a ``<slider>`` at its place on the track (``value="15%"``); `drag`
and the arrow keys on a clicked handle move it as a person's hand does, the page's
own value follows, and the next snapshot shows the new place. noUiSlider's handles
keep the value and bounds their ARIA gives.
"""

from __future__ import annotations

import re

import pytest

from pycdp_bridge import PageTarget
from tests.support import StaticServer
from tests.support.link_host import TAB, open_link_host
from tests.support.outside import call
from tests.widgets.test_widgets import act, compacted, lines, open_tab, page_says, recapture

pytestmark = pytest.mark.browser

_SLIDER = re.compile(r'<slider id="(\w+)"')


def sliders(xml: str) -> list[str]:
    """The ids of the page's sliders, in page order."""
    return _SLIDER.findall(xml)


async def test_each_handle_is_a_slider_at_its_place_on_the_track(page: PageTarget) -> None:
    """jQuery UI's range slider is two sliders at 15% and 60% (75 and 300 of 0-500),
    its one-handle slider one at 34% (4 of 1-10, its border counted), each beside the value the page
    shows; noUiSlider's handles say their ARIA value and bounds."""
    loaded = await compacted(page, "widgets-sliders.html")
    seen = lines(loaded.compaction)
    start = seen.index("<h2>Price</h2>")
    assert seen[start : start + 7] == [
        "<h2>Price</h2>",
        '<slider id="?" value="15%"/>',
        '<slider id="?" value="60%"/>',
        "Price: 75-300",
        "<h2>Weight</h2>",
        '<slider id="?" value="34%"/>',
        "Weight: 4",
    ]
    assert '<slider id="?" icon="handle" value="20.00" min="0.0" max="60.0"/>' in seen


async def test_drag_and_arrow_keys_move_a_handle(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """Dragging the weight handle right raises the page's value and its place; a click
    on the price's low handle then ArrowRight moves it one step, the high one stays."""
    tab, now = await open_tab(page, pages_server.url("widgets-sliders.html"))
    low, high, weight = sliders(now.xml)[:3]
    await act(tab, "drag", id=weight, dx=120, dy=0)
    assert int(str(await page_says(page, "$('#weight').slider('value')"))) > 4
    after = await recapture(page)
    assert f'<slider id="{weight}" value="34%"/>' not in after.xml
    await act(tab, "click", id=low)
    await act(tab, "press", key="ArrowRight")
    values = await page_says(page, "$('#price').slider('values')")
    assert isinstance(values, list), values
    assert (values[0] != 75, values[1]) == (True, 300), values
    assert await page_says(page, "document.getElementById('price-shown').textContent") == (
        f"{values[0]}-300"
    )
    assert high in (await recapture(page)).xml


async def test_an_outside_agent_drags_a_handle(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """Through ``trimtab mcp`` the weight handle is a slider, and a drag by its id moves
    the page's value and the slider's place in the answer."""
    async with (
        open_link_host(page, pages_server.url("widgets-sliders.html")) as host,
        host.mcp_client() as client,
    ):
        await host.share(TAB)
        xml, is_error, _ = await call(client, "capture_snapshot")
        assert not is_error, xml
        weight = sliders(xml)[2]
        answer, is_error, _ = await call(client, "drag", id=weight, dx=-60, dy=0)
        assert not is_error, answer
        assert f'<slider id="{weight}" value="' in answer, answer
    assert int(str(await page_says(page, "$('#weight').slider('value')"))) < 4
