"""Finding a step's element again by what a person sees, never by its old id.

`describe` keeps what identifies an element to a person (its role, name, region and
heading, the text beside it on its line, and which of its equals it was); `resolve`
finds it in a later look at the page (`PageSeen`). Names are compared as a person
reads them: case and runs of spaces do not count. The match is exact first (same role,
name, region and heading); one that moved to another heading or region counts only
when it is the one element of its role and name on the page. Equals are told apart as
a person does: by their row (the first cell of the text beside them, `row_key`), else
by their order, but only when there are as many as when the step was recorded (a
table with one more row is not guessed at: which row is "the third" changed).
Anything else is `Found` with no element and why, and the replay hands that step to
the model or the person.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs

from ..pipeline import Control
from ._format import Target
from ._near import near_text, row_key

__all__ = ["Found", "PageSeen", "describe", "resolve"]


@attrs.frozen
class PageSeen:
    """A look at the page: its URL, its elements (document order) and its XML."""

    url: str
    controls: Mapping[str, Control]
    xml: str

    def near(self, eid: str) -> str:
        """The text beside element ``eid`` on its line (`near_text`)."""
        return near_text(self.xml, eid)


def _fold(text: str) -> str:
    return " ".join(text.split()).casefold()


def _alike(control: Control, target: Target) -> bool:
    return control.role == target.role and _fold(control.name) == _fold(target.name)


def describe(eid: str, page: PageSeen) -> Target | None:
    """Element ``eid`` of a look at the page as a `Target`, or None when the page has
    no such id."""
    control = page.controls.get(eid)
    if control is None:
        return None
    equals = [
        c.eid
        for c in page.controls.values()
        if c.role == control.role
        and _fold(c.name) == _fold(control.name)
        and c.region == control.region
        and c.heading == control.heading
    ]
    return Target(
        role=control.role,
        name=control.name,
        tag=control.tag,
        type=control.input_type,
        region=control.region,
        heading=control.heading,
        ordinal=equals.index(eid),
        among=len(equals),
        near=page.near(eid),
    )


@attrs.frozen
class Found:
    """Where a target is now: its id, or None and why it cannot be chosen."""

    eid: str | None
    why: str = ""
    candidates: int = 0


def resolve(target: Target, page: PageSeen) -> Found:
    """The element of ``page`` a person would take for ``target``, or no element and
    why (none like it, or several)."""
    alike = [c for c in page.controls.values() if _alike(c, target)]
    if not alike:
        return Found(None, f"no {target.words()} on the page")
    exact = [c for c in alike if c.region == target.region and c.heading == target.heading]
    if len(exact) == 1 and target.among == 1:
        return Found(exact[0].eid)
    pool = exact or alike
    if len(pool) > 1 or target.among > 1:
        # Its row, as a person finds it: the first cell beside it.
        key = row_key(target.near)
        in_row = [c for c in pool if key and row_key(page.near(c.eid)) == key]
        if len(in_row) == 1:
            return Found(in_row[0].eid)
        rows = {row_key(page.near(c.eid)) for c in pool}
        if key and not in_row and len(rows) > 1:
            # Its equals are told apart by their rows and its row is gone: which one
            # now stands in its place is not for the order to say.
            return Found(None, f"no row {key!r} holds {target.words()}")
    if exact and len(exact) == target.among:
        return Found(exact[target.ordinal].eid)
    if not exact and len(alike) == 1 and target.among == 1:
        # It moved (a menu into a drop-down, a button into another region): the one
        # element of its role and name is still the one a person would take.
        return Found(alike[0].eid)
    return _several(target, pool)


def _several(target: Target, found: Sequence[Control]) -> Found:
    if len(found) == 1:
        why = f"{target.words()} is now one element where there were {target.among}"
    else:
        why = (
            f"{len(found)} elements like {target.words()} where there "
            f"{'was' if target.among == 1 else 'were'} {target.among}"
        )
    return Found(None, why, candidates=len(found))
