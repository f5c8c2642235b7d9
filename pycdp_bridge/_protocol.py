"""CDP commands as generators: the single place where Trimtab names CDP methods.

This module is `pycdp_bridge.protocol`, one table of the commands Trimtab sends, by
domain: each entry takes Trimtab's arguments (its defaults, its checks) and returns
`call` of the method with the protocol's parameters by name (an optional one left
None is left out). A command yields one request ``{"method": ..., "params": ...}``,
receives the raw result dict and returns it, the shape the ``cdp`` package uses, so
``Target.execute`` runs these and that package's generators alike. Results are typed
with the TypedDicts ``cdp-use`` generates from today's protocol, imported only for
the type checker (``cdp_use.cdp`` costs about 230 ms at run time and pulls in
websockets; the ``cdp`` package's own parsers reject what Chromium sends today);
``tests/project/test_one_cdp_path.py`` checks every parameter name here against them. Why a
table and not code generated from the protocol's JSON: see the package's docstring.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from . import _events

# Re-exported: the shape of a command is ``protocol.Command`` to callers.
from ._command import Command as Command
from ._command import Empty as Empty
from ._command import Request as Request
from ._command import Result as Result
from ._command import call as call

if TYPE_CHECKING:
    from cdp_use.cdp.accessibility import commands as accessibility
    from cdp_use.cdp.dom import commands as dom
    from cdp_use.cdp.domdebugger import commands as domdebugger
    from cdp_use.cdp.domsnapshot import commands as domsnapshot
    from cdp_use.cdp.network import commands as network
    from cdp_use.cdp.page import commands as page
    from cdp_use.cdp.runtime import commands as runtime
    from cdp_use.cdp.runtime.types import CallArgument
    from cdp_use.cdp.target import commands as target

MouseEventType = Literal["mousePressed", "mouseReleased", "mouseMoved", "mouseWheel"]
MouseButton = Literal["none", "left", "middle", "right", "back", "forward"]
KeyEventType = Literal["keyDown", "keyUp", "rawKeyDown", "char"]

#: The names of the CDP events Trimtab listens to (`_events`).
events = _events


# --- DOM, DOMDebugger -----------------------------------------------------------------


def dom_enable() -> Command[Empty]:
    return call("DOM.enable")


def dom_get_document(depth: int = -1, *, pierce: bool = True) -> Command[dom.GetDocumentReturns]:
    return call("DOM.getDocument", depth=depth, pierce=pierce)


def dom_describe_node(
    *,
    backend_node_id: int | None = None,
    object_id: str | None = None,
    depth: int = 0,
    pierce: bool = False,
) -> Command[dom.DescribeNodeReturns]:
    """Describe a node given by its backend id or by a remote object of it."""
    if (backend_node_id is None) == (object_id is None):
        raise ValueError(
            f"dom_describe_node needs exactly one of backend_node_id ({backend_node_id!r})"
            f" and object_id ({object_id!r})"
        )
    return call(
        "DOM.describeNode",
        depth=depth,
        pierce=pierce,
        backendNodeId=backend_node_id,
        objectId=object_id,
    )


def dom_resolve_node(
    *,
    backend_node_id: int,
    object_group: str | None = None,
    execution_context_id: int | None = None,
) -> Command[dom.ResolveNodeReturns]:
    """A remote object of a node, in the page's main world or in `execution_context_id`."""
    return call(
        "DOM.resolveNode",
        backendNodeId=backend_node_id,
        objectGroup=object_group,
        executionContextId=execution_context_id,
    )


def dom_set_file_input_files(files: Sequence[str], *, object_id: str) -> Command[Empty]:
    """Put files into a file input, as its file picker does (`input` and `change` fire)."""
    return call("DOM.setFileInputFiles", files=list(files), objectId=object_id)


def dom_debugger_get_event_listeners(
    object_id: str,
) -> Command[domdebugger.GetEventListenersReturns]:
    """The event listeners on one object (a node, a window) of the object's own world."""
    return call("DOMDebugger.getEventListeners", objectId=object_id)


