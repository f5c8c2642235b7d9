"""CDP commands as generators: the single place where Trimtab names CDP methods.

This module is `pycdp_bridge.protocol`: it holds the commands of the page (DOM,
DOMSnapshot, Accessibility, Overlay, Page, Runtime) and re-exports those of
``_protocol_input`` (Input, Emulation), ``_protocol_network`` (Network, Log, Fetch) and
``_protocol_targets`` (Target, Browser);
the ``_protocol*`` modules are the only ones that name a CDP method.

Each function yields one request ``{"method": ..., "params": ...}``, receives the raw
result dict and returns it, the shape the ``cdp`` package uses, so
``Target.execute`` runs these and that package's generators alike. Results are typed
with the TypedDicts ``cdp-use`` generates from today's protocol. Those types are
imported only for the type checker: importing ``cdp_use.cdp`` at run time costs about
230 ms and pulls in websockets, and the ``cdp`` package's own parsers reject what
Chromium sends today. The names of the events callers listen to are constants in
``events`` (`_events`), so that a misspelt name fails at import, not by silence.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from . import _events as events
from ._protocol_base import Command, Empty, Request, Result, call
from ._protocol_input import (
    KeyEventType,
    MouseButton,
    MouseEventType,
    emulation_set_device_metrics_override,
    emulation_set_focus_emulation_enabled,
    input_dispatch_key_event,
    input_dispatch_mouse_event,
    input_insert_text,
)
from ._protocol_network import (
    fetch_continue_request,
    fetch_disable,
    fetch_enable,
    fetch_fail_request,
    log_enable,
    network_enable,
    network_get_request_post_data,
    network_get_response_body,
)
from ._protocol_targets import (
    browser_cancel_download,
    browser_close,
    browser_set_download_behavior,
    target_attach_to_target,
    target_close_target,
    target_create_target,
    target_detach_from_target,
    target_get_targets,
    target_set_auto_attach,
)

if TYPE_CHECKING:
    from cdp_use.cdp.accessibility.commands import (
        GetFullAXTreeParameters,
        GetFullAXTreeReturns,
        GetPartialAXTreeParameters,
        GetPartialAXTreeReturns,
    )
    from cdp_use.cdp.dom.commands import (
        DescribeNodeParameters,
        DescribeNodeReturns,
        FocusParameters,
        GetBoxModelParameters,
        GetBoxModelReturns,
        GetContentQuadsParameters,
        GetContentQuadsReturns,
        GetDocumentParameters,
        GetDocumentReturns,
        GetFrameOwnerParameters,
        GetFrameOwnerReturns,
        GetNodeForLocationParameters,
        GetNodeForLocationReturns,
        ResolveNodeParameters,
        ResolveNodeReturns,
        ScrollIntoViewIfNeededParameters,
        SetFileInputFilesParameters,
    )
    from cdp_use.cdp.domdebugger.commands import (
        GetEventListenersParameters,
        GetEventListenersReturns,
    )
    from cdp_use.cdp.domsnapshot.commands import (
        CaptureSnapshotParameters,
        CaptureSnapshotReturns,
    )
    from cdp_use.cdp.overlay.commands import HighlightNodeParameters
    from cdp_use.cdp.overlay.types import HighlightConfig
    from cdp_use.cdp.page.commands import (
        AddScriptToEvaluateOnNewDocumentParameters,
        AddScriptToEvaluateOnNewDocumentReturns,
        CaptureScreenshotParameters,
        CaptureScreenshotReturns,
        CreateIsolatedWorldParameters,
        CreateIsolatedWorldReturns,
        GetFrameTreeReturns,
        GetLayoutMetricsReturns,
        GetNavigationHistoryReturns,
        HandleJavaScriptDialogParameters,
        NavigateParameters,
        NavigateReturns,
        NavigateToHistoryEntryParameters,
        ReloadParameters,
        ScreencastFrameAckParameters,
        SetLifecycleEventsEnabledParameters,
        StartScreencastParameters,
    )
    from cdp_use.cdp.page.types import Viewport
    from cdp_use.cdp.runtime.commands import (
        AddBindingParameters,
        AwaitPromiseParameters,
        AwaitPromiseReturns,
        CallFunctionOnParameters,
        CallFunctionOnReturns,
        EvaluateParameters,
        EvaluateReturns,
        GetPropertiesParameters,
        GetPropertiesReturns,
        ReleaseObjectGroupParameters,
        ReleaseObjectParameters,
    )
    from cdp_use.cdp.runtime.types import CallArgument

__all__ = [
    "DEFAULT_SNAPSHOT_STYLES",
    "Command",
    "Empty",
    "KeyEventType",
    "MouseButton",
    "MouseEventType",
    "Request",
    "Result",
    "browser_cancel_download",
    "browser_close",
    "browser_set_download_behavior",
    "emulation_set_device_metrics_override",
    "emulation_set_focus_emulation_enabled",
    "events",
    "fetch_continue_request",
    "fetch_disable",
    "fetch_enable",
    "fetch_fail_request",
    "input_dispatch_key_event",
    "input_dispatch_mouse_event",
    "input_insert_text",
    "log_enable",
    "network_enable",
    "network_get_request_post_data",
    "network_get_response_body",
    "target_attach_to_target",
    "target_close_target",
    "target_create_target",
    "target_detach_from_target",
    "target_get_targets",
    "target_set_auto_attach",
]

#: Computed styles captured for every layout node; `_model.Style` has one field each.
#: Only what the pipeline reads: each one costs the browser a value per layout object.
DEFAULT_SNAPSHOT_STYLES: tuple[str, ...] = (
    "display",
    "visibility",
    "opacity",
    "background-color",
    "background-image",
    "content",
    "cursor",
    "pointer-events",
    "position",
    "z-index",
    "overflow-x",
    "overflow-y",
)


# --- DOM -----------------------------------------------------------------------------


def dom_enable() -> Command[Empty]:
    return (yield from call("DOM.enable"))


def dom_get_document(depth: int = -1, *, pierce: bool = True) -> Command[GetDocumentReturns]:
    params: GetDocumentParameters = {"depth": depth, "pierce": pierce}
    return cast("GetDocumentReturns", (yield from call("DOM.getDocument", params)))


def dom_describe_node(
    *,
    backend_node_id: int | None = None,
    object_id: str | None = None,
    depth: int = 0,
    pierce: bool = False,
) -> Command[DescribeNodeReturns]:
    """Describe a node given by its backend id or by a remote object of it."""
    params: DescribeNodeParameters = {"depth": depth, "pierce": pierce}
    if backend_node_id is not None:
        params["backendNodeId"] = backend_node_id
    if object_id is not None:
        params["objectId"] = object_id
    if len(params) != 3:
        raise ValueError(
            f"dom_describe_node needs exactly one of backend_node_id ({backend_node_id!r})"
            f" and object_id ({object_id!r})"
        )
    return cast("DescribeNodeReturns", (yield from call("DOM.describeNode", params)))


def dom_resolve_node(
    *,
    backend_node_id: int,
    object_group: str | None = None,
    execution_context_id: int | None = None,
) -> Command[ResolveNodeReturns]:
    """A remote object of a node, in the page's main world or in `execution_context_id`."""
    params: ResolveNodeParameters = {"backendNodeId": backend_node_id}
    if object_group is not None:
        params["objectGroup"] = object_group
    if execution_context_id is not None:
        params["executionContextId"] = execution_context_id
    return cast("ResolveNodeReturns", (yield from call("DOM.resolveNode", params)))


