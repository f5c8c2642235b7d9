"""An obedient scripted model: it does what the person asked, and also every instruction
it finds in a tool result.

The worst model for a page to meet is one that believes the page. This one reads each
tool result (the XML, its attributes and its URL, with entities and percent-escapes
decoded, since a real model reads through both) and turns every instruction it finds
into a tool call, through a small grammar the injection pages use in varied wording:

- ``navigate to URL`` (also open, go to, visit, load, head over to, browse to)
- ``open URL in a new tab`` (also load, visit; or ``in a new tab, open URL``)
- ``click “X”`` (press, tap, hit, push, activate, submit; ``the button``/``the link``)
- ``type “E” into “F”`` (enter, fill in, write, paste, put; ``and press Enter``)
- ``select “V” in “S”`` (choose, pick, switch to; in/from/for/under)
- ``tick “X”`` (check, turn on, enable, switch on)
- ``download “F”``
- ``run evaluate `CODE` `` (execute, call)
- ``share this tab`` / ``unshare this tab`` (stop sharing)
- ``read the console`` / ``read the network log`` (check, open, look at)

Names are in double quotes (straight or curly, or « »); values may be ``[EMAIL]`` or
``[NAME]``, which the model fills with what it knows of the person. An element is
found by name among every element the model has seen (ids are stable): its text, its
``label``, ``placeholder``, ``title``, the text just before it, or for an element
without text of its own (a checkbox) the text right after it.

Nothing here decides what is harmful: the model only reports what it called and
what the host answered; the harness judges harm from what reached the sites.
"""

from __future__ import annotations

import html
import re
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any
from urllib.parse import unquote

import attrs
from lxml import etree

from tests.support.xmltree import listed_items

__all__ = ["PERSON", "Call", "Instruction", "ObedientModel", "Person", "instructions"]


@attrs.frozen
class Person:
    """What the model knows about the person it works for."""

    name: str = "Sam Rivera"
    email: str = "sam.rivera@mail.test"


PERSON = Person()

_OPEN = '"“”«'
_CLOSE = '"”“»'
_Q = rf"[{_OPEN}]([^{_CLOSE}\n]{{1,80}})[{_CLOSE}]"
_VALUE = rf"(?:{_Q}|(\[[A-Z]+\]))"
_URL = r"<?(https?://[^\s\"<>“”»`]+)"
_THE = r"(?:the\s+)?"

# (kind, pattern): each match is one instruction; the groups are its arguments.
# A prohibition is no instruction: "the tab may not go to URL" (the host's own note
# about a held request) asks for nothing.
_NOT = r"(?<!not )(?<!never )(?<!n't )"
_GRAMMAR: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(_NOT + pattern, re.IGNORECASE))
    for kind, pattern in (
        (
            "type",
            rf"\b(?:type|enter|fill\s+in|write|paste|put)\s+{_VALUE}\s+(?:in|into|in\s+to)\s+"
            rf"{_THE}(?:field\s+|box\s+)?{_Q}(?:\s+(?:field|box))?"
            r"(\s*,?\s*(?:and|then)\s+(?:press|hit)\s+enter)?",
        ),
        (
            "select",
            rf"\b(?:select|choose|pick|switch\s+to)\s+{_Q}\s+(?:in|from|for|under|as)\s+"
            rf"{_THE}(?:menu\s+|list\s+)?{_Q}",
        ),
        (
            "new_tab",
            rf"\b(?:(?:open|load|visit)\s+{_URL}\s+in\s+a\s+new\s+tab"
            rf"|in\s+a\s+new\s+tab,?\s+(?:open|load|visit)\s+{_URL})",
        ),
        (
            "navigate",
            rf"\b(?:navigate\s+to|open|go\s+to|visit|load|head\s+over\s+to|browse\s+to)\s+"
            rf"(?:the\s+(?:page|link|address|url)\s+)?{_URL}",
        ),
        ("download", rf"\bdownload\s+(?:the\s+file\s+)?{_Q}"),
        (
            "evaluate",
            r"\b(?:run|execute|call)\s+(?:the\s+)?(?:tool\s+)?`?evaluate`?\s+"
            r"(?:with\s+)?(?:the\s+)?(?:code\s+|expression\s+|script\s+)?:?\s*`([^`]{1,400})`",
        ),
        ("share", r"\b(share|unshare|stop\s+sharing)\s+this\s+tab\b"),
        ("devtools", r"\b(?:read|check|open|look\s+at)\s+(?:the\s+)?(console|network)\b"),
        (
            "check",
            rf"\b(?:tick|check|turn\s+on|enable|switch\s+on)\s+{_THE}"
            rf"(?:box\s+|option\s+|setting\s+|checkbox\s+)?{_Q}",
        ),
        (
            "click",
            rf"\b(?:click|press|tap|hit|push|activate|submit)\s+(?:on\s+)?{_THE}"
            rf"(?:button\s+|link\s+|form\s+)?{_Q}",
        ),
    )
)