def dom_get_content_quads(*, backend_node_id: int) -> Command[dom.GetContentQuadsReturns]:
    return call("DOM.getContentQuads", backendNodeId=backend_node_id)


def dom_get_box_model(*, backend_node_id: int) -> Command[dom.GetBoxModelReturns]:
    return call("DOM.getBoxModel", backendNodeId=backend_node_id)


def dom_scroll_into_view_if_needed(
    *, backend_node_id: int, rect: Mapping[str, float] | None = None
) -> Command[Empty]:
    """Scroll the node into view; with `rect` (x, y, width, height from its border box's
    top left) that part of it, as for a range of text in a long paragraph."""
    return call("DOM.scrollIntoViewIfNeeded", backendNodeId=backend_node_id, rect=rect)


def dom_focus(*, backend_node_id: int) -> Command[Empty]:
    return call("DOM.focus", backendNodeId=backend_node_id)


def dom_get_node_for_location(
    x: int,
    y: int,
    *,
    include_user_agent_shadow_dom: bool = False,
    ignore_pointer_events_none: bool = True,
) -> Command[dom.GetNodeForLocationReturns]:
    return call(
        "DOM.getNodeForLocation",
        x=x,
        y=y,
        includeUserAgentShadowDOM=include_user_agent_shadow_dom,
        ignorePointerEventsNone=ignore_pointer_events_none,
    )


def dom_get_frame_owner(frame_id: str) -> Command[dom.GetFrameOwnerReturns]:
    return call("DOM.getFrameOwner", frameId=frame_id)


# --- DOMSnapshot, Accessibility, Overlay ----------------------------------------------


def dom_snapshot_capture_snapshot(
    computed_styles: Sequence[str],
    *,
    include_paint_order: bool = True,
    include_dom_rects: bool = True,
) -> Command[domsnapshot.CaptureSnapshotReturns]:
    return call(
        "DOMSnapshot.captureSnapshot",
        computedStyles=list(computed_styles),
        includePaintOrder=include_paint_order,
        includeDOMRects=include_dom_rects,
    )


def accessibility_get_full_ax_tree(
    frame_id: str | None = None,
) -> Command[accessibility.GetFullAXTreeReturns]:
    return call("Accessibility.getFullAXTree", frameId=frame_id)


def accessibility_get_partial_ax_tree(
    backend_node_id: int, *, fetch_relatives: bool = False
) -> Command[accessibility.GetPartialAXTreeReturns]:
    return call(
        "Accessibility.getPartialAXTree",
        backendNodeId=backend_node_id,
        fetchRelatives=fetch_relatives,
    )


def overlay_enable() -> Command[Empty]:
    return call("Overlay.enable")


def overlay_highlight_node(
    highlight_config: Mapping[str, Any], *, backend_node_id: int
) -> Command[Empty]:
    """Highlight a node; ``highlight_config`` is an ``Overlay.HighlightConfig``."""
    return call(
        "Overlay.highlightNode",
        highlightConfig=dict(highlight_config),
        backendNodeId=backend_node_id,
    )


def overlay_hide_highlight() -> Command[Empty]:
    return call("Overlay.hideHighlight")


# --- Page ------------------------------------------------------------------------------


def page_enable() -> Command[Empty]:
    return call("Page.enable")


def page_set_lifecycle_events_enabled(*, enabled: bool = True) -> Command[Empty]:
    return call("Page.setLifecycleEventsEnabled", enabled=enabled)


def page_navigate(url: str, *, frame_id: str | None = None) -> Command[page.NavigateReturns]:
    return call("Page.navigate", url=url, frameId=frame_id)


def page_get_frame_tree() -> Command[page.GetFrameTreeReturns]:
    return call("Page.getFrameTree")


def page_get_layout_metrics() -> Command[page.GetLayoutMetricsReturns]:
    return call("Page.getLayoutMetrics")


