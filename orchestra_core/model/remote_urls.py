"""Remote URLs as they may be shown: the secret part of `scheme://user:secret@host/...` is never kept."""

from __future__ import annotations

import re

# scheme://userinfo@ : the userinfo ends at the last '@' before the path (a password may hold '@' or ':').
_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^/?#\s]*)@")
REDACTED = "***"


def redact_url(url: str) -> str:
    """The URL with the password of its userinfo replaced by `***`.

    `https://bob:s3cret@host/r.git` -> `https://bob:***@host/r.git`; a token given as the user alone
    over http(s) (`https://ghp_x@host/r.git`, as GitHub tokens are) is replaced too, since it is the secret.
    An ssh user (`ssh://git@host/r.git`, `git@host:r.git`) and local URLs are no secret and stay.
    """
    def _strip(match: re.Match[str]) -> str:
        user, sep, _password = match.group("userinfo").partition(":")
        if sep:
            return f"{match.group('scheme')}{user}:{REDACTED}@"
        if user and match.group("scheme").lower().startswith("http"):
            return f"{match.group('scheme')}{REDACTED}@"
        return match.group(0)

    return _USERINFO.sub(_strip, url)


def redact_text(text: str, *urls: str) -> str:
    """Text (a git error, a message) with every URL's secret removed: the URLs given are replaced by their
    redacted form, and any other `scheme://user:pass@` found in the text is redacted too."""
    for url in urls:
        if url and url != redact_url(url):
            text = text.replace(url, redact_url(url))
    return redact_url(text)


__all__ = ["REDACTED", "redact_text", "redact_url"]
