"""CDP commands of what a page sends and receives (Network, Log, Fetch): its requests,
their bodies, the browser's own log of them, and holding requests until decided. Part
of `pycdp_bridge.protocol`, which re-exports them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, cast

from ._protocol_base import Command, Empty, call

if TYPE_CHECKING:
    from cdp_use.cdp.fetch.commands import (
        ContinueRequestParameters,
        FailRequestParameters,
    )
    from cdp_use.cdp.fetch.commands import EnableParameters as FetchEnableParameters
    from cdp_use.cdp.fetch.types import RequestPattern
    from cdp_use.cdp.network.commands import EnableParameters as NetworkEnableParameters
    from cdp_use.cdp.network.commands import (
        GetRequestPostDataParameters,
        GetRequestPostDataReturns,
        GetResponseBodyParameters,
        GetResponseBodyReturns,
    )
    from cdp_use.cdp.network.types import ErrorReason

__all__ = [
    "fetch_continue_request",
    "fetch_disable",
    "fetch_enable",
    "fetch_fail_request",
    "log_enable",
    "network_enable",
    "network_get_request_post_data",
    "network_get_response_body",
]


def network_enable(
    *, max_resource_buffer_size: int | None = None, max_post_data_size: int | None = None
) -> Command[Empty]:
    """Network events on; the browser keeps response bodies up to
    ``max_resource_buffer_size`` bytes each for `network_get_response_body`, and puts
    request bodies up to ``max_post_data_size`` bytes in ``requestWillBeSent``."""
    params: NetworkEnableParameters = {}
    if max_resource_buffer_size is not None:
        params["maxResourceBufferSize"] = max_resource_buffer_size
    if max_post_data_size is not None:
        params["maxPostDataSize"] = max_post_data_size
    return (yield from call("Network.enable", params))


def network_get_response_body(request_id: str) -> Command[GetResponseBodyReturns]:
    params: GetResponseBodyParameters = {"requestId": request_id}
    return cast("GetResponseBodyReturns", (yield from call("Network.getResponseBody", params)))


def network_get_request_post_data(request_id: str) -> Command[GetRequestPostDataReturns]:
    params: GetRequestPostDataParameters = {"requestId": request_id}
    method = "Network.getRequestPostData"
    return cast("GetRequestPostDataReturns", (yield from call(method, params)))


# --- Log -------------------------------------------------------------------------------


def log_enable() -> Command[Empty]:
    """``Log.entryAdded`` on: what the browser itself reports (network errors, CORS)."""
    return (yield from call("Log.enable"))


# --- Fetch -----------------------------------------------------------------------------


def fetch_enable(patterns: Sequence[Mapping[str, str]]) -> Command[Empty]:
    """Pause the requests that match ``patterns`` (``Fetch.RequestPattern``s) until each
    is continued or failed (`Fetch.requestPaused`)."""
    params: FetchEnableParameters = {
        "patterns": [cast("RequestPattern", dict(pattern)) for pattern in patterns]
    }
    return (yield from call("Fetch.enable", params))


def fetch_disable() -> Command[Empty]:
    """Stop pausing requests; the browser sends on those still paused."""
    return (yield from call("Fetch.disable"))


def fetch_continue_request(request_id: str) -> Command[Empty]:
    params: ContinueRequestParameters = {"requestId": request_id}
    return (yield from call("Fetch.continueRequest", params))


def fetch_fail_request(request_id: str, error_reason: str = "BlockedByClient") -> Command[Empty]:
    """Fail a paused request: the page sees it fail with ``error_reason``."""
    params: FailRequestParameters = {
        "requestId": request_id,
        "errorReason": cast("ErrorReason", error_reason),
    }
    return (yield from call("Fetch.failRequest", params))
