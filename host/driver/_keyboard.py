"""The keyboard: key names, modifiers, and a key pressed as the keyboard sends it."""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from pycdp_bridge import Target
from pycdp_bridge import protocol as cdp

__all__ = ["KEY_NAMES", "MODIFIER_BITS", "KeyDef", "key_press", "parse_key"]

MODIFIER_BITS: Mapping[str, int] = {"Alt": 1, "Control": 2, "Meta": 4, "Shift": 8}


@attrs.frozen
class KeyDef:
    """What ``Input.dispatchKeyEvent`` needs for one key."""

    key: str
    code: str
    key_code: int
    text: str | None = None


_NAMED_KEYS: Mapping[str, KeyDef] = {
    k.key: k
    for k in (
        KeyDef("Enter", "Enter", 13, "\r"),
        KeyDef("Tab", "Tab", 9),
        KeyDef("Escape", "Escape", 27),
        KeyDef("Backspace", "Backspace", 8),
        KeyDef("Delete", "Delete", 46),
        KeyDef("ArrowUp", "ArrowUp", 38),
        KeyDef("ArrowDown", "ArrowDown", 40),
        KeyDef("ArrowLeft", "ArrowLeft", 37),
        KeyDef("ArrowRight", "ArrowRight", 39),
        KeyDef("Home", "Home", 36),
        KeyDef("End", "End", 35),
        KeyDef("PageUp", "PageUp", 33),
        KeyDef("PageDown", "PageDown", 34),
        KeyDef(" ", "Space", 32, " "),
    )
}
_KEY_ALIASES = {
    # Every spelling of Enter is Enter: the consent check must see each of them.
    "Return": "Enter",
    "\r": "Enter",
    "\n": "Enter",
    "\r\n": "Enter",
    "Esc": "Escape",
    "Space": " ",
    "Up": "ArrowUp",
    "Down": "ArrowDown",
    "Left": "ArrowLeft",
    "Right": "ArrowRight",
}
_PUNCTUATION_CODES = {
    ";": ("Semicolon", 186),
    "=": ("Equal", 187),
    ",": ("Comma", 188),
    "-": ("Minus", 189),
    ".": ("Period", 190),
    "/": ("Slash", 191),
    "`": ("Backquote", 192),
    "[": ("BracketLeft", 219),
    "\\": ("Backslash", 220),
    "]": ("BracketRight", 221),
    "'": ("Quote", 222),
}
KEY_NAMES = (*_NAMED_KEYS, *_KEY_ALIASES, "NumpadEnter")


def parse_key(key: object) -> KeyDef:
    """The key definition for a key name or a single character; ValueError otherwise."""
    if not isinstance(key, str) or not key:
        raise ValueError(f"key must be a key name like 'Enter' or one character; got {key!r}")
    name = _KEY_ALIASES.get(key, key)
    if name == "NumpadEnter":
        return KeyDef("Enter", "NumpadEnter", 13, "\r")
    if name in _NAMED_KEYS:
        return _NAMED_KEYS[name]
    if len(name) != 1:
        named = ", ".join(k for k in _NAMED_KEYS if k != " ")
        raise ValueError(f"unknown key {key!r}: use one character or one of {named}, Space")
    if name.isascii() and name.isalpha():
        return KeyDef(name, f"Key{name.upper()}", ord(name.upper()), name)
    if name.isdigit() and name.isascii():
        return KeyDef(name, f"Digit{name}", ord(name), name)
    code, key_code = _PUNCTUATION_CODES.get(name, ("", 0))
    return KeyDef(name, code, key_code, name)


async def key_press(target: Target, key: KeyDef, modifiers: int = 0) -> None:
    """Press and release one key, as the keyboard would send it."""
    # With Control, Alt or Meta held a key types no text (it is a shortcut).
    text = key.text if not modifiers & ~MODIFIER_BITS["Shift"] else None
    if text is not None and modifiers & MODIFIER_BITS["Shift"] and len(text) == 1:
        text = text.upper()
    await target.execute(
        cdp.input_dispatch_key_event(
            "keyDown" if text else "rawKeyDown",
            key=key.key,
            code=key.code or None,
            text=text,
            windows_virtual_key_code=key.key_code or None,
            modifiers=modifiers,
        )
    )
    await target.execute(
        cdp.input_dispatch_key_event(
            "keyUp",
            key=key.key,
            code=key.code or None,
            windows_virtual_key_code=key.key_code or None,
            modifiers=modifiers,
        )
    )
