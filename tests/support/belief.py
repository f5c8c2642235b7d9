"""What an agent believes a page is, rebuilt only from the answers it received.

A `Belief` reads answers as FORMAT.md tells the model to: a baseline replaces what it
held (a region ``unchanged="true"`` keeps what it held of that region, as last seen
in any answer, and back on a page it saw, as it last saw it there; an
``<unchanged lines first>`` line stands for lines it saw in that order), a diff
patches it (each ``<change>`` placed after the line it quotes, ``<del>`` its lines,
``<ins>`` the new ones), and an ``expand`` fills a region in. What it was told it has
not seen (``<trimmed>``, ``<more region>``) it holds as unknown lines, which the
answers say how to see.

`compare` holds the belief against a fresh, full compaction of the page: any known
line that differs, a region it lacks or has too many of, is a stale view.

The reading never looks at the host's memory: only at the XML the client received.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence

import attrs
from lxml import etree

from trimtab.pipeline import Compaction

__all__ = ["Belief", "Page", "Unreadable", "compare", "fresh_regions", "ids_in", "line_label"]

# An entry of a region's body: a line as sent, a nested region by its key, or lines
# the client knows are there but has not seen (None: it does not know how many).
Line = str


@attrs.frozen
class Nested:
    key: str


@attrs.frozen
class Unknown:
    lines: int | None


Entry = Line | Nested | Unknown


@attrs.frozen
class RegionView:
    """A region as believed: its start tag and its body."""

    tag: str
    body: tuple[Entry, ...]


class Unreadable(AssertionError):
    """An answer the client cannot read in one way (a marker that names no lines it
    saw, a change it cannot place): a defect of the answer as much as a stale view."""


_ATTR = re.compile(r'(\w[\w-]*)="([^"]*)"')
_ID = re.compile(r' id="([^"]+)"')


def _attrs(tag: str) -> dict[str, str]:
    """The attributes of one start tag, unescaped."""
    element = etree.fromstring(tag if tag.endswith("/>") else tag[:-1] + "/>")
    return {str(k): str(v) for k, v in element.attrib.items()}


def _fragment(xml: str) -> etree._Element:
    return etree.fromstring(f"<line>{xml}</line>")


# The start of a list of links or buttons: one item to its end tag, each line an id,
# a space and the element's text (FORMAT.md).
_LIST = re.compile(r"<(links|buttons)\b[^>]*>$")


def ids_in(xml: str) -> int:
    """The element ids a line shows: `id` attributes, one per line of a list."""
    found = len(_ID.findall(xml))
    for listed in re.finditer(r"<(links|buttons)\b[^>]*>\n(.*?)\n</\1>", xml, re.DOTALL):
        found += listed[2].count("\n") + 1
    return found


def _item_end(lines: Sequence[str], at: int) -> int:
    """The index after the item that starts at `lines[at]`: a list whole, else one line."""
    opens = _LIST.match(lines[at])
    if opens is None:
        return at + 1
    for k in range(at + 1, len(lines)):
        if lines[k] == f"</{opens[1]}>":
            return k + 1
    raise Unreadable(f"a list at line {at} is never closed: {lines[at]!r}")


def line_label(xml: str) -> str:
    """What the host calls a line in a diff's ``after`` and a marker's ``first``: its
    text, whitespace folded (a list's: its elements' texts), else the name of its
    first element with an id (its label, icon, alt, value or placeholder, else its
    tag)."""
    if _LIST.match(xml.split("\n", 1)[0]):
        texts = [line.partition(" ")[2] for line in xml.split("\n")[1:-1]]
        return " ".join(" ".join(_fragment(" ".join(texts)).itertext()).split())
    root = _fragment(xml)
    # As the host reads a line: its strings, and each element's text set apart.
    parts = [root.text or ""]
    for child in root:
        parts.append(f" {''.join(child.itertext())} {child.tail or ''}")
    text = " ".join("".join(parts).split())
    if text:
        return text
    for element in root.iter():
        if element is root or element.tag == "region":
            continue
        if element.get("id") is not None or element.tag == "img":
            for name in ("label", "icon", "alt", "value", "placeholder"):
                if element.get(name):
                    return " ".join(str(element.get(name)).split())
            return str(element.tag)
    return xml


@attrs.define
class Page:
    """What the client holds of one page: its regions by key, the top-level ones in order."""

    url: str = ""
    top: list[str] = attrs.field(factory=list)
    regions: dict[str, RegionView] = attrs.field(factory=dict)

    def copy(self) -> Page:
        return Page(self.url, list(self.top), dict(self.regions))

    def lines(self, key: str) -> list[Entry]:
        return list(self.regions[key].body)

    def known(self, key: str) -> bool:
        """Whether every line of the region (nested ones included) is known."""
        view = self.regions.get(key)
        if view is None:
            return False
        return all(
            not isinstance(e, Unknown) and (not isinstance(e, Nested) or self.known(e.key))
            for e in view.body
        )

    def items(self) -> list[tuple[Entry, str]]:
        """The top-level lines the client saw whole, in order, each with its XML."""
        found: list[tuple[Entry, str]] = []
        for key in self.top:
            if self.known(key):
                found.extend((entry, self.xml_of(entry)) for entry in self.regions[key].body)
        return found

    def xml_of(self, entry: Entry) -> str:
        """An entry as the host renders it in its region (a nested region whole)."""
        if isinstance(entry, Nested):
            view = self.regions[entry.key]
            body = "".join(f"{self.xml_of(e)}\n" for e in view.body)
            return f"{view.tag}\n{body}</region>"
        assert isinstance(entry, str), entry
        return entry

    def label(self, entry: Entry) -> str | None:
        if isinstance(entry, Unknown) or (isinstance(entry, Nested) and not self.known(entry.key)):
            return None
        return line_label(self.xml_of(entry))

    def take(self, key: str, source: Page) -> None:
        """Region `key` (and those inside it) as `source` holds them."""
        view = source.regions[key]
        self.regions[key] = view
        for entry in view.body:
            if isinstance(entry, Nested):
                self.take(entry.key, source)


@attrs.define
class Belief:
    """The client's memory of one tab: the page it is on, and each page as it last saw it."""

    page: Page = attrs.field(factory=Page)
    pages: dict[str, Page] = attrs.field(factory=dict)
    # Figures for the test's report: how often each reading was exercised.
    counts: dict[str, int] = attrs.field(factory=dict)

    def note(self, what: str) -> None:
        self.counts[what] = self.counts.get(what, 0) + 1

    def read(self, content: str) -> None:
        """Take in one answer (a page snapshot or an expanded region); other answers
        (errors, find, read) leave the belief as it was."""
        if content.startswith("<page "):
            head, _, _ = content.partition("\n")
            page = _attrs(head)
            kind = page.get("snapshot")
            if kind == "baseline":
                self._baseline(page["url"], content)
            elif kind == "diff":
                self._diff(page["url"], content)
        elif content.startswith("<region "):
            self._expanded(content)
        self.pages[self.page.url] = self.page.copy()

    # -- baselines --------------------------------------------------------------------

    def _baseline(self, url: str, content: str) -> None:
        self.note("baseline")
        base = self.page.copy()
        earlier = self.pages.get(url)
        if earlier is not None:
            for key in earlier.regions:
                base.regions[key] = earlier.regions[key]
        base_items = earlier.items() if earlier is not None else self.page.items()
        new = Page(url)
        lines = _answer_lines(content)
        at = 0
        while at < len(lines):
            line = lines[at]
            if line.startswith("<region "):
                key, at = self._region(lines, at, new, base, base_items)
                new.top.append(key)
            elif line.startswith("<more region="):
                self.note("budget marker")
                new.top.append(f"?{len(new.top)}")
                new.regions[new.top[-1]] = RegionView("", (Unknown(None),))
                at += 1
            else:
                at += 1  # the page's own lines: <page>, <note>, </page>
        self.page = new

    def _region(
        self,
        lines: Sequence[str],
        at: int,
        new: Page,
        base: Page,
        base_items: list[tuple[Entry, str]],
    ) -> tuple[str, int]:
        """Read the region that starts at `lines[at]` into `new`; its key and the line after it."""
        tag = lines[at]
        attributes = _attrs(tag)
        key = attributes["name"]
        if tag.endswith("/>"):
            if attributes.get("unchanged") != "true":
                raise Unreadable(f"a region marker that is not a collapsed region: {tag}")
            if key not in base.regions:
                raise Unreadable(f"region {key!r} collapsed as unchanged, never seen: {tag}")
            self.note("collapsed region")
            new.take(key, base)
            return key, at + 1
        body: list[Entry] = []
        at += 1
        while lines[at] != "</region>":
            line = lines[at]
            if line.startswith("<region "):
                inner, at = self._region(lines, at, new, base, base_items)
                body.append(Nested(inner))
                continue
            if line.startswith("<trimmed "):
                self.note("trimmed")
                body.append(Unknown(int(_attrs(line)["lines"])))
            elif line.startswith("<more region="):
                self.note("budget marker")
                body.append(Unknown(int(_attrs(line)["lines"])))
            elif line.startswith("<unchanged "):
                self.note("unchanged lines")
                body.extend(self._run(_attrs(line), new, base, base_items))
            else:
                end = _item_end(lines, at)
                if end > at + 1:
                    self.note("list")
                body.append("\n".join(lines[at:end]))
                at = end
                continue
            at += 1
        new.regions[key] = RegionView(tag, tuple(body))
        return key, at + 1

    def _run(
        self,
        marker: Mapping[str, str],
        new: Page,
        base: Page,
        base_items: list[tuple[Entry, str]],
    ) -> list[Entry]:
        """The lines an ``<unchanged lines count first>`` marker stands for: a run the
        client saw, in that order, starting with the line it names."""
        size, count, first = int(marker["lines"]), int(marker["count"]), marker["first"]
        runs: list[list[tuple[Entry, str]]] = []
        for start in range(len(base_items) - size + 1):
            run = base_items[start : start + size]
            if line_label(run[0][1])[:60] != first:
                continue
            if sum(ids_in(xml) for _, xml in run) != count:
                continue
            runs.append(run)
        readings = {tuple(xml for _, xml in run) for run in runs}
        if not readings:
            raise Unreadable(f"no {size} lines seen from {first!r} with {count} ids: {marker}")
        if len(readings) > 1:
            raise Unreadable(f"{len(readings)} different runs of lines fit {dict(marker)}")
        for entry, _ in runs[0]:
            if isinstance(entry, Nested):
                new.take(entry.key, base)
        return [entry for entry, _ in runs[0]]

    # -- diffs ------------------------------------------------------------------------

    def _diff(self, url: str, content: str) -> None:
        self.note("diff")
        page = self.page.copy()
        page.url = url
        lines = _answer_lines(content)
        at = 0
        while at < len(lines):
            line = lines[at]
            if not line.startswith("<region "):
                at += 1
                continue
            attributes = _attrs(line)
            key = attributes["name"]
            if attributes.get("removed") == "true":
                self.note("removed region")
                if key in page.top:
                    page.top.remove(key)
                page.regions.pop(key, None)
                at += 1
            elif attributes.get("added") == "true":
                self.note("added region")
                lines = [*lines[:at], line.replace(' added="true"', "", 1), *lines[at + 1 :]]
                added = Page(url)
                _, at = self._region(lines, at, added, page, [])
                page.regions.update(added.regions)
                if not _nested_somewhere(page, key):
                    page.top.append(key)
            else:
                end = _closing(lines, at)
                self._patch(page, key, lines[at + 1 : end])
                at = end + 1
        self.page = page

    def _patch(self, page: Page, key: str, hunks: Sequence[str]) -> None:
        """Apply one changed region's ``<change>`` hunks to what the client holds of it."""
        view = page.regions.get(key)
        if view is None:
            self.note("change to a region never seen")
            page.regions[key] = RegionView("", (Unknown(None),))
            return
        body: list[Entry] = []
        for entry in view.body:  # one entry per line, so positions count lines
            if isinstance(entry, Unknown) and entry.lines is not None:
                body.extend(Unknown(1) for _ in range(entry.lines))
            else:
                body.append(entry)
        cursor = 0
        at = 0
        while at < len(hunks):
            head = hunks[at]
            if not head.startswith("<change "):
                raise Unreadable(f"a changed region's line is no <change>: {head!r}")
            change = etree.fromstring(_whole_change(hunks, at))
            at += _change_length(hunks, at)
            after = change.get("after")
            nth = int(change.get("nth", "1"))
            deleted = change.find("del")
            removing = int(deleted.get("lines", "0")) if deleted is not None else 0
            said = " ".join((deleted.text or "").split()) if deleted is not None else ""
            inserted = _inserted(change)
            place = self._place(page, body, cursor, (after, nth), removing, said)
            if place is None:
                # Placed among lines the client never saw: it knows the region changed,
                # not how; it holds the region as unknown (expand shows it).
                self.note("change among unseen lines")
                page.regions[key] = RegionView(view.tag, (Unknown(None),))
                return
            added: list[Entry] = []
            for xml in inserted:
                if xml.startswith("<region "):
                    nested_lines = xml.split("\n")
                    inner = Page(page.url)
                    inner_key, _ = self._region(nested_lines, 0, inner, page, [])
                    page.regions.update(inner.regions)
                    added.append(Nested(inner_key))
                else:
                    added.append(xml)
            body[place : place + removing] = added
            cursor = place + len(added)
        page.regions[key] = RegionView(view.tag, tuple(body))

    def _place(
        self,
        page: Page,
        body: list[Entry],
        cursor: int,
        after: tuple[str | None, int],
        removing: int,
        said: str,
    ) -> int | None:
        """Where a change goes: after the `nth` line of the region reading as it quotes
        (the lines before it are already as they are now), checked against the lines
        it removes; None where the client cannot place it (among lines it never saw)."""
        quoted, nth = after
        if quoted is None:
            return 0
        seen = 0
        for place in range(1, len(body) + 1):
            label = page.label(body[place - 1])
            if label is None:
                return None
            if label[:80] != quoted:
                continue
            seen += 1
            if seen < nth:
                continue
            if place < cursor or place + removing > len(body):
                raise Unreadable(f"a change after the {nth}. {quoted!r} is out of order")
            labels = [page.label(e) for e in body[place : place + removing]]
            read = " ".join(" ".join(map(str, labels)).split())
            if removing and (None in labels or read != said):
                raise Unreadable(
                    f"the change after the {nth}. {quoted!r} removes {said!r}, "
                    f"but the lines there read {read!r}"
                )
            return place
        raise Unreadable(f"no {nth}. line reading {quoted!r} to place a change after")

    # -- expand -----------------------------------------------------------------------

    def _expanded(self, content: str) -> None:
        """An ``expand`` answer: the region whole (a page of it leaves it as it was)."""
        lines = _answer_lines(content)
        if any(line.startswith("<more ") for line in lines):
            return
        key = _attrs(lines[0])["name"]
        if key not in self.page.regions:
            return
        expanded = Page(self.page.url)
        self._region(lines, 0, expanded, self.page, self.page.items())
        self.page.regions.update(expanded.regions)
        self.note("expanded")


