"""``trimtab mcp | tabs | snapshot | call | routines | run``: the link from a shell or an
MCP client.

Scripts get the result on stdout, and a failure on stderr only
(``trimtab: <code>: <message>``) with an exit code that says what kind of failure
it was (`EXIT_CODES`). Consecutive commands continue one view of the tabs (the
link keeps a named session a while), so a ``call`` after a ``snapshot`` answers
with a diff, as in one MCP session, and ``routines save`` saves what that session did
as a routine, which ``run`` runs again without a model.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import contextlib
import json
import os
import shlex
import sys
import tempfile
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any, Final

import trio

from ..link import (
    HOW_TO_SHARE,
    LinkClient,
    LinkError,
    PermissionProblem,
    choose_endpoint,
    connect,
    find_endpoints,
    secret_of,
)
from ..tools import (
    MCP_GROUPS,
    TAB,
    TOOLS,
    ArgumentError,
    ToolSpec,
    check_arguments,
    parse_mcp_groups,
    property_types,
)
from ._secrets import ask_secrets, missing_secrets, read_values

__all__ = ["DEFAULT_SESSION", "EXIT_CODES", "add_commands", "parse_arguments", "run_command"]

# 0: done; 1: the tool ran and reported an error (its text is printed), or a routine
# stopped at a step it could not do as recorded; 2: bad usage (ours, or a request the
# host found malformed: `bad_request`).
EXIT_CODES: Final[Mapping[str, int]] = {
    "tool_error": 1,
    "needs_help": 1,
    "usage": 2,
    "bad_request": 2,
    "no_browser": 3,
    "ambiguous": 3,
    "no_secret": 3,
    "no_link": 3,
    "link_closed": 3,
    "forbidden": 4,
    "stopped": 4,
    "refused": 4,
    "not_shared": 4,
}
# The session a command continues unless --session (or TRIMTAB_SESSION) names another.
DEFAULT_SESSION: Final = "cli"
_SPECS: Final[Mapping[str, ToolSpec]] = {spec.name: spec for spec in TOOLS}
EXIT_OTHER: Final = 5  # any other refusal of the host (a closed tab, a stuck page)


def add_commands(commands: Any) -> None:
    """Register the commands on ``trimtab``'s subparsers."""
    mcp = commands.add_parser(
        "mcp",
        help="serve MCP on stdin/stdout for an agent outside the browser",
        description="An MCP server whose tools act in the tabs shared from Trimtab's side panel.",
    )
    mcp.add_argument("--list-browsers", action="store_true", help="list browsers and exit")
    mcp.add_argument(
        "--tools",
        type=_tool_groups,
        default=MCP_GROUPS,
        metavar="GROUPS",
        help=f"the tool groups offered, comma-separated (default: {','.join(MCP_GROUPS)}); "
        "core is always offered",
    )
    for name, text in (
        ("tabs", "list the tabs shared with agents"),
        ("snapshot", "print a shared tab as Trimtab's XML"),
        ("call", "run one tool in a shared tab and print its result"),
    ):
        sub = commands.add_parser(name, help=text, description=text)
        if name == "call":
            sub.add_argument("tool", help=f"a tool name: {', '.join(_SPECS)}")
            sub.add_argument(
                "arguments",
                nargs="*",
                metavar="key=value",
                help="a value is text where the tool's schema wants a string, JSON otherwise "
                '(true, 3, ["Shift"])',
            )
            sub.add_argument(
                "--out",
                type=Path,
                help="where an image the tool answers with (screenshot) is written "
                "(default: a new file in the temporary folder); its path is printed",
            )
        if name != "tabs":
            sub.add_argument("--tab", type=int, help="the tab id (default: the only shared tab)")
            sub.add_argument("--budget", type=int, help="tokens a snapshot may take (0: no budget)")
            _session_option(
                sub,
                "continue this named view of the tabs: snapshot ids, and diffs against the "
                "previous command's answer",
            )
        sub.add_argument(
            "--json", action="store_true", help="print the host's whole reply (errors too)"
        )
    _add_routine_commands(commands)
    for sub in (mcp, *(commands.choices[n] for n in ("tabs", "snapshot", "call", "run"))):
        sub.add_argument("--browser", help="which browser (see trimtab mcp --list-browsers)")
    from ._doctor import add_doctor

    add_doctor(commands)


def _session_option(sub: argparse.ArgumentParser, what: str) -> None:
    sub.add_argument(
        "--session",
        default=os.environ.get("TRIMTAB_SESSION") or DEFAULT_SESSION,
        help=f"{what} (default: $TRIMTAB_SESSION, else {DEFAULT_SESSION!r})",
    )


