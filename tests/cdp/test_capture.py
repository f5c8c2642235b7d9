"""Capture of real pages into the page model: tree, frames, shadow roots, layout, AX."""

from __future__ import annotations

import gc
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import trio

from pycdp_bridge import (
    DialogOpenError,
    Node,
    NodeType,
    PageCrashedError,
    PageModel,
    PageTarget,
    _capture,
    capture,
    protocol,
)
from pycdp_bridge._gc import gc_paused
from tests.support import StaticServer
from tests.support.pages import page_url
from tests.support.targets import FailingTarget, RecordingTarget
from trimtab.pipeline import compact

pytestmark = pytest.mark.browser

CORPUS_PAGES = [
    "pages/ebay-home-2017",
    "pages/ietf-draft",
    "pages/reddit-front-2021",
    "pages/linkedin-login-2017",
    "flows/wikipedia-articles/01-mozilla",
]

# Elements of the document and of every open shadow root in it (not of iframes).
COUNT_ELEMENTS_JS = """(() => {
  let count = 0;
  const walk = (root) => {
    for (const el of root.querySelectorAll('*')) {
      count++;
      if (el.shadowRoot) walk(el.shadowRoot);
    }
  };
  walk(document);
  return count;
})()"""

RENDERED_IDS_JS = """[...document.querySelectorAll('[id]')]
  .filter((el) => el.getClientRects().length > 0).map((el) => el.id)"""


def by_id(model: PageModel, element_id: str) -> Node:
    """The first element with this id attribute, anywhere in the model."""
    for node in model.elements():
        if node.attributes.get("id") == element_id:
            return node
    raise AssertionError(f"no element with id {element_id!r} in the model")


def in_closed_shadow(model: PageModel, node: Node) -> bool:
    return any(a.shadow_root_type == "closed" for a in model.ancestors(node))


def subtree_text(model: PageModel, node: Node) -> str:
    return " ".join(
        " ".join(n.text.split()) for n in model.subtree(node) if n.is_text and n.text.strip()
    )


def check_structure(model: PageModel) -> None:
    """Document order invariants every consumer of the model relies on."""
    for node in model.nodes:
        assert model.nodes[node.index] is node
        assert node.index < node.end <= len(model.nodes)
        for child in node.children:
            assert model.nodes[child].parent == node.index
            assert node.index < child < node.end
            assert model.nodes[child].end <= node.end
    assert model.root.node_type is NodeType.DOCUMENT
    assert model.root.end == len(model.nodes)


@pytest.mark.corpus
@pytest.mark.parametrize("item", CORPUS_PAGES)
async def test_corpus_page_capture(page: PageTarget, corpus: Path, item: str) -> None:
    """A corpus page captures whole: every element, boxes for rendered ones, AX names."""
    await page.navigate((corpus / item / "index.html").as_uri())
    before = await page.evaluate(COUNT_ELEMENTS_JS)
    model = await capture(page)
    after = await page.evaluate(COUNT_ELEMENTS_JS)
    rendered_ids: list[str] = await page.evaluate(RENDERED_IDS_JS)
    assert model.missing == ()
    assert model.document_id
    assert model.viewport.width > 0
    check_structure(model)
    # querySelectorAll('*') over the document and its open shadow roots counts what
    # the model holds in the main frame, minus what script cannot see: pseudo-elements
    # (the model keeps ::before/::after/::marker boxes) and closed shadow trees.
    counted = sum(
        1
        for n in model.elements()
        if n.frame == 0 and n.pseudo_type is None and not in_closed_shadow(model, n)
    )
    assert counted in {before, after}, (counted, before, after)
    # Every element the browser renders has bounds (ids make them findable both ways).
    first_by_id: dict[str, Node] = {}
    for node in model.elements():
        if node.frame == 0 and node.shadow_root_type is None:
            first_by_id.setdefault(node.attributes.get("id", ""), node)
    unboxed = [i for i in rendered_ids if i in first_by_id and first_by_id[i].bounds is None]
    assert unboxed == []
    # Links whose only content is visible text are named by that text.
    checked = matched = 0
    for node in model.elements():
        if node.name != "a" or node.ax is None or node.ax.ignored or "href" not in node.attributes:
            continue
        descendants = model.subtree(node)[1:]
        if any(d.is_element for d in descendants) or set(node.attributes) & {
            "aria-label",
            "aria-labelledby",
            "title",
        }:
            continue
        if not all(d.bounds is not None for d in descendants if d.is_text and d.text.strip()):
            continue
        text = subtree_text(model, node)
        if not text:
            continue
        checked += 1
        assert node.ax.role == "link"
        matched += node.ax.name.casefold() == text.casefold()
    if checked:
        # CSS text-transform and generated content can make a few names differ.
        assert matched >= 0.9 * checked, (matched, checked)


