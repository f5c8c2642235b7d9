"""The MCP server: the catalogue as MCP tools, calls relayed over the link."""

from __future__ import annotations

import contextlib
import importlib.resources
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import anyio
import attrs
import mcp_types as types
import trio
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from ..link import (
    HOW_TO_SHARE,
    Endpoint,
    LinkAddress,
    LinkClient,
    LinkError,
    OnProgress,
    PermissionProblem,
    choose_endpoint,
    connect,
    secret_of,
)
from ..tools import (
    MCP_GROUPS,
    ROUTINES_GROUP,
    TAB,
    TOOLS,
    ToolSpec,
    door_schema,
    may_commit,
    tools_in,
)
from ..wire import host_version
from ._arguments import TAB_PROPERTY, ArgumentError, check_arguments, tab_id
from ._routines import ROUTINE_TOOLS, is_routine_tool, routine_call, routine_meta
from ._stdio import open_stdio

__all__ = ["FORMAT_URI", "LinkHolder", "build_server", "open_holder", "run_stdio"]

FORMAT_URI: Final = "trimtab://format"
SERVER_NAME: Final = "trimtab"
_TABS_TOOL: Final = types.Tool(
    name="tabs",
    description="List the browser tabs the person shared with agents: id, title and URL. "
    "Other tabs can be asked for by id; the person is then asked in the browser.",
    input_schema={"type": "object", "properties": {}, "additionalProperties": False},
    annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
)
_INSTRUCTIONS: Final = f"""\
Trimtab drives tabs of the person's own browser. Call `tabs` to see the tabs they
shared with agents, then `capture_snapshot` with a `tab` to read one as compact XML,
and act with the other tools using the element ids of the latest snapshot. Actions
answer with a diff of what changed. The person sees what you do in Trimtab's side
panel and can stop you at any time. {HOW_TO_SHARE} How to read the XML:

"""


def _format_page() -> str:
    return (importlib.resources.files("trimtab") / "FORMAT.md").read_text(encoding="utf-8")


def mcp_tool(spec: ToolSpec) -> types.Tool:
    """A catalogue tool as an MCP tool: its schema with the one ``tab`` property every
    tool shares, never required (`door_schema`: the only shared tab when absent, also
    for ``close_tab``, whose own schema requires it), and the hints the catalogue
    gives: a tool without side effects only reads; an action that may submit or commit
    something (consent is asked for that) is destructive."""
    schema = door_schema(spec)
    properties = dict(schema.get("properties", {}))  # type: ignore[call-overload]
    properties[TAB] = dict(TAB_PROPERTY)
    schema["properties"] = properties
    acts = spec.policy.side_effects
    annotations = types.ToolAnnotations(
        read_only_hint=not acts,
        destructive_hint=may_commit(spec),
        idempotent_hint=not acts,
        open_world_hint=True,
    )
    return types.Tool(
        name=spec.name, description=spec.description, input_schema=schema, annotations=annotations
    )


# A host that went away while its browser may still run (the extension was reloaded or
# updated: Chrome starts a new host at once) is waited for this long, once, before a
# call says that it is not back.
HOST_BACK_WAIT: Final = 3.0
# Said, until a host answers again, for no browser after this client's host shut down.
_HOST_GONE: Final = (
    "the browser's host went away under this client and is not back: if the browser "
    "still runs, Trimtab starts it again within 30 s (opening its side panel does it "
    "now); else open the browser, or run `trimtab doctor`"
)
# Said with a refusal of a tab by a host that started since this client's last call.
_HOST_STARTED_AGAIN: Final = (
    "the browser's host started again since this client's last call: the browser "
    "restarted, or the Trimtab extension was reloaded, updated or reinstalled, which ends "
    "every share"
)


