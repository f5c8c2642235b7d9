"""Custom drop-downs over a hidden ``<select>`` built by the real libraries (Selectric,
Select2, choices.js; ``tests/pages/vendor``) and by hand, compacted in a real headless
Chromium.

The face a library draws is shown as the select it stands for, with its value and
options, and the hidden select is not shown again; `select` on the face's id opens
it and clicks the option with trusted clicks, through the direct transport and
through ``trimtab mcp``: the hidden select's value (read from the page) and the
face's value in the snapshot follow, and no press lands on anything but the face
and the option. A native select is chosen as before.
"""

from __future__ import annotations

import re

import pytest

from pycdp_bridge import PageTarget
from tests.support import StaticServer
from tests.support.link_host import TAB, open_link_host
from tests.support.outside import call
from tests.widgets.test_widgets import act, compacted, lines, open_tab, page_says, recapture
from trimtab.tools import run_tool

pytestmark = pytest.mark.browser

PAGE = "widgets-dropdowns.html"
SPEED = ("Standard (3-5 days)", "Express (next day)", "Pick up in store")
COUNTRY = ("France", "Germany", "Italy", "Spain")
CARD = ("No card", "Birthday", "Thank you")

# The page's own record of every mouse press, release and click, by what it reached:
# the drop-down's face, an item of an open list (by its text), or anything else.
RECORD_PRESSES = """(() => {
  window.presses = [];
  const where = (el) => {
    if (el.closest('[data-face]')) return 'face';
    const item = el.closest('li, [role="option"]');
    if (item) return 'option ' + item.textContent.trim();
    return 'elsewhere ' + el.localName + (el.className ? '.' + el.className : '');
  };
  for (const type of ['mousedown', 'mouseup', 'click']) {
    window.addEventListener(type, (e) => window.presses.push(type + ': ' + where(e.target)), true);
  }
  // The faces as a person finds them on screen: what the label's select is drawn as
  // (choices.js's box showing the chosen option, above the list it opens).
  for (const face of document.querySelectorAll('.selectric, .select2-selection, .choices__inner')) {
    face.dataset.face = '';
  }
})()"""
PRESSES = "window.presses"

# A drop-down made by hand, without a library: the select hidden by display:none, a
# face with a handler that opens a list, whose items set the select as Selectric does.
# Its list draws no item for "Huge", and its item "Giant" sets nothing (a broken one).
HANDMADE = """<main style="width:360px">
<p>Size</p>
<div class="pick">
  <select id="size" style="display:none">
    <option value="s">Small</option><option value="m" selected>Medium</option>
    <option value="l">Large</option><option value="xl">Huge</option>
    <option value="xxl">Giant</option>
  </select>
  <div class="shown" tabindex="0" style="border:1px solid;padding:4px;cursor:pointer">Medium</div>
  <ul class="list" style="display:none;margin:0;padding:0;list-style:none">
    <li data-v="s">Small</li><li data-v="m">Medium</li><li data-v="l">Large</li><li>Giant</li>
  </ul>
</div>
<p>Size chosen: <span id="said">m</span></p>
</main>
<script>
const select = document.getElementById("size");
const shown = document.querySelector(".shown");
const list = document.querySelector(".list");
shown.addEventListener("click", () => { list.style.display = "block"; });
list.addEventListener("click", (event) => {
  const item = event.target.closest("li");
  if (item.dataset.v) {
    select.value = item.dataset.v;
    select.dispatchEvent(new Event("change"));
    shown.textContent = item.textContent;
  }
  list.style.display = "none";
});
select.addEventListener("change", () => {
  document.getElementById("said").textContent = select.value;
});
</script>"""


def face_after(xml: str, label: str) -> str:
    """The id of the select that follows the text `label`."""
    match = re.search(re.escape(label) + r'\s*<select id="(\w+)"', xml)
    assert match is not None, f"no <select> after {label!r} in:\n{xml}"
    return match.group(1)


async def presses_on(page: PageTarget) -> set[str]:
    """What the page's presses, releases and clicks reached since it began recording."""
    presses = await page_says(page, PRESSES)
    assert isinstance(presses, list), presses
    return {str(p) for p in presses}


def pressed_on(option: str) -> set[str]:
    """A press, a release and a click on the face, then on the item of `option`."""
    return {
        f"{kind}: {where}"
        for kind in ("mousedown", "mouseup", "click")
        for where in ("face", f"option {option}")
    }


def options(names: tuple[str, ...]) -> str:
    return "|".join(names)


