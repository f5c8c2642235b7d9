"""The actions bench's widget classes (issue 37): what a person operates on real sites,
built from the real libraries on the fixture pages (``tests/pages/vendor``).

Each class is tried on a freshly loaded page by reading only the XML and acting only
with the tools, then judged by the page's own state (the list's order, the slider's
value, the keys the terminal received, the select's value, the page's selection, the
element's size, the button's own log), never by the answer: a
class is done when the page shows what a person would have got.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from tests.support.xmltree import listed_lines

__all__ = ["WIDGET_CLASSES", "Says", "WidgetScenario"]

Act = Callable[[str, Mapping[str, object]], Awaitable[str]]
#: Evaluates an expression in the page and returns its JSON value.
Says = Callable[[str], Awaitable[Any]]
WidgetScenario = Callable[[str, Act, Says], Awaitable[bool]]


def _control(xml: str, tag: str, name: str) -> str:
    """The id of the one `<tag>` named `name` (its text, or an ``icon``/``label``), or
    of the one line of a `<links>`/`<buttons>` list that is its text."""
    found = [
        match.group(1)
        for match in re.finditer(rf'<{tag} id="(\w+)"([^>]*?)(?:/>|>([^<]*)</{tag}>)', xml)
        if match.group(3) == name or f'icon="{name}"' in match.group(2)
    ]
    found += [eid for _, eid, shown in listed_lines(xml, tag) if shown == name]
    if len(found) != 1:
        raise LookupError(f"expected one <{tag}> named {name!r}, found {found}")
    return found[0]


def _ids(xml: str, tag: str) -> list[str]:
    return re.findall(rf'<{tag} id="(\w+)"', xml)


async def _jquery_ui_sortable(xml: str, act: Act, says: Says) -> bool:
    await act(
        "drag",
        {
            "id": _control(xml, "clickable", "Head torch"),
            "to": _control(xml, "clickable", "Tent"),
            "place": "before",
        },
    )
    order = await says("document.getElementById('packing-order').textContent")
    return bool(order == "Head torch,Tent,Stove,Sleeping bag")


async def _sortablejs_grid(xml: str, act: Act, says: Says) -> bool:
    await act(
        "drag",
        {
            "id": _control(xml, "clickable", "Valley"),
            "to": _control(xml, "clickable", "Lake"),
            "place": "after",
        },
    )
    order = await says("document.getElementById('tiles-order').textContent")
    return bool(order == "Lake,Valley,Ridge,Camp,Forest,Summit")


async def _slider_drag(xml: str, act: Act, says: Says) -> bool:
    weight = _ids(xml, "slider")[2]
    await act("drag", {"id": weight, "dx": 120, "dy": 0})
    return int(str(await says("$('#weight').slider('value')"))) > 4


async def _slider_keys(xml: str, act: Act, says: Says) -> bool:
    await act("click", {"id": _ids(xml, "slider")[0]})
    await act("press", {"key": "ArrowRight"})
    values = await says("$('#price').slider('values')")
    return isinstance(values, list) and values[0] != 75 and values[1] == 300


async def _terminal_keys(xml: str, act: Act, says: Says) -> bool:
    terminal = _ids(xml, "textarea")[0]
    await act("type", {"id": terminal, "text": "status", "submit": True})
    return bool(await says("window.received") == [*"status", "Enter"])


async def _svg_shape(xml: str, act: Act, says: Says) -> bool:
    await act("click", {"id": _control(xml, "clickable", "green triangle")})
    return bool(await says("document.getElementById('chosen').textContent") == "triangle")


async def _single_character_tile(xml: str, act: Act, says: Says) -> bool:
    await act("click", {"id": _control(xml, "clickable", "7")})
    return bool(await says("document.getElementById('chosen').textContent") == "tile 7")


async def _selectric(xml: str, act: Act, says: Says) -> bool:
    await act("select", {"id": _ids(xml, "select")[0], "value": "Express (next day)"})
    return bool(await says("document.getElementById('speed').value") == "exp")


async def _select2(xml: str, act: Act, says: Says) -> bool:
    await act("select", {"id": _ids(xml, "select")[1], "value": "Italy"})
    return bool(await says("document.getElementById('country').value") == "it")


async def _choices(xml: str, act: Act, says: Says) -> bool:
    await act("select", {"id": _ids(xml, "select")[3], "value": "Thank you"})
    return bool(await says("document.getElementById('card').value") == "thanks")


async def _quote_in_a_paragraph(xml: str, act: Act, says: Says) -> bool:
    await act("select_text", {"text": "Herons stood in the shallows."})
    return bool(await says("window.getSelection().toString()") == "Herons stood in the shallows.")


_SIZE = "(el => [el.offsetWidth, el.offsetHeight])(document.getElementById('notes'))"


async def _resizable_textarea(xml: str, act: Act, says: Says) -> bool:
    notes = re.search(r'Notes <textarea id="(\w+)" resizable="both"', xml)
    if notes is None:
        raise LookupError("no resizable Notes textarea in the page")
    before = await says(_SIZE)
    await act("drag", {"id": notes.group(1), "dx": 80, "dy": 40})
    return bool(await says(_SIZE) == [before[0] + 80, before[1] + 40])


async def _covering_picker(xml: str, act: Act, says: Says) -> bool:
    await act("click", {"id": _control(xml, "button", "Colour")})
    apply = _control(xml, "button", "Apply colour")
    try:
        await act("click", {"id": apply})
    except RuntimeError as refused:
        if "covered by an open colour picker" not in str(refused):
            raise
    else:
        return False  # pressed through the picker: a person could not have
    await act("press", {"key": "Escape"})
    await act("click", {"id": apply})
    return bool(await says("document.getElementById('log').textContent") == "applied")


#: Class, page, scenario: in the order of issue 37's points.
WIDGET_CLASSES: tuple[tuple[str, str, WidgetScenario], ...] = (
    ("sortable list (jQuery UI)", "widgets-sortable-libraries.html", _jquery_ui_sortable),
    ("sortable grid (SortableJS)", "widgets-sortable-libraries.html", _sortablejs_grid),
    ("text quoted in a paragraph", "select-quote.html", _quote_in_a_paragraph),
    ("keys a terminal reads", "widgets-keys.html", _terminal_keys),
    ("svg shape", "widgets-marks.html", _svg_shape),
    ("single-character tile", "widgets-marks.html", _single_character_tile),
    ("drop-down over a select (Selectric)", "widgets-dropdowns.html", _selectric),
    ("drop-down over a select (Select2)", "widgets-dropdowns.html", _select2),
    ("drop-down over a select (choices.js)", "widgets-dropdowns.html", _choices),
    ("slider handle, dragged (jQuery UI)", "widgets-sliders.html", _slider_drag),
    ("resizable textarea, by its grip", "widgets-grips.html", _resizable_textarea),
    ("slider handle, arrow keys (jQuery UI)", "widgets-sliders.html", _slider_keys),
    ("covering colour picker, closed with Escape", "widgets-grips.html", _covering_picker),
)