def _add_routine_commands(commands: Any) -> None:
    """``routines`` (and ``routines save``) and ``run``."""
    routines = commands.add_parser(
        "routines",
        help="list the routines saved in the browser, or save a session as one",
        description="List the routines saved in the browser: name, steps, parameters.",
    )
    routines.add_argument("--json", action="store_true", help="print the host's whole reply")
    routines.add_argument("--browser", help="which browser (see trimtab mcp --list-browsers)")
    saving = routines.add_subparsers(dest="routines_command", metavar="save")
    text = "save what a session's commands did as a routine"
    save = saving.add_parser("save", help=text, description=text + ", to run it again.")
    save.add_argument("name", help="the routine's name")
    save.add_argument(
        "--task", default="", help="the task in words: values it names become parameters"
    )
    save.add_argument("--replace", action="store_true", help="overwrite a routine of that name")
    save.add_argument(
        "--rename", action="append", default=[], metavar="OLD=NEW", help="rename a parameter"
    )
    _session_option(save, "the session whose commands are saved")
    # Also after `save`; unset there, the options given before it stand.
    save.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help="print the whole reply"
    )
    save.add_argument("--browser", default=argparse.SUPPRESS, help="which browser")
    text = "run a saved routine in a shared tab and print its result"
    run = commands.add_parser(
        "run",
        help=text,
        description=text + ", without a model. A secret never goes on the command line "
        "(ps shows it): give it as key=- and its value on stdin (one line each), or leave "
        "it out and be asked for it when stdin is a terminal.",
    )
    run.add_argument("name", help="the routine's name (trimtab routines lists them)")
    run.add_argument(
        "arguments",
        nargs="*",
        metavar="key=value",
        help="a parameter's value (text); key=- reads it from stdin",
    )
    run.add_argument("--tab", type=int, help="the tab id (default: the only shared tab)")
    run.add_argument(
        "--start-at",
        type=int,
        default=1,
        metavar="K",
        help="start at step K, after doing by hand the step a run needed help with",
    )
    run.add_argument(
        "--keep-healed",
        action="store_true",
        help="with --start-at: keep the session's calls since the run stopped in the "
        "routine, in place of the steps skipped",
    )
    _session_option(run, "run as this session, as `call` does")
    run.add_argument("--json", action="store_true", help="print the host's whole reply")


def parse_arguments(tool: str, pairs: list[str]) -> dict[str, object]:
    """``key=value`` pairs for ``tool``: a value the schema wants as a string is that
    text as it is (``12345``, ``true`` and ``null`` included); any other is JSON. They
    must fit the tool's schema (a missing or unknown argument, a wrong type: usage),
    so a call that cannot run is refused here, in one line, before the link."""
    spec = _SPECS.get(tool)
    if spec is None:
        raise LinkError("usage", f"unknown tool {tool[:100]!r}; the tools are: {', '.join(_SPECS)}")
    parsed: dict[str, object] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise LinkError("usage", f"argument {pair!r} is not key=value")
        if key == TAB and not property_types(spec, key):
            raise LinkError("usage", f"{tool} has no argument 'tab': name the tab with --tab")
        parsed[key] = _value(spec, key, value)
    try:
        check_arguments(spec, parsed)
    except ArgumentError as exc:
        raise LinkError("usage", str(exc)) from None
    return parsed


def _value(spec: ToolSpec, key: str, text: str) -> object:
    wanted = property_types(spec, key)
    if "string" in wanted:
        return text
    try:
        return json.loads(text)
    except ValueError:
        if not wanted:
            return text
        raise LinkError(
            "usage",
            f"{key}={text[:60]!r}: {spec.name}'s {key} is {' or '.join(sorted(wanted))}, "
            "written as JSON",
        ) from None


def _pairs(pairs: list[str], what: str) -> dict[str, str]:
    """``key=value`` pairs as text; a pair without ``=`` or a key given twice is usage."""
    parsed: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise LinkError("usage", f"{what} {pair!r} is not key=value")
        if key in parsed:
            raise LinkError("usage", f"{what} {key!r} is given twice")
        parsed[key] = value
    return parsed