def dom_set_file_input_files(files: Sequence[str], *, object_id: str) -> Command[Empty]:
    """Put files into a file input, as its file picker does (`input` and `change` fire)."""
    params: SetFileInputFilesParameters = {"files": list(files), "objectId": object_id}
    return (yield from call("DOM.setFileInputFiles", params))


# --- DOMDebugger -----------------------------------------------------------------------


def dom_debugger_get_event_listeners(object_id: str) -> Command[GetEventListenersReturns]:
    """The event listeners on one object (a node, a window) of the object's own world."""
    params: GetEventListenersParameters = {"objectId": object_id}
    return cast(
        "GetEventListenersReturns", (yield from call("DOMDebugger.getEventListeners", params))
    )


def dom_get_content_quads(*, backend_node_id: int) -> Command[GetContentQuadsReturns]:
    params: GetContentQuadsParameters = {"backendNodeId": backend_node_id}
    return cast("GetContentQuadsReturns", (yield from call("DOM.getContentQuads", params)))


def dom_get_box_model(*, backend_node_id: int) -> Command[GetBoxModelReturns]:
    params: GetBoxModelParameters = {"backendNodeId": backend_node_id}
    return cast("GetBoxModelReturns", (yield from call("DOM.getBoxModel", params)))


def dom_scroll_into_view_if_needed(*, backend_node_id: int) -> Command[Empty]:
    params: ScrollIntoViewIfNeededParameters = {"backendNodeId": backend_node_id}
    return (yield from call("DOM.scrollIntoViewIfNeeded", params))


