"""Finding a routine step's element again (`trimtab.routines.resolve`), without a
browser: pages as a snapshot's controls and XML lines, changed the ways sites change."""

from __future__ import annotations

import random
from collections.abc import Sequence

import attrs
from hypothesis import given, settings
from hypothesis import strategies as st

from trimtab.pipeline import Control
from trimtab.routines import PageSeen, Target, describe, resolve, row_key


@attrs.frozen
class Element:
    """One control of a generated page, with what a person sees of it."""

    who: int  # which element it is, whatever the page does to its id or place
    role: str
    name: str
    region: str = "main"
    heading: str = ""
    row: str = ""  # the text before it on its line (a row's first cell)


def page_of(elements: Sequence[Element], ids: Sequence[str] | None = None) -> PageSeen:
    """The page showing ``elements`` in this order (ids ``ids``, else e0, e1, ...)."""
    ids = ids or [f"e{i}" for i in range(len(elements))]
    controls = {
        eid: Control(eid, i, i, 0, e.role, e.name, e.region, heading=e.heading)
        for i, (eid, e) in enumerate(zip(ids, elements, strict=True))
    }
    lines = [
        f'{e.row + " | " if e.row else ""}<button id="{eid}">{e.name}</button>'
        for eid, e in zip(ids, elements, strict=True)
    ]
    return PageSeen("http://127.0.0.1/shop", controls, "<page>\n" + "\n".join(lines) + "\n</page>")


def who_is(page: PageSeen, elements: Sequence[Element], eid: str | None) -> int | None:
    """Which element ``eid`` names on ``page`` (built from ``elements``)."""
    return None if eid is None else elements[list(page.controls).index(eid)].who


def test_a_button_is_found_by_its_name_in_another_case_and_place() -> None:
    """The one "Place order" button is found after the page reordered and renamed its
    ids and wrote it in capitals."""
    before = [Element(0, "link", "Home"), Element(1, "button", "Place order")]
    target = describe("e1", page_of(before))
    assert target is not None
    after = [Element(1, "button", "PLACE  ORDER"), Element(0, "link", "Home")]
    page = page_of(after, ["x9", "y8"])
    assert resolve(target, page).eid == "x9"


def test_equals_are_told_apart_by_their_row_and_a_new_row_is_no_guess() -> None:
    """Three "Add to cart" buttons: the headlamp's is found by its row after the rows
    were reordered and one was added; with its row gone, none is taken."""
    rows = ["Trail mug", "Headlamp", "Map case"]
    before = [Element(i, "button", "Add to cart", row=row) for i, row in enumerate(rows)]
    target = describe("e1", page_of(before))
    assert target is not None
    assert (target.ordinal, target.among, row_key(target.near)) == (0, 1, "headlamp")
    after = [Element(9, "button", "Add to cart", row="Stove"), *reversed(before)]
    page = page_of(after)
    assert who_is(page, after, resolve(target, page).eid) == 1
    gone = [e for e in after if e.who != 1]
    found = resolve(target, page_of(gone))
    assert found.eid is None
    assert "no row 'headlamp'" in found.why


def test_equals_without_rows_count_as_before_or_not_at_all() -> None:
    """Identical buttons with nothing beside them: the second of three is the second of
    three; with a fourth it is not guessed."""
    before = [Element(i, "button", "Download") for i in range(3)]
    target = describe("e1", page_of(before))
    assert target is not None
    assert resolve(target, page_of(before, ["a", "b", "c"])).eid == "b"
    found = resolve(target, page_of([*before, Element(3, "button", "Download")]))
    assert found.eid is None
    assert found.candidates == 4


def test_an_element_that_moved_region_is_found_only_while_it_is_the_only_one() -> None:
    """A link moved from the header into a menu region is still taken when it is the one
    link of that name, and refused when another region has one too."""
    target = describe("e0", page_of([Element(0, "link", "Checkout", region="header")]))
    assert target is not None
    moved = [Element(0, "link", "Checkout", region="menu")]
    assert resolve(target, page_of(moved)).eid == "e0"
    two = [*moved, Element(1, "link", "Checkout", region="footer")]
    assert resolve(target, page_of(two)).eid is None


