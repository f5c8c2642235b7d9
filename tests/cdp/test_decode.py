"""Decoding CDP replies without a browser: DOMSnapshot tables and AX nodes to model values."""

from __future__ import annotations

import gc
from typing import Any

import pytest

from pycdp_bridge._decode import (
    SNAPSHOT_STYLES,
    content_inset,
    cut_off,
    decode_ax,
    decode_snapshot,
    frame_owners,
    interactive_nodes,
    viewport,
)
from pycdp_bridge._model import Rect
from trimtab.cli import _main as cli
from trimtab.wire import YOUNG_THRESHOLD, collect_less_often, gc_paused, loads_json


def _styles(**overrides: str) -> list[str]:
    values = {
        "display": "block", "visibility": "visible", "opacity": "1",
        "background-color": "rgba(0, 0, 0, 0)", "background-image": "none", "content": "normal",
        "cursor": "auto",
        "pointer-events": "auto", "position": "static", "z-index": "auto",
        "overflow-x": "visible", "overflow-y": "visible", "resize": "none",
    }  # fmt: skip
    values.update({k.replace("_", "-"): v for k, v in overrides.items()})
    return [values[name] for name in SNAPSHOT_STYLES]


def snapshot_reply() -> dict[str, Any]:
    """A ``captureSnapshot`` reply shaped as Chromium sends it: one string table, a
    document of node arrays (html, body, div, text " ", span, text "x" * 10,001), its
    layout arrays and rare data."""
    strings: list[str] = ["", "frame-1", "Title", "HTML", "BODY", "DIV", "#text", " ", "SPAN"]
    long_text = "x" * 10_001
    strings.append(long_text)
    pointer = _styles(cursor="pointer")
    plain = _styles(opacity="0.5")

    def index_of(value: str) -> int:
        if value not in strings:
            strings.append(value)
        return strings.index(value)

    pointer_ids = [index_of(v) for v in pointer]
    plain_ids = [index_of(v) for v in plain]
    return {
        "strings": strings,
        "documents": [
            {
                "frameId": 1,
                "title": 2,
                "scrollOffsetX": 0,
                "scrollOffsetY": 40,
                "nodes": {
                    "parentIndex": [-1, 0, 1, 2, 2, 4],
                    "nodeType": [1, 1, 1, 3, 1, 3],
                    "nodeName": [3, 4, 5, 6, 8, 6],
                    "nodeValue": [-1, -1, -1, 7, -1, 9],
                    "backendNodeId": [10, 11, 12, 13, 14, 15],
                    "isClickable": {"index": [4]},
                    "inputValue": {"index": [], "value": []},
                },
                "layout": {
                    "nodeIndex": [2, 3, 4, 4],
                    "styles": [pointer_ids, plain_ids, plain_ids, []],
                    "bounds": [[0, 0, 100, 20], [5, 0, 4, 20], [10, 0, 50, 20], [0, 0, 0, 0]],
                    "text": [-1, 7, -1, 2],
                    "paintOrders": [1, 2, 3, 4],
                },
            }
        ],
    }


def test_snapshot_tables_decode_into_node_states() -> None:
    """Styles, boxes, paint order, clickability, whitespace, long text and the top
    document's node come out of the string table and layout arrays on the right ids."""
    decoded = decode_snapshot(snapshot_reply())
    div = decoded.states[12].layout
    assert div is not None
    assert div.style is not None
    assert div.style.cursor == "pointer"
    assert (div.bounds, div.paint_order) == (Rect(0, 0, 100, 20), 1)
    span = decoded.states[14]
    assert span.clickable
    assert not decoded.states[12].clickable
    assert span.layout is not None
    assert span.layout.style is not None
    assert span.layout.style.opacity == 0.5
    # A second layout object of the span gives only text, which the first lacked.
    assert span.layout.text == "Title"
    assert decoded.documents["frame-1"].scroll_y == 40
    assert decoded.documents["frame-1"].title == "Title"
    # The rendered " " between the div's children is kept, after nothing (first child).
    assert decoded.whitespace == {
        12: [(None, {"nodeType": 3, "nodeValue": " ", "backendNodeId": 13})]
    }
    assert decoded.long_texts == {15: "x" * 10_001}
    # The top document's first node: what getDocument's root must be, or it navigated.
    assert decoded.root_id == 10


def test_ax_nodes_decode_first_unignored_wins() -> None:
    """Of several AX nodes for one DOM node the first unignored one is kept, with its
    properties as plain values and related nodes as backend ids."""
    nodes: list[dict[str, Any]] = [
        {"backendDOMNodeId": 7, "ignored": True, "role": {"value": "none"}},
        {
            "backendDOMNodeId": 7,
            "role": {"value": "button"},
            "name": {"value": "Buy"},
            "properties": [
                {"name": "focusable", "value": {"value": True}},
                {"name": "labelledby", "value": {"relatedNodes": [{"backendDOMNodeId": 3}]}},
            ],
        },
        {"backendDOMNodeId": 7, "role": {"value": "generic"}},
        {"role": {"value": "RootWebArea"}},
    ]
    decoded = decode_ax(nodes)
    assert list(decoded) == [7]
    info = decoded[7]
    assert (info.role, info.name, info.ignored) == ("button", "Buy", False)
    assert info.properties == {"focusable": True, "labelledby": [3]}