def _answer_lines(content: str) -> list[str]:
    return [line for line in content.split("\n") if line]


def _closing(lines: Sequence[str], at: int) -> int:
    """The index of the ``</region>`` that closes the region opened at `lines[at]`."""
    depth = 0
    for k in range(at, len(lines)):
        line = lines[k]
        if line.startswith("<region ") and not line.endswith("/>"):
            depth += 1
        elif line == "</region>":
            depth -= 1
            if depth == 0:
                return k
    raise Unreadable(f"region at line {at} is never closed")


def _change_length(hunks: Sequence[str], at: int) -> int:
    if hunks[at].endswith("</change>"):
        return 1
    for k in range(at + 1, len(hunks)):
        if hunks[k].endswith("</ins></change>"):
            return k - at + 1
    raise Unreadable(f"a <change> is never closed: {hunks[at]!r}")


def _whole_change(hunks: Sequence[str], at: int) -> str:
    return "\n".join(hunks[at : at + _change_length(hunks, at)])


def _inserted(change: etree._Element) -> list[str]:
    """The lines of a change's ``<ins>``, as sent (a nested region as one item)."""
    ins = change.find("ins")
    if ins is None:
        return []
    raw = etree.tostring(ins, encoding="unicode", with_tail=False)
    inner = raw[len("<ins>") : -len("</ins>")].strip("\n")
    lines = inner.split("\n")
    items: list[str] = []
    at = 0
    while at < len(lines):
        if lines[at].startswith("<region ") and not lines[at].endswith("/>"):
            end = _closing(lines, at)
            items.append("\n".join(lines[at : end + 1]))
            at = end + 1
        else:
            end = _item_end(lines, at)
            items.append("\n".join(lines[at:end]))
            at = end
    return items