async def load_frames_page(
    page: PageTarget, pages_server: StaticServer, second_server: StaticServer
) -> PageModel:
    # 127.0.0.1 on another port is another origin of the same site, which Chromium
    # keeps in process; localhost is another site, so that iframe runs out of process.
    # Chromium resolves localhost to loopback itself, so nothing leaves the machine.
    fragment = f"#sibling={second_server.origin}&cross=http://localhost:{second_server.port}"
    await page.navigate(pages_server.url("frames/index.html") + fragment)
    return await capture(page)


async def test_frames_and_shadow_roots(
    page: PageTarget, pages_server: StaticServer, second_server: StaticServer
) -> None:
    """Same-origin, same-site and cross-site iframes and an open shadow root are all joined."""
    model = await load_frames_page(page, pages_server, second_server)
    check_structure(model)
    assert model.missing == ()
    assert model.title == "Frames and shadows"
    assert [f.url.split("#")[0].rsplit("/", 1)[-1] for f in model.frames] == [
        "index.html",
        "same.html",
        "cross.html",
        "cross.html",
    ]
    main, same, sibling, cross = model.frames
    assert main.owner == -1
    assert (same.session_id, sibling.session_id) == (None, None)
    assert cross.session_id is not None
    assert sibling.url.startswith(second_server.origin)
    assert cross.url.startswith("http://localhost:")
    for frame, iframe_id in ((same, "same"), (sibling, "sibling"), (cross, "cross")):
        owner = by_id(model, iframe_id)
        assert frame.owner == owner.index
        assert owner.content_frame == frame.index
        document = model.nodes[owner.index + 1]
        assert document.node_type is NodeType.DOCUMENT
        assert document.frame == frame.index
        assert document.parent == owner.index
    same_text = by_id(model, "same-text")
    assert same_text.frame == same.index
    assert by_id(model, "same") in model.ancestors(same_text)
    buttons = [n for n in model.elements() if n.attributes.get("id") == "cross-button"]
    assert sorted(model.frames[b.frame].session_id is None for b in buttons) == [False, True]
    # The shadow root is a node of its own, between the host and its content.
    shadow_button = by_id(model, "shadow-button")
    shadow_root = model.nodes[shadow_button.parent]
    assert shadow_root.node_type is NodeType.SHADOW_ROOT
    assert shadow_root.shadow_root_type == "open"
    assert model.nodes[shadow_root.parent].attributes.get("id") == "host"
    assert by_id(model, "after-host").parent == model.nodes[shadow_root.parent].parent
    # Comments and doctypes are dropped; script and style elements stay.
    assert {n.name for n in model.elements()} >= {"script", "style"}
    assert all(n.node_type in NodeType for n in model.nodes)


async def test_frame_boxes_are_in_top_level_coordinates(
    page: PageTarget, pages_server: StaticServer, second_server: StaticServer
) -> None:
    """Boxes inside iframes are shifted by the iframe's content box into page coordinates."""
    model = await load_frames_page(page, pages_server, second_server)
    expected = await page.evaluate("""(() => {
        const frame = document.getElementById('same');
        const style = getComputedStyle(frame);
        const box = frame.getBoundingClientRect();
        const inner = frame.contentDocument.getElementById('same-link')
            .getBoundingClientRect();
        return [box.x + frame.clientLeft + parseFloat(style.paddingLeft) + inner.x,
                box.y + frame.clientTop + parseFloat(style.paddingTop) + inner.y];
    })()""")
    cross_frame = model.frames[by_id(model, "cross").content_frame or 0]
    inner = await page.send(
        "Runtime.evaluate",
        {
            "expression": "(({x, y}) => [x, y])("
            "document.getElementById('cross-button').getBoundingClientRect())",
            "returnByValue": True,
        },
        session_id=cross_frame.session_id,
    )
    outer = await page.evaluate("""(() => {
        const frame = document.getElementById('cross');
        const style = getComputedStyle(frame);
        const box = frame.getBoundingClientRect();
        return [box.x + frame.clientLeft + parseFloat(style.paddingLeft),
                box.y + frame.clientTop + parseFloat(style.paddingTop)];
    })()""")
    link = by_id(model, "same-link")
    assert link.bounds is not None
    assert (link.bounds.x, link.bounds.y) == pytest.approx(expected)
    cross_button = next(
        n
        for n in model.elements()
        if n.attributes.get("id") == "cross-button" and n.frame == cross_frame.index
    )
    assert cross_button.bounds is not None
    inner_x, inner_y = inner["result"]["value"]
    assert (cross_button.bounds.x, cross_button.bounds.y) == pytest.approx(
        (outer[0] + inner_x, outer[1] + inner_y)
    )
    # Text nodes have their own boxes, inside their element's.
    text = model.nodes[link.children[0]]
    assert text.is_text
    assert text.bounds is not None
    assert link.bounds.contains(text.bounds)