def test_document_walks_find_cut_off_and_interactive_nodes() -> None:
    """The getDocument walks list subtrees a depth-limited reply left out and the
    elements the pipeline keeps by role, skipping user-agent shadow trees."""
    cut = {"nodeType": 1, "nodeName": "DIV", "backendNodeId": 4, "childNodeCount": 2}
    root = {
        "nodeType": 9,
        "backendNodeId": 1,
        "children": [
            {"nodeType": 1, "nodeName": "BUTTON", "backendNodeId": 2, "attributes": []},
            {"nodeType": 1, "nodeName": "SPAN", "backendNodeId": 3, "attributes": ["role", "x"]},
            cut,
            {
                "nodeType": 1,
                "nodeName": "INPUT",
                "backendNodeId": 5,
                "shadowRoots": [
                    {"nodeType": 11, "shadowRootType": "user-agent", "childNodeCount": 1}
                ],
            },
        ],
    }
    assert cut_off([root]) == [cut]
    assert sorted(interactive_nodes(root, {})) == [2, 3, 5]


def test_frame_owners_and_their_content_insets() -> None:
    """The walk finds the elements holding in-process frame documents, nested ones too,
    and a box model says where the frame's document starts: border plus padding."""
    inner = {"nodeType": 1, "nodeName": "IFRAME", "backendNodeId": 7, "contentDocument": {}}
    root = {
        "nodeType": 9,
        "backendNodeId": 1,
        "children": [
            {
                "nodeType": 1,
                "nodeName": "IFRAME",
                "backendNodeId": 3,
                "contentDocument": {"nodeType": 9, "backendNodeId": 4, "children": [inner]},
            },
            {"nodeType": 1, "nodeName": "IFRAME", "backendNodeId": 5},  # out of process
        ],
    }
    assert sorted(frame_owners(root)) == [3, 7]
    model = {
        "border": [10, 20, 110, 20, 110, 80, 10, 80],
        "padding": [12, 21, 108, 21, 108, 79, 12, 79],
        "content": [15.5, 24, 105, 24, 105, 76, 15.5, 76],
    }
    assert content_inset(model) == (5.5, 4.0)


def test_layout_metrics_decode_into_the_viewport() -> None:
    """The CSS layout viewport of getLayoutMetrics is the model's viewport rectangle."""
    metrics = {
        "cssLayoutViewport": {"pageX": 0, "pageY": 300, "clientWidth": 800, "clientHeight": 600}
    }
    assert viewport(metrics) == Rect(0.0, 300.0, 800.0, 600.0)


def test_the_collector_is_paused_only_inside_the_step() -> None:
    """gc_paused turns automatic collection off for its body and back on after it, even
    when the body raises, and leaves it off where the caller had turned it off."""
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(KeyError), gc_paused():
        raise KeyError("decode failed")
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_snapshot_process_collects_the_young_generation_less_often() -> None:
    """collect_less_often raises only the young generation's threshold, to
    YOUNG_THRESHOLD, and keeps the older generations' as they were."""
    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 7, 9)
        collect_less_often()
        assert gc.get_threshold() == (YOUNG_THRESHOLD, 7, 9)
        assert YOUNG_THRESHOLD > 700
    finally:
        gc.set_threshold(*before)


def test_the_command_line_collects_less_often_before_its_command_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`trimtab`'s main sets the young threshold before it runs a command (`make demo`
    takes its snapshots in that process)."""
    seen: list[tuple[int, int, int]] = []

    def install(args: object) -> int:
        seen.append(gc.get_threshold())
        return 0

    monkeypatch.setattr(cli, "_install", install)
    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        assert cli.main(["install"]) == 0
    finally:
        gc.set_threshold(*before)
    assert seen == [(YOUNG_THRESHOLD, 10, 10)]


def test_wire_json_keeps_lone_surrogates_and_refuses_what_json_refuses() -> None:
    """Messages parse fast, one with an escaped lone surrogate (page text can hold one)
    still parses with the surrogate kept, and a text neither parser accepts (or one the
    caller's lenient options refuse) raises ValueError."""
    assert loads_json(b'{"a":[1,"x"]}') == {"a": [1, "x"]}
    assert loads_json(bytearray(b'"a\\ud800b"')) == "a\ud800b"

    def refuse(name: str) -> None:
        raise ValueError(f"{name} is not JSON")

    with pytest.raises(ValueError, match="NaN is not JSON"):
        loads_json('{"v": NaN}', parse_constant=refuse)
    with pytest.raises(ValueError, match="Expecting value"):
        loads_json(b'{"a": ')
