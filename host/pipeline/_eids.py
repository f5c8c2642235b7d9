"""Stable element ids (eids): short, and the same for the same element across snapshots.

An eid is a hash of what identifies a control to a person, never of
`backendNodeId`: its role, its accessible name (counters generalised, so
"Inbox (12)" and "Inbox (13)" are one element), its link target, its landmark
path, its frame and shadow-root path, and how it shows (inside a heading, with or
without text); controls alike in all of these add the nearest heading before them
in their region. The same link in a site's shared header therefore gets the same
eid on every page of the site. Two controls with the same identity are told apart
by their rank among alike controls in document order (the n-th one hashes with n),
probing further only on a true hash collision.

Within a document's life an id never moves (`reserved`): the tab remembers which
node each id it issued names, a node that was issued an id keeps it, and an id
issued to a node that still exists is not given to another one, which probes on
as for a collision (the pop-up's OK button does not take the covered form's).

An id costs one token: it is drawn from the strings of two to four lower-case
letters that o200k_base reads as one token and that are no word of their own (the
same letters after a space, in any case, are no token: "qsx", "ixo", "anza"; not
"buy"), 5,110 values. A page with more controls than half of them takes ids of three characters
(a letter then two base-36 digits: 33,696 values, two or three tokens each), and one
with more than 8,000 controls ids of four.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from ._build import ControlFacts
from ._tokens import ascii_tokens

__all__ = ["assign_eids", "identity_key"]

_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"
_LETTERS = "abcdefghijklmnopqrstuvwxyz"
_COUNTER = re.compile(
    r"[(\[{]\s*\d[\d,.]*\+?\s*[)\]}]|\b\d[\d,.]*\+?(?=\s*(?:new|unread|items?)\b)"
)
_LONG_THRESHOLD = 8000


@functools.cache
def _one_token_ids() -> tuple[str, ...]:
    """The one-token ids (see the module's docstring), shortest first, then in the
    vocabulary's order, which never changes."""
    tokens = ascii_tokens()
    words = {token[1:].lower() for token in tokens if token[:1] == " "}
    found = [t for t in tokens if 2 <= len(t) <= 4 and t.isalpha() and t.islower()]
    return tuple(sorted((t for t in found if t not in words), key=len))


def identity_key(facts: ControlFacts, *, with_heading: bool = False) -> str:
    """The text an eid is hashed from.

    The nearest heading only tells apart controls that are otherwise alike (the
    "Add to basket" of each product); a control with a name of its own keeps its
    eid when headings around it come and go.
    """
    name = _COUNTER.sub("#", " ".join(facts.name.lower().split()))
    href = facts.href.split("#", 1)[0] if facts.href.startswith("http") else facts.href
    parts = [
        facts.role,
        name[:200],
        href[:300],
        "/".join(facts.region_path),
        "/".join(facts.scope),
        facts.context,
    ]
    if with_heading:
        parts.append(facts.heading[:120])
    return "\x1f".join(parts)


def _encode(value: int, length: int) -> str:
    if length == 1:
        table = _one_token_ids()
        return table[value % len(table)]
    first = _LETTERS[value % 26]
    value //= 26
    rest = []
    for _ in range(length - 1):
        rest.append(_DIGITS[value % 36])
        value //= 36
    return first + "".join(rest)


def assign_eids(
    all_facts: Iterable[ControlFacts],
    count: int,
    *,
    reserved: Mapping[str, int] | None = None,
    nodes: Sequence[int] = (),
) -> list[str]:
    """Eids for the controls, in the order given (document order).

    `reserved` maps eids issued earlier in this document to the node (backend id)
    each names, for nodes that still exist; `nodes` gives each control's backend id
    (0: none to bind). A control keeps the eid reserved for its node, and no other
    control is given a reserved eid.
    """
    # `length` 1 stands for the one-token ids.
    length = 1 if 2 * count <= len(_one_token_ids()) else 3 if count <= _LONG_THRESHOLD else 4
    facts_list = list(all_facts)
    reserved = reserved or {}
    owned = {node: eid for eid, node in reserved.items()}
    kept = [owned.get(node) if node else None for node in nodes] or [None] * len(facts_list)
    base_keys = [identity_key(f) for f in facts_list]
    repeats = Counter(base_keys)
    taken: set[str] = {eid for eid in kept if eid is not None}
    occurrences: Counter[str] = Counter()
    eids: list[str] = []
    for facts, base, own in zip(facts_list, base_keys, kept, strict=True):
        text = identity_key(facts, with_heading=True) if repeats[base] > 1 else base
        key = text.encode("utf-8", "surrogatepass")
        # The n-th control with the same identity starts probing at n: alike
        # controls (a list of "Add to cart") cost one hash each, not n.
        probe = occurrences[text]
        occurrences[text] += 1
        if own is not None:
            eids.append(own)
            continue
        while True:
            digest = hashlib.blake2b(key + b"\x00" + str(probe).encode(), digest_size=8).digest()
            eid = _encode(int.from_bytes(digest, "big"), length)
            if eid not in taken and eid not in reserved:
                break
            probe += 1
        taken.add(eid)
        eids.append(eid)
    return eids
