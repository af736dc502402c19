"""What a store's URL may show, and whether its ports are ports: read before anything connects.

A URL is parsed before anything connects: a port that is no number from 1 to
65535 (in the URL's authority, or its query's ``port`` and ``host=HOST:PORT``)
is one HistoryError naming it, not a ValueError from the parser or the driver.

A URL is only ever shown through `safe_url` (SQLAlchemy's rendering with the
password hidden, and every secret of its query too), and every message has
every secret scrubbed from it (`scrub`) before it goes into a `HistoryError`:
the password of a URL's authority (``user:PASSWORD@``, up to its last ``@``),
and the value of any parameter whose name holds a secret (SECRET_PARAMETER):
libpq's own (PQconndefaults marks ``password``, ``sslpassword`` and
``oauth_client_secret`` to be hidden, ``scram_client_key`` and
``scram_server_key`` debug only), ``passfile`` (where the passwords are), and
any ``...password``, ``passwd``, ``pwd`` or ``...secret`` whatever its prefix,
in a URL's query (``&sslpassword=...``) and in libpq's ``key=value`` form
(``sslpassword='...'``, quoted or not).
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from sqlalchemy.engine import URL

# the name of a parameter that holds a secret, or says where one is (the module docstring)
SECRET_PARAMETER = r"[\w.-]*?(?:password|passwd|pwd|passfile|secret|scram_client_key|scram_server_key)[\w.-]*"
_SECRET_NAME = re.compile(rf"(?i)^{SECRET_PARAMETER}$")
# a URL's authority: the password runs to the last @ of the word (a password of an unescaped @ or / included)
_CREDENTIALS = re.compile(r"(//[^:/@\s]*:)\S*@")
_PASSWORD_PAIRS = re.compile(rf"""(?i)(?<![\w.-])({SECRET_PARAMETER})(\s*=\s*)('(?:[^'\\]|\\.)*'?|"(?:[^"\\]|\\.)*"?|[^\s&;#'"]*)""")


def scrub(text: str, url: URL | None = None) -> str:
    """``text`` without the password of ``url`` or of any URL written in it, nor any secret parameter's value."""
    text = _CREDENTIALS.sub(r"\1***@", str(text))
    text = _PASSWORD_PAIRS.sub(r"\1\2***", text)
    if url is not None and url.password:
        text = text.replace(str(url.password), "***")
    if url is not None:
        for value in _query_passwords(url):
            text = text.replace(value, "***")
    return text


def _query_passwords(url: URL) -> list[str]:
    """The values of the secret parameters of `url`'s query, longest first (a value inside another is hidden
    with it)."""
    values = [url.query[key] for key in url.query if _SECRET_NAME.match(key)]
    return sorted({v for value in values for v in ([value] if isinstance(value, str) else value) if v},
                  key=len, reverse=True)


def safe_url(url: URL) -> str:
    """The URL as it may be shown: the password as ***, in its user part and every secret of its query."""
    return scrub(url.render_as_string(hide_password=True))


def _port_problem(port) -> str | None:
    """Why `port` (text, as a URL gives it) is no TCP port, or None (empty: libpq's default)."""
    text = str(port).strip()
    if text == "" or (text.isdigit() and text.isascii() and 1 <= int(text) <= 65535):
        return None
    return f"its port {text[:40]!r} is not a number from 1 to 65535"


def _host_ports(hosts: str) -> list[str]:
    """The ports of libpq's ``HOST:PORT,HOST:PORT`` (an IPv6 address in brackets; a socket folder has none)."""
    ports = []
    for host in hosts.split(","):
        if host.startswith("/") or ":" not in host:
            continue
        if host.startswith("["):
            after = host.partition("]")[2]
            if after.startswith(":"):
                ports.append(after[1:])
            continue
        ports.append(host.rpartition(":")[2])
    return ports


def raw_port_problem(text: str) -> str | None:
    """The first bad port of a URL's authority, read from its text (where SQLAlchemy's parser fails on it)."""
    try:
        netloc = urlsplit(text).netloc
    except ValueError:
        return None
    return next((problem for problem in map(_port_problem, _host_ports(netloc.rpartition("@")[2])) if problem), None)


def port_problem(url: URL) -> str | None:
    """The first port of `url` (its authority, its query's port and host) that is none, in words; None."""
    ports = [] if url.port is None else [str(url.port)]
    for key, value in url.query.items():
        values = [value] if isinstance(value, str) else list(value)
        if key == "port":
            ports += [part for item in values for part in item.split(",")]
        elif key == "host":
            ports += [port for item in values for port in _host_ports(item)]
    return next((problem for problem in map(_port_problem, ports) if problem), None)