def dom_focus(*, backend_node_id: int) -> Command[Empty]:
    params: FocusParameters = {"backendNodeId": backend_node_id}
    return (yield from call("DOM.focus", params))


def dom_get_node_for_location(
    x: int,
    y: int,
    *,
    include_user_agent_shadow_dom: bool = False,
    ignore_pointer_events_none: bool = True,
) -> Command[GetNodeForLocationReturns]:
    params: GetNodeForLocationParameters = {
        "x": x,
        "y": y,
        "includeUserAgentShadowDOM": include_user_agent_shadow_dom,
        "ignorePointerEventsNone": ignore_pointer_events_none,
    }
    return cast("GetNodeForLocationReturns", (yield from call("DOM.getNodeForLocation", params)))


def dom_get_frame_owner(frame_id: str) -> Command[GetFrameOwnerReturns]:
    params: GetFrameOwnerParameters = {"frameId": frame_id}
    return cast("GetFrameOwnerReturns", (yield from call("DOM.getFrameOwner", params)))


# --- DOMSnapshot, Accessibility -------------------------------------------------------


def dom_snapshot_capture_snapshot(
    computed_styles: Sequence[str] = DEFAULT_SNAPSHOT_STYLES,
    *,
    include_paint_order: bool = True,
    include_dom_rects: bool = True,
) -> Command[CaptureSnapshotReturns]:
    params: CaptureSnapshotParameters = {
        "computedStyles": list(computed_styles),
        "includePaintOrder": include_paint_order,
        "includeDOMRects": include_dom_rects,
    }
    return cast("CaptureSnapshotReturns", (yield from call("DOMSnapshot.captureSnapshot", params)))


def accessibility_get_full_ax_tree(frame_id: str | None = None) -> Command[GetFullAXTreeReturns]:
    params: GetFullAXTreeParameters = {}
    if frame_id is not None:
        params["frameId"] = frame_id
    return cast("GetFullAXTreeReturns", (yield from call("Accessibility.getFullAXTree", params)))


def accessibility_get_partial_ax_tree(
    backend_node_id: int, *, fetch_relatives: bool = False
) -> Command[GetPartialAXTreeReturns]:
    params: GetPartialAXTreeParameters = {
        "backendNodeId": backend_node_id,
        "fetchRelatives": fetch_relatives,
    }
    return cast(
        "GetPartialAXTreeReturns", (yield from call("Accessibility.getPartialAXTree", params))
    )


# --- Overlay -------------------------------------------------------------------------


def overlay_enable() -> Command[Empty]:
    return (yield from call("Overlay.enable"))


def overlay_highlight_node(
    highlight_config: Mapping[str, Any], *, backend_node_id: int
) -> Command[Empty]:
    """Highlight a node; ``highlight_config`` is an ``Overlay.HighlightConfig``."""
    params: HighlightNodeParameters = {
        "highlightConfig": cast("HighlightConfig", dict(highlight_config)),
        "backendNodeId": backend_node_id,
    }
    return (yield from call("Overlay.highlightNode", params))


def overlay_hide_highlight() -> Command[Empty]:
    return (yield from call("Overlay.hideHighlight"))


# --- Page ------------------------------------------------------------------------------


def page_enable() -> Command[Empty]:
    return (yield from call("Page.enable"))


def page_set_lifecycle_events_enabled(*, enabled: bool = True) -> Command[Empty]:
    params: SetLifecycleEventsEnabledParameters = {"enabled": enabled}
    return (yield from call("Page.setLifecycleEventsEnabled", params))


