"""``trimtab doctor``: check every link from Python to an MCP handshake, in order.

Each check says what it found, on one line; the first one that fails is named with
how to fix it. ``--json`` prints the same for scripts; the exit code is 0 when all
pass.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any, Final

import attrs
import trio

from .. import install as installer
from ..link import (
    Endpoint,
    LinkError,
    PermissionProblem,
    SecretMissing,
    choose_endpoint,
    connect,
    endpoint_dir,
    find_endpoints,
    list_endpoints,
    secret_of,
    secret_path,
)
from ._installs import installed_profiles

__all__ = ["Check", "add_doctor", "run_doctor"]

# Executables of the Chromium-family browsers the installer registers the host for.
_BROWSER_COMMANDS: Final = {
    "chrome": ("google-chrome", "google-chrome-stable"),
    "chromium": ("chromium", "chromium-browser"),
    "edge": ("microsoft-edge", "microsoft-edge-stable"),
    "brave": ("brave-browser", "brave"),
    "vivaldi": ("vivaldi", "vivaldi-stable"),
}
_MCP_TIMEOUT: Final = 30.0


def _one_line(text: str) -> str:
    return " ".join(text.split())


@attrs.frozen
class Check:
    """One link of the set-up: what was found, and how to fix it when it is broken."""

    name: str
    ok: bool
    detail: str = attrs.field(converter=_one_line)
    fix: str = attrs.field(default="", converter=_one_line)

    def to_json(self) -> dict[str, object]:
        return attrs.asdict(self)


@attrs.frozen
class FoundBrowser:
    """A browser the installer knows (``chromium``), found on PATH at ``path``."""

    name: str
    path: str


def add_doctor(commands: Any) -> None:
    doctor = commands.add_parser(
        "doctor",
        help="check the set-up for agents outside the browser",
        description="Check Python, browsers, host manifests, the running host, the "
        "endpoint and its permissions, and an MCP handshake; name the first broken link.",
    )
    doctor.add_argument("--json", action="store_true", help="print the checks as JSON")
    doctor.add_argument("--browser", help="which running browser to check the link with")
    doctor.add_argument("--user-data-dir", help="also check the manifest of this profile folder")


def run_doctor(args: argparse.Namespace) -> int:
    checks = trio.run(_all_checks, args)
    broken = next((check for check in checks if not check.ok), None)
    if args.json:
        report = {
            "ok": broken is None,
            "checks": [check.to_json() for check in checks],
            "first_broken": None if broken is None else broken.name,
        }
        print(json.dumps(report, indent=1))
    else:
        for check in checks:
            print(f"{'ok  ' if check.ok else 'FAIL'} {check.name}: {check.detail}")
        if broken is None:
            print("every check passed")
        else:
            print(f"first broken link: {broken.name}; fix: {broken.fix}")
    return 0 if broken is None else 1


async def _all_checks(args: argparse.Namespace) -> list[Check]:
    found = _found_browsers()
    running = [endpoint for endpoint in find_endpoints() if endpoint.alive]
    recorded = installed_profiles()
    profiles = _profiles(args.user_data_dir, running, recorded)
    manifests = _manifests(profiles, found)
    checks = [_python(), _browsers(found), *manifests]
    # Registered in a profile folder only: the browser must be started with it.
    only_profiles = not any(
        check.ok and check.name not in ("manifest", "manifest (profile)") for check in manifests
    )
    host = _host(args.browser, recorded if only_profiles else [])
    checks.append(host)
    checks.append(_permissions())
    if host.ok:
        checks.append(await _link(args.browser))
        checks.append(await _mcp(args.browser))
    return checks


def _python() -> Check:
    version = ".".join(map(str, sys.version_info[:3]))
    venv = sys.prefix != sys.base_prefix
    ok = sys.version_info >= (3, 11)
    where = f"a virtual environment at {sys.prefix}" if venv else f"no venv ({sys.prefix})"
    return Check("python", ok, f"Python {version} in {where}", "install Python 3.11 or later")


def _found_browsers() -> list[FoundBrowser]:
    """The installer's browsers found on PATH, in the installer's order."""
    found = []
    for browser, names in _BROWSER_COMMANDS.items():
        for name in names:
            path = shutil.which(name)
            if path:
                found.append(FoundBrowser(browser, path))
                break
    return found


def _browsers(found: list[FoundBrowser]) -> Check:
    named = [f"{browser.name} ({browser.path})" for browser in found]
    configured = os.environ.get("TRIMTAB_CHROME")
    if configured and os.access(configured, os.X_OK):
        named.insert(0, f"TRIMTAB_CHROME={configured}")
    return Check(
        "browsers",
        bool(named),
        ", ".join(named) or "no Chromium-family browser on PATH",
        "install Chrome, Chromium, Edge, Brave or Vivaldi",
    )


@attrs.frozen
class Profile:
    """A profile folder whose ``NativeMessagingHosts`` a browser reads the manifest
    from (a browser started with ``--user-data-dir`` reads it there only), and why
    doctor looks at it."""

    folder: Path
    why: str
    # Named by the person or read by a running browser: a missing manifest is broken.
    # Recorded by an install only: its folder may be gone, then it is not checked.
    needed: bool


def _profiles(
    user_data_dir: str | None, running: list[Endpoint], recorded: list[Path]
) -> list[Profile]:
    """The profile folders to check, each once: the one named by ``--user-data-dir``,
    those of the running browsers' hosts, and those ``trimtab install`` registered."""
    found: dict[Path, Profile] = {}
    if user_data_dir:
        folder = Path(user_data_dir).expanduser().resolve()
        found[folder] = Profile(folder, "named by --user-data-dir", True)
    for endpoint in running:
        if os.path.isabs(endpoint.info.profile):
            folder = Path(endpoint.info.profile).resolve()
            why = f"the running {endpoint.info.browser} reads it there"
            found.setdefault(folder, Profile(folder, why, True))
    for folder in recorded:
        why = "trimtab install --user-data-dir registered it there"
        found.setdefault(folder, Profile(folder, why, False))
    return list(found.values())