@attrs.define(eq=False)
class LinkHolder:
    """The connection to the browser: made on first use, made again after it broke
    (the browser quit and came back, the extension was reloaded), so a client never has
    to restart."""

    nursery: trio.Nursery
    browser: str | None = None
    endpoint_folder: Path | None = None
    secret_file: Path | None = None
    client_info: dict[str, str] = attrs.field(factory=lambda: {"name": "an MCP client"})
    _client: LinkClient | None = None
    _lock: trio.Lock = attrs.field(factory=trio.Lock)
    _done: trio.Event = attrs.field(factory=trio.Event)
    # Until when a call waits for a host that went away to be back (None: it does not),
    # and whether no host has answered since one went away under this client.
    _back_by: float | None = None
    _host_gone: bool = False
    # The link broke under this client, and no tool call has worked since: the host's
    # refusals of a tab say why shares are gone.
    _started_again: bool = False

    async def client(self) -> LinkClient:
        async with self._lock:
            current = self._client
            if current is not None and current.closed_reason is None:
                return current
            if current is not None and current.closed_code == "stopped":
                # The person pressed Stop: the client hears it once, plainly; a
                # later call connects again (and unshared tabs are asked anew).
                self._client = None
                raise LinkError("stopped", current.closed_reason or "stopped by the person")
            if current is not None:
                # The link broke under this client (the host shut down, or was killed
                # with its browser): the host it finds next started since, with none of
                # the old one's shares; it may be starting now (the extension reloaded).
                self._client, self._started_again = None, True
                if not self._host_gone:
                    self._host_gone = True
                    self._back_by = trio.current_time() + HOST_BACK_WAIT
            while True:
                endpoint = await self._endpoint()
                try:
                    secret = secret_of(endpoint, self.secret_file)
                except (OSError, PermissionProblem) as exc:
                    raise LinkError("no_secret", f"cannot read the link's secret: {exc}") from exc
                assert endpoint.address is not None  # choose_endpoint picks reachable ones
                try:
                    new: LinkClient = await self.nursery.start(self._hold, endpoint.address, secret)
                except LinkError as exc:
                    # The old host, still listed while it shuts down (or after it was
                    # killed), closes the hello or does not answer.
                    if exc.code not in ("link_closed", "no_browser") or not self._host_gone:
                        raise
                else:
                    self._client, self._back_by, self._host_gone = new, None, False
                    return new
                await self._wait_back()

    async def _endpoint(self) -> Endpoint:
        """The browser's endpoint; after a host shut down under this client, waiting
        until ``_back_by`` for its successor to publish one."""
        while True:
            try:
                return choose_endpoint(self.browser, self.endpoint_folder)
            except LinkError as exc:
                if exc.code != "no_browser" or not self._host_gone:
                    raise
            await self._wait_back()

    async def _wait_back(self) -> None:
        """A moment's wait for the host that went away under this client to be back;
        once ``_back_by`` has passed, the error that says it is not."""
        if self._back_by is None or trio.current_time() >= self._back_by:
            self._back_by = None
            raise LinkError("no_browser", _HOST_GONE)
        await trio.sleep(0.1)

    async def _hold(
        self, address: LinkAddress, secret: str, *, task_status: trio.TaskStatus[LinkClient]
    ) -> None:
        async with connect(address, secret, self.client_info) as client:
            task_status.started(client)
            with trio.CancelScope() as scope:
                self.nursery.start_soon(_cancel_when, self._done, scope)
                await client.closed.wait()

    async def request(
        self, kind: str, *, on_progress: OnProgress | None = None, **fields: Any
    ) -> dict[str, Any]:
        """A request over the link, connecting again once if the link had broken."""
        for attempt in range(2):
            client = await self.client()
            try:
                result = await client.request(kind, on_progress=on_progress, **fields)
            except LinkError as exc:
                if self._started_again and exc.code == "forbidden":
                    raise LinkError(
                        exc.code, f"{exc.message} ({_HOST_STARTED_AGAIN})", facts=exc.facts
                    ) from None
                if client.closed_code == "stopped" and exc.code in ("link_closed", "stopped"):
                    self._client = None
                    raise LinkError("stopped", exc.message) from None
                # Only a request that never left is sent again: one in flight when the
                # browser went away may have acted, and must not act twice.
                if exc.code != "link_closed" or not exc.unsent or attempt:
                    raise
            else:
                if kind == "tool":
                    self._started_again = False
                return result
        raise AssertionError("unreachable")  # pragma: no cover

    def close(self) -> None:
        self._done.set()


async def _cancel_when(event: trio.Event, scope: trio.CancelScope) -> None:
    await event.wait()
    scope.cancel()


def _text(text: str, *, is_error: bool = False, meta: dict[str, Any] | None = None) -> Any:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], is_error=is_error, _meta=meta
    )


def _with_image(answer: Any, image: object) -> Any:
    """A tool's image (`screenshot`) as MCP image content after its text."""
    if not isinstance(image, Mapping):
        return answer
    picture = types.ImageContent(
        type="image", data=str(image["data"]), mime_type=str(image["mime"])
    )
    answer.content.append(picture)
    return answer