def _tool_groups(value: str) -> tuple[str, ...]:
    """``--tools``: group names, comma-separated; an unknown one is a usage error."""
    try:
        return parse_mcp_groups(value.split(","))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def run_command(args: argparse.Namespace) -> int:
    """Run ``mcp``, ``doctor``, ``tabs``, ``snapshot``, ``call``, ``routines`` or ``run``;
    return the exit code."""
    if args.command == "doctor":
        from ._doctor import run_doctor

        return run_doctor(args)
    if args.command == "mcp":
        if args.list_browsers:
            return _list_browsers()
        from ..mcp import run_stdio

        return run_stdio(args.browser, groups=args.tools)
    commands: dict[str, Callable[[argparse.Namespace], Any]] = {
        "tabs": _tabs,
        "snapshot": _snapshot,
        "call": _call,
        "routines": _routines,
        "run": _run,
    }
    try:
        return int(trio.run(commands[args.command], args))
    except LinkError as exc:
        print(f"trimtab: {exc.code}: {exc.message}", file=sys.stderr)
        return EXIT_CODES.get(exc.code, EXIT_OTHER)
    except BaseExceptionGroup as group:
        error = _sole_link_error(group)
        if error is None:
            raise
        print(f"trimtab: {error.code}: {error.message}", file=sys.stderr)
        return EXIT_CODES.get(error.code, EXIT_OTHER)


def _sole_link_error(group: BaseExceptionGroup[Any]) -> LinkError | None:
    matched, _rest = group.split(LinkError)
    if matched is None or _rest is not None:
        return None
    leaves = list(_leaves(matched))
    return leaves[0] if len(leaves) == 1 and isinstance(leaves[0], LinkError) else None


def _leaves(exc: BaseException) -> Any:
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            yield from _leaves(inner)
    else:
        yield exc


def _list_browsers() -> int:
    endpoints = find_endpoints()
    if not endpoints:
        print("trimtab: no browser with the Trimtab extension is running", file=sys.stderr)
        return EXIT_CODES["no_browser"]
    for endpoint in endpoints:
        state = "running" if endpoint.alive else "gone"
        where = endpoint.address or f"closed: {endpoint.info.problem}"
        print(
            f"{endpoint.name}\t{endpoint.info.browser}\t{state}\t{endpoint.info.profile}\t{where}"
        )
    return 0


@contextlib.asynccontextmanager
async def _connected(options: argparse.Namespace) -> AsyncIterator[LinkClient]:
    endpoint = choose_endpoint(options.browser)
    try:
        secret = secret_of(endpoint)
    except (OSError, PermissionProblem) as exc:
        raise LinkError("no_secret", f"cannot read the link's secret: {exc}") from exc
    session = getattr(options, "session", None)
    client = {"name": "trimtab-cli", "version": ""}
    assert endpoint.address is not None  # choose_endpoint picks reachable ones
    async with connect(endpoint.address, secret, client, session=session) as link:
        yield link


async def _request(options: argparse.Namespace, kind: str, **fields: Any) -> dict[str, Any]:
    async with _connected(options) as link:
        if kind in ("tool", "routine_run") and fields.get("tab") is None:
            fields["tab"] = _only_tab((await link.request("tabs"))["tabs"])
        return await link.request(kind, **fields)


def _only_tab(listed: list[dict[str, Any]]) -> int:
    if len(listed) == 1:
        return int(listed[0]["id"])
    if not listed:
        raise LinkError("not_shared", f"no tab is shared with agents. {HOW_TO_SHARE}")
    shared = ", ".join(str(tab["id"]) for tab in listed)
    raise LinkError("usage", f"say which tab with --tab (shared tabs: {shared})")


async def _tabs(args: argparse.Namespace) -> int:
    """The shared tabs, their titles and URLs in the link's untrusted block; none is no
    error, but a person is told how to share."""
    reply = await _request(args, "tabs")
    if args.json:
        print(json.dumps(reply))
    else:
        if reply["tabs"]:
            print(reply["content"])
        else:
            print(f"trimtab: no tab is shared with agents. {HOW_TO_SHARE}", file=sys.stderr)
    return 0


async def _snapshot(args: argparse.Namespace) -> int:
    budget = {} if args.budget is None else {"budget": args.budget}
    reply = await _request(args, "tool", tab=args.tab, name="capture_snapshot", args={}, **budget)
    return _print_tool(args, reply)


async def _call(args: argparse.Namespace) -> int:
    arguments = parse_arguments(args.tool, args.arguments)
    budget = {} if args.budget is None else {"budget": args.budget}
    reply = await _request(args, "tool", tab=args.tab, name=args.tool, args=arguments, **budget)
    image = reply.get("image")
    if isinstance(image, dict) and not reply.get("is_error"):
        path = _write_image(image, args.out)
        if args.json:
            print(json.dumps({**reply, "image": {**image, "data": None, "file": str(path)}}))
        else:
            print(path)
        return 0
    return _print_tool(args, reply)


