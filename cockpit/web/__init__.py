"""The browser head: ``cockpit web`` serves the same TUI to a browser through textual-serve.

* :mod:`cockpit.web.access`: the access token, and the guard every request passes;
* :mod:`cockpit.web.server`: the textual-serve server, one TUI process per browser session;
* :mod:`cockpit.web.poller`: the one poller the sessions follow, when no site poller does;
* :mod:`cockpit.web.session`: a browser session's TUI (``python -m cockpit.web.session``).

Nothing here is imported by the TUI: textual-serve (the ``web`` extra) is needed only here.
"""
