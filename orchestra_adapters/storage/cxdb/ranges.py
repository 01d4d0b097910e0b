"""Forward ranges of a context's history in the CXDB store (`TurnRangeReader.turns_after`).

CXDB reads a context only backwards, from its head or from before a turn (GET_LAST, `/turns?before_turn_id`);
it has no forward or by-depth read (GET_RANGE_BY_DEPTH is declared but not handled, PROTOCOL.md 2.1). A range
near the head (tailing a running session) is one page read with its payloads. A range further back walks the
chain from there down to the range's start in pages of ids alone (the envelope view: no payload read or sent),
keeping the oldest `limit + 1` ids, then reads those `limit` turns with their payloads in one page: the walk grows
with how far the range lies from the head, the payloads read do not.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection

from orchestra_adapters.storage.cxdb.envelope import TurnFacts
from orchestra_adapters.storage.cxdb.reader import CxdbReader
from orchestra_core.model.store_errors import StoreError, TurnNotFoundError

WALK_PAGE = 1024  # ids per page of the walk back (the envelope view: about 150 bytes a turn)


def facts_after(reader: CxdbReader, context: int, floor: int, limit: int) -> tuple[list[TurnFacts], bool]:
    """The first `limit` (at least 1) turns of the context's history with ids above `floor` (-1: from the root),
    oldest first, and whether more follow.

    Raises:
        TurnNotFoundError: `floor` names no turn of the server.
    """
    first = reader.page(context, limit + 1, None)  # ids grow along the chain: those above floor end the page
    after = [facts for facts in first if facts.turn_id > floor]
    if len(after) < len(first) or not first or first[0].parent_turn_id == 0:
        _check_floor(reader, context, floor, seen=[facts.turn_id for facts in first])
        return after[:limit], len(after) > limit
    window: deque[int] = deque((facts.turn_id for facts in reversed(first)), maxlen=limit + 1)
    before, walking, met_floor = first[0].turn_id, True, False
    while walking:
        links = reader.links(context, WALK_PAGE, before)
        walking = bool(links)
        for turn_id, parent_id in reversed(links):
            if turn_id <= floor:
                walking, met_floor = False, turn_id == floor
                break
            window.append(turn_id)
            walking = parent_id != 0
        before = links[0][0] if links else before
    if not met_floor:
        _check_floor(reader, context, floor, seen=())
    oldest_first = list(reversed(window))
    return _with_payloads(reader, context, oldest_first[:limit], oldest_first[limit], first), True


def _with_payloads(
    reader: CxdbReader, context: int, wanted: list[int], next_id: int, first: list[TurnFacts]
) -> list[TurnFacts]:
    """The turns `wanted` (oldest first, the turns just before `next_id`) with their payloads, read in one page."""
    known = {facts.turn_id: facts for facts in first}
    if all(turn_id in known for turn_id in wanted):
        return [known[turn_id] for turn_id in wanted]
    page = reader.page(context, len(wanted), next_id)
    if [facts.turn_id for facts in page] != wanted:
        raise StoreError(f"{reader.location}: session {context}: turns before {next_id} changed while read")
    return page


def _check_floor(reader: CxdbReader, context: int, floor: int, *, seen: Collection[int]) -> None:
    """Raise TurnNotFoundError unless `floor` (-1: none) is a turn of the server (one the walk saw, or one read)."""
    if floor < 0 or floor in seen:
        return
    if not reader.exists(context, floor):
        raise TurnNotFoundError(f"no turn {floor} in {reader.location}")
