"""The compaction pipeline: page model in, XML and its stats out.

filter (stage 1) → build (stages 2 and 3) → eids → regions → XML. Deterministic:
the same page model gives byte-identical output.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import hashlib
import sys
import time
from collections.abc import Callable, Iterator, Mapping

import attrs

from pycdp_bridge import PageModel

from . import _xml
from ._build import MAX_DEPTH, BuildOptions, Built, ControlFacts, build_tree
from ._eids import assign_eids
from ._filter import Visibility, filter_page
from ._frames import FRAME_REGION, document_url
from ._render import MORE, Item, lines_shown, open_tag, render_items, render_node
from ._tokens import count_tokens
from ._tree import Control, OutNode

__all__ = [
    "LONG_TEXT",
    "NOTED_RUN",
    "TEXT_MARKER",
    "Compaction",
    "CompactionStats",
    "Item",
    "Prepared",
    "Region",
    "compact",
    "lines_shown",
    "open_tag",
    "prepare",
    "read_text",
    "render_items",
    "render_node",
    "text_key",
]

# The characters of a long text a snapshot shows, and of each page `read_text` gives.
LONG_TEXT = 2_000
# A long text is cut at a space when one stands in the last quarter of the head.
_CUT_SLACK = LONG_TEXT // 4
# How a long text's marker begins in the XML (`_marker`, rendered): page text and
# attribute values are escaped, so nothing else there holds it.
TEXT_MARKER = f'<{MORE} text="'
# Text runs longer than this are listed in `Compaction.long_runs` where shown whole:
# what a client may have seen whole of the texts a later snapshot cuts (a snapshot
# memory cuts at a tenth of its budget, and budgets are of 1,000 tokens at least).
NOTED_RUN = 100

# Frames the walk may need: the builder takes about three per level of the page.
_RECURSION_LIMIT = 3 * MAX_DEPTH + 1_000


@attrs.frozen
class Region:
    """One landmark region of a snapshot, rendered on its own."""

    key: str  # unique in the snapshot: "nav", "nav-2", ...
    name: str  # the landmark kind: header, nav, main, aside, footer, dialog, ...
    label: str
    xml: str  # the whole <region> element
    items: tuple[Item, ...]  # its body, one item per line (see render_items)
    eids: tuple[str, ...]  # controls in document order
    depth: int  # 0 for top-level regions, 1 for a region inside a region, ...
    out: OutNode = attrs.field(eq=False, repr=False)  # its node in the output tree
    site: str = ""  # a frame of another site: that site (see `_frames`)


@attrs.frozen
class CompactionStats:
    """Figures that come with every output."""

    elements_in: int
    elements_out: int
    controls: int
    dropped: Mapping[str, int]
    chars: int
    tokens: int
    missing: tuple[str, ...]
    # Milliseconds per stage: filter, build, encode (eids + XML), tokens.
    stage_ms: Mapping[str, float]

    @property
    def pipeline_ms(self) -> float:
        """Captured CDP data to XML (token counting is reporting, not pipeline)."""
        return sum(ms for stage, ms in self.stage_ms.items() if stage != "tokens")

    def as_dict(self) -> dict[str, object]:
        data = attrs.asdict(self)
        data["dropped"] = dict(self.dropped)
        data["stage_ms"] = {k: round(v, 3) for k, v in self.stage_ms.items()}
        data["pipeline_ms"] = round(self.pipeline_ms, 3)
        data["missing"] = list(self.missing)
        return data


@attrs.frozen
class Compaction:
    """The compact view of one page.

    No string in it holds a lone surrogate (they became U+FFFD): any encoder takes it.
    """

    url: str
    title: str
    xml: str
    regions: tuple[Region, ...]
    # eid → the control it names, for the tools and the id map of the tab.
    controls: Mapping[str, Control]
    stats: CompactionStats
    root: OutNode
    # Long texts shown cut (see `compact`'s ``long_text``): key → the whole text.
    texts: Mapping[str, str] = attrs.field(factory=dict)
    # The tags of the elements a long text was cut in.
    cut_in: frozenset[str] = frozenset()
    # The text runs over `NOTED_RUN` characters the rendering shows whole.
    long_runs: tuple[str, ...] = ()
    # Per long text, where its line breaks are (`_LineBreaks`), made when it is first
    # read: each page's marker says how many lines follow it.
    _breaks: dict[str, _LineBreaks] = attrs.field(factory=dict, init=False, eq=False, repr=False)

    def lines_after(self, key: str, at: int) -> int:
        """How many line breaks the long text `key` has from character `at` on."""
        breaks = self._breaks.get(key)
        if breaks is None:
            breaks = self._breaks[key] = _LineBreaks.of(self.texts[key])
        return breaks.after(at)


@attrs.frozen
class _LineBreaks:
    """The line breaks of one long text, counted by block, so that those after any
    offset are counted in one block's time, not the rest of the text's: `read` pages
    through a text of millions of characters, and each page's marker counts them."""

    text: str
    # before[i]: line breaks in text[: i * _BLOCK].
    before: tuple[int, ...]

    @classmethod
    def of(cls, text: str) -> _LineBreaks:
        before = [0]
        for start in range(0, len(text), _BLOCK):
            before.append(before[-1] + text.count("\n", start, start + _BLOCK))
        return cls(text, tuple(before))

    def after(self, at: int) -> int:
        block = at // _BLOCK
        return self.before[-1] - self.before[block] - self.text.count("\n", block * _BLOCK, at)