async def test_layout_styles_and_accessibility_are_joined(
    page: PageTarget, pages_server: StaticServer, second_server: StaticServer
) -> None:
    """Styles, visibility, clickability and AX role/name land on the right nodes."""
    await load_frames_page(page, pages_server, second_server)
    model = await capture(page, ax=True)
    link = by_id(model, "main-link")
    assert link.ax is not None
    assert (link.ax.role, link.ax.name) == ("link", "Back to top")
    assert link.ax.properties.get("focusable") is True
    assert link.clickable
    assert link.style is not None
    assert link.style.display == "inline"
    assert link.style.cursor == "pointer"
    heading = by_id(model, "title")
    assert heading.ax is not None
    assert heading.ax.role == "heading"
    assert heading.ax.properties.get("level") == 1
    shadow_button = by_id(model, "shadow-button")
    assert shadow_button.ax is not None
    assert (shadow_button.ax.role, shadow_button.ax.name) == ("button", "Inside shadow")
    cross_buttons = [n for n in model.elements() if n.attributes.get("id") == "cross-button"]
    assert {(b.ax.role, b.ax.name) for b in cross_buttons if b.ax} == {
        ("button", "Cross frame button")
    }
    assert len(cross_buttons) == 2
    hidden = by_id(model, "hidden-button")
    assert hidden.bounds is None
    assert hidden.style is None
    before = next(n for n in model.elements() if n.pseudo_type == "before")
    assert before.text == "before-host"
    assert before.bounds is not None


async def test_snapshot_failure_degrades_to_dom_only(
    page: PageTarget, pages_server: StaticServer, second_server: StaticServer
) -> None:
    """Without DOMSnapshot the model still has the whole tree, no layout, and says so."""
    full = await load_frames_page(page, pages_server, second_server)
    broken = FailingTarget(page, {"DOMSnapshot.captureSnapshot"})
    model = await capture(broken)
    assert "dom_snapshot" in model.missing
    check_structure(model)
    # Rendered whitespace text comes from the snapshot (DOM.getDocument leaves it out).
    assert [n.name for n in model.nodes] == [
        n.name for n in full.nodes if not (n.is_text and n.text.isspace())
    ]
    assert all(n.bounds is None and n.style is None for n in model.nodes)
    assert model.title == "Frames and shadows"
    assert by_id(model, "main-link").ax is not None


async def test_ax_failure_degrades(
    page: PageTarget, pages_server: StaticServer, second_server: StaticServer
) -> None:
    """Without the AX tree the model keeps layout, lacks AX info, and says so."""
    await load_frames_page(page, pages_server, second_server)
    refuse = {"Accessibility.getFullAXTree", "Accessibility.getPartialAXTree"}
    model = await capture(FailingTarget(page, refuse))
    full_tree = await capture(FailingTarget(page, refuse), ax=True)
    assert "ax_tree" in model.missing
    assert "ax_tree" in full_tree.missing
    assert all(n.ax is None for n in model.nodes)
    assert by_id(model, "main-link").bounds is not None


