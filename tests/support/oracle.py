"""The fidelity oracle: judges our XML against what the browser itself says is on the page.

Nothing here trusts the pipeline's own view of the page. Visible text comes from the
page's ``document.body.innerText`` (and that of same-origin iframe documents), read
with ``Runtime.evaluate``; interactive elements come from the browser's accessibility
tree (``Accessibility.getFullAXTree``), read separately from our capture, and are
counted only when the browser gives them a non-empty box (``DOM.getBoxModel``, or the
DOMSnapshot bounds in the captured model as a fallback, since ``getBoxModel`` has no
box for an inline that only wraps blocks).

The pipeline's data is used for one thing only: to *explain* a miss (a word only in
the options of a closed select, text covered by an element painted above it, an
aria-hidden subtree...), so that a listed miss says where to look. A miss without a
reason is listed as unexplained.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs
from lxml import etree

from pycdp_bridge import CDPError, Node, PageModel, Target
from trimtab.pipeline import Compaction
from trimtab.pipeline._filter import Visibility, filter_page
from trimtab.pipeline._render import LISTS as LISTED_TAGS
from trimtab.pipeline._roles import NOISE_TAGS

__all__ = [
    "INTERACTIVE_ROLES",
    "TEXT_ATTRIBUTES",
    "Fidelity",
    "InteractiveRecall",
    "MissingElement",
    "MissingWord",
    "PageTruth",
    "TextRecall",
    "interactive_recall",
    "judge",
    "read_truth",
    "text_recall",
]

#: Roles of the browser's AX tree that a person (or an agent) acts on.
INTERACTIVE_ROLES = frozenset(
    {
        "link",
        "button",
        "textbox",
        "searchbox",
        "checkbox",
        "radio",
        "combobox",
        "listbox",
        "option",
        "slider",
        "spinbutton",
        "switch",
        "tab",
        "menuitem",
        "menuitemcheckbox",
        "menuitemradio",
        "treeitem",
    }
)
#: Our lists of links and buttons: each line an id, a space, the element's text.
LISTS = frozenset(LISTED_TAGS.values())
#: Attributes of our XML whose values are page text a person sees (labels, values...).
TEXT_ATTRIBUTES = ("label", "value", "placeholder", "alt", "options", "first")

_WORD = re.compile(r"\w+")
_SPACE = re.compile(r"\s+")

# innerText of the top document and of every same-origin iframe document (a
# cross-origin one throws on contentDocument and is skipped: its text is not ours
# to read from here, and the capture reaches it through its own session).
_INNER_TEXT_JS = r"""
(() => {
  const texts = [];
  const visit = (doc) => {
    if (!doc || !doc.body) return;
    texts.push(doc.body.innerText || "");
    for (const frame of doc.querySelectorAll("iframe, frame")) {
      let inner = null;
      try { inner = frame.contentDocument; } catch (e) { inner = null; }
      visit(inner);
    }
  };
  visit(document);
  return texts;
})()
"""


def words(text: str) -> list[str]:
    """The oracle's words: Unicode ``\\w+`` runs, lower-cased."""
    return [w.lower() for w in _WORD.findall(text)]


@attrs.frozen
class AXControl:
    """One interactive node of the browser's accessibility tree."""

    backend_node_id: int
    role: str
    name: str
    rendered: bool


@attrs.frozen
class PageTruth:
    """What the browser says is on the page: its visible text and its interactive nodes."""

    inner_text: str
    ax_controls: tuple[AXControl, ...]


@attrs.frozen
class MissingWord:
    """A word of innerText that our output lacks, with how often and why."""

    word: str
    count: int
    reason: str


@attrs.frozen
class TextRecall:
    """Multiset recall of innerText's words in our output."""

    total: int
    found: int
    # Of `found`, words innerText glued to a neighbour ("MotorsFashion") that we
    # matched as a substring of our whitespace-free text.
    glued: int
    missing: tuple[MissingWord, ...]

    @property
    def ratio(self) -> float:
        return self.found / self.total if self.total else 1.0


