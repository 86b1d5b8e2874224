"""The master's web console (/ui): server-rendered pages over `MasterView`,
with the management API's token, sessions and CSRF-checked forms."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiohttp import web

from nadird.master.console.app import ConsoleApp, owns
from nadird.master.console.history_pages import HistoryPages
from nadird.master.console.pages import Pages

if TYPE_CHECKING:
    from nadird.master.view.view import MasterView

__all__ = ["ConsoleApp", "owns", "register"]


def register(app: web.Application, master: MasterView, token: str) -> ConsoleApp:
    """Add the console's routes to the API's application."""
    console = ConsoleApp(master, token)
    console.add_routes(app)
    Pages(console).add_routes(app)
    HistoryPages(console).add_routes(app)
    return console
