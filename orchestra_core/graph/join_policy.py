"""A parallel node's join policy (Attractor 4.8): when its fan-out counts as a success.

Orchestra's policies: `wait_all` (the default: every branch runs to its end; SUCCESS when none failed, else
PARTIAL_SUCCESS), `first_success` (SUCCESS once a branch succeeds, the others cancelled; FAIL when none
does), and the two the spec's earlier text defines, `k_of_n` (at least `k` branches must succeed) and
`quorum` (at least the fraction `quorum_ratio` of the branches must succeed): they let every branch run to
its end and give SUCCESS when enough succeeded, else FAIL. Other runners' spellings that mean one of these
are read as it (`Dialect` says how): `all_success` is `quorum` with `quorum_ratio=1`, `any_success` is
`k_of_n` with `k=1`, and `quorum` with `quorum_count=N` is `k_of_n` with `k=N`. A branch succeeds with
SUCCESS or PARTIAL_SUCCESS.
"""

from __future__ import annotations

import math
from fractions import Fraction

from attrs import frozen

from orchestra_core.model import values
from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.graph import Node

KEY = "join_policy"
POLICIES = ("wait_all", "first_success", "k_of_n", "quorum")
DIALECTS = ("all_success", "any_success")
K_KEY = "k"
RATIO_KEY = "quorum_ratio"
COUNT_KEY = "quorum_count"  # another runner's `quorum` with a number of branches


class JoinPolicyError(OrchestraError):
    """A parallel node's join policy cannot be honoured as written (validation reports it before a run)."""


@frozen
class JoinPolicy:
    """A join policy in Orchestra's terms.

    Attributes:
        name: One of POLICIES.
        k: The successes `k_of_n` needs.
        ratio: The fraction of the branches `quorum` needs to succeed, in (0, 1].
        dialect: How another runner's spelling was read (None when the file uses Orchestra's).
    """

    name: str
    k: int | None = None
    ratio: Fraction | None = None
    dialect: str | None = None

    def needed(self, branches: int) -> int | None:
        """The successes `k_of_n` and `quorum` need out of `branches`; None for the other policies."""
        if self.k is not None:
            return self.k
        if self.ratio is not None:
            return max(math.ceil(self.ratio * branches), 1)
        return None

    def spelled(self) -> str:
        """The policy as Orchestra writes it: `join_policy=k_of_n, k=2`."""
        if self.k is not None:
            return f"{KEY}={self.name}, {K_KEY}={self.k}"
        if self.ratio is not None:
            return f"{KEY}={self.name}, {RATIO_KEY}={_ratio_text(self.ratio)}"
        return f"{KEY}={self.name}"


def join_policy(node: Node) -> JoinPolicy:
    """The node's join policy (`wait_all` when unset).

    Raises:
        JoinPolicyError: Not a policy Orchestra knows or reads, or its `k` / `quorum_ratio` is missing or wrong.
    """
    written = node.attrs.get(KEY, "").strip()
    if written in ("", "wait_all", "first_success"):
        return JoinPolicy(written or "wait_all")
    if written == "k_of_n":
        return JoinPolicy("k_of_n", k=_k(node, K_KEY, "join_policy=k_of_n needs k, the branches that must succeed"))
    if written == "quorum":
        return _quorum(node)
    if written == "all_success":
        return JoinPolicy("quorum", ratio=Fraction(1), dialect=_dialect(written, "every branch must succeed"))
    if written == "any_success":
        return JoinPolicy("k_of_n", k=1, dialect=_dialect(written, "at least one branch must succeed"))
    known = ", ".join((*POLICIES, *DIALECTS))
    raise JoinPolicyError(f"{KEY}={written!r} is not a join policy Orchestra knows ({known})")


def _quorum(node: Node) -> JoinPolicy:
    ratio_text = node.attrs.get(RATIO_KEY, "").strip()
    if ratio_text:
        return JoinPolicy("quorum", ratio=_ratio(ratio_text))
    if node.attrs.get(COUNT_KEY, "").strip():
        k = _k(node, COUNT_KEY, "")
        reading = f"{KEY}=k_of_n, {K_KEY}={k}"
        return JoinPolicy("k_of_n", k=k, dialect=f"{KEY}=quorum with {COUNT_KEY}={k} is read as {reading}")
    raise JoinPolicyError(
        f"{KEY}=quorum needs {RATIO_KEY}, the fraction of the branches that must succeed (0.5 for half); "
        f"Orchestra does not guess a majority"
    )


def _k(node: Node, key: str, missing: str) -> int:
    raw = node.attrs.get(key, "").strip()
    if not raw:
        raise JoinPolicyError(missing)
    try:
        k = values.parse_int(raw)
    except ValueError:
        k = 0
    if k < 1:
        raise JoinPolicyError(f"{key}={raw!r} is not a whole number of 1 or more")
    return k


def _ratio(text: str) -> Fraction:
    try:
        ratio = values.parse_number(text)
    except ValueError:
        ratio = Fraction(0)
    if not 0 < ratio <= 1:
        raise JoinPolicyError(f"{RATIO_KEY}={text!r} is not a fraction of the branches above 0 and at most 1")
    return ratio


def _ratio_text(ratio: Fraction) -> str:
    return str(ratio.numerator) if ratio.denominator == 1 else str(float(ratio))


def _dialect(written: str, meaning: str) -> str:
    policy = JoinPolicy("quorum", ratio=Fraction(1)) if written == "all_success" else JoinPolicy("k_of_n", k=1)
    return f"{KEY}={written} is read as {policy.spelled()} ({meaning})"
