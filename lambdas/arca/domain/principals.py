"""Principals: who a caller is, as approvals and `allowed_principals` compare callers. Pure, no I/O.

API Gateway reports a caller's identity as an ARN that spells more than who the caller is. An assumed role's ARN
ends with a session name, which whoever assumes the role chooses (`…:assumed-role/deployer/ci-run-1` and
`…/ci-run-1-approve` are one role, so one principal); a direct invocation is recorded as `direct:<the invoked
function's ARN>`, which carries the qualifier it was invoked through (`:live`, a version number) or none.
`principal` drops both, and it is the one place that does: approvals, the requester check and every glob compare
principals, never spellings.

`allowed_principals` globs are ARN patterns (or a lone `*`, anyone), canonicalised by the same function: a glob
over every session of a role (`…:assumed-role/deployer/*`) is the role; a glob naming particular sessions
(`…:assumed-role/deployer/ci-*`) is refused when written, since a session name names nobody.
"""

from __future__ import annotations

import re

ANYONE = "*"
_SESSION = re.compile(r"^(?P<role>arn:[^:]*:sts:[^:]*:[^:]*:assumed-role/[^/]+)/(?P<session>.+)$")
_QUALIFIED = re.compile(r"^(?P<function>direct:arn:[^:]*:lambda:[^:]*:[^:]*:function:[^:]+):[^:]+$")
_ARN = re.compile(
    r"^(?P<direct>direct:)?(?P<arn>arn):(?P<partition>[^:]*):(?P<service>[^:]*):(?P<region>[^:]*):"
    r"(?P<account>[^:]*):(?P<resource>.*)$",
    re.IGNORECASE,
)
_LOWER = re.compile(r"^[a-z0-9*-]+$")
_REGION = re.compile(r"^[a-z0-9*-]*$")
_ACCOUNT = re.compile(r"^[0-9*]*$")
# IAM's characters of names and paths (`+=,.@_-`, letters, digits), the separators `/` and `:`, and `*`.
_RESOURCE = re.compile(r"^[A-Za-z0-9+=,.@_/:*-]+$")


def principal(identity: str | None) -> str | None:
    """The principal `identity` is: an assumed role's session is the role (`arn:aws:sts::1:assumed-role/r/s` is
    `arn:aws:sts::1:assumed-role/r`), a direct invocation is its function without qualifier; any other identity
    is itself. None stays None (no identity is no principal)."""
    if identity is None:
        return None
    session = _SESSION.match(identity)
    if session:
        return session["role"]
    qualified = _QUALIFIED.match(identity)
    return qualified["function"] if qualified else identity


def _segment_pattern(glob: str) -> re.Pattern[str]:
    """`*` is any run of characters within one segment (segments are separated by `:` and `/`)."""
    return re.compile("[^:/]*".join(re.escape(part) for part in glob.split("*")))


def matches(glob: str, identity: str | None) -> bool:
    """Whether the principal of `identity` matches `glob`, itself read as the principal it spells (so a glob
    stored before globs were checked, such as one naming sessions of a role, means the role). A lone `*` is
    anyone, an anonymous caller too."""
    pattern = principal(glob)
    if pattern == ANYONE:
        return True
    who = principal(identity)
    return who is not None and pattern is not None and _segment_pattern(pattern).fullmatch(who) is not None


def check_glob(glob: str) -> str:
    """`glob` as stored: a lone `*`, or an ARN pattern (optionally `direct:` before it) in its canonical form (a
    role's `/*` sessions are the role, a direct function's qualifier is dropped).

    Raises ValueError saying what is wrong: whitespace or a control character, an upper-case `arn`, partition or
    service, an account that is not digits, a character IAM never puts in a name, an empty segment or a trailing
    `/` or `:` (each a spelling no caller has, so the glob would match nobody), or a glob naming some sessions of a
    role.
    """
    if glob == ANYONE:
        return glob
    if any(c.isspace() or ord(c) < 0x20 or ord(c) == 0x7F for c in glob):
        raise ValueError("holds whitespace or a control character; write the ARN pattern alone")
    found = _ARN.match(glob)
    if found is None:
        raise ValueError(
            "must be an ARN pattern (arn:partition:service:region:account:resource, `*` within one segment) "
            "or a lone `*` for anyone"
        )
    for part in ("arn", "partition", "service"):
        if not _LOWER.match(found[part]) or found[part] != found[part].lower():
            raise ValueError(f"the ARN's {part} must be lower case (as every caller's ARN spells it)")
    if found["direct"] and found["direct"] != "direct:":
        raise ValueError("write direct: in lower case")
    if not _REGION.match(found["region"]):
        raise ValueError("the ARN's region must be lower case")
    if not _ACCOUNT.match(found["account"]):
        raise ValueError("the ARN's account must be digits (or `*`)")
    resource = found["resource"]
    if not resource:
        raise ValueError("the ARN has no resource (user/…, assumed-role/…, function:…)")
    if not _RESOURCE.match(resource):
        raise ValueError("the ARN's resource holds a character no IAM name has")
    if resource.endswith(("/", ":")) or "//" in resource or "::" in resource:
        raise ValueError("has an empty segment (a trailing or doubled `/` or `:`), which no caller's ARN has")
    session = _SESSION.match(glob)
    if session and session["session"] != ANYONE:
        raise ValueError(
            "names sessions of an assumed role, but whoever assumes a role chooses its session name, so it names "
            f"nobody: allow the role ({session['role']}), whose every session is one principal"
        )
    canonical = principal(glob)
    assert canonical is not None
    return canonical