@attrs.frozen
class MissingElement:
    """An interactive element of the AX tree that is not among our controls."""

    backend_node_id: int
    role: str
    name: str
    tag: str
    reason: str


@attrs.frozen
class InteractiveRecall:
    """Share of rendered interactive AX nodes that are (or are inside) our controls."""

    total: int
    found: int
    # Of `found`, those inside one of our controls (an option of a select, ...).
    inside_control: int
    missing: tuple[MissingElement, ...]

    @property
    def ratio(self) -> float:
        return self.found / self.total if self.total else 1.0


@attrs.frozen
class Fidelity:
    """The oracle's verdict on one page."""

    xml_error: str | None
    text: TextRecall
    interactive: InteractiveRecall
    # What the browser said (innerText, AX nodes), for token counts and reports.
    truth: PageTruth = attrs.field(eq=False, repr=False)

    @property
    def ok(self) -> bool:
        return self.xml_error is None

    def summary(self, limit: int = 8) -> str:
        """One paragraph naming the misses, for reports and assertion messages."""
        parts = [
            f"text recall {self.text.ratio:.2%} ({self.text.found}/{self.text.total},"
            f" {self.text.glued} glued)",
            f"interactive recall {self.interactive.ratio:.2%}"
            f" ({self.interactive.found}/{self.interactive.total})",
        ]
        if self.xml_error:
            parts.insert(0, f"XML DOES NOT PARSE: {self.xml_error}")
        if self.text.missing:
            shown = "; ".join(
                f"{m.word!r}x{m.count}: {m.reason}" for m in self.text.missing[:limit]
            )
            more = len(self.text.missing) - limit
            parts.append(f"missing words: {shown}" + (f"; +{more} more" if more > 0 else ""))
        if self.interactive.missing:
            shown = "; ".join(
                f"{m.role} <{m.tag}> {m.name[:40]!r}: {m.reason}"
                for m in self.interactive.missing[:limit]
            )
            more = len(self.interactive.missing) - limit
            parts.append(f"missing elements: {shown}" + (f"; +{more} more" if more > 0 else ""))
        return " | ".join(parts)


async def read_truth(target: Target) -> PageTruth:
    """Read innerText and the interactive AX nodes from the browser (not from our capture)."""
    result = await target.send(
        "Runtime.evaluate", {"expression": _INNER_TEXT_JS, "returnByValue": True}
    )
    if "exceptionDetails" in result:
        raise RuntimeError(f"reading innerText failed: {result['exceptionDetails']}")
    texts: Sequence[str] = result["result"].get("value") or []
    inner_text = "\n".join(texts)

    frame_ids = _frame_ids((await target.send("Page.getFrameTree"))["frameTree"])
    nodes: list[Mapping[str, Any]] = []
    for position, frame_id in enumerate(frame_ids):
        params: dict[str, Any] = {} if position == 0 else {"frameId": frame_id}
        try:
            tree = await target.send("Accessibility.getFullAXTree", params)
        except CDPError:
            continue  # an out-of-process frame: not reachable from this session
        nodes.extend(tree.get("nodes", []))

    controls: list[AXControl] = []
    seen: set[int] = set()
    for ax in nodes:
        role = (ax.get("role") or {}).get("value", "")
        backend = ax.get("backendDOMNodeId")
        if role not in INTERACTIVE_ROLES or ax.get("ignored") or backend is None:
            continue
        if backend in seen:
            continue
        seen.add(backend)
        name = str((ax.get("name") or {}).get("value", ""))
        controls.append(AXControl(backend, role, name, await _has_box(target, backend)))
    return PageTruth(inner_text, tuple(controls))


def _frame_ids(tree: Mapping[str, Any]) -> list[str]:
    found = [tree["frame"]["id"]]
    for child in tree.get("childFrames", []):
        found.extend(_frame_ids(child))
    return found


async def _has_box(target: Target, backend_node_id: int) -> bool:
    try:
        box = await target.send("DOM.getBoxModel", {"backendNodeId": backend_node_id})
    except CDPError:
        return False  # no layout object
    model = box.get("model", {})
    return bool(model.get("width", 0) > 0 and model.get("height", 0) > 0)