async def test_a_drawn_face_is_the_select_it_stands_for(page: PageTarget) -> None:
    """Selectric's, Select2's and choices.js's faces are each one select with the
    chosen option's value and all options, and neither hidden select nor Selectric's
    helper field is shown beside it; the native select stays as it was."""
    loaded = await compacted(page, PAGE)
    assert lines(loaded.compaction) == [
        "<h1>Delivery</h1>",
        "Speed",
        f'<select id="?" value="{SPEED[0]}" options="{options(SPEED)}"/>',
        "Chosen: std",
        "<h2>Address</h2>",
        "Country",
        f'<select id="?" value="France" options="{options(COUNTRY)}"/>',
        "Ships to: fr",
        "<h2>Wrapping</h2>",
        'Wrap <select id="?" value="None" options="None|Paper|Box"/>',
        "<h2>Card</h2>",
        "Message",
        f'<select id="?" value="No card" options="{options(CARD)}"/>',
        "Card: none",
    ]
    faces = [c for c in loaded.compaction.controls.values() if c.tag == "select"]
    drawn = [await page_says(page, f"document.querySelectorAll('select')[{i}].id") for i in (0, 1)]
    assert drawn == ["speed", "country"]
    # The ids name the faces (what a person clicks), not the hidden selects.
    assert [c.stands_for != 0 for c in faces] == [True, True, False, True]