def page_navigate(url: str, *, frame_id: str | None = None) -> Command[NavigateReturns]:
    params: NavigateParameters = {"url": url}
    if frame_id is not None:
        params["frameId"] = frame_id
    return cast("NavigateReturns", (yield from call("Page.navigate", params)))


def page_get_frame_tree() -> Command[GetFrameTreeReturns]:
    return cast("GetFrameTreeReturns", (yield from call("Page.getFrameTree")))


def page_get_layout_metrics() -> Command[GetLayoutMetricsReturns]:
    return cast("GetLayoutMetricsReturns", (yield from call("Page.getLayoutMetrics")))


def page_get_navigation_history() -> Command[GetNavigationHistoryReturns]:
    return cast("GetNavigationHistoryReturns", (yield from call("Page.getNavigationHistory")))


def page_navigate_to_history_entry(entry_id: int) -> Command[Empty]:
    params: NavigateToHistoryEntryParameters = {"entryId": entry_id}
    return (yield from call("Page.navigateToHistoryEntry", params))


def page_bring_to_front() -> Command[Empty]:
    return (yield from call("Page.bringToFront"))


def page_stop_loading() -> Command[Empty]:
    """Stop the tab's load on its way (its pending requests are cancelled)."""
    return (yield from call("Page.stopLoading"))


def page_capture_screenshot(
    *,
    image_format: str = "jpeg",
    quality: int | None = None,
    clip: tuple[float, float, float, float, float] | None = None,
    beyond_viewport: bool = False,
    optimize_for_speed: bool = False,
) -> Command[CaptureScreenshotReturns]:
    """`clip`: x, y, width, height in document CSS pixels, and the scale to render at."""
    params: CaptureScreenshotParameters = {
        "format": image_format,
        "captureBeyondViewport": beyond_viewport,
        "optimizeForSpeed": optimize_for_speed,
    }
    if quality is not None:
        params["quality"] = quality
    if clip is not None:
        x, y, width, height, scale = clip
        viewport: Viewport = {"x": x, "y": y, "width": width, "height": height, "scale": scale}
        params["clip"] = viewport
    return cast("CaptureScreenshotReturns", (yield from call("Page.captureScreenshot", params)))


def page_start_screencast(
    *, image_format: str = "jpeg", quality: int = 0, max_width: int, max_height: int
) -> Command[Empty]:
    params: StartScreencastParameters = {
        "format": image_format,
        "quality": quality,
        "maxWidth": max_width,
        "maxHeight": max_height,
    }
    return (yield from call("Page.startScreencast", params))


def page_screencast_frame_ack(session_id: int) -> Command[Empty]:
    params: ScreencastFrameAckParameters = {"sessionId": session_id}
    return (yield from call("Page.screencastFrameAck", params))


def page_stop_screencast() -> Command[Empty]:
    return (yield from call("Page.stopScreencast"))


def page_handle_javascript_dialog(
    *, accept: bool, prompt_text: str | None = None
) -> Command[Empty]:
    params: HandleJavaScriptDialogParameters = {"accept": accept}
    if prompt_text is not None:
        params["promptText"] = prompt_text
    return (yield from call("Page.handleJavaScriptDialog", params))


def page_create_isolated_world(
    frame_id: str, *, world_name: str
) -> Command[CreateIsolatedWorldReturns]:
    params: CreateIsolatedWorldParameters = {"frameId": frame_id, "worldName": world_name}
    return cast("CreateIsolatedWorldReturns", (yield from call("Page.createIsolatedWorld", params)))


def page_add_script_to_evaluate_on_new_document(
    source: str, *, world_name: str | None = None, run_immediately: bool = False
) -> Command[AddScriptToEvaluateOnNewDocumentReturns]:
    params: AddScriptToEvaluateOnNewDocumentParameters = {
        "source": source,
        "runImmediately": run_immediately,
    }
    if world_name is not None:
        params["worldName"] = world_name
    method = "Page.addScriptToEvaluateOnNewDocument"
    return cast("AddScriptToEvaluateOnNewDocumentReturns", (yield from call(method, params)))


def page_reload(*, ignore_cache: bool = False) -> Command[Empty]:
    params: ReloadParameters = {"ignoreCache": ignore_cache}
    return (yield from call("Page.reload", params))