def _nested_somewhere(page: Page, key: str) -> bool:
    return any(
        isinstance(e, Nested) and e.key == key for view in page.regions.values() for e in view.body
    )


# -- the page as it is ---------------------------------------------------------------


def fresh_regions(compaction: Compaction) -> Page:
    """A full compaction of the page, read into the same shape as a belief."""
    page = Page(compaction.url)
    inner = {r.xml.rstrip("\n"): r for r in compaction.regions if r.depth > 0}
    for region in compaction.regions:
        body: list[Entry] = []
        for item in region.items:
            nested = inner.get(item.xml)
            body.append(Nested(nested.key) if nested is not None else item.xml)
        page.regions[region.key] = RegionView(region.xml.split("\n", 1)[0], tuple(body))
        if region.depth == 0:
            page.top.append(region.key)
    return page


def compare(belief: Page, fresh: Page) -> Iterator[str]:
    """Every difference between what the client believes and the page: a region it
    lacks or holds too many of, a known line that differs."""
    if sorted(belief.top) != sorted(fresh.top) and not any(k.startswith("?") for k in belief.top):
        yield f"regions: believed {belief.top}, the page has {fresh.top}"
    for key in fresh.top:
        if key in belief.regions:
            yield from _compare_region(belief, fresh, key)


def _compare_region(belief: Page, fresh: Page, key: str) -> Iterator[str]:
    held = belief.regions[key]
    now = fresh.regions[key]
    if held.tag and held.tag != now.tag:
        yield f"region {key}: believed {held.tag}, the page has {now.tag}"
    body = list(held.body)
    if any(isinstance(e, Unknown) and e.lines is None for e in body):
        return  # the client knows it does not know this region
    expected = list(now.body)
    k = 0
    for entry in body:
        if isinstance(entry, Unknown):
            assert entry.lines is not None
            k += entry.lines
            continue
        if k >= len(expected):
            yield f"region {key}: believed line {k} {entry!r}, the page has {len(expected)} lines"
            return
        actual = expected[k]
        if isinstance(entry, Nested) or isinstance(actual, Nested):
            if entry != actual:
                yield f"region {key}, line {k}: believed {entry!r}, the page has {actual!r}"
            elif isinstance(entry, Nested) and entry.key in belief.regions:
                yield from _compare_region(belief, fresh, entry.key)
        elif entry != actual:
            yield f"region {key}, line {k}: believed\n  {entry}\nthe page has\n  {actual}"
        k += 1
    if k != len(expected):
        yield f"region {key}: believed {k} lines, the page has {len(expected)}"