# A tool answer's ``_meta.trimtab``, for the client program (the model reads the
# content): what the answer is, the files an action saved, the tab it acted in, the
# call's number in the host's sequence (which ``cached_from`` refers to).
_META: Final = ("kind", "cached", "cached_from", "call_id", "host_ms", "downloads", "tab")


def build_server(holder: LinkHolder, groups: Sequence[str] = MCP_GROUPS) -> Server[Any]:
    """The MCP server over ``holder``'s link, offering the tools of ``groups``
    (`MCP_GROUPS`: the catalogue's and ``routines``, this server's own)."""
    # `tabs` is the link's listing here (the shared tabs and those opened from them),
    # and every tool names its `tab`: the task's `tabs` and `switch_tab` are not needed.
    offered = tuple(spec for spec in tools_in(groups) if spec.where_calls_name_a_tab)
    specs = {spec.name: spec for spec in offered}
    routines = ROUTINE_TOOLS if ROUTINES_GROUP in groups else ()
    tools = [_TABS_TOOL, *(mcp_tool(spec) for spec in offered), *routines]
    # A tool of a group left out is refused with how to get it, not as unknown.
    left_out = {
        spec.name: str(spec.group)
        for spec in TOOLS
        if spec.name not in specs and spec.where_calls_name_a_tab
    }
    if not routines:
        left_out.update({tool.name: ROUTINES_GROUP for tool in ROUTINE_TOOLS})
    format_page = _format_page()

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        del ctx, params
        return types.ListToolsResult(tools=tools)

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        del ctx, params
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    uri=FORMAT_URI,
                    name="format",
                    title="How to read Trimtab's XML",
                    mime_type="text/markdown",
                )
            ]
        )

    async def read_resource(ctx: Any, params: Any) -> types.ReadResourceResult:
        del ctx
        if str(params.uri) != FORMAT_URI:
            raise MCPError(
                types.INVALID_PARAMS,
                f"no resource {str(params.uri)[:100]!r}; the one resource is {FORMAT_URI}",
            )
        return types.ReadResourceResult(
            contents=[
                types.TextResourceContents(
                    uri=FORMAT_URI, mime_type="text/markdown", text=format_page
                )
            ]
        )

    async def call_tool(ctx: Any, params: Any) -> Any:
        client_params = ctx.session.client_params
        if client_params is not None and client_params.client_info is not None:
            info = client_params.client_info
            holder.client_info = {"name": str(info.name), "version": str(info.version or "")}
        name = str(params.name)
        arguments = dict(params.arguments or {})
        # Every answer names its tab and call: None where it was refused here, before
        # the host numbered it, or no tab could be told.
        meta: dict[str, Any] = {"trimtab": dict.fromkeys(_META, None)}
        with contextlib.suppress(ArgumentError):
            meta["trimtab"]["tab"] = None if "tab" not in arguments else tab_id(arguments["tab"])

        async def progress(message: dict[str, Any]) -> None:
            # While the person is asked, or a routine runs: MCP clients that reset their
            # timeout on progress (the TypeScript SDK's resetTimeoutOnProgress) keep
            # waiting.
            await ctx.session.report_progress(
                float(message.get("waited", 0)),
                float(message.get("timeout", 0)) or None,
                str(message.get("message", "")),
            )

        try:
            if name == "tabs":
                if arguments:
                    raise ArgumentError(f"tabs takes no arguments, not {next(iter(arguments))!r}")
                reply = await holder.request("tabs")
                return _text(_tabs_text(reply), meta={"trimtab": {"tabs": _ids(reply)}})
            if name in left_out:
                return _text(
                    f"{name} is in the {left_out[name]} tool group, which this server does "
                    f"not offer (started with --tools {','.join(groups)}); the person can add "
                    f"it: trimtab mcp --tools {','.join([*groups, left_out[name]])}",
                    is_error=True,
                    meta=meta,
                )
            if is_routine_tool(name):
                return await _routine_tool(holder, name, arguments, progress)
            if name not in specs:
                known = ", ".join(["tabs", *specs, *(tool.name for tool in routines)])
                return _text(
                    f"unknown tool {name[:100]!r}; the tools are: {known}", is_error=True, meta=meta
                )
            # The tab is this door's (a string of digits is taken too); the rest must
            # fit the tool's schema before the call leaves.
            tab = arguments.pop(TAB, None)
            tab = None if tab is None else tab_id(tab)
            meta["trimtab"]["tab"] = tab
            check_arguments(specs[name], arguments, door=(TAB,))
            tab = await _only_tab(holder) if tab is None else tab
            meta["trimtab"]["tab"] = tab
            reply = await holder.request(
                "tool", tab=tab, name=name, args=arguments, on_progress=progress
            )
        except ArgumentError as exc:
            return _text(str(exc), is_error=True, meta=meta)
        except LinkError as exc:
            # The host's refusal of a call names the tab it was about and its number.
            meta["trimtab"].update(
                {key: exc.facts[key] for key in ("tab", "call_id") if key in exc.facts}
            )
            return _text(f"{exc.code}: {exc.message}", is_error=True, meta=meta)
        # The link put the page's strings in the untrusted block; the note is Trimtab's.
        content = str(reply.get("content", ""))
        if reply.get("note"):
            content = f"{content}\n[{reply['note']}]"
        meta = {"trimtab": {key: reply.get(key) for key in _META}}
        answer = _text(content, is_error=bool(reply.get("is_error")), meta=meta)
        return _with_image(answer, reply.get("image"))

    return Server(
        SERVER_NAME,
        version=host_version(),
        instructions=_INSTRUCTIONS + format_page,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
    )