# -- our side -------------------------------------------------------------------------


@attrs.frozen
class OurText:
    """Our XML as the oracle reads it: its words and its whitespace-free text."""

    words: Counter[str]
    flat: str


def read_xml(xml: str) -> OurText:
    """Parse our XML with lxml; raises lxml.etree.XMLSyntaxError when it is not XML."""
    root = etree.fromstring(xml.encode("utf-8"))
    pieces: list[str] = []

    def visit(element: etree._Element) -> None:
        for key in TEXT_ATTRIBUTES:
            value = element.get(key)
            if value:
                pieces.append(value)
        if element.tag in LISTS and element.text:
            # A list's lines: an id, a space, the element's text.
            pieces.extend(line.partition(" ")[2] for line in element.text.split("\n"))
        elif element.text:
            pieces.append(element.text)
        for child in element:
            if isinstance(child.tag, str):
                visit(child)
            if child.tail:
                pieces.append(child.tail)

    visit(root)
    counter: Counter[str] = Counter()
    for piece in pieces:
        counter.update(words(piece))
    flat = _SPACE.sub("", "".join(pieces)).lower()
    return OurText(counter, flat)


# -- verdicts ---------------------------------------------------------------------------


async def judge(target: Target, model: PageModel, compaction: Compaction) -> Fidelity:
    """Judge one compaction of the page in ``target`` (captured as ``model``)."""
    truth = await read_truth(target)
    verdict = judge_truth(truth, model, compaction)
    if not any(m.tag == "?" for m in verdict.interactive.missing):
        return verdict
    # Elements our capture does not have at all (user-agent shadow trees: a video's
    # built-in controls): inside one of our controls when their shadow host is, or is
    # inside, one; otherwise ask the browser where they live.
    ours = {c.backend_node_id for c in compaction.controls.values()}
    by_backend = {n.backend_node_id: n for n in model.nodes if n.frame == 0}
    missing: list[MissingElement] = []
    rescued = 0
    for m in verdict.interactive.missing:
        if m.tag != "?":
            missing.append(m)
            continue
        host = await _shadow_host(target, m.backend_node_id)
        node = by_backend.get(host) if host is not None else None
        if node is not None and (
            host in ours or any(a.backend_node_id in ours for a in model.ancestors(node))
        ):
            rescued += 1
            continue
        where = await _where(target, m.backend_node_id)
        missing.append(attrs.evolve(m, reason=f"{m.reason}: {where}"))
    interactive = verdict.interactive
    return attrs.evolve(
        verdict,
        interactive=attrs.evolve(
            interactive,
            found=interactive.found + rescued,
            inside_control=interactive.inside_control + rescued,
            missing=tuple(missing),
        ),
    )


_HOST_JS = "function () { const root = this.getRootNode(); return root.host || null; }"


async def _shadow_host(target: Target, backend_node_id: int) -> int | None:
    """The backendNodeId of the element whose shadow tree holds the node, if any."""
    try:
        resolved = await target.send("DOM.resolveNode", {"backendNodeId": backend_node_id})
        object_id = resolved["object"]["objectId"]
        host = await target.send(
            "Runtime.callFunctionOn", {"objectId": object_id, "functionDeclaration": _HOST_JS}
        )
        host_id = host["result"].get("objectId")
        if host_id is None:
            return None
        described = await target.send("DOM.describeNode", {"objectId": host_id})
        return int(described["node"]["backendNodeId"])
    except (CDPError, KeyError):
        return None


_WHERE_JS = """function () {
  const root = this.getRootNode();
  const tag = this.nodeName.toLowerCase();
  if (root instanceof ShadowRoot) return `<${tag}> in a shadow root of <${root.host.localName}>`;
  if (root !== this.ownerDocument) return `<${tag}> in a detached or user-agent tree`;
  return `<${tag}> in the document`;
}"""


