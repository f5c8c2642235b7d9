"""The devtools group: the page's console messages and its network requests.

Both read the tab's `DevtoolsLog` (``trimtab.tab``), which the host fills from when
it holds the tab; each view of the tab reads on from where its last call stopped
(`Tab.log_read`). What the page wrote (messages, URLs, headers, bodies) is page data,
written through the one XML writer. Credentials are hidden by the one rule of
``trimtab.pipeline.credentials`` (headers, URL parameters and body fields by name,
tokens by look), and the values of the page's password fields are masked wherever
they appear; masking comes first, so no part of a password is left to shorten.
"""

from __future__ import annotations

import base64
import json
import re
import urllib.parse
from collections.abc import Iterable, Mapping
from typing import Final

import trio

from pycdp_bridge import CDPError

from ..driver import CallContext
from ..pipeline import credentials, xml
from ..tab import BODY_KEPT, ConsoleMessage, NetworkRequest, Tab
from ._common import READS, BadArguments, ToolResult, error, schema, text, text_arg, tool

__all__ = ["console", "network"]

_SHOWN: Final = 200
_BODY_SHOWN: Final = 4000
# Seconds a request's detail waits for its raw response headers.
_RAW_HEADERS_WAIT: Final = 0.5
# The bound on headers the browser said it will send: only a browser that broke its
# word (or a tab closing) reaches it.
_RAW_HEADERS_PROMISED: Final = 10.0
# Characters past the cut read to hide what straddles it (a credential is far shorter).
_BODY_READ_ON: Final = 2000
_LEVEL_ORDER: Final[Mapping[str, int]] = {"debug": 0, "info": 1, "warning": 2, "error": 3}
_MASK: Final = "•••"
_REQUEST_ID: Final = re.compile(r"n([0-9]{1,9})")


def _not_collecting(tab: Tab, name: str) -> ToolResult | None:
    if tab.devtools.running:
        return None
    return error(f"{name}: this tab's console and network are not being followed")


@tool(
    "console",
    "The page's console messages since your last console call in this tab (errors "
    "with stack; at most 200, newest). level: the lowest level shown.",
    schema({"level": {"type": "string", "enum": list(_LEVEL_ORDER)}}),
    READS,
    group="devtools",
)
async def console(call: CallContext, args: Mapping[str, object]) -> ToolResult:
    tab = call.tab
    level = text_arg(args, "level", required=False) or "debug"
    if level not in _LEVEL_ORDER:
        raise BadArguments(f"level must be one of {', '.join(_LEVEL_ORDER)}; got {level!r}")
    stopped = _not_collecting(tab, "console")
    if stopped is not None:
        return stopped
    log = tab.devtools
    messages, dropped = log.console_since(tab.log_read.console)
    tab.log_read.console = log.console_count
    lowest = _LEVEL_ORDER[level]
    wanted = [m for m in messages if _LEVEL_ORDER.get(m.level, 1) >= lowest]
    shown = wanted[-_SHOWN:]
    secrets = log.secrets()[0]
    head = {
        "new": len(wanted),
        "shown": len(shown) if len(shown) < len(wanted) else None,
        "dropped": dropped or None,
    }
    if not shown:
        return text(xml.element("console", head))
    lines = [xml.start_tag("console", head), *(_message(m, secrets) for m in shown), "</console>"]
    return text("\n".join(lines))


def _message(message: ConsoleMessage, secrets: Iterable[str]) -> str:
    source = _shown_url(message.source, secrets)
    where = f"{source}:{message.line}" if message.line is not None else source
    # A page that logs what its password field holds, or its token, does not hand it
    # to the model.
    content = credentials.hide_text(
        _scrub("\n".join([message.text, *(f"at {frame}" for frame in message.stack)]), secrets)
    )
    return xml.element(
        "message", {"level": message.level, "source": where or None}, content=content
    )