_BLOCK = 1 << 16


def compact(
    model: PageModel,
    options: BuildOptions | None = None,
    *,
    count: bool = True,
    long_text: int | None = None,
    reserved: Mapping[str, int] | None = None,
) -> Compaction:
    """Compact a captured page into XML.

    With ``long_text``, a text run longer than that many characters shows its head
    and then `<more text="t1" at="…" chars="…" lines="…"/>`: the key of the whole
    text in `Compaction.texts`, where the head ends, and exactly how many characters
    and line breaks follow; `read_text` gives the rest a page at a time. The output
    tree keeps the whole text (inside the marker), so searches still see all of it.

    `reserved`: eids issued earlier in this document → the backend id of the node
    each was issued for (see `assign_eids`); ids of nodes gone from `model` are free.
    """
    prepared = prepare(model, options)
    return prepared.finish(count=count, long_text=long_text, reserved=reserved)


@contextlib.contextmanager
def _walking() -> Iterator[None]:
    """The pipeline's conditions while it walks a page."""
    # The pipeline allocates many small objects and makes no reference cycles;
    # pausing the cyclic collector keeps a full sweep over the page model out of
    # the snapshot (measured here: 4.5 ms with a 2,167-node model in memory).
    enabled = gc.isenabled()
    gc.disable()
    # The walk recurses once per level of the page (see MAX_DEPTH). Since Python
    # 3.11 a Python-to-Python call takes no C stack, so a higher limit costs only
    # memory for frames; the old limit is put back afterwards.
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, _RECURSION_LIMIT))
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)
        if enabled:
            gc.enable()


def prepare(model: PageModel, options: BuildOptions | None = None) -> Prepared:
    """`compact` in two steps: filter and build the page once (stages 1 to 3, done by
    the first `Prepared.finish`), then render it, once or more."""
    return Prepared(model, options or BuildOptions())