async def _routine_tool(
    holder: LinkHolder, name: str, arguments: dict[str, Any], progress: OnProgress
) -> Any:
    """A routine tool's call relayed as the link's request: the link's answer (a run's
    words and results in the untrusted block; an error when the run is not done), or
    what is wrong with the call, in Trimtab's words."""
    tab = arguments.pop(TAB, None) if name == "run_routine" else None
    meta: dict[str, Any] = {"tab": None}
    try:
        call = routine_call(name, arguments, door=(TAB,))
        fields = dict(call.fields)
        if call.names_a_tab:
            tab = await _only_tab(holder) if tab is None else tab_id(tab)
            meta["tab"] = fields[TAB] = tab
        reply = await holder.request(call.kind, on_progress=progress, **fields)
    except ArgumentError as exc:
        return _text(str(exc), is_error=True, meta={"trimtab": meta})
    except LinkError as exc:
        return _text(f"{exc.code}: {exc.message}", is_error=True, meta={"trimtab": meta})
    meta.update(routine_meta(call.kind, reply))
    return _text(
        str(reply.get("content", "")), is_error=bool(reply.get("is_error")), meta={"trimtab": meta}
    )


async def _only_tab(holder: LinkHolder) -> int:
    listed = (await holder.request("tabs"))["tabs"]
    if len(listed) == 1:
        return int(listed[0]["id"])
    if not listed:
        raise LinkError("not_shared", f"no tab is shared with agents. {HOW_TO_SHARE}")
    # Ids only: a title is the page's words, which go in the `tabs` listing's block.
    raise LinkError(
        "bad_request",
        "say which tab with 'tab' (`tabs` lists them): the shared tabs are "
        + ", ".join(str(t["id"]) for t in listed),
    )


def _ids(reply: Mapping[str, Any]) -> list[int]:
    return [int(tab["id"]) for tab in reply["tabs"]]


def _tabs_text(reply: Mapping[str, Any]) -> str:
    """The link's listing of the tabs (in its untrusted block); when there is none,
    how the person shares one."""
    content = str(reply["content"])
    if reply["tabs"]:
        return content
    return f"{content}\nNo tab is shared with agents yet. {HOW_TO_SHARE}"


@contextlib.asynccontextmanager
async def open_holder(
    browser: str | None = None,
    *,
    endpoint_folder: Path | None = None,
    secret_file: Path | None = None,
) -> AsyncIterator[LinkHolder]:
    async with trio.open_nursery() as nursery:
        holder = LinkHolder(
            nursery, browser=browser, endpoint_folder=endpoint_folder, secret_file=secret_file
        )
        try:
            yield holder
        finally:
            holder.close()
            nursery.cancel_scope.cancel()


async def _serve(browser: str | None, groups: Sequence[str]) -> None:
    async with open_holder(browser) as holder:
        server = build_server(holder, groups)
        async with open_stdio() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())


def run_stdio(browser: str | None = None, groups: Sequence[str] = MCP_GROUPS) -> int:
    """Serve MCP on stdin/stdout until the client closes it (``trimtab mcp``), offering
    the tools of ``groups``."""
    anyio.run(_serve, browser, groups, backend="trio")
    return 0