async def test_a_page_showing_a_dialog_fails_its_capture_once(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """A capture of a page that shows a dialog raises one DialogOpenError naming it (all
    of its concurrent calls meet the dialog), not a group of them."""
    await page.navigate(pages_server.url("frames/index.html"))
    await page.evaluate("setTimeout(() => alert('Hold on'), 0)")
    with trio.fail_after(30):
        while page.open_dialog is None:
            await trio.sleep(0.02)
    try:
        with pytest.raises(DialogOpenError, match="Hold on"):
            await capture(page)
    finally:
        await page.execute(protocol.page_handle_javascript_dialog(accept=True))
    assert not (await capture(page)).navigated


async def test_frame_trees_bracket_the_dom_calls(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """The capture sends the frame tree and the small calls first and the snapshot
    next; on a page with shadow roots the DOM tree once the snapshot shows them, and the
    frame tree again only after both; and says the document stayed the same."""
    await page.navigate(pages_server.url("frames/index.html"))
    recording = RecordingTarget(page)
    model = await capture(recording)
    main = [m for m in recording.methods if m != "Target.setAutoAttach"]
    assert main[:3] == [
        "Page.getFrameTree",
        "Page.getLayoutMetrics",
        "DOMSnapshot.captureSnapshot",
    ]
    after = main[3:]
    assert after.count("Page.getFrameTree") == 1
    assert after.index("DOM.getDocument") < after.index("Page.getFrameTree")
    assert not model.navigated
    assert any(n.shadow_root_type == "open" for n in model.nodes)
    tree = await page.execute(protocol.page_get_frame_tree())
    assert model.document_id == tree["frameTree"]["frame"]["loaderId"]


async def test_a_frame_tree_read_before_is_not_asked_again(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """Given the frame tree its caller read just before, the capture asks for the frame
    tree only once, after its DOM calls, and takes the document from the one given."""
    await page.navigate(pages_server.url("frames/index.html"))
    tree = await page.execute(protocol.page_get_frame_tree())
    recording = RecordingTarget(page)
    model = await capture(recording, frame_tree=tree)
    main = [m for m in recording.methods if m != "Target.setAutoAttach"]
    assert main[:2] == ["Page.getLayoutMetrics", "DOMSnapshot.captureSnapshot"]
    assert main.count("Page.getFrameTree") == 1
    assert main.index("Page.getFrameTree") > main.index("DOMSnapshot.captureSnapshot")
    assert model.document_id == tree["frameTree"]["frame"]["loaderId"]
    assert not model.navigated


async def test_the_second_frame_tree_is_asked_before_the_snapshot_is_decoded(
    page: PageTarget, pages_server: StaticServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The frame tree that closes the capture is sent as soon as the snapshot has
    answered, so the browser answers it while the host decodes the snapshot rather
    than after."""
    await page.navigate(pages_server.url("capture-snapshot-tree.html"))
    recording = RecordingTarget(page)
    decode = _capture.decode_snapshot

    def noted(snapshot: Mapping[str, Any]) -> Any:
        recording.methods.append("(decode)")
        return decode(snapshot)

    monkeypatch.setattr(_capture, "decode_snapshot", noted)
    model = await capture(recording, ax=False, rects=False)
    main = [m for m in recording.methods if m != "Target.setAutoAttach"]
    # Then the in-process frame's box model, asked once the decoded tree shows it.
    assert main[:5] == [
        "Page.getFrameTree",
        "Page.getLayoutMetrics",
        "DOMSnapshot.captureSnapshot",
        "Page.getFrameTree",
        "(decode)",
    ]
    assert not model.navigated
    assert model.missing == ()


def _model_rows(model: PageModel) -> list[tuple[object, ...]]:
    """Every node of a model as comparable values (ids, tree, text, layout, state)."""
    return [
        (
            n.node_type, n.name, n.backend_node_id, n.frame, n.parent, n.end,
            tuple(n.children), n.attributes, n.text, n.pseudo_type, n.shadow_root_type,
            n.bounds, n.paint_order, n.style, n.clickable, n.input_value, n.checked,
            n.selected, n.content_frame,
        )
        for n in model.nodes
    ]  # fmt: skip


async def test_the_tree_from_the_snapshot_is_the_dom_tree(
    page: PageTarget, pages_server: StaticServer
) -> None:
    """On a page without shadow roots the capture reads the tree from the snapshot alone,
    and its model is the one DOM.getDocument gives: comments, whitespace between words,
    no-break and thin spaces, pseudo-elements, <details>, <textarea>, <template>, SVG
    and an in-process frame included."""
    await page.navigate(pages_server.url("capture-snapshot-tree.html"))
    recording = RecordingTarget(page)
    model = await capture(recording, ax=False, rects=False)
    reference = await capture(page, ax=False, rects=False, dom_tree=True)
    assert "DOM.getDocument" not in recording.methods
    assert model.missing == ()
    assert _model_rows(model) == _model_rows(reference)
    assert [(f.frame_id, f.url, f.offset_x, f.offset_y) for f in model.frames] == [
        (f.frame_id, f.url, f.offset_x, f.offset_y) for f in reference.frames
    ]
    assert (model.url, model.title) == (reference.url, reference.title)
    assert "Great boots really" in compact(model).xml
    # A no-break space is text to the DOM agent: once in the tree, not again as
    # rendered whitespace; a thin space is whitespace to it, put back once.
    for space in ("\u00a0", "\u2009"):
        [texts] = [
            [model.nodes[c].text for c in n.children]
            for n in model.elements()
            if n.name == "p" and set("".join(model.nodes[c].text for c in n.children)) == {space}
        ]
        assert texts == [space]


async def test_options_skip_parts(page: PageTarget, pages_server: StaticServer) -> None:
    """ax=False and dom_snapshot=False skip those calls without reporting them missing."""
    await page.navigate(pages_server.url("frames/index.html"))
    model = await capture(page, ax=False, dom_snapshot=False)
    assert model.missing == ()
    assert "ax_tree" not in model.timings
    assert "dom_snapshot" not in model.timings
    assert all(n.ax is None and n.bounds is None for n in model.nodes)
    assert by_id(model, "main-link").attributes["href"] == "#top"


async def test_interactive_ax_names_only_kept_elements(
    page: PageTarget, pages_server: StaticServer, second_server: StaticServer
) -> None:
    """ax="interactive" names links, buttons and headings (all frames) and skips the rest."""
    await load_frames_page(page, pages_server, second_server)
    full = await capture(page, ax=True)
    model = await capture(page, ax="interactive")
    assert model.missing == ()
    for element_id in ("main-link", "title", "shadow-button", "same-link"):
        node, reference = by_id(model, element_id), by_id(full, element_id)
        assert node.ax is not None
        assert reference.ax is not None
        assert (node.ax.role, node.ax.name) == (reference.ax.role, reference.ax.name)
    assert {
        b.ax.name for b in model.elements() if b.attributes.get("id") == "cross-button" and b.ax
    } == {"Cross frame button"}
    assert by_id(model, "after-host").ax is None


# A tree far deeper than one DOM.getDocument reply may nest (about 140 levels), and
# deeper than the pipeline once walked: nested divs, a chain of open shadow roots each
# holding the next host, and an iframe at the bottom of the divs.
DEEP_PAGE_JS = """(() => {
  let node = document.body;
  for (let i = 0; i < 1500; i++) {
    const div = document.createElement('div');
    node.appendChild(div);
    node = div;
  }
  node.insertAdjacentHTML('beforeend',
    '<a id="deep-link" href="#deep">Deep link</a>' +
    '<iframe id="deep-frame" srcdoc="<a href=#in-frame>Link in a deep frame</a>"></iframe>');
  class Nest extends HTMLElement {}
  customElements.define('x-nest', Nest);
  let root = document.body;
  for (let i = 0; i < 300; i++) {
    const host = document.createElement('x-nest');
    root.appendChild(host);
    root = host.attachShadow({mode: 'open'});
  }
  root.innerHTML = '<button id="deep-button">Button under 300 shadow roots</button>';
  return new Promise((done) => {
    const frame = document.getElementById('deep-frame');
    if (frame.contentDocument && frame.contentDocument.readyState === 'complete'
        && frame.contentDocument.querySelector('a')) done(true);
    else frame.addEventListener('load', () => done(true));
  });
})()"""


async def test_a_deep_tree_is_read_whole(page: PageTarget) -> None:
    """A tree nested 1,500 elements and 300 shadow roots deep is captured whole, and its
    deepest link, frame link and button come out as controls."""
    await page.navigate("about:blank")
    await page.evaluate(DEEP_PAGE_JS)
    elements = await page.evaluate(COUNT_ELEMENTS_JS)
    model = await capture(page, ax=False, rects=False)
    assert model.missing == ()
    in_frame = [n for n in model.elements() if n.frame != 0]
    assert len(list(model.elements())) - len(in_frame) == elements
    assert by_id(model, "deep-link").bounds is not None
    assert [n.attributes.get("href") for n in in_frame if n.name == "a"] == ["#in-frame"]
    compaction = compact(model)
    names = {(c.role, c.name) for c in compaction.controls.values()}
    assert {
        ("link", "Deep link"),
        ("link", "Link in a deep frame"),
        ("button", "Button under 300 shadow roots"),
    } <= names


async def test_a_long_text_node_is_whole(page: PageTarget) -> None:
    """DOM.getDocument cuts text nodes at 10,000 characters; the capture keeps all of it."""
    words = " ".join(f"word{n}" for n in range(6000)) + " LAST-WORD"
    html = f"<!doctype html><title>Long</title><p id='long'>{words}</p>"
    await page.navigate(page_url(html))
    model = await capture(page, ax=False, rects=False)
    [text] = [n for n in model.nodes if n.is_text and n.text.startswith("word0 ")]
    assert len(text.text) > 40_000
    assert text.text == words
    assert "LAST-WORD</region>" in compact(model).xml.replace("\n", "")


async def test_a_crashed_page_fails_fast_and_recovers(page: PageTarget) -> None:
    """A capture of a crashed tab raises PageCrashedError at once instead of waiting
    forever, and a navigation brings the tab back."""
    await page.navigate(page_url("<!doctype html><title>Before</title><p>Before</p>"))
    async with page.listen("Inspector.targetCrashed") as crashes:
        await page.execute(protocol.page_navigate("chrome://crash"))
        await crashes.__anext__()
    with pytest.raises(PageCrashedError, match="the page crashed"):
        await capture(page)
    await page.navigate(page_url("<!doctype html><title>After</title><p>After</p>"))
    model = await capture(page)
    assert model.title == "After"


async def test_clickability_and_where_the_pointer_cursor_starts(page: PageTarget) -> None:
    """A span with its own click listener inside a clickable cursor:pointer card is
    clickable and inherits the pointer; its siblings without one are not clickable; the
    card starts the pointer itself; a display:contents wrapper is passed over."""
    await page.navigate(page_url("capture-clickable.html"))
    model = await capture(page, ax=False, rects=False)
    card, save, title = (by_id(model, i) for i in ("card", "card-save", "card-title"))
    assert card.clickable
    assert save.clickable
    assert not title.clickable
    assert not by_id(model, "card-price").clickable
    for node in (card, save, title):
        assert node.style is not None
        assert node.style.cursor == "pointer"
    assert model.parent_cursor(card) == "auto"
    assert model.parent_cursor(save) == "pointer"
    # display:contents has no layout object: the row's own cursor is what is inherited.
    action = by_id(model, "row-action")
    assert action.clickable
    assert by_id(model, "row-group").style is None
    assert model.parent_cursor(action) == "pointer"
    assert not by_id(model, "row").clickable
    link = by_id(model, "plain-link")
    assert link.clickable
    assert link.style is not None
    assert (link.style.cursor, model.parent_cursor(link)) == ("pointer", "default")


async def test_the_collector_is_off_while_a_capture_is_under_way(
    page: PageTarget, tmp_path: Path
) -> None:
    """While a capture waits for the browser's replies and joins them the garbage
    collector is off (other tasks that run meanwhile see it so), and it is on again
    once the capture is over."""
    rows = "".join(f"<li><a href='/{n}'>item {n}</a> <b>{n}</b></li>" for n in range(1_000))
    (tmp_path / "big.html").write_text(f"<!doctype html><ul>{rows}</ul>", encoding="utf-8")
    await page.navigate((tmp_path / "big.html").as_uri(), timeout=60)
    seen: list[bool] = []  # the collector's state each time the sampler ran meanwhile
    capturing = True

    async def sample() -> None:
        while capturing:
            seen.append(gc.isenabled())
            await trio.sleep(0)

    assert gc.isenabled()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(sample)
        model = await capture(page, ax=False, rects=False)
        capturing = False
    assert model.element_count() > 1_000
    assert len(seen) > 2
    assert not any(seen), seen
    assert gc.isenabled()


def test_pauses_end_with_the_last_of_them() -> None:
    """Overlapping pauses of the collector (two captures at once) keep it off until the
    last one ends; a pause inside someone else's gc.disable() leaves it off."""
    assert gc.isenabled()
    first, second = gc_paused(), gc_paused()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    assert not gc.isenabled()
    second.__exit__(None, None, None)
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