@attrs.define
class Prepared:
    """A page to compact (`prepare`): `finish` gives its `Compaction`, and may give it
    again with other options at the cost of the rendering alone (a snapshot over its
    budget cuts long texts, then renders again). The build's output tree is changed by
    each `finish` and put back by the next: only the latest compaction's tree is the
    page's."""

    model: PageModel
    options: BuildOptions
    visibility: Visibility | None = None
    built: Built | None = None
    seconds: dict[str, float] = attrs.field(factory=dict)  # per stage, for the stats
    # What the latest `finish` changed in the tree, to put back before the next one.
    _undo: list[Callable[[], None]] = attrs.field(factory=list)
    # What the latest `finish` made that the next one takes where it is the same.
    _last: _Rendered | None = None
    _text_chars: int = attrs.field(default=0, init=False)
    _long_runs: list[str] = attrs.field(factory=list, init=False)

    def text_chars(self) -> int:
        """Characters of page text the built page holds (built here first if need
        be): a guess of its size before it is rendered, which a snapshot over its
        budget uses to render it once instead of twice."""
        with _walking():
            self._build()
        return self._text_chars

    def finish(
        self,
        *,
        count: bool = True,
        long_text: int | None = None,
        reserved: Mapping[str, int] | None = None,
    ) -> Compaction:
        """The compaction (see `compact`)."""
        # One pause of the collector for the build and the rendering: each resume
        # sweeps what was made meanwhile.
        with _walking():
            built = self._build()
            while self._undo:
                self._undo.pop()()
            return self._finish(built, count=count, long_text=long_text, reserved=reserved)

    def _build(self) -> Built:
        """Stages 1 to 3, once: the filter and the build."""
        if self.built is None:
            t0 = time.perf_counter()
            self.visibility = filter_page(self.model)
            t1 = time.perf_counter()
            self.built = build_tree(self.model, self.visibility, self.options)
            self._text_chars, self._long_runs = _make_encodable(self.built.root)
            self.seconds = {"filter": t1 - t0, "build": time.perf_counter() - t1}
        return self.built

    def _finish(
        self,
        built: Built,
        *,
        count: bool,
        long_text: int | None,
        reserved: Mapping[str, int] | None,
    ) -> Compaction:
        model, undo = self.model, self._undo
        assert self.visibility is not None
        t0 = time.perf_counter()
        cut: dict[int, str] = {}  # id → tag of each output node a long text was cut in
        texts = _cut_long_texts(built.root, long_text, undo, cut) if long_text is not None else {}
        t1 = time.perf_counter()
        live, nodes = self._bound(built, reserved)
        last = self._last
        if last is not None and live in (last.reserved, last.then):
            # The latest finish's ids were given for these reserved ids, or these are
            # those ids and the ones it gave (kept by the tab, which reserves them now):
            # either way `assign_eids` gives them again, and a cut text changes no
            # control.
            eids, controls = last.eids, last.controls
            for (out, _), eid in zip(built.controls, eids, strict=True):
                out.eid = eid
                out.attrs.insert(0, ("id", eid))
        else:
            eids, controls = self._controls(built, live, nodes)
        undo.append(functools.partial(_drop_eids, built.controls))
        bound = nodes or self._control_nodes(built)
        then = {**live, **{eid: node for eid, node in zip(eids, bound, strict=True) if node}}
        reused: dict[str, Region] = {}
        if last is not None and last.eids is eids:
            # A region neither finish cut a text in renders as the latest one did.
            reused = {k: r for k, r in last.regions.items() if k not in last.touched}
        touched: set[str] = set()
        regions = _regions(built.root, undo, reused, cut, touched)
        self._last = _Rendered(live, then, eids, controls, {r.key: r for r in regions}, touched)
        url, title = _xml.encodable(model.url), _xml.encodable(model.title)
        head = f'<page url="{_xml.attr(url)}" title="{_xml.attr(title)}">\n'
        xml = head + "".join(r.xml for r in regions if r.depth == 0) + "</page>\n"
        t2 = time.perf_counter()
        tokens = count_tokens(xml) if count else -1
        t3 = time.perf_counter()
        stats = CompactionStats(
            elements_in=model.element_count(),
            elements_out=built.elements_out,
            controls=len(controls),
            dropped=dict(sorted(self.visibility.dropped.items())),
            chars=len(xml),
            tokens=tokens,
            missing=model.missing,
            stage_ms={
                "filter": self.seconds["filter"] * 1000,
                "build": (self.seconds["build"] + t1 - t0) * 1000,
                "encode": (t2 - t1) * 1000,
                "tokens": (t3 - t2) * 1000,
            },
        )
        return Compaction(
            url,
            title,
            xml,
            tuple(regions),
            controls,
            stats,
            built.root,
            texts,
            frozenset(cut.values()),
            tuple(self._long_runs if long_text is None else _shorter(self._long_runs, long_text)),
        )

    def _bound(
        self, built: Built, reserved: Mapping[str, int] | None
    ) -> tuple[dict[str, int], list[int]]:
        """The `reserved` ids whose node is still in the model, and each control's
        backend id (0 in another session's document); nothing without reserved ids."""
        if not reserved:
            return {}, []
        model = self.model
        # Backend ids are per renderer: only nodes of the tab's own session are bound.
        own = [
            n.backend_node_id if model.frames[n.frame].session_id is None else 0
            for n in model.nodes
        ]
        live = set(own)
        kept = {eid: node for eid, node in reserved.items() if node in live}
        return kept, [own[facts.node] for _, facts in built.controls]

    def _control_nodes(self, built: Built) -> list[int]:
        """Each control's backend id, 0 in another session's document."""
        nodes, frames = self.model.nodes, self.model.frames
        found: list[int] = []
        for _, facts in built.controls:
            node = nodes[facts.node]
            found.append(node.backend_node_id if frames[node.frame].session_id is None else 0)
        return found

    def _controls(
        self, built: Built, reserved: dict[str, int], nodes: list[int]
    ) -> tuple[list[str], dict[str, Control]]:
        """The controls' eids in order (`assign_eids`), each written on its output
        node, and the id map."""
        model = self.model
        eids = assign_eids(
            (facts for _, facts in built.controls),
            len(built.controls),
            reserved=reserved,
            nodes=nodes,
        )
        controls: dict[str, Control] = {}
        frame_urls = [_xml.encodable(document_url(model, f.index)) for f in model.frames]
        for (out, facts), eid in zip(built.controls, eids, strict=True):
            out.eid = eid
            out.attrs.insert(0, ("id", eid))
            node = model.nodes[facts.node]
            controls[eid] = Control(
                eid=eid,
                node=facts.node,
                backend_node_id=node.backend_node_id,
                frame=node.frame,
                role=_xml.encodable(facts.role),
                name=_xml.encodable(facts.name),
                region=facts.region_path[-1] if facts.region_path else "main",
                frame_url=frame_urls[node.frame],
                tag=out.tag,
                input_type=next((value for key, value in out.attrs if key == "type"), ""),
                secret=out.secret,
                heading=_xml.encodable(facts.heading),
                secret_kind=out.secret_kind,
                stands_for=(
                    model.nodes[facts.stands_for].backend_node_id if facts.stands_for >= 0 else 0
                ),
            )
        return eids, controls


