"""CDP commands of the browser and its targets (Target, Browser): open, attach to,
detach from and close tabs. Part of `pycdp_bridge.protocol`, which re-exports them."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from ._protocol_base import Command, Empty, call

if TYPE_CHECKING:
    from cdp_use.cdp.browser.commands import SetDownloadBehaviorParameters
    from cdp_use.cdp.target.commands import (
        AttachToTargetParameters,
        AttachToTargetReturns,
        CloseTargetParameters,
        CloseTargetReturns,
        CreateTargetParameters,
        CreateTargetReturns,
        DetachFromTargetParameters,
        GetTargetsReturns,
        SetAutoAttachParameters,
    )

__all__ = [
    "browser_cancel_download",
    "browser_close",
    "browser_set_download_behavior",
    "target_attach_to_target",
    "target_close_target",
    "target_create_target",
    "target_detach_from_target",
    "target_get_targets",
    "target_set_auto_attach",
]


def target_create_target(url: str = "about:blank") -> Command[CreateTargetReturns]:
    params: CreateTargetParameters = {"url": url}
    return cast("CreateTargetReturns", (yield from call("Target.createTarget", params)))


def target_attach_to_target(
    target_id: str, *, flatten: bool = True
) -> Command[AttachToTargetReturns]:
    params: AttachToTargetParameters = {"targetId": target_id, "flatten": flatten}
    return cast("AttachToTargetReturns", (yield from call("Target.attachToTarget", params)))


def target_detach_from_target(session_id: str) -> Command[Empty]:
    params: DetachFromTargetParameters = {"sessionId": session_id}
    return (yield from call("Target.detachFromTarget", params))


def target_close_target(target_id: str) -> Command[CloseTargetReturns]:
    params: CloseTargetParameters = {"targetId": target_id}
    return cast("CloseTargetReturns", (yield from call("Target.closeTarget", params)))


def target_set_auto_attach(
    *, auto_attach: bool = True, wait_for_debugger_on_start: bool = False, flatten: bool = True
) -> Command[Empty]:
    params: SetAutoAttachParameters = {
        "autoAttach": auto_attach,
        "waitForDebuggerOnStart": wait_for_debugger_on_start,
        "flatten": flatten,
    }
    return (yield from call("Target.setAutoAttach", params))


def target_get_targets() -> Command[GetTargetsReturns]:
    return cast("GetTargetsReturns", (yield from call("Target.getTargets")))


def browser_close() -> Command[Empty]:
    return (yield from call("Browser.close"))


def browser_set_download_behavior(folder: str, *, named_by_id: bool = False) -> Command[Empty]:
    """Save downloads under their own names in ``folder`` (``named_by_id``: under their
    ids, ``allowAndName``) and report them (``Browser.downloadWillBegin``/
    ``downloadProgress``) to the session that asked."""
    params: SetDownloadBehaviorParameters = {
        "behavior": "allowAndName" if named_by_id else "allow",
        "downloadPath": folder,
        "eventsEnabled": True,
    }
    return (yield from call("Browser.setDownloadBehavior", params))


def browser_cancel_download(guid: str) -> Command[Empty]:
    """Cancel download ``guid`` (the browser deletes what it wrote of it)."""
    return (yield from call("Browser.cancelDownload", {"guid": guid}))