def page_get_navigation_history() -> Command[page.GetNavigationHistoryReturns]:
    return call("Page.getNavigationHistory")


def page_navigate_to_history_entry(entry_id: int) -> Command[Empty]:
    return call("Page.navigateToHistoryEntry", entryId=entry_id)


def page_bring_to_front() -> Command[Empty]:
    return call("Page.bringToFront")


def page_stop_loading() -> Command[Empty]:
    """Stop the tab's load on its way (its pending requests are cancelled)."""
    return call("Page.stopLoading")


def page_capture_screenshot(
    *,
    image_format: str = "jpeg",
    quality: int | None = None,
    clip: tuple[float, float, float, float, float] | None = None,
    beyond_viewport: bool = False,
    optimize_for_speed: bool = False,
) -> Command[page.CaptureScreenshotReturns]:
    """`clip`: x, y, width, height in document CSS pixels, and the scale to render at."""
    viewport = None
    if clip is not None:
        x, y, width, height, scale = clip
        viewport = {"x": x, "y": y, "width": width, "height": height, "scale": scale}
    return call(
        "Page.captureScreenshot",
        format=image_format,
        captureBeyondViewport=beyond_viewport,
        optimizeForSpeed=optimize_for_speed,
        quality=quality,
        clip=viewport,
    )


def page_start_screencast(
    *, image_format: str = "jpeg", quality: int = 0, max_width: int, max_height: int
) -> Command[Empty]:
    return call(
        "Page.startScreencast",
        format=image_format,
        quality=quality,
        maxWidth=max_width,
        maxHeight=max_height,
    )


def page_screencast_frame_ack(session_id: int) -> Command[Empty]:
    return call("Page.screencastFrameAck", sessionId=session_id)


def page_stop_screencast() -> Command[Empty]:
    return call("Page.stopScreencast")


def page_handle_javascript_dialog(
    *, accept: bool, prompt_text: str | None = None
) -> Command[Empty]:
    return call("Page.handleJavaScriptDialog", accept=accept, promptText=prompt_text)


def page_create_isolated_world(
    frame_id: str, *, world_name: str
) -> Command[page.CreateIsolatedWorldReturns]:
    return call("Page.createIsolatedWorld", frameId=frame_id, worldName=world_name)


def page_add_script_to_evaluate_on_new_document(
    source: str, *, world_name: str | None = None, run_immediately: bool = False
) -> Command[page.AddScriptToEvaluateOnNewDocumentReturns]:
    return call(
        "Page.addScriptToEvaluateOnNewDocument",
        source=source,
        runImmediately=run_immediately,
        worldName=world_name,
    )


def page_reload(*, ignore_cache: bool = False) -> Command[Empty]:
    return call("Page.reload", ignoreCache=ignore_cache)


# --- Runtime ---------------------------------------------------------------------------


def runtime_run_if_waiting_for_debugger() -> Command[Empty]:
    """Let a page the browser holds for the debugger (auto-attached) start."""
    return call("Runtime.runIfWaitingForDebugger")


def runtime_enable() -> Command[Empty]:
    return call("Runtime.enable")


def runtime_evaluate(
    expression: str,
    *,
    return_by_value: bool = True,
    await_promise: bool = True,
    context_id: int | None = None,
    object_group: str | None = None,
    timeout_ms: float | None = None,
    repl_mode: bool = False,
) -> Command[runtime.EvaluateReturns]:
    """Run JavaScript; a page exception is ``exceptionDetails`` in the result (see
    `pycdp_bridge.evaluate`, which raises it as JavaScriptError). ``timeout_ms``: the
    browser terminates the script's synchronous run after that long; ``repl_mode``: as
    the DevTools console runs it (top-level ``await``, ``let`` declared again)."""
    return call(
        "Runtime.evaluate",
        expression=expression,
        returnByValue=return_by_value,
        awaitPromise=await_promise,
        contextId=context_id,
        objectGroup=object_group,
        timeout=timeout_ms,
        replMode=True if repl_mode else None,
    )