@attrs.frozen
class _Rendered:
    """What one `Prepared.finish` made, for the next one to take where it is the same."""

    reserved: dict[str, int]  # the reserved ids it was given (those of live nodes)
    then: dict[str, int]  # those and the ids it gave, by node (what the tab reserves next)
    eids: list[str]
    controls: dict[str, Control]
    regions: dict[str, Region]  # by key
    touched: set[str]  # keys of the regions it cut a long text in


def _drop_eids(controls: list[tuple[OutNode, ControlFacts]]) -> None:
    """Take back the eids `Prepared.finish` gave the controls."""
    for out, _ in controls:
        assert out.attrs[0] == ("id", out.eid), "the eid is the first attribute"
        del out.attrs[0]
        out.eid = None


def _cut_long_texts(
    root: OutNode, limit: int, undo: list[Callable[[], None]], cut: dict[int, str]
) -> dict[str, str]:
    """Put a `MORE` marker after the head of every text run longer than `limit`; `cut`
    gains the ids of the nodes whose text was cut, each with its tag.

    The marker holds the rest of the text as its child: rendering shows only the
    marker's attributes, `OutNode.text()` still reads the whole text. A key is made
    of the text itself (`text_key`): the same text gives the same key, and a key
    from an earlier snapshot never names another text.
    """
    if limit < 1:
        raise ValueError(f"long_text must be at least 1 character, not {limit!r}")
    texts: dict[str, str] = {}
    for node in root.iter():  # a list made before any marker is added
        if not any(isinstance(c, str) and len(c) > limit for c in node.children):
            continue
        children: list[OutNode | str] = []
        for child in node.children:
            if not isinstance(child, str) or len(child) <= limit:
                children.append(child)
                continue
            key = text_key(child)
            texts[key] = child
            at = _head_end(child, 0, limit)
            children.append(child[:at])
            children.append(_marker(key, child, at))
        undo.append(functools.partial(setattr, node, "children", node.children))
        node.children = children
        cut[id(node)] = node.tag
    return texts


