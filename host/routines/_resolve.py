"""Finding a step's element again by what a person sees, never by its old id.

`describe` keeps what identifies an element to a person (its role, name, region and
heading, the text beside it on its line, and which of its equals it was); `resolve`
finds it in a later look at the page (`PageSeen`). Names are compared as a person
reads them: case and runs of spaces do not count. Its equals are those of its role
and name in its region and under its heading (or, when none is left there, wherever
they moved); a person tells them apart by their row (the first cell of the text
beside them, `row_key`), then by their order, which counts only when there are as
many as when the step was recorded (a list with one more item is not guessed at:
which one is "the third" changed).
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
    no such id. Its ``ordinal`` counts its equals in its region, under its heading
    and in its row."""
    control = page.controls.get(eid)
    if control is None:
        return None
    near = page.near(eid)
    key = row_key(near)
    equals = [
        c.eid
        for c in page.controls.values()
        if c.role == control.role
        and _fold(c.name) == _fold(control.name)
        and c.region == control.region
        and c.heading == control.heading
        and (c.eid == eid or row_key(page.near(c.eid)) == key)
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
        near=near,
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
        return Found(None, f"{target.words()} is not on the page")
    exact = [c for c in alike if c.region == target.region and c.heading == target.heading]
    pool = exact or alike
    key = row_key(target.near)
    rows = [row_key(page.near(c.eid)) for c in pool]
    if key in rows:
        # Its row, as a person finds it: the first cell beside it.
        pool = [c for c, row in zip(pool, rows, strict=True) if row == key]
    elif key and len(set(rows)) > 1:
        # Its equals are told apart by their rows and its row is gone: which one now
        # stands in its place is not for the order to say.
        return Found(None, f"no row {key!r} holds {target.words()}", candidates=len(pool))
    if len(pool) == target.among:
        return Found(pool[target.ordinal].eid)
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
