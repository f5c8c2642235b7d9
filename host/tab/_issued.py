"""Element-id memory: which node each eid sent for a document names.

Ids never move within a document's life: the pipeline keeps the ids sent for a
document on their nodes (`reserved`) and gives none of them to another node while its
own still exists, and a tool resolves an id the model holds through the node it was
sent for. `IssuedIds` is a value: sending more ids answers a new one, so a copy of the
snapshot memory (`SnapshotMemory.fork`) never changes what the memory it was made from
reserves or resolves.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from pycdp_bridge import PageModel

from ..pipeline import Compaction, Control

__all__ = ["IssuedIds"]


@attrs.frozen
class IssuedIds:
    """Every eid sent for the document `document` → the control it was sent for (nodes
    of the tab's own session). Never changed in place, its mapping included."""

    document: str = ""
    controls: Mapping[str, Control] = attrs.field(factory=dict)

    def of_document(self, document: str) -> IssuedIds:
        """These ids when they are of `document`, else none yet for it."""
        return self if document == self.document else IssuedIds(document)

    def reserved(self, model: PageModel) -> dict[str, int]:
        """Eid → backend node id of every id sent for `model`'s document (`compact`'s
        ``reserved``); empty for another document."""
        if model.document_id != self.document:
            return {}
        return {eid: control.backend_node_id for eid, control in self.controls.items()}

    def with_sent(self, model: PageModel, compaction: Compaction) -> IssuedIds:
        """These ids and the ones `compaction` (rendered from `model`) sends, in a new
        value: an id of an out-of-process frame is resolved by a capture, not kept."""
        sent = {
            eid: control
            for eid, control in compaction.controls.items()
            if model.frames[control.frame].session_id is None
        }
        return IssuedIds(model.document_id, {**self.controls, **sent})