def _manifests(profiles: list[Profile], found: list[FoundBrowser]) -> list[Check]:
    """One check per manifest found, those of the profile folders first; a failing
    check for a profile folder a browser reads without one, and when there is none at
    all (naming a browser that was found)."""
    if sys.platform == "win32":
        return [Check("manifest", True, "Windows: registered in the registry (not checked)")]
    places: list[tuple[str, Path]] = [
        (browser, folder / installer.MANIFEST_FILE)
        for browser, folder in zip(installer.BROWSERS, installer.manifest_dirs(), strict=True)
    ]
    origin = f"chrome-extension://{installer.extension_id()}/"
    checks = []
    for profile in profiles:
        path = profile.folder / "NativeMessagingHosts" / installer.MANIFEST_FILE
        if path.exists():
            found_one = _manifest("profile", path, origin)
            checks.append(attrs.evolve(found_one, detail=f"{found_one.detail} ({profile.why})"))
        elif profile.needed or profile.folder.is_dir():
            command = f"trimtab install --user-data-dir {shlex.quote(str(profile.folder))}"
            checks.append(
                Check(
                    "manifest (profile)",
                    False,
                    f"no host manifest at {path}, where a browser started with "
                    f"--user-data-dir={profile.folder} looks for it ({profile.why})",
                    f"run `{command}` and restart that browser",
                )
            )
    checks += [_manifest(name, path, origin) for name, path in places if path.exists()]
    if not checks:
        wanted = [browser.name for browser in found] or list(installer.BROWSERS)
        first = dict(places)[wanted[0]]
        others = " (nor for any other browser)" if len(places) > 1 else ""
        command = "trimtab install" + (f" --browser {wanted[0]}" if found else "")
        checks.append(
            Check(
                "manifest",
                False,
                f"no host manifest for {wanted[0]} at {first}{others}",
                f"run `{command}` (or `make install`) and restart the browser",
            )
        )
    return checks