@tool(
    "network",
    "The page's requests since your last network call in this tab (at most 200, "
    "newest), or every kept one whose URL contains `url`. `request`: one request's "
    "headers and bodies, by its id.",
    schema({"url": {"type": "string"}, "request": {"type": "string"}}),
    READS,
    group="devtools",
)
async def network(call: CallContext, args: Mapping[str, object]) -> ToolResult:
    tab = call.tab
    url = text_arg(args, "url", required=False)
    wanted = text_arg(args, "request", required=False)
    stopped = _not_collecting(tab, "network")
    if stopped is not None:
        return stopped
    log = tab.devtools
    if wanted is not None:
        if url is not None:
            raise BadArguments("give either url or request, not both")
        return await _detail(tab, wanted)
    secrets = log.secrets()[0]
    if url is not None:
        # Matched against the URL as shown: a credential in it is no search key.
        needle = url.casefold()
        entries = [r for r in log.requests if needle in _shown_url(r.url, secrets).casefold()]
        dropped = 0
    else:
        entries, dropped = log.requests_since(tab.log_read.network)
        tab.log_read.network = log.request_count
    shown = entries[-_SHOWN:]
    head = {
        "new" if url is None else "matching": len(entries),
        "shown": len(shown) if len(shown) < len(entries) else None,
        "dropped": dropped or None,
    }
    if not shown:
        return text(xml.element("network", head))
    lines = [xml.start_tag("network", head)]
    lines += [xml.element("request", _facts(r), content=_shown_url(r.url, secrets)) for r in shown]
    lines.append("</network>")
    return text("\n".join(lines))


def _facts(entry: NetworkRequest) -> dict[str, object]:
    size = _size(entry)
    return {
        "id": f"n{entry.seq}",
        "method": entry.method,
        "type": entry.resource_type,
        "status": entry.status,
        "bytes": size if entry.finished and not entry.failed else None,
        "ms": round(entry.duration_ms) if entry.duration_ms is not None else None,
        "failed": credentials.hide_text(entry.failed) if entry.failed else None,
        "pending": not entry.finished,
    }


def _declared(headers: Mapping[str, str]) -> int:
    """The body's size its Content-Length header declares (0: none)."""
    length = next((v for k, v in headers.items() if k.lower() == "content-length"), "")
    return int(length) if length.strip().isdigit() else 0


def _size(entry: NetworkRequest) -> int:
    # What was on the wire counts headers too: only when nothing else says the size.
    return max(entry.received, _declared(entry.response_headers)) or entry.encoded or 0


async def _detail(tab: Tab, wanted: str) -> ToolResult:
    log = tab.devtools
    match = _REQUEST_ID.fullmatch(wanted.strip())
    entry = log.request(int(match[1])) if match else None
    if entry is None:
        oldest = log.requests[0].seq if log.requests else None
        kept = f"n{oldest} to n{log.request_count}" if oldest is not None else "none yet"
        return error(
            f"network: no request {wanted[:40]!r} is kept for this tab (kept: {kept}); "
            "call network to list them"
        )
    await log.read_secrets()
    if entry.status is not None and not entry.response_headers_extra:
        # The raw response headers (Set-Cookie among them) may come after the response
        # and after the request finished. The browser says whether they will
        # (hasExtraInfo): then they are waited for, however busy the machine; a
        # response from the cache or a data: URL never gets them and is not waited for.
        # A browser that does not say gets a moment.
        coming = entry.response_headers_coming
        wait = _RAW_HEADERS_PROMISED if coming else _RAW_HEADERS_WAIT if coming is None else 0
        with trio.move_on_after(wait):
            while not entry.response_headers_extra:
                await trio.sleep(0.02)
    secrets, names = log.secrets()
    lines = [xml.element("request", _facts(entry), content=_shown_url(entry.url, secrets))]
    lines.append(_headers("request-headers", entry.request_headers, secrets))
    sent = _declared(entry.request_headers)
    if sent > BODY_KEPT:
        lines.append(
            xml.element("request-body", {"bytes": sent, "none": f"over {BODY_KEPT} bytes"})
        )
    elif (body := await log.request_body(entry)) is not None:
        lines.append(_body("request-body", {}, body, names, secrets))
    if entry.status is not None:
        lines.append(_headers("response-headers", entry.response_headers, secrets))
    lines.append(await _response_body(tab, entry, secrets, names))
    return text("\n".join(lines))