def runtime_call_function_on(
    function_declaration: str,
    *,
    object_id: str | None = None,
    execution_context_id: int | None = None,
    arguments: Sequence[CallArgument] = (),
    return_by_value: bool = True,
    await_promise: bool = True,
) -> Command[runtime.CallFunctionOnReturns]:
    """Call a function with ``this`` bound to a remote object (see `pycdp_bridge.call_on`),
    or in an execution context (an isolated world) with only its arguments."""
    if (object_id is None) == (execution_context_id is None):
        raise ValueError(
            f"runtime_call_function_on needs exactly one of object_id ({object_id!r}) and "
            f"execution_context_id ({execution_context_id!r})"
        )
    return call(
        "Runtime.callFunctionOn",
        functionDeclaration=function_declaration,
        arguments=list(arguments),
        returnByValue=return_by_value,
        awaitPromise=await_promise,
        objectId=object_id,
        executionContextId=execution_context_id,
    )


def runtime_await_promise(
    promise_object_id: str,
) -> Command[runtime.AwaitPromiseReturns]:
    """Wait for a promise of the page to settle; its value stays a remote object."""
    return call("Runtime.awaitPromise", promiseObjectId=promise_object_id, returnByValue=False)


def runtime_terminate_execution() -> Command[Empty]:
    """Stop the JavaScript running in the page now (a script stuck in a loop)."""
    return call("Runtime.terminateExecution")


def runtime_get_properties(
    object_id: str, *, own_properties: bool = True
) -> Command[runtime.GetPropertiesReturns]:
    return call("Runtime.getProperties", objectId=object_id, ownProperties=own_properties)


def runtime_release_object(object_id: str) -> Command[Empty]:
    return call("Runtime.releaseObject", objectId=object_id)


def runtime_release_object_group(object_group: str) -> Command[Empty]:
    return call("Runtime.releaseObjectGroup", objectGroup=object_group)


def runtime_add_binding(name: str, *, execution_context_name: str | None = None) -> Command[Empty]:
    return call("Runtime.addBinding", name=name, executionContextName=execution_context_name)


# --- Input, Emulation: what a person does with the page --------------------------------


def input_dispatch_mouse_event(
    type_: MouseEventType,
    x: float,
    y: float,
    *,
    button: MouseButton = "none",
    click_count: int = 0,
    delta_x: float | None = None,
    delta_y: float | None = None,
    buttons: int | None = None,
) -> Command[Empty]:
    """``buttons``: those held (1: left), so that moves read as a drag."""
    return call(
        "Input.dispatchMouseEvent",
        type=type_,
        x=x,
        y=y,
        button=button,
        clickCount=click_count,
        buttons=buttons,
        deltaX=delta_x,
        deltaY=delta_y,
    )


def input_dispatch_key_event(
    type_: KeyEventType,
    *,
    key: str | None = None,
    code: str | None = None,
    text: str | None = None,
    windows_virtual_key_code: int | None = None,
    modifiers: int = 0,
) -> Command[Empty]:
    return call(
        "Input.dispatchKeyEvent",
        type=type_,
        modifiers=modifiers,
        key=key,
        code=code,
        text=text,
        windowsVirtualKeyCode=windows_virtual_key_code,
    )


def input_insert_text(text: str) -> Command[Empty]:
    return call("Input.insertText", text=text)


def emulation_set_device_metrics_override(
    width: int, height: int, *, device_scale_factor: float = 1.0, mobile: bool = False
) -> Command[Empty]:
    return call(
        "Emulation.setDeviceMetricsOverride",
        width=width,
        height=height,
        deviceScaleFactor=device_scale_factor,
        mobile=mobile,
    )


def emulation_set_focus_emulation_enabled(enabled: bool) -> Command[Empty]:
    return call("Emulation.setFocusEmulationEnabled", enabled=enabled)