async def test_select_opens_the_face_and_clicks_the_option(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """`select` by text on Selectric's face and on Select2's changes each hidden
    select's value (the page's change handler shows it) and the face's value in the
    snapshot, keeps its id, says what it chose, and every press reached the face or
    the chosen option."""
    tab, now = await open_tab(page, pages_server.url(PAGE))
    await page_says(page, RECORD_PRESSES)
    speed, country = face_after(now.xml, "Speed"), face_after(now.xml, "Country")
    result = await act(tab, "select", id=speed, value="Express (next day)")
    assert "chose 'Express (next day)'" in result.content, result.content
    assert await page_says(page, "document.getElementById('speed').value") == "exp"
    assert await page_says(page, "document.getElementById('chosen').textContent") == "exp"
    assert await presses_on(page) == pressed_on("Express (next day)")
    assert "stopped or redirected" not in result.content
    await page_says(page, "window.presses = []")
    result = await act(tab, "select", id=country, value="Italy")
    assert "chose 'Italy'" in result.content, result.content
    assert await page_says(page, "document.getElementById('country').value") == "it"
    assert await page_says(page, "document.getElementById('ships').textContent") == "it"
    # Select2 chooses on the release and closes its list at once: no click follows.
    presses = await presses_on(page)
    assert {"mousedown: face", "mousedown: option Italy", "mouseup: option Italy"} <= presses
    assert presses <= pressed_on("Italy"), presses
    after = await recapture(page)
    assert f'<select id="{speed}" value="Express (next day)" options="' in after.xml
    assert f'<select id="{country}" value="Italy" options="' in after.xml


async def test_select_opens_a_choices_face_and_clicks_the_option(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """`select` on choices.js's face (which holds its hidden select and its list)
    opens it and clicks "Thank you": the hidden select holds it, the page's change
    handler heard it, the face shows it with the same id, and the presses went down
    only on the face and that option."""
    tab, now = await open_tab(page, pages_server.url(PAGE))
    await page_says(page, RECORD_PRESSES)
    card = face_after(now.xml, "Message")
    result = await act(tab, "select", id=card, value="Thank you")
    assert "chose 'Thank you'" in result.content, result.content
    assert await page_says(page, "document.getElementById('card').value") == "thanks"
    assert await page_says(page, "document.getElementById('carded').textContent") == "thanks"
    # choices.js chooses on the press and closes its list at once: the release lands
    # on what lay under the list, as a person's does.
    presses = await presses_on(page)
    downs = {p for p in presses if p.startswith("mousedown")}
    assert downs == {"mousedown: face", "mousedown: option Thank you"}, presses
    after = await recapture(page)
    assert f'<select id="{card}" value="Thank you" options="{options(CARD)}"/>' in after.xml


async def test_an_option_the_select_lacks_is_refused_naming_the_options(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """A value the hidden select has no option for is refused with its options listed,
    and nothing is pressed; the one already chosen is said so, nothing pressed either."""
    tab, now = await open_tab(page, pages_server.url(PAGE))
    await page_says(page, RECORD_PRESSES)
    speed = face_after(now.xml, "Speed")
    result = await run_tool(tab, "select", {"id": speed, "value": "Overnight"})
    assert result.is_error
    assert "has no option 'Overnight'; options: <option>Standard (3-5 days)</option>" in (
        result.content
    )
    answer = await act(tab, "select", id=speed, value="std")
    assert "'Standard (3-5 days)' was already selected" in answer.content
    assert await page_says(page, PRESSES) == []


async def test_read_lists_every_option_of_a_drawn_face(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """`read` on Select2's face lists the hidden select's options, the chosen one said."""
    tab, now = await open_tab(page, pages_server.url(PAGE))
    result = await act(tab, "read", id=face_after(now.xml, "Country"))
    assert '<option value="fr" selected="true">France</option>' in result.content, result.content
    assert '<option value="es">Spain</option>' in result.content


async def test_a_native_select_is_chosen_as_before(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """The native select beside the drawn ones is set by `select` as before."""
    tab, now = await open_tab(page, pages_server.url(PAGE))
    await act(tab, "select", id=face_after(now.xml, "Wrap"), value="Paper")
    assert await page_says(page, "document.getElementById('wrap').value") == "Paper"


async def test_fill_chooses_on_a_drawn_face_beside_a_native_select(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """`fill` sets Select2's face and the native select in one call, each as `select`
    would: the face by clicks, the page's selects hold both."""
    tab, now = await open_tab(page, pages_server.url(PAGE))
    fields = [
        {"id": face_after(now.xml, "Country"), "value": "Spain"},
        {"id": face_after(now.xml, "Wrap"), "value": "Box"},
    ]
    await act(tab, "fill", fields=fields)
    assert await page_says(page, "document.getElementById('country').value") == "es"
    assert await page_says(page, "document.getElementById('wrap').value") == "Box"


async def test_a_hand_made_drop_down_is_one_too(page: PageTarget) -> None:
    """A face of no library (a focusable div beside a display:none select, its list
    hidden) is the select it stands for: the class is told by its form, not a name."""
    loaded = await compacted(page, HANDMADE)
    assert lines(loaded.compaction) == [
        "Size",
        '<select id="?" value="Medium" options="Small|Medium|Large|Huge|Giant"/>',
        "Size chosen: m",
    ]


async def test_a_hand_made_drop_down_is_operated_and_an_option_not_taken_is_an_error(
    page: PageTarget,
) -> None:
    """`select` "Large" on the hand-made face opens its list and clicks the item, and
    the select takes it; "Huge", which the list does not draw, and "Giant", whose item
    sets nothing, are errors naming the option, and the select keeps "Large"."""
    loaded = await compacted(page, HANDMADE)
    tab, now = await open_tab(page, loaded.model.url)
    size = face_after(now.xml, "Size")
    await act(tab, "select", id=size, value="Large")
    assert await page_says(page, "document.getElementById('said').textContent") == "l"
    result = await run_tool(tab, "select", {"id": size, "value": "Huge"})
    assert result.is_error
    # The note names the option (escaped, as page data in a note is).
    assert "did not show the option &lt;option&gt;Huge&lt;/option&gt;" in result.content
    result = await run_tool(tab, "select", {"id": size, "value": "Giant"})
    assert result.is_error
    assert "clicked the option &lt;option&gt;Giant&lt;/option&gt; in the list of" in result.content
    assert "but the select did not take it: it still holds 'Large'" in result.content
    assert await page_says(page, "document.getElementById('size').value") == "l"


async def test_an_outside_agent_chooses_on_a_drawn_face(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """Through ``trimtab mcp`` Selectric's and choices.js's faces are selects, and
    `select` by their ids chooses "Pick up in store" and "Birthday": the page's selects
    hold them and the answers show them."""
    async with (
        open_link_host(page, pages_server.url(PAGE)) as host,
        host.mcp_client() as client,
    ):
        await host.share(TAB)
        xml, is_error, _ = await call(client, "capture_snapshot")
        assert not is_error, xml
        speed = face_after(xml, "Speed")
        answer, is_error, _ = await call(client, "select", id=speed, value="Pick up in store")
        assert not is_error, answer
        assert f'<select id="{speed}" value="Pick up in store"' in answer, answer
        card = face_after(xml, "Message")
        answer, is_error, _ = await call(client, "select", id=card, value="Birthday")
        assert not is_error, answer
        assert f'<select id="{card}" value="Birthday"' in answer, answer
    assert await page_says(page, "document.getElementById('speed').value") == "pick"
    assert await page_says(page, "document.getElementById('card').value") == "bday"


async def test_a_face_whose_select_is_disabled_says_so_and_is_refused(page: PageTarget) -> None:
    """When the page disables the hidden select, its face says disabled and `select` on
    it is refused before anything is pressed."""
    loaded = await compacted(page, HANDMADE)
    tab, _ = await open_tab(page, loaded.model.url)
    await page_says(page, "document.getElementById('size').disabled = true")
    now = (await act(tab, "capture_snapshot")).content
    size = face_after(now, "Size")
    assert (
        f'<select id="{size}" value="Medium" options="Small|Medium|Large|Huge|Giant" '
        'disabled="true"/>'
    ) in now
    result = await run_tool(tab, "select", {"id": size, "value": "Large"})
    assert result.is_error
    assert "is disabled; it cannot be used right now" in result.content
    assert await page_says(page, "getComputedStyle(document.querySelector('.list')).display") == (
        "none"
    )
