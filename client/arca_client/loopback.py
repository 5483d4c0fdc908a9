"""Who may use an HTTP server on 127.0.0.1: the rules the console proxy and the local Arca server share.

Any page open in the user's browser can send requests to a port on this machine. Two rules keep such pages out:
the Host header must name the server itself (`127.0.0.1:<port>` or `localhost:<port>`), so a name that a DNS
rebinding attack points at 127.0.0.1 is refused; and an Origin header, which browsers send on cross-origin
requests and on every write, must be the server's own. Command-line clients send neither a foreign Host nor an
Origin, so they are not affected.
"""

from __future__ import annotations

HOST = "127.0.0.1"


def own_hosts(port: int) -> frozenset[str]:
    """The Host headers that name the server listening on `port` of 127.0.0.1."""
    return frozenset({f"{HOST}:{port}", f"localhost:{port}"})


def refusal(host: str | None, origin: str | None, port: int, *, server: str) -> str | None:
    """Why a request with these Host and Origin headers must be refused (a 403), or None to serve it.

    `server` names the server in the message (`the console proxy`, `the local Arca server`).
    """
    hosts = own_hosts(port)
    if (host or "").lower() not in hosts:
        return f"{server} answers only to its own address (Host {' or '.join(sorted(hosts))})"
    if origin is not None and origin.lower() not in {f"http://{name}" for name in hosts}:
        return f"{server} refuses requests from pages of {origin}"
    return None