async def _where(target: Target, backend_node_id: int) -> str:
    try:
        resolved = await target.send("DOM.resolveNode", {"backendNodeId": backend_node_id})
        object_id = resolved["object"]["objectId"]
        result = await target.send(
            "Runtime.callFunctionOn",
            {"objectId": object_id, "functionDeclaration": _WHERE_JS, "returnByValue": True},
        )
        await target.send("Runtime.releaseObject", {"objectId": object_id})
    except (CDPError, KeyError):
        return "the browser cannot resolve it (a user-agent shadow tree: built-in media controls?)"
    return str(result.get("result", {}).get("value", "unknown"))


def judge_truth(truth: PageTruth, model: PageModel, compaction: Compaction) -> Fidelity:
    """The verdict from already-read truth (sans-I/O)."""
    visibility = filter_page(model)
    explain = _Explainer(model, visibility)
    try:
        ours: OurText | None = read_xml(compaction.xml)
        error = None
    except etree.XMLSyntaxError as exc:
        ours, error = None, str(exc)
    text = text_recall(truth.inner_text, ours, explain)
    interactive = interactive_recall(truth.ax_controls, model, compaction, explain)
    return Fidelity(error, text, interactive, truth)


def text_recall(inner_text: str, ours: OurText | None, explain: _Explainer) -> TextRecall:
    """Multiset recall of innerText's words; a failed parse finds nothing."""
    wanted = Counter(words(inner_text))
    have: Counter[str] = ours.words if ours is not None else Counter()
    flat = ours.flat if ours is not None else ""
    found = glued = 0
    missing: list[MissingWord] = []
    for word, count in wanted.items():
        direct = min(count, have[word])
        short = count - direct
        extra = 0
        if short:
            # Occurrences inside longer runs of our text ("motorsfashion"), beyond
            # the ones that already count as standalone words.
            extra = min(short, max(0, flat.count(word) - have[word]))
        if short - extra > 0 and _segments(word, have):
            # innerText glued it to a neighbour that our output keeps apart
            # ("numberForgot": "number" and "forgot" are both there).
            extra = short
        found += direct + extra
        glued += extra
        if short - extra > 0:
            missing.append(MissingWord(word, short - extra, explain.word(word)))
    missing.sort(key=lambda m: (-m.count, m.word))
    return TextRecall(sum(wanted.values()), found, glued, tuple(missing))


def interactive_recall(
    ax_controls: Iterable[AXControl],
    model: PageModel,
    compaction: Compaction,
    explain: _Explainer,
) -> InteractiveRecall:
    """Rendered interactive AX nodes found among (or inside) our controls."""
    ours = {c.backend_node_id for c in compaction.controls.values()}
    total = found = inside = 0
    missing: list[MissingElement] = []
    for ax in ax_controls:
        node = explain.by_backend.get(ax.backend_node_id)
        rendered = ax.rendered or (
            node is not None and node.bounds is not None and not node.bounds.is_empty()
        )
        if not rendered:
            continue
        total += 1
        if ax.backend_node_id in ours:
            found += 1
            continue
        if node is not None and any(a.backend_node_id in ours for a in model.ancestors(node)):
            found += 1
            inside += 1
            continue
        tag = node.name if node is not None else "?"
        reason = (
            explain.element(node, ours)
            if node is not None
            else ("not in our capture (backendNodeId absent from the model)")
        )
        missing.append(MissingElement(ax.backend_node_id, ax.role, ax.name, tag, reason))
    return InteractiveRecall(total, found, inside, tuple(missing))


def _segments(word: str, have: Counter[str]) -> bool:
    """Whether ``word`` is two or more of our words glued together."""
    size = len(word)
    # reach[i]: the prefix of length i is a sequence of our words (and how many).
    reach: list[int] = [0] + [-1] * size
    for end in range(1, size + 1):
        for start in range(end):
            if reach[start] >= 0 and have[word[start:end]] > 0:
                reach[end] = max(reach[end], reach[start] + 1)
    return reach[size] >= 2