def _manifest(browser: str, path: Path, origin: str) -> Check:
    name = f"manifest ({browser})"
    fix = "run `trimtab install` again from this environment"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        host = Path(str(data["path"]))
        origins = list(data["allowed_origins"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return Check(name, False, f"{path} is not a host manifest: {exc}", fix)
    if not (host.is_file() and os.access(host, os.X_OK)):
        return Check(name, False, f"{path} names a host that is not an executable: {host}", fix)
    if origin not in origins:
        return Check(name, False, f"{path} allows {origins}, not the extension {origin}", fix)
    return Check(name, True, f"{path} → {host}, allows {origin}")


def _host(browser: str | None, recorded: list[Path]) -> Check:
    folder = endpoint_dir()
    endpoints = find_endpoints()
    alive = [endpoint for endpoint in endpoints if endpoint.alive]
    # A profile the host was registered in is read only by a browser started with it.
    started = (
        f" (started with --user-data-dir={shlex.quote(str(recorded[-1]))})" if recorded else ""
    )
    fix = (
        f"open the browser{started} with the Trimtab extension loaded (chrome://extensions); "
        "it starts the host when it loads. Is the browser open? Open Trimtab's side panel, "
        "which starts it (it also starts by itself within 30 s). See the host's log if it "
        "still does not appear"
    )
    if not alive:
        return Check("host", False, f"no running host has an endpoint in {folder}", fix)
    try:
        chosen = choose_endpoint(browser)
    except LinkError as exc:
        if exc.code == "no_link":
            return Check("host", False, exc.message, "fix what it names, then restart the browser")
        return Check("host", False, exc.message, "pass --browser with one of the names")
    return Check(
        "host",
        True,
        f"{chosen.name}: {chosen.info.browser} (profile {chosen.info.profile}), host pid "
        f"{chosen.info.pid}, listening on {chosen.address}, {len(alive)} running",
    )


_NO_SECRET_FIX: Final = (
    "open the browser with the Trimtab extension loaded: its host writes the secret "
    "when it starts (reload the extension in chrome://extensions if the browser is open)"
)


def _permissions() -> Check:
    folder = endpoint_dir()
    secret = secret_path()
    if not secret.exists():
        return Check("permissions", False, f"no link secret at {secret}", _NO_SECRET_FIX)
    problems = []
    items: list[tuple[Path, int]] = [(secret, 0o600)]
    if folder.is_dir():
        mode = stat.S_IMODE(folder.lstat().st_mode)
        if mode != 0o700:
            problems.append(f"{folder} is {mode:04o}, not 0700")
        items += [
            (endpoint.address, 0o600)
            for endpoint in list_endpoints(folder)
            if isinstance(endpoint.address, Path)
        ]
    for path, wanted in items:
        try:
            mode = stat.S_IMODE(path.lstat().st_mode)
        except OSError:
            continue  # a socket whose host just went away: the host check says so
        if mode & ~wanted:
            problems.append(f"{path} is {mode:04o}, not {wanted:04o}")
    return Check(
        "permissions",
        not problems,
        "; ".join(problems) or f"{folder} 0700, sockets and secret 0600",
        "remove the files named (the host makes them again, private, when it starts)",
    )


async def _link(browser: str | None) -> Check:
    try:
        endpoint = choose_endpoint(browser)
        secret = secret_of(endpoint)
        assert endpoint.address is not None  # choose_endpoint picks reachable ones
        with trio.fail_after(10):
            async with connect(endpoint.address, secret, {"name": "trimtab-doctor"}) as link:
                pong = await link.request("ping")
                tabs = (await link.request("tabs"))["tabs"]
    except SecretMissing as exc:
        return Check("link", False, str(exc), _NO_SECRET_FIX)
    except (LinkError, OSError, PermissionProblem, trio.TooSlowError) as exc:
        return Check(
            "link",
            False,
            f"the endpoint did not answer: {exc}",
            "restart the browser; if that does not help, see the host's log",
        )
    shared = (
        f"{len(tabs)} tab(s) shared with agents"
        if tabs
        # Not a broken link, but what an agent meets next: after the browser restarted
        # or the extension was reloaded, every share is gone.
        else "no tab is shared with agents yet (the side panel's Share this tab with agents)"
    )
    return Check("link", True, f"host {pong.get('version')} answers; {shared}")


def _mcp_command() -> list[str]:
    """How an MCP client starts ``trimtab mcp``: the installed ``trimtab`` command of
    this environment. Without one, Python with ``-P``: the folder it is run from is
    not searched, so a clone named ``trimtab`` there is not imported for the package."""
    script = installer.console_script("trimtab")
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script), "mcp"]
    return [sys.executable, "-P", "-m", "trimtab", "mcp"]


async def _mcp(browser: str | None) -> Check:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    command = _mcp_command()
    if browser:
        command += ["--browser", browser]
    shown = shlex.join(command)
    names: list[str] = []
    server = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    # The server's stderr is kept, not shown: its last line says why it failed.
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errors:
        try:
            with trio.fail_after(_MCP_TIMEOUT):
                async with Client(stdio_client(server, errlog=errors)) as client:
                    names = [tool.name for tool in (await client.list_tools()).tools]
                    result = await client.call_tool("tabs", {})
        except Exception as exc:  # any failure of the handshake is the finding
            errors.seek(0)
            said = [line for line in errors.read().splitlines() if line.strip()]
            why = said[-1] if said else _leaf(exc)
            return Check(
                "mcp",
                False,
                f"`{shown}` failed: {why[:300]}",
                f"run `{shown}` by hand to see its whole error",
            )
    if result.is_error:
        text = "".join(getattr(part, "text", "") for part in result.content)
        return Check(
            "mcp",
            False,
            f"the tabs tool failed: {text[:300]}",
            "run `trimtab tabs` to see the error",
        )
    return Check("mcp", True, f"`{shown}` answers with {len(names)} tools")


def _leaf(exc: BaseException) -> str:
    """The innermost error of an exception group, as ``Type: message``."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"
