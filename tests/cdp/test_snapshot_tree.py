"""The DOM tree from a DOMSnapshot reply, without a browser: getDocument's shape and gaps."""

from __future__ import annotations

from typing import Any

from pycdp_bridge._decode import frame_owners
from pycdp_bridge._join import SessionCapture, join
from pycdp_bridge._snapshot_tree import document_from_snapshot, frame_owner_ids, has_shadow_roots


def _reply(**extra_nodes: Any) -> dict[str, Any]:
    """A ``captureSnapshot`` reply of two documents: a page (doctype, html, body with a
    comment, whitespace, a no-break space, a thin space, a <p> with a ::before, an
    <input hidden> whose empty value is string -1, an <iframe>) and the iframe's."""
    strings = [
        "main-frame", "inner-frame", "https://page.test/", "about:srcdoc",
        "html", "HTML", "BODY", "#comment", " note ", "#text", "\n  ", "\u00a0", "\u2009",
        "P", "::before", "before", "Hello", "INPUT", "hidden", "IFRAME", "Inside",
    ]  # fmt: skip
    s = strings.index
    page_nodes: dict[str, Any] = {
        "parentIndex": [-1, 0, 0, 2, 3, 3, 3, 3, 3, 8, 8, 3, 3],
        "nodeType": [9, 10, 1, 1, 8, 3, 3, 3, 1, 1, 3, 1, 1],
        "nodeName": [-1, s("html"), s("HTML"), s("BODY"), s("#comment"), s("#text"),
                     s("#text"), s("#text"), s("P"), s("::before"), s("#text"), s("INPUT"),
                     s("IFRAME")],
        "nodeValue": [-1, -1, -1, -1, s(" note "), s("\n  "), s("\u00a0"), s("\u2009"),
                      -1, -1, s("Hello"), -1, -1],
        "backendNodeId": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13],
        "attributes": [[], [], [], [], [], [], [], [], [], [], [], [s("hidden"), -1], []],
        "pseudoType": {"index": [9], "value": [s("before")]},
        "contentDocumentIndex": {"index": [12], "value": [1]},
        **extra_nodes,
    }  # fmt: skip
    frame_nodes = {
        "parentIndex": [-1, 0, 1, 2],
        "nodeType": [9, 1, 1, 3],
        "nodeName": [-1, s("HTML"), s("BODY"), s("#text")],
        "nodeValue": [-1, -1, -1, s("Inside")],
        "backendNodeId": [20, 21, 22, 23],
        "attributes": [[], [], [], []],
    }
    return {
        "strings": strings,
        "documents": [
            {
                "frameId": s("main-frame"),
                "documentURL": s("https://page.test/"),
                "nodes": page_nodes,
            },
            {"frameId": s("inner-frame"), "documentURL": s("about:srcdoc"), "nodes": frame_nodes},
        ],
    }


def test_the_tree_has_get_documents_shape_and_gaps() -> None:
    """Whitespace-only text (by the DOM agent's rule, a thin space included) is left out
    and a no-break space kept, pseudo-elements go under ``pseudoElements``, an empty
    attribute value is "", and the frame's document hangs under its iframe."""
    root = document_from_snapshot(_reply())
    assert root is not None
    assert (root["nodeType"], root["documentURL"], root["backendNodeId"]) == (
        9,
        "https://page.test/",
        1,
    )
    doctype, html = root["children"]
    assert doctype["nodeType"] == 10
    assert (html["nodeName"], html["frameId"]) == ("HTML", "main-frame")
    [body] = html["children"]
    assert [(c["nodeType"], c["backendNodeId"]) for c in body["children"]] == [
        (8, 5),
        (3, 7),
        (1, 9),
        (1, 12),
        (1, 13),
    ]
    assert body["children"][1]["nodeValue"] == "\u00a0"
    paragraph = body["children"][2]
    assert [c["nodeValue"] for c in paragraph["children"]] == ["Hello"]
    [before] = paragraph["pseudoElements"]
    assert (before["nodeName"], before["pseudoType"]) == ("::before", "before")
    assert body["children"][3]["attributes"] == ["hidden", ""]
    iframe = body["children"][4]
    assert iframe["frameId"] == "inner-frame"
    document = iframe["contentDocument"]
    assert (document["documentURL"], document["backendNodeId"]) == ("about:srcdoc", 20)
    [inner_html] = document["children"]
    assert inner_html["frameId"] == "inner-frame"
    assert inner_html["children"][0]["children"][0]["nodeValue"] == "Inside"


def test_a_shadow_root_anywhere_means_no_tree() -> None:
    """A node in an author shadow tree (the snapshot flattens those) makes the reply
    unfit to stand for the DOM tree, and an empty reply has no tree either."""
    with_shadow = _reply(shadowRootType={"index": [10], "value": [0]})
    assert has_shadow_roots(with_shadow)
    assert document_from_snapshot(with_shadow) is None
    assert not has_shadow_roots(_reply())
    assert document_from_snapshot({"strings": [], "documents": []}) is None


def test_frame_owners_read_from_the_reply_are_the_trees() -> None:
    """The frame owners read from the reply's frame links are the ones a walk of the
    tree finds, and a link to a document the reply lacks makes no owner."""
    root = document_from_snapshot(_reply())
    assert root is not None
    assert frame_owner_ids(_reply()) == frame_owners(root) == [13]
    dangling = _reply(contentDocumentIndex={"index": [12], "value": [5]})
    dangling_root = document_from_snapshot(dangling)
    assert dangling_root is not None
    assert frame_owner_ids(dangling) == frame_owners(dangling_root) == []


def test_the_join_pairs_attributes_and_drops_a_dangling_name() -> None:
    """The join makes an element's attributes from name, value pairs (an absent value
    is ""), and a name without a value at the end of a malformed list is dropped
    without an error; nodes come in document order, the ::before first."""
    strings = _reply()["strings"]
    s = strings.index
    odd = [[], [], [], [], [], [], [], [], [], [], [], [s("hidden"), -1, s("IFRAME")], []]
    root = document_from_snapshot(_reply(attributes=odd))
    assert root is not None
    capture = SessionCapture(None, frame_id="main-frame", document=root)
    model, grafted = join(capture, {}, {})
    assert grafted == set()
    by_name = {node.name: node for node in model.nodes}
    assert by_name["input"].attributes == {"hidden": ""}
    p = by_name["p"]
    assert [model.nodes[c].name for c in p.children] == ["::before", "#text"]
    assert p.end == p.index + 1 + len(p.children)
