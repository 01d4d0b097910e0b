"""One line of `orchestra doctor`'s report."""

from __future__ import annotations

from attrs import frozen

OK, WARNING, ERROR = "ok", "warning", "error"


@frozen
class Check:
    """One line of the report: what was checked, how it went, and a one-line detail."""

    name: str
    status: str
    detail: str

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "status": self.status, "detail": self.detail}