def _headers(tag: str, headers: Mapping[str, str], secrets: Iterable[str]) -> str:
    lines = [
        f"{name}: {credentials.hide_header(name, _scrub(value, secrets))}"
        for name, value in headers.items()
    ]
    return "\n".join([xml.start_tag(tag), *(xml.text(line) for line in lines), xml.end_tag(tag)])


def _body(
    tag: str,
    attributes: Mapping[str, object],
    body: str,
    names: Iterable[str],
    secrets: Iterable[str],
) -> str:
    """A body as shown, its start when long. What is hidden is read a little past the
    cut, so that no credential the cut splits shows its first part."""
    facts = dict(attributes)
    shown = _shown_body(body[: _BODY_SHOWN + _BODY_READ_ON], names, secrets)
    if len(body) > _BODY_SHOWN:
        facts["chars"] = len(body)
        facts["shown"] = _BODY_SHOWN
        shown = shown[:_BODY_SHOWN]
    return xml.element(tag, facts, content=shown)


async def _response_body(
    tab: Tab, entry: NetworkRequest, secrets: Iterable[str], names: Iterable[str]
) -> str:
    facts: dict[str, object] = {"mime": entry.mime or None, "bytes": _size(entry) or None}
    if entry.failed or entry.redirected or entry.status is None:
        return xml.element("response-body", {**facts, "none": "no body was received"})
    if not entry.finished:
        return xml.element("response-body", {**facts, "none": "still loading"})
    if _size(entry) > BODY_KEPT:
        return xml.element("response-body", {**facts, "none": f"over {BODY_KEPT} bytes"})
    try:
        body, binary = await tab.devtools.response_body(entry)
    except CDPError as exc:
        return xml.element("response-body", {**facts, "none": f"not kept ({exc.message[:80]})"})
    if binary:
        data = base64.b64decode(body, validate=False)
        as_text = _as_text(data)
        if as_text is None:
            return xml.element("response-body", {**facts, "none": "binary"})
        body = as_text
    return _body("response-body", facts, body, names, secrets)


def _as_text(data: bytes) -> str | None:
    """Bytes as UTF-8 text, or None when they are not text (a NUL, invalid UTF-8)."""
    if b"\x00" in data[:4096]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _scrub(value: str, secrets: Iterable[str]) -> str:
    """`value` with every password the page's fields held masked, in every spelling a
    request carries it (as typed, URL-encoded, JSON-escaped)."""
    for secret in secrets:
        spellings = {
            secret,
            urllib.parse.quote_plus(secret),
            urllib.parse.quote(secret, safe=""),
            json.dumps(secret)[1:-1],
        }
        for spelling in sorted(spellings, key=len, reverse=True):
            if spelling:
                value = value.replace(spelling, _MASK)
    return value


def _shown_url(url: str, secrets: Iterable[str]) -> str:
    """A URL as shown: passwords masked, then credentials hidden."""
    return credentials.hide_url(_scrub(url, secrets))


def _shown_body(body: str, names: Iterable[str], secrets: Iterable[str]) -> str:
    """A body as shown: passwords masked, then credentials hidden (form and JSON fields
    by name, tokens by look)."""
    return credentials.hide_text(_scrub_fields(body, names, secrets))


def _scrub_fields(body: str, names: Iterable[str], secrets: Iterable[str]) -> str:
    """A body with the values of fields named like the page's password fields masked
    (form-encoded and JSON), then every password value masked."""
    for name in names:
        quoted = re.escape(urllib.parse.quote_plus(name))
        body = re.sub(rf"(^|&)({quoted})=[^&]*", rf"\g<1>\g<2>={_MASK}", body)
        key = re.escape(json.dumps(name))
        body = re.sub(rf'({key}\s*:\s*)"(?:[^"\\]|\\.)*"', rf'\g<1>"{_MASK}"', body)
    return _scrub(body, secrets)
