"""The DOM tree from a ``DOMSnapshot.captureSnapshot`` reply alone, without I/O.

The snapshot lists every node of every in-process document with its parent, name,
value and attributes, so for most pages it can stand for ``DOM.getDocument``, whose
browser-side cost is as large again as the snapshot's and which makes the DOM agent
track (and report changes to) every node it sent. It walks the *flat* tree, though:
inside an author shadow tree, shadow roots have no node of their own and light
children sit under the ``<slot>`` they are assigned to, so a page with any shadow
root (one of its nodes says ``shadowRootType``) still needs ``getDocument``.
User-agent shadow trees (an input's internals, ``<details>``'s slots) are not in
the snapshot at all: hosts keep their DOM children there, in DOM order.

`document_from_snapshot` builds the tree in the shape ``getDocument`` answers, so
that the join takes it unchanged, and leaves out what ``getDocument`` leaves out:
whitespace-only text nodes (the join puts back the rendered ones from the decoded
snapshot, as for ``getDocument``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._decode import DOM_WHITESPACE

__all__ = ["document_from_snapshot", "frame_owner_ids", "has_shadow_roots"]

Json = Mapping[str, Any]

_ELEMENT, _TEXT, _CDATA, _DOCUMENT = 1, 3, 4, 9


def document_from_snapshot(snapshot: Json) -> dict[str, Any] | None:
    """The main document's tree, in-process frames' documents under their owners, in
    ``DOM.getDocument{pierce:true}``'s JSON shape; None when the page has a shadow
    root (see the module docstring) or the reply has no document."""
    documents: list[Json] = snapshot.get("documents", [])
    if not documents or has_shadow_roots(snapshot):
        return None
    # An absent string is index -1 throughout the reply: with "" appended, -1 reads
    # it without a test per lookup.
    strings: list[str] = [*snapshot["strings"], ""]
    roots = [_document_tree(document, strings) for document in documents]
    for _, owners in roots:
        for owner, index in owners:
            if 0 <= index < len(roots):
                frame = roots[index][0]
                owner["contentDocument"] = frame
                owner["frameId"] = frame["frameId"]
    return roots[0][0]


def frame_owner_ids(snapshot: Json) -> list[int]:
    """Backend ids of the elements `document_from_snapshot` puts a frame's document
    under (what `frame_owners` finds in its tree), read from the reply's few frame
    owners rather than by walking every node of the tree."""
    documents: list[Json] = snapshot.get("documents", [])
    found: list[int] = []
    for document in documents:
        backend_ids: list[int] = document["nodes"]["backendNodeId"]
        for index, owned in _rare(document["nodes"].get("contentDocumentIndex")).items():
            if 0 <= owned < len(documents):
                found.append(backend_ids[index])
    return found


def has_shadow_roots(snapshot: Json) -> bool:
    """Whether a node of the reply is in an author shadow tree (open or closed)."""
    return any(
        document["nodes"].get("shadowRootType", {}).get("index")
        for document in snapshot.get("documents", ())
    )


def _document_tree(
    document: Json, strings: list[str]
) -> tuple[dict[str, Any], list[tuple[dict[str, Any], int]]]:
    """One document's tree, and its frame owners with the index of their document
    (`strings` ends with "", which index -1 reads)."""
    nodes = document["nodes"]
    parents: list[int] = nodes["parentIndex"]
    types: list[int] = nodes["nodeType"]
    names: list[int] = nodes["nodeName"]
    values: list[int] = nodes["nodeValue"]
    backend_ids: list[int] = nodes["backendNodeId"]
    attributes: list[list[int]] = nodes.get("attributes", [])
    pseudo = _rare_strings(nodes.get("pseudoType"), strings)
    frames = _rare(nodes.get("contentDocumentIndex"))
    frame_id = strings[document.get("frameId", -1)]
    string = strings.__getitem__
    built: list[dict[str, Any] | None] = [None] * len(parents)
    owners: list[tuple[dict[str, Any], int]] = []
    root: dict[str, Any] | None = None
    element_seen = False
    for index, parent in enumerate(parents):
        node_type = types[index]
        json: dict[str, Any]
        if node_type == _ELEMENT:
            raw = attributes[index] if index < len(attributes) else ()
            json = {
                "nodeType": _ELEMENT,
                "nodeName": strings[names[index]],
                "backendNodeId": backend_ids[index],
                "attributes": list(map(string, raw)),
                "children": [],
            }
            if not element_seen and parent == 0:
                # getDocument puts the document's frame id on its root element.
                json["frameId"] = frame_id
                element_seen = True
            kind = pseudo.get(index)
            if kind is not None:
                json["pseudoType"] = kind
            owned = frames.get(index)
            if owned is not None:
                owners.append((json, owned))
        elif node_type in (_TEXT, _CDATA):
            value = strings[values[index]]
            if not value.strip(DOM_WHITESPACE):
                continue
            json = {"nodeType": node_type, "nodeValue": value, "backendNodeId": backend_ids[index]}
        elif node_type == _DOCUMENT and parent < 0:
            url = document.get("documentURL", -1)
            json = {
                "nodeType": _DOCUMENT,
                "backendNodeId": backend_ids[index],
                "documentURL": strings[url],
                "frameId": frame_id,
                "children": [],
            }
            root = root or json
        elif parent >= 0:
            # Comments, doctypes, processing instructions: the join drops them, but the
            # rendered whitespace after one is placed by it (`SnapshotData.whitespace`).
            json = {"nodeType": node_type, "backendNodeId": backend_ids[index]}
        else:
            continue
        built[index] = json
        holder = built[parent] if parent >= 0 else None
        if holder is None:
            continue
        if "pseudoType" in json:
            holder.setdefault("pseudoElements", []).append(json)
        elif "children" in holder:  # an element or a document
            holder["children"].append(json)
    if root is None:
        root = {"nodeType": _DOCUMENT, "backendNodeId": 0, "documentURL": "", "frameId": frame_id}
        root["children"] = []
    return root, owners


def _rare(data: Json | None) -> dict[int, int]:
    if not data:
        return {}
    return dict(zip(data.get("index", ()), data.get("value", ()), strict=False))


def _rare_strings(data: Json | None, strings: list[str]) -> dict[int, str]:
    return {index: strings[value] for index, value in _rare(data).items() if value >= 0}
