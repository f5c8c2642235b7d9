"""The devtools log without a browser: a request's raw headers (the cookies it sent, the
Set-Cookie it got) are kept whatever order the network stack's events arrive in beside
the page's own, as a busy machine delivers them."""

from __future__ import annotations

from typing import Any, cast

from hypothesis import given
from hypothesis import strategies as st

from pycdp_bridge import Event, Target, protocol
from trimtab.tab import DevtoolsLog

_ID = "1000.7"

# The page's own events, always in this order.
_PAGE = (
    Event(
        protocol.events.NETWORK_REQUEST_WILL_BE_SENT,
        {
            "requestId": _ID,
            "timestamp": 10.0,
            "type": "Fetch",
            "request": {"method": "GET", "url": "http://127.0.0.1/api", "headers": {"A": "1"}},
        },
    ),
    Event(
        protocol.events.NETWORK_RESPONSE_RECEIVED,
        {
            "requestId": _ID,
            "hasExtraInfo": True,
            "response": {"status": 200, "mimeType": "text/plain", "headers": {"B": "2"}},
        },
    ),
    Event(
        protocol.events.NETWORK_LOADING_FINISHED,
        {"requestId": _ID, "timestamp": 10.01, "encodedDataLength": 4},
    ),
)
# The network stack's, in no promised order against the page's.
_SENT_RAW = Event(
    protocol.events.NETWORK_REQUEST_WILL_BE_SENT_EXTRA_INFO,
    {"requestId": _ID, "headers": {"A": "1", "Cookie": "sid=x"}},
)
_RECEIVED_RAW = Event(
    protocol.events.NETWORK_RESPONSE_RECEIVED_EXTRA_INFO,
    {"requestId": _ID, "headers": {"B": "2", "Set-Cookie": "csrf=y"}},
)


@given(sent_at=st.integers(0, len(_PAGE)), received_at=st.integers(0, len(_PAGE)))
def test_raw_headers_are_kept_in_any_order(sent_at: int, received_at: int) -> None:
    """Raw request and response headers arriving before, between or after the page's
    events for their request end up on that request, over the page's own headers."""
    events: list[tuple[float, Event]] = [(float(i), event) for i, event in enumerate(_PAGE)]
    events += [(sent_at - 0.5, _SENT_RAW), (received_at - 0.25, _RECEIVED_RAW)]
    log = DevtoolsLog(target=cast(Target, cast(Any, None)))
    for _, event in sorted(events, key=lambda pair: pair[0]):
        log.take(event)
    (entry,) = log.requests
    assert entry.finished
    assert entry.status == 200
    assert entry.request_headers == {"A": "1", "Cookie": "sid=x"}
    assert entry.response_headers == {"B": "2", "Set-Cookie": "csrf=y"}
    assert entry.request_headers_extra
    assert entry.response_headers_extra