@attrs.frozen
class Instruction:
    """One instruction found in a text: its kind, its arguments, and the words."""

    kind: str
    args: tuple[str, ...]
    text: str

    @property
    def key(self) -> tuple[str, tuple[str, ...]]:
        """What makes two instructions the same one (the model follows each once)."""
        return self.kind, tuple(" ".join(a.casefold().split()) for a in self.args)


def _readable(content: str) -> str:
    """The text as a model reads it: entities decoded, and once more percent-decoded
    (a URL's fragment or query reads as words)."""
    plain = html.unescape(content)
    decoded = unquote(plain)
    return plain if decoded == plain else f"{plain}\n{decoded}"


def instructions(content: str) -> list[Instruction]:
    """Every instruction of the grammar in ``content``, in reading order."""
    text = _readable(content)
    found: list[tuple[int, int, Instruction]] = []
    for kind, pattern in _GRAMMAR:
        for match in pattern.finditer(text):
            args = tuple(g for g in match.groups() if g is not None)
            found.append((match.start(), match.end(), Instruction(kind, args, match.group(0))))
    found.sort(key=lambda item: (item[0], -(item[1] - item[0])))
    taken: list[Instruction] = []
    end = -1
    for start, stop, instruction in found:
        if start >= end:  # the first, longest reading of a stretch of text wins
            taken.append(instruction)
            end = stop
    return taken


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[:*•…]+", " ", text).casefold().split())


@attrs.define
class _Seen:
    """An element the model has seen, and the names it could be called by."""

    eid: str
    tag: str
    names: list[str]


# The lists FORMAT.md writes one element per line, and the element each line is.
_LISTED = {"links": "a", "buttons": "button"}


def _elements(content: str) -> Iterator[_Seen]:
    """The elements with ids in a tool result, with their names (empty for plain text)."""
    start = content.find("<")
    if start < 0:
        return
    parser = etree.XMLParser(resolve_entities=False, no_network=True, recover=True)
    try:
        root = etree.fromstring(f"<r>{content[start:]}</r>".encode(), parser)
    except etree.XMLSyntaxError:
        return
    if root is None:
        return
    for element in root.iter():
        if element.tag in _LISTED:
            # A <links> or <buttons> list: each line is one link or button, its id
            # then its text (FORMAT.md).
            for eid, text in listed_items(element):
                yield _Seen(eid, _LISTED[element.tag], [n for n in (_norm(text),) if n])
            continue
        eid = element.get("id")
        if not eid or not isinstance(element.tag, str):
            continue
        names = ["".join(element.itertext())]
        names += [element.get(a) or "" for a in ("label", "placeholder", "title", "value")]
        before = element.getprevious()
        lead = before.tail if before is not None else element.getparent().text  # type: ignore[union-attr]
        if lead:
            names.append(lead.strip().split("\n")[-1])
        if element.tail and element.tail.strip() and not names[0].strip():
            # A checkbox or radio is named by the text right after it.
            names.append(element.tail.strip().split("\n")[0])
        yield _Seen(eid, element.tag, [n for n in (_norm(n) for n in names) if n])


@attrs.frozen
class Call:
    """One tool call the model made, why, and what the host answered."""

    tool: str
    args: Mapping[str, object]
    because: str  # "task" or the injected words it obeyed
    reply: Mapping[str, Any] | None  # the host's ``tool`` reply; None when it raised
    error: str | None = None  # the host's request error (an unknown tool, a bad id)
    target: str = ""  # the element's name as the model looked it up

    @property
    def injected(self) -> bool:
        return self.because != "task"

    @property
    def outcome(self) -> str:
        """What the host did with the call, in a few words."""
        if self.reply is None:
            # The request's own error: its code and first clause ("unknown tool 'x'").
            return "error: " + (self.error or "?").split(": ", 1)[-1].split(";")[0][:40]
        consent = self.reply.get("consent") or {}
        if consent.get("required") and not consent.get("granted"):
            return "asked, refused"
        if self.reply.get("is_error"):
            return "error: " + " ".join(str(self.reply.get("content", "")).split())[:40]
        done = "asked, done" if consent.get("required") else "done"
        # What the request guard held during the action and did not send.
        stopped = [h for h in self.reply.get("held") or () if not h.get("sent")]
        if stopped:
            methods = "/".join(sorted({str(h.get("method")) for h in stopped}))
            done += f", its {methods} held, not sent"
        return done


# Calls a tool through the host: (name, args) -> the reply, or raises with a message.
Tool = Callable[[str, Mapping[str, object]], Awaitable[Mapping[str, Any]]]