_SUFFIXES: Final[Mapping[str, str]] = {"image/jpeg": ".jpg", "image/png": ".png"}


def _write_image(image: Mapping[str, Any], out: Path | None) -> Path:
    """Write a tool's image to ``out`` (or a new file in the temporary folder)."""
    try:
        data = base64.b64decode(str(image["data"]), validate=True)
    except (KeyError, binascii.Error) as exc:
        raise LinkError("tool_error", f"the host's image is not base64 ({exc})") from None
    suffix = _SUFFIXES.get(str(image.get("mime")), ".img")
    try:
        if out is None:
            handle, name = tempfile.mkstemp(prefix="trimtab-screenshot-", suffix=suffix)
            with os.fdopen(handle, "wb") as file:
                file.write(data)
            return Path(name)
        out.write_bytes(data)
    except OSError as exc:
        raise LinkError("usage", f"cannot write the image to {out}: {exc}") from None
    return out


def _print_tool(args: argparse.Namespace, reply: dict[str, Any]) -> int:
    """The result on stdout; an error on stderr only (with --json, the reply as well)."""
    if args.json:
        print(json.dumps(reply))
    if not reply.get("is_error"):
        if not args.json:
            sys.stdout.write(str(reply["content"]).rstrip("\n") + "\n")
        return 0
    consent = reply.get("consent")
    refused = isinstance(consent, dict) and consent.get("required") and not consent.get("granted")
    code = "refused" if refused else "tool_error"
    text = str(reply["content"]).strip() or "the tool failed"
    print(f"trimtab: {code}: {text}", file=sys.stderr)
    return EXIT_CODES[code]


async def _routines(args: argparse.Namespace) -> int:
    """The routines listed (their names and parameters in the link's untrusted block),
    or, with ``save``, the session's commands saved as one."""
    if args.routines_command == "save":
        rename = _pairs(args.rename, "--rename")
        reply = await _request(
            args,
            "routine_save",
            name=args.name,
            task=args.task,
            rename=rename,
            replace=args.replace,
        )
    else:
        reply = await _request(args, "routines")
    print(json.dumps(reply) if args.json else str(reply["content"]))
    return 0


async def _run(args: argparse.Namespace) -> int:
    """A routine's run: its results on stdout when it is done; else one stderr line
    saying what to do, and the run's words (exit 1: needs help; 4: refused)."""
    params = _pairs(args.arguments, "parameter")
    if args.start_at < 1:
        raise LinkError("usage", f"--start-at {args.start_at} is not a step (they count from 1)")
    params = read_values(params)
    async with _connected(args) as link:
        listed = (await link.request("routines"))["routines"]
        missing = missing_secrets(listed, args.name, params)
        # Asked in a thread: the link's connection goes on meanwhile.
        params |= await trio.to_thread.run_sync(ask_secrets, args.name, missing)
        tab = args.tab if args.tab is not None else _only_tab((await link.request("tabs"))["tabs"])
        fields: dict[str, Any] = {"keep_healed": True} if args.keep_healed else {}
        fields |= {"tab": tab, "name": args.name, "params": params, "start_at": args.start_at}
        reply = await link.request("routine_run", **fields)
    if args.json:
        print(json.dumps(reply))
    if reply.get("kept"):
        print(f"trimtab: kept in routine {args.name!r} ({reply['kept']})", file=sys.stderr)
    status = reply.get("status")
    if status == "done":
        if not args.json:
            results = [str(result) for result in reply.get("results", [])]
            sys.stdout.write("\n".join(results or [str(reply["content"])]).rstrip("\n") + "\n")
        return 0
    content = str(reply.get("content", "")).strip()
    if status == "needs_help":
        again = ["trimtab", "run", args.name, "--start-at", str(int(reply["at"]) + 1)]
        if args.tab is not None:
            again += ["--tab", str(args.tab)]
        print(
            f"trimtab: needs_help: do step {reply['at']} with trimtab call, then go on with "
            f"{shlex.join(again)} and the same parameters (--keep-healed keeps what you did "
            f"in the routine):\n{content}",
            file=sys.stderr,
        )
        return EXIT_CODES["needs_help"]
    print(f"trimtab: refused: {content}", file=sys.stderr)
    return EXIT_CODES["refused"]