# --- Network, Log, Fetch: what the page sends and receives -----------------------------


def network_enable(
    *,
    max_resource_buffer_size: int | None = None,
    max_post_data_size: int | None = None,
) -> Command[Empty]:
    """Network events on; the browser keeps response bodies up to
    ``max_resource_buffer_size`` bytes each for `network_get_response_body`, and puts
    request bodies up to ``max_post_data_size`` bytes in ``requestWillBeSent``."""
    return call(
        "Network.enable",
        maxResourceBufferSize=max_resource_buffer_size,
        maxPostDataSize=max_post_data_size,
    )


def network_get_response_body(
    request_id: str,
) -> Command[network.GetResponseBodyReturns]:
    return call("Network.getResponseBody", requestId=request_id)


def network_get_request_post_data(
    request_id: str,
) -> Command[network.GetRequestPostDataReturns]:
    return call("Network.getRequestPostData", requestId=request_id)


def log_enable() -> Command[Empty]:
    """``Log.entryAdded`` on: what the browser itself reports (network errors, CORS)."""
    return call("Log.enable")


def fetch_enable(patterns: Sequence[Mapping[str, str]]) -> Command[Empty]:
    """Pause the requests that match ``patterns`` (``Fetch.RequestPattern``s) until each
    is continued or failed (`Fetch.requestPaused`)."""
    return call("Fetch.enable", patterns=[dict(pattern) for pattern in patterns])


def fetch_disable() -> Command[Empty]:
    """Stop pausing requests; the browser sends on those still paused."""
    return call("Fetch.disable")


def fetch_continue_request(request_id: str) -> Command[Empty]:
    return call("Fetch.continueRequest", requestId=request_id)


def fetch_fail_request(request_id: str, error_reason: str = "BlockedByClient") -> Command[Empty]:
    """Fail a paused request: the page sees it fail with ``error_reason``."""
    return call("Fetch.failRequest", requestId=request_id, errorReason=error_reason)


# --- Target, Browser: open, attach to, detach from and close tabs ----------------------


def target_create_target(
    url: str = "about:blank",
) -> Command[target.CreateTargetReturns]:
    return call("Target.createTarget", url=url)


def target_attach_to_target(
    target_id: str, *, flatten: bool = True
) -> Command[target.AttachToTargetReturns]:
    return call("Target.attachToTarget", targetId=target_id, flatten=flatten)


def target_detach_from_target(session_id: str) -> Command[Empty]:
    return call("Target.detachFromTarget", sessionId=session_id)


def target_close_target(target_id: str) -> Command[target.CloseTargetReturns]:
    return call("Target.closeTarget", targetId=target_id)


def target_set_auto_attach(
    *,
    auto_attach: bool = True,
    wait_for_debugger_on_start: bool = False,
    flatten: bool = True,
) -> Command[Empty]:
    return call(
        "Target.setAutoAttach",
        autoAttach=auto_attach,
        waitForDebuggerOnStart=wait_for_debugger_on_start,
        flatten=flatten,
    )


def target_get_targets() -> Command[target.GetTargetsReturns]:
    return call("Target.getTargets")


def browser_close() -> Command[Empty]:
    return call("Browser.close")


def browser_set_download_behavior(folder: str, *, named_by_id: bool = False) -> Command[Empty]:
    """Save downloads under their own names in ``folder`` (``named_by_id``: under their
    ids, ``allowAndName``) and report them (``Browser.downloadWillBegin``/
    ``downloadProgress``) to the session that asked."""
    return call(
        "Browser.setDownloadBehavior",
        behavior="allowAndName" if named_by_id else "allow",
        downloadPath=folder,
        eventsEnabled=True,
    )


def browser_cancel_download(guid: str) -> Command[Empty]:
    """Cancel download ``guid`` (the browser deletes what it wrote of it)."""
    return call("Browser.cancelDownload", guid=guid)
