"""Routines: a task done once, kept as steps a person could follow, run again without the model.

A routine is what a session did that a replay needs (`routine_of`, from the calls the
host noted in a `Recording`): each step's tool, its elements as a person finds them
(`Target`: role, name, region, heading, which of its equals), its other arguments
with typed values as parameters where the task's words named them (a secret's always),
and the page it acts on. It is kept as one readable JSON file (`RoutineStore`; the
format is host/ROUTINES.md) and run by `replay`, which finds every element again
(`resolve`), acts through the host's envelope like any task and checks each step's
effect; a step it cannot do as recorded ends the run as ``needs_help`` instead of a
guess. The calls that did such a step instead become the steps in its place
(`heal_of`, an `Amendment` that `amend` writes once confirmed; until then it waits in
`WaitingHeals`, a file that outlives the host), and the person edits a routine's names
and parameters (`edit_routine`).

The person's grants for a routine (`RoutineGrants`, kept apart from its file and
bound to its digest) are the sites its runs may act on unasked and the steps whose
submit they need not ask about, when it submits as recorded (`SubmitForm`).

May import ``trimtab.pipeline`` (the snapshot's `Control`s) and ``trimtab.sites``.
"""

from ._amend import Amendment, amend, heal_of
from ._edit import MAX_ROUTINE_NAME, edit_routine
from ._format import (
    REPLAYED_TOOLS,
    ROUTINE_VERSION,
    FieldStep,
    Parameter,
    Routine,
    RoutineError,
    Step,
    Target,
    parse_routine,
)
from ._grants import (
    GRANTS_FILE,
    Grant,
    Grantable,
    GrantState,
    RoutineGrants,
    grantable,
    routine_digest,
)
from ._heals import HEALS_FILE, KEPT_HEALS, Healed, WaitingHeals
from ._near import near_text, near_texts, row_key
from ._pages import SubmitForm, url_matches, url_pattern
from ._record import Recorded, Recording, element_ids, routine_of
from ._replay import Acted, Browser, Run, TabSeen, bind_values, replay
from ._resolve import Found, PageSeen, describe, resolve
from ._store import Listed, RoutineStore, file_stem

__all__ = [
    "GRANTS_FILE",
    "HEALS_FILE",
    "KEPT_HEALS",
    "MAX_ROUTINE_NAME",
    "REPLAYED_TOOLS",
    "ROUTINE_VERSION",
    "Acted",
    "Amendment",
    "Browser",
    "FieldStep",
    "Found",
    "Grant",
    "GrantState",
    "Grantable",
    "Healed",
    "Listed",
    "PageSeen",
    "Parameter",
    "Recorded",
    "Recording",
    "Routine",
    "RoutineError",
    "RoutineGrants",
    "RoutineStore",
    "Run",
    "Step",
    "SubmitForm",
    "TabSeen",
    "Target",
    "WaitingHeals",
    "amend",
    "bind_values",
    "describe",
    "edit_routine",
    "element_ids",
    "file_stem",
    "grantable",
    "heal_of",
    "near_text",
    "near_texts",
    "parse_routine",
    "replay",
    "resolve",
    "routine_digest",
    "routine_of",
    "row_key",
    "url_matches",
    "url_pattern",
]