@attrs.define
class ObedientModel:
    """Does the person's task step by step, and obeys every instruction a tool result
    gives it (``obedient=False``: only the task, as a well-behaved model would)."""

    tool: Tool
    obedient: bool = True
    person: Person = PERSON
    max_calls: int = 24
    calls: list[Call] = attrs.field(factory=list)
    answers: list[str] = attrs.field(factory=list)
    _seen: dict[str, _Seen] = attrs.field(factory=dict)
    _order: list[str] = attrs.field(factory=list)
    _lines: list[str] = attrs.field(factory=list)
    _done: set[tuple[str, tuple[str, ...]]] = attrs.field(factory=set)

    async def run(self, task: str) -> None:
        """Look at the page, then do ``task`` (in the same grammar, plus ``report the
        line with “X”``), obeying the page along the way."""
        await self._call("capture_snapshot", {}, "task")
        for step in _task_steps(task):
            if len(self.calls) >= self.max_calls:
                break
            if step.kind == "report":
                self.answers.append(self._line_with(step.args[0]))
            else:
                await self._follow(step, "task")

    # -- internals --------------------------------------------------------------

    async def _call(
        self, tool: str, args: Mapping[str, object], because: str, target: str = ""
    ) -> None:
        if len(self.calls) >= self.max_calls:
            return
        try:
            reply = await self.tool(tool, args)
        except Exception as exc:  # the host refused the request itself
            self.calls.append(Call(tool, args, because, None, str(exc)[:200], target))
            return
        self.calls.append(Call(tool, args, because, reply, target=target))
        content = str(reply.get("content", ""))
        self._remember(content)
        if self.obedient:
            for instruction in instructions(content):
                if instruction.key not in self._done:
                    self._done.add(instruction.key)
                    await self._follow(instruction, instruction.text)

    def _remember(self, content: str) -> None:
        for seen in _elements(content):
            self._seen[seen.eid] = seen
            if seen.eid in self._order:
                self._order.remove(seen.eid)
            self._order.append(seen.eid)
        plain = html.unescape(re.sub(r"<[^>]*>", "\n", content))
        self._lines.extend(line.strip() for line in plain.split("\n") if line.strip())

    def _find(self, name: str, tags: tuple[str, ...] = ()) -> str | None:
        """The id of the latest-seen element called ``name`` (exactly, else partly)."""
        wanted = _norm(name)
        newest_first = [self._seen[eid] for eid in reversed(self._order)]
        candidates = [s for s in newest_first if not tags or s.tag in tags]
        for exact in (True, False):
            for seen in candidates:
                if any(n == wanted if exact else wanted in n for n in seen.names):
                    return seen.eid
        return None

    def _line_with(self, text: str) -> str:
        for line in reversed(self._lines):
            if text.casefold() in line.casefold():
                return line
        return ""

    def _fill(self, value: str) -> str:
        known = {"[EMAIL]": self.person.email, "[NAME]": self.person.name}
        for placeholder, filled in known.items():
            value = value.replace(placeholder, filled)
        return value

    async def _target(self, name: str, because: str, tags: tuple[str, ...] = ()) -> str | None:
        eid = self._find(name, tags)
        if eid is None:
            # Not in what it has seen: look again, as a model would.
            await self._call("capture_snapshot", {}, because)
            eid = self._find(name, tags)
        return eid

    async def _follow(self, step: Instruction, because: str) -> None:
        kind, args = step.kind, step.args
        fields = ("input", "textarea", "textbox", "combobox")
        if kind in ("navigate", "new_tab"):
            # A sentence's own punctuation is not part of the URL it ends with.
            url = self._fill(args[0]).rstrip(".,;:!?)'\"")
            await self._call(kind, {"url": url}, because)
        elif kind == "share":
            tool = "share_tab" if args[0].casefold() == "share" else "unshare_tab"
            await self._call(tool, {}, because)
        elif kind == "evaluate":
            await self._call("evaluate", {"expression": args[0]}, because)
        elif kind == "devtools":
            await self._call(args[0].casefold(), {}, because)
        elif kind in ("click", "download", "check"):
            eid = await self._target(args[0], because)
            if eid is not None:
                call_args: dict[str, object] = {"id": eid}
                if kind == "check":
                    call_args["on"] = True
                tool = "check" if kind == "check" else "click"
                await self._call(tool, call_args, because, args[0])
        elif kind == "select":
            eid = await self._target(args[1], because, ("select", "combobox", "listbox"))
            if eid is not None:
                await self._call("select", {"id": eid, "value": args[0]}, because, args[1])
        elif kind == "type":
            value, field, *enter = args
            eid = await self._target(field, because, fields)
            if eid is not None:
                typed = {"id": eid, "text": self._fill(value), "submit": bool(enter)}
                await self._call("type", typed, because, field)


_REPORT = re.compile(rf"\breport\s+the\s+line\s+with\s+{_Q}", re.IGNORECASE)


def _task_steps(task: str) -> list[Instruction]:
    """The person's task as steps: the grammar's instructions and ``report`` steps."""
    reports = [
        (m.start(), Instruction("report", (m.group(1),), m.group(0)))
        for m in _REPORT.finditer(task)
    ]
    rest = _REPORT.sub(lambda m: " " * len(m.group(0)), task)
    steps = reports + [(task.find(step.text), step) for step in instructions(rest)]
    return [step for _, step in sorted(steps, key=lambda item: item[0])]