def _regions_cut(top: list[OutNode], cut: Mapping[int, str]) -> set[int]:
    """The ids of the region nodes in `top` that hold a node of `cut` (at any depth)."""
    if not cut:
        return set()
    found: set[int] = set()
    stack: list[tuple[OutNode, tuple[int, ...]]] = [(node, ()) for node in top]
    while stack:
        node, around = stack.pop()
        if node.tag == "region":
            around = (*around, id(node))
        if id(node) in cut:
            found.update(around)
        stack.extend((c, around) for c in node.children if isinstance(c, OutNode))
    return found


def text_key(text: str) -> str:
    """The key of a long text: ``t`` and a digest of the text (8 hex digits)."""
    return "t" + hashlib.blake2b(text.encode("utf-8"), digest_size=4).hexdigest()


def _head_end(text: str, start: int, limit: int) -> int:
    """Where a page of `text` from `start` ends: after `limit` characters, or just
    after the last whitespace of its last quarter, so that words stay whole."""
    end = start + limit
    if end >= len(text):
        return len(text)
    slack = min(_CUT_SLACK, limit // 4)
    for k in range(end, end - slack, -1):
        if text[k - 1].isspace():
            return k
    return end


def _marker(key: str, text: str, at: int) -> OutNode:
    """The `MORE` marker for `text` from `at`, with the rest as its child (a
    snapshot's marker, whose text is read)."""
    return OutNode(MORE, _marker_attrs(key, text, at, text.count("\n", at)), [text[at:]])


def _marker_attrs(key: str, text: str, at: int, lines: int) -> list[tuple[str, str]]:
    return [("text", key), ("at", str(at)), ("chars", str(len(text) - at)), ("lines", str(lines))]


def read_text(compaction: Compaction, key: str, at: int, limit: int = LONG_TEXT) -> str:
    """One page of a long text a snapshot showed cut, from character `at`, as XML.

    `<text key="t1" at="2000" chars="1994">…</text>`, the text as it stands on the
    page (line breaks kept, escaped), then a `<more …/>` marker like the snapshot's
    when more follows. Paging from the marker's `at` to the end gives back every
    character of the text exactly once.
    """
    text = compaction.texts.get(key)
    if text is None:
        known = ", ".join(compaction.texts) or "none"
        raise LookupError(
            f"no long text {key!r} in the latest snapshot (it has: {known}); "
            "if the page changed since, take a snapshot"
        )
    if not 0 <= at <= len(text):
        raise ValueError(f"offset {at!r} is outside text {key!r} of {len(text)} characters")
    if limit < 1:
        raise ValueError(f"a page must be at least 1 character, not {limit!r}")
    end = _head_end(text, at, limit)
    page = text[at:end]
    head = f'<text key="{_xml.attr(key)}" at="{at}" chars="{len(page)}">'
    xml = head + _xml.text(page) + "</text>\n"
    if end < len(text):
        # Only the tag: a page of `read` would otherwise copy the whole rest (20 MB of
        # a 20 MB text) for every page.
        rest = OutNode(MORE, _marker_attrs(key, text, end, compaction.lines_after(key, end)))
        xml += open_tag(rest)[:-1] + "/>\n"
    return xml


def _make_encodable(root: OutNode) -> tuple[int, list[str]]:
    """Replace lone surrogates in the page's strings of the output tree (see `_xml`);
    returns the characters of text the tree holds and its text runs over `NOTED_RUN`
    characters (its one walk over every text).

    Here page strings enter what the pipeline hands on: the XML is escaped anyway,
    but texts, names and labels also go to token counts, tool messages and logs.
    """
    clean = _xml.encodable
    chars = 0
    runs: list[str] = []
    stack = [root]
    while stack:
        node = stack.pop()
        for _, value in node.attrs:
            if not value.isascii():
                node.attrs = [(key, clean(value)) for key, value in node.attrs]
                break
        children = node.children
        for k, child in enumerate(children):
            if isinstance(child, str):
                size = len(child)
                chars += size
                if not child.isascii():
                    child = children[k] = clean(child)
                if size > NOTED_RUN:
                    runs.append(child)
            else:
                stack.append(child)
    return chars, runs


def _shorter(runs: list[str], limit: int) -> list[str]:
    """The `runs` a rendering with texts cut at `limit` shows whole."""
    return [run for run in runs if len(run) <= limit]


# Regions that stand inside the page's flow; between stray content they stay
# nested in the implicit "main" region instead of cutting it into pieces.
_INLINE_REGIONS = frozenset({"form", "search", "alert", "dialog", FRAME_REGION})


def _regions(
    root: OutNode,
    undo: list[Callable[[], None]],
    reused: Mapping[str, Region],
    cut: Mapping[int, str],
    touched: set[str],
) -> list[Region]:
    """Wrap stray top-level content in implicit "main" regions; render every region
    but those `reused` has by key, which render as they did then, unless a long text
    was cut in them now (`cut`: ids of the nodes it was cut in; `touched` gains the
    keys of those regions)."""
    top: list[OutNode] = []
    stray: list[OutNode | str] = []

    def flush() -> None:
        if _has_content(stray):
            top.append(OutNode("region", [("name", "main")], list(stray)))
        else:
            top.extend(c for c in stray if isinstance(c, OutNode))
        stray.clear()

    for child in root.children:
        if isinstance(child, OutNode) and child.tag == "region":
            if dict(child.attrs)["name"] in _INLINE_REGIONS:
                stray.append(child)
                continue
            flush()
            top.append(child)
        else:
            stray.append(child)
    flush()
    undo.append(functools.partial(setattr, root, "children", root.children))
    root.children = list(top)

    # Every region in document order with its depth, found without visiting
    # the content twice.
    ordered: list[tuple[OutNode, int]] = []

    def collect(region: OutNode, depth: int) -> None:
        ordered.append((region, depth))
        for inner in _child_regions(region):
            collect(inner, depth + 1)

    for region in top:
        collect(region, 0)

    # Landmarks the page marked up take the plain names first ("main" is the
    # page's <main> wherever stray content stands), implicit regions come after.
    seen: dict[str, int] = {}
    keys: dict[int, str] = {}
    for implicit in (False, True):
        for region, _ in ordered:
            if (region.node < 0) is implicit:
                name = region.attrs[0][1]
                seen[name] = seen.get(name, 0) + 1
                keys[id(region)] = name if seen[name] == 1 else f"{name}-{seen[name]}"

    # Render innermost regions first, so that a region's rendering reuses the
    # XML and eids of the regions inside it.
    holding = _regions_cut(top, cut)
    if id(root) in cut:
        # A text cut right under the page: the stray content's implicit regions hold it.
        holding.update(id(r) for r in top if r.node < 0)
    done: dict[int, Region] = {}
    for region, depth in reversed(ordered):
        name = region.attrs[0][1]
        key = keys[id(region)]
        if key != name:
            undo.append(functools.partial(region.attrs.__setitem__, 0, region.attrs[0]))
            region.attrs[0] = ("name", key)
        if id(region) in holding:
            touched.add(key)
        again = reused.get(key)
        if again is not None and key not in touched and again.depth == depth:
            done[id(region)] = attrs.evolve(again, out=region)
            continue
        items = tuple(render_items(region, lambda inner: done[id(inner)].xml))
        xml = open_tag(region) + "\n" + "".join(item.xml + "\n" for item in items) + "</region>\n"
        eids = tuple(_eids_in(region, done))
        said = dict(region.attrs)
        done[id(region)] = Region(
            key, name, said.get("label", ""), xml, items, eids, depth, region, said.get("site", "")
        )
    return [done[id(region)] for region, _ in ordered]


def _eids_in(node: OutNode, done: dict[int, Region]) -> list[str]:
    """Eids of the controls in a node, in document order (nested regions from `done`)."""
    found: list[str] = []
    for child in node.children:
        if isinstance(child, str):
            continue
        if child.tag == "region" and id(child) in done:
            found.extend(done[id(child)].eids)
            continue
        if child.eid is not None:
            found.append(child.eid)
        if child.children:
            found.extend(_eids_in(child, done))
    return found


def _child_regions(node: OutNode) -> list[OutNode]:
    """The regions directly inside a node (through headings and other elements)."""
    found: list[OutNode] = []
    for child in node.children:
        if isinstance(child, OutNode):
            if child.tag == "region":
                found.append(child)
            else:
                found.extend(_child_regions(child))
    return found


def _has_content(children: list[OutNode | str]) -> bool:
    """Text or elements other than regions."""
    return any(c.strip() if isinstance(c, str) else c.tag != "region" for c in children)