class _Explainer:
    """Finds a concrete reason for a miss in the captured model and stage 1's verdict."""

    def __init__(self, model: PageModel, visibility: Visibility) -> None:
        self.model = model
        self.visibility = visibility
        self.by_backend = {n.backend_node_id: n for n in model.nodes}
        self._text_words: dict[str, list[Node]] | None = None

    def _index(self) -> dict[str, list[Node]]:
        if self._text_words is None:
            index: dict[str, list[Node]] = {}
            nodes = self.model.nodes
            for node in nodes:
                # Text of <script>, <style>, <title>... is never innerText.
                if node.is_text and not (
                    node.parent >= 0 and nodes[node.parent].name in NOISE_TAGS
                ):
                    for word in set(words(node.text)):
                        index.setdefault(word, []).append(node)
            self._text_words = index
        return self._text_words

    def word(self, word: str) -> str:
        nodes = self._index().get(word, [])
        if not nodes:
            return (
                "in no DOM text node of the capture (split across text nodes, CSS text-transform"
                " or generated content?) - unexplained"
            )
        # innerText holds only rendered text (and the options of a select): reasons
        # found on such occurrences come first; a copy in a display:none subtree or in
        # a <script> cannot be the occurrence innerText saw.
        rendered: Counter[str] = Counter()
        other: Counter[str] = Counter()
        unexplained = 0
        for node in nodes:
            reason = self.node_reason(node)
            if reason is None:
                unexplained += 1
            elif node.bounds is not None or reason.startswith("only in <option>"):
                rendered[reason] += 1
            else:
                other[reason] += 1
        for found in (rendered, other):
            if found:
                return "; ".join(r for r, _ in found.most_common(2))
        return "its text node is shown by stage 1 but the word is not in the XML - unexplained"

    def element(self, node: Node, ours: set[int]) -> str:
        reason = self.node_reason(node)
        if reason is not None:
            return reason
        for inner in self.model.subtree(node)[1:]:
            if inner.backend_node_id in ours:
                return f"our control is its descendant {_describe(inner)} (nested clickable)"
        return "shown by stage 1 but not a control in the XML - unexplained"

    def node_reason(self, node: Node) -> str | None:
        """Why stage 1 (or the select encoding) keeps this node out, or None if it shows it."""
        model = self.model
        chain = [node, *model.ancestors(node)]
        for inner in chain:
            if inner.name == "option" and any(a.name == "select" for a in model.ancestors(inner)):
                return (
                    "only in <option>s of a closed <select> (the compound select shows the"
                    " count and first options; read(id) lists all)"
                )
        cover = self.visibility.covered_by.get(node.index)
        if cover is not None:
            return f"covered by {_describe(model.nodes[cover])} painted above it"
        for inner in chain:
            if not inner.is_element:
                continue
            if inner.name in NOISE_TAGS:
                return f"inside noise tag <{inner.name}>"
            style = inner.style
            if style is not None and style.display == "none":
                return f"display:none on {_describe(inner)}"
            if (
                inner.attributes.get("aria-hidden") == "true"
                and self.visibility.removed[inner.index]
            ):
                return f"aria-hidden on {_describe(inner)}"
            if style is not None and style.opacity <= 0.0 and self.visibility.removed[inner.index]:
                return f"opacity 0 on {_describe(inner)}"
        element = node if node.is_element else model.parent_of(node)
        if node.style is not None and node.style.visibility != "visible":
            return "visibility:hidden"
        if node.bounds is None:
            where = f" ({_describe(element)})" if element is not None else ""
            return f"no layout box{where}"
        if node.bounds.is_empty():
            where = f" ({_describe(element)})" if element is not None else ""
            return f"zero-size box{where}"
        if not self.visibility.shown[node.index]:
            return "not shown by stage 1 (reason not recorded)"
        return None


def _describe(node: Node) -> str:
    parts = [node.name]
    element_id = node.attributes.get("id")
    if element_id:
        parts.append(f'id="{element_id[:30]}"')
    classes = node.attributes.get("class", "").split()
    if classes:
        parts.append(f'class="{" ".join(classes[:2])[:40]}"')
    return "<" + " ".join(parts) + ">"
