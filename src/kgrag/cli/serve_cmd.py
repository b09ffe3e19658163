"""``kgrag serve``: the HTTP server (docs/server.md).

    kgrag serve [--workdir W] [--host H] [--port P] [--accounts-file F]
    kgrag serve --add-account USER --workspaces a,b [--accounts-file F]

With no API key and no accounts the server is open, so it listens on
loopback only and says so; a non-loopback ``--host`` then refuses to start
(exit 2). ``--add-account`` writes an account to the accounts file (the
password is asked twice on a terminal, else read from one line of stdin)
and exits.
"""

from __future__ import annotations

import argparse
import contextlib
import getpass
import ipaddress
import signal
import sys
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from kgrag.errors import ConfigError

if TYPE_CHECKING:
    import uvicorn

    from kgrag.cli.args import Subcommands
    from kgrag.config.settings import Settings

LOOPBACK_NAMES = frozenset({"localhost"})


def add_parser(sub: Subcommands) -> None:
    p = sub.add_parser("serve", help="serve the index over HTTP (LightRAG-compatible API)")
    p.add_argument("--workdir", help="index folder (default: $KGRAG_WORKDIR or ./kgrag_data)")
    p.add_argument("--host", help="address to listen on (default: $KGRAG_HOST or 127.0.0.1)")
    p.add_argument("--port", type=int, help="port to listen on (default: $KGRAG_PORT or 9621)")
    p.add_argument("--accounts-file", help="accounts JSON file ($KGRAG_ACCOUNTS_FILE)")
    p.add_argument("--add-account", metavar="USER", help="add or replace an account, then exit")
    p.add_argument(
        "--workspaces",
        default="*",
        help="with --add-account: the workspaces it may use, comma-separated (default: *)",
    )


def overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The settings ``serve``'s own flags set."""
    given = {"host": args.host, "port": args.port, "accounts_file": args.accounts_file}
    return {name: value for name, value in given.items() if value is not None}


def is_loopback(host: str) -> bool:
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


async def run(args: argparse.Namespace, settings: Settings) -> int:
    settings = settings.with_overrides(**overrides(args))
    if args.add_account:
        return _add_account(args, settings)
    try:
        import uvicorn

        from kgrag.server.app import ServerOptions, create_app
    except ImportError as exc:
        raise ConfigError(f"kgrag serve needs pip install 'kgrag[server]' ({exc.name})") from None
    options = ServerOptions.from_settings(settings)
    check_exposure(settings.server.host, options.auth is not None)
    config = uvicorn.Config(
        create_app(options),
        host=settings.server.host,
        port=settings.server.port,
        server_header=False,
    )
    await _server_class()(config).serve()
    return 0


def _server_class() -> type[uvicorn.Server]:
    """uvicorn's server, where Ctrl-C or SIGTERM is a clean stop (exit 0), not re-raised."""
    import uvicorn

    class Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            stops = (signal.SIGINT, signal.SIGTERM)
            previous = {sig: signal.signal(sig, self.handle_exit) for sig in stops}
            try:
                yield
            finally:
                for sig, handler in previous.items():
                    signal.signal(sig, handler)

    return Server


def check_exposure(host: str, auth_on: bool) -> None:
    """Refuse an open server on a non-loopback address; say when it is open on loopback."""
    if auth_on:
        return
    if not is_loopback(host):
        raise ConfigError(
            f"refusing to listen on {host} without auth: set KGRAG_API_KEY, KGRAG_API_KEYS "
            "or accounts (docs/server.md)"
        )
    print(
        "kgrag: no API key or accounts configured: open to anyone on this machine, "
        "listening on loopback only",
        file=sys.stderr,
    )


def _add_account(args: argparse.Namespace, settings: Settings) -> int:
    from kgrag.server.access.accounts import add_account

    if settings.server.accounts_file is None:
        raise ConfigError("--add-account needs --accounts-file or KGRAG_ACCOUNTS_FILE")
    spaces = [s.strip() for s in args.workspaces.split(",") if s.strip()]
    add_account(settings.server.accounts_file, args.add_account, _password(), spaces)
    print(
        f"account {args.add_account} saved in {settings.server.accounts_file}",
        file=sys.stderr,
    )
    return 0


def _password() -> str:
    if not sys.stdin.isatty():
        return sys.stdin.readline().rstrip("\r\n")
    first = getpass.getpass("password: ")
    if getpass.getpass("again: ") != first:
        raise ConfigError("the two passwords differ")
    return first
