"""The object group of a call's remote objects, and the listeners the browser reports
on an element's event path.

Every remote object the driver makes during a call goes into `OBJECT_GROUP`, which
the call releases when it ends (`CallContext`). Which scripts listen on an element's
event path, from the element out of shadow roots up to the window, comes from the
browser (``DOMDebugger.getEventListeners``), not from the page: the submit prediction
reads it (``_consent``), `type` to know whether a widget reads keys one by one
(``_fields``), and a refusal naming a covering pop-up to say whether Escape reaches a
script that may close it (``_element``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import trio

from pycdp_bridge import Target, call_on, evaluate
from pycdp_bridge import protocol as cdp

from ._scripts import script

__all__ = ["KEY_EVENTS", "OBJECT_GROUP", "listener_types"]

OBJECT_GROUP = "trimtab-tools"

KEY_EVENTS = frozenset({"keydown", "keypress", "keyup"})
"""The listener types through which a script hears a key press."""


async def listener_types(
    target: Target, session: str | None, object_id: str, *, page_world: bool
) -> frozenset[str]:
    """The event types scripts listen to on the element's event path, up to the window.

    ``page_world``: `object_id` is an object of the page's own world, as its path's
    nodes then are; otherwise (Trimtab's isolated world) each node is first found
    again in the page's world, two more round trips each."""
    path = await call_on(
        target,
        object_id,
        script("event-path.js"),
        return_by_value=False,
        session_id=session,
    )
    array = path.get("objectId")
    if array is None:
        raise ValueError("the element's event path could not be read")
    properties = await target.execute(cdp.runtime_get_properties(str(array)), session_id=session)
    members: list[Mapping[str, Any]] = []
    for member in properties.get("result", []):
        value: Mapping[str, Any] = member.get("value") or {}
        if str(member.get("name", "")).isdigit() and value.get("objectId") is not None:
            members.append(value)
    # A node's listeners take one to three round trips: every node of the path at
    # once, and the first failure in path order raised as it would be one by one.
    found: list[frozenset[str] | Exception] = [frozenset()] * len(members)

    async def read(index: int, value: Mapping[str, Any]) -> None:
        try:
            found[index] = await _listeners_of(target, session, value, page_world)
        except Exception as exc:  # re-raised below, outside the nursery
            found[index] = exc

    async with trio.open_nursery() as nursery:
        for index, value in enumerate(members):
            nursery.start_soon(read, index, value)
    types: set[str] = set()
    for result in found:
        if isinstance(result, Exception):
            raise result
        types.update(result)
    return frozenset(types)


async def _listeners_of(
    target: Target, session: str | None, value: Mapping[str, Any], page_world: bool
) -> frozenset[str]:
    """The event types the page's scripts listen to on one node of an event path."""
    # The browser lists the listeners of the world the object belongs to: the
    # page's scripts live in the main world, so ask about the main world's object.
    if page_world:
        main: Mapping[str, Any] = value
    elif value.get("className") == "Window":
        main = await evaluate(
            target,
            script("main-window.js"),
            object_group=OBJECT_GROUP,
            return_by_value=False,
            session_id=session,
        )
    else:
        described = await target.execute(
            cdp.dom_describe_node(object_id=str(value["objectId"])), session_id=session
        )
        resolved = await target.execute(
            cdp.dom_resolve_node(
                backend_node_id=described["node"]["backendNodeId"], object_group=OBJECT_GROUP
            ),
            session_id=session,
        )
        main = resolved["object"]
    main_object = main.get("objectId")
    if main_object is None:
        raise ValueError("a node of the element's event path could not be read")
    found = await target.execute(
        cdp.dom_debugger_get_event_listeners(str(main_object)), session_id=session
    )
    return frozenset(str(listener.get("type", "")) for listener in found.get("listeners", []))