# --- Runtime ---------------------------------------------------------------------------


def runtime_run_if_waiting_for_debugger() -> Command[Empty]:
    """Let a page the browser holds for the debugger (auto-attached) start."""
    return (yield from call("Runtime.runIfWaitingForDebugger"))


def runtime_enable() -> Command[Empty]:
    return (yield from call("Runtime.enable"))


def runtime_evaluate(
    expression: str,
    *,
    return_by_value: bool = True,
    await_promise: bool = True,
    context_id: int | None = None,
    object_group: str | None = None,
    timeout_ms: float | None = None,
    repl_mode: bool = False,
) -> Command[EvaluateReturns]:
    """Run JavaScript; a page exception is ``exceptionDetails`` in the result (see
    `pycdp_bridge.evaluate`, which raises it as JavaScriptError). ``timeout_ms``: the
    browser terminates the script's synchronous run after that long; ``repl_mode``: as
    the DevTools console runs it (top-level ``await``, ``let`` declared again)."""
    params: EvaluateParameters = {
        "expression": expression,
        "returnByValue": return_by_value,
        "awaitPromise": await_promise,
    }
    if context_id is not None:
        params["contextId"] = context_id
    if object_group is not None:
        params["objectGroup"] = object_group
    if timeout_ms is not None:
        params["timeout"] = timeout_ms
    if repl_mode:
        params["replMode"] = True
    return cast("EvaluateReturns", (yield from call("Runtime.evaluate", params)))


def runtime_call_function_on(
    function_declaration: str,
    *,
    object_id: str | None = None,
    execution_context_id: int | None = None,
    arguments: Sequence[CallArgument] = (),
    return_by_value: bool = True,
    await_promise: bool = True,
) -> Command[CallFunctionOnReturns]:
    """Call a function with ``this`` bound to a remote object (see `pycdp_bridge.call_on`),
    or in an execution context (an isolated world) with only its arguments."""
    if (object_id is None) == (execution_context_id is None):
        raise ValueError(
            f"runtime_call_function_on needs exactly one of object_id ({object_id!r}) and "
            f"execution_context_id ({execution_context_id!r})"
        )
    params: CallFunctionOnParameters = {
        "functionDeclaration": function_declaration,
        "arguments": list(arguments),
        "returnByValue": return_by_value,
        "awaitPromise": await_promise,
    }
    if object_id is not None:
        params["objectId"] = object_id
    if execution_context_id is not None:
        params["executionContextId"] = execution_context_id
    return cast("CallFunctionOnReturns", (yield from call("Runtime.callFunctionOn", params)))


def runtime_await_promise(promise_object_id: str) -> Command[AwaitPromiseReturns]:
    """Wait for a promise of the page to settle; its value stays a remote object."""
    params: AwaitPromiseParameters = {"promiseObjectId": promise_object_id, "returnByValue": False}
    return cast("AwaitPromiseReturns", (yield from call("Runtime.awaitPromise", params)))


def runtime_terminate_execution() -> Command[Empty]:
    """Stop the JavaScript running in the page now (a script stuck in a loop)."""
    return (yield from call("Runtime.terminateExecution"))


def runtime_get_properties(
    object_id: str, *, own_properties: bool = True
) -> Command[GetPropertiesReturns]:
    params: GetPropertiesParameters = {"objectId": object_id, "ownProperties": own_properties}
    return cast("GetPropertiesReturns", (yield from call("Runtime.getProperties", params)))


def runtime_release_object(object_id: str) -> Command[Empty]:
    params: ReleaseObjectParameters = {"objectId": object_id}
    return (yield from call("Runtime.releaseObject", params))


def runtime_release_object_group(object_group: str) -> Command[Empty]:
    params: ReleaseObjectGroupParameters = {"objectGroup": object_group}
    return (yield from call("Runtime.releaseObjectGroup", params))


def runtime_add_binding(name: str, *, execution_context_name: str | None = None) -> Command[Empty]:
    params: AddBindingParameters = {"name": name}
    if execution_context_name is not None:
        params["executionContextName"] = execution_context_name
    return (yield from call("Runtime.addBinding", params))