def test_a_renamed_button_is_not_found() -> None:
    """A button whose words changed ("Place order" → "Buy now") is not found: the
    replay hands the step on rather than pressing something else."""
    target = describe("e0", page_of([Element(0, "button", "Place order")]))
    assert target is not None
    found = resolve(target, page_of([Element(0, "button", "Buy now")]))
    assert found.eid is None
    assert found.why == "the button 'Place order' (region main) is not on the page"


_ROLES = st.sampled_from(["button", "link", "checkbox"])
_NAMES = st.sampled_from(["Add to cart", "Remove", "Details", ""])
_ROWS = st.sampled_from(["", "Trail mug", "Headlamp", "Map case", "Stove"])
_REGIONS = st.sampled_from(["main", "nav"])


@st.composite
def pages(draw: st.DrawFn) -> list[Element]:
    size = draw(st.integers(1, 12))
    return [
        Element(i, draw(_ROLES), draw(_NAMES), draw(_REGIONS), "", draw(_ROWS)) for i in range(size)
    ]


def _alike(a: Element, b: Element) -> bool:
    """Two elements a person cannot tell apart but by their place."""
    fold = str.casefold
    return (a.role, fold(a.name), a.region, a.heading, fold(a.row)) == (
        b.role,
        fold(b.name),
        b.region,
        b.heading,
        fold(b.row),
    )


def changed(elements: list[Element], seed: int, extra: list[Element]) -> list[Element]:
    """The page as a site changes it: reordered (elements a person tells apart only by
    their place keep their order among themselves), names in other case, and
    ``extra`` elements inserted."""
    rng = random.Random(seed)
    shown = [
        attrs.evolve(e, name=e.name.upper() if rng.random() < 0.5 else e.name) for e in elements
    ]
    order = list(range(len(shown)))
    rng.shuffle(order)
    placed = [shown[i] for i in order]
    # Indistinguishable elements keep their relative order: for a person they are "the
    # first", "the second" of their kind, and so are they here.
    for i, element in enumerate(placed):
        group = [j for j, other in enumerate(placed) if _alike(other, element)]
        members = sorted((placed[j] for j in group), key=lambda e: e.who)
        for j, member in zip(group, members, strict=True):
            placed[j] = member
        del i
    for new in extra:
        placed.insert(rng.randrange(len(placed) + 1), new)
    return placed


@settings(max_examples=300)
@given(
    pages(),
    st.data(),
    st.integers(0, 2**32),
    st.lists(st.tuples(_ROLES, _NAMES, _ROWS), max_size=3),
)
def test_a_step_never_lands_on_another_element_than_the_one_recorded(
    elements: list[Element], data: st.DataObject, seed: int, added: list[tuple[str, str, str]]
) -> None:
    """Whatever a site does of reordering, case and new elements, a target resolves to
    the element it was recorded from or to none, never to another one; and with nothing
    added, it is found."""
    pick = data.draw(st.integers(0, len(elements) - 1))
    target = describe(f"e{pick}", page_of(elements))
    assert isinstance(target, Target)
    extra = [Element(100 + i, r, n, "main", "", w) for i, (r, n, w) in enumerate(added)]
    after = changed(elements, seed, extra)
    page = page_of(after, [f"n{i}" for i in range(len(after))])
    found = who_is(page, after, resolve(target, page).eid)
    twins = [e for e in elements if _alike(e, elements[pick])]
    if found is not None and found != pick:
        # Only a new element a person could not tell from it may stand in its place,
        # and only if a person counting its kind would also land there: not allowed.
        raise AssertionError(f"resolved to element {found}, recorded from {pick}")
    if not extra:
        assert found == pick or (
            len(twins) > 1
            and any(
                e.row != elements[pick].row and row_key(e.row) == row_key(elements[pick].row)
                for e in twins
            )
        )
