"""A small driver of headless Chromium for the HTML report's tests: Chrome's DevTools protocol over
``--remote-debugging-pipe`` (file descriptors 3 and 4, messages ended by NUL), standard library only.

No package downloads a browser here: the system's Chromium (Debian's ``chromium``) is used, found
at ``/usr/bin/chromium`` or on PATH, or skipped with the reason.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

#: The flags of a quiet, offline, throw-away browser.
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--hide-scrollbars", "--mute-audio", "--remote-debugging-pipe")


def find_chromium() -> str | None:
    """The Chromium executable, or None."""
    for name in ("/usr/bin/chromium", "chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


class Browser:
    """One headless Chromium and one page in it. ``errors`` collects the page's console errors and
    uncaught exceptions since the last :meth:`open`."""

    def __init__(self, executable: str, *, width: int = 1280, height: int = 900) -> None:
        self.profile = tempfile.mkdtemp(prefix="chromium-profile-")
        ours_read, theirs_write = os.pipe()  # Chromium writes fd 4 -> we read
        theirs_read, ours_write = os.pipe()  # we write -> Chromium reads fd 3

        def descriptors() -> None:  # in the child: the two ends at 3 and 4, where Chromium looks
            read_end, write_end = os.dup(theirs_read), os.dup(theirs_write)
            os.dup2(read_end, 3)
            os.dup2(write_end, 4)

        self.process = subprocess.Popen(
            [executable, *FLAGS, f"--user-data-dir={self.profile}", f"--window-size={width},{height}", "about:blank"],
            # preexec_fn: the only way to put the pipe's ends at 3 and 4 in the child; it only duplicates descriptors
            preexec_fn=descriptors, close_fds=False,  # noqa: PLW1509 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        os.close(theirs_read)
        os.close(theirs_write)
        self._out = os.fdopen(ours_write, "wb", buffering=0)
        self._in = os.fdopen(ours_read, "rb", buffering=0)
        self._buffer = b""
        self._next = 0
        self.errors: list[str] = []
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page.enable", "Runtime.enable", "Log.enable"):
            self.call(domain, session=True)
        self.call("Emulation.setDeviceMetricsOverride", session=True, width=width, height=height,
                  deviceScaleFactor=1, mobile=False)

    # ------------------------------------------------------------------ the protocol
    def call(self, method: str, *, session: bool = False, timeout: float = 30.0, **params: Any) -> Any:
        """Send one command and wait for its answer (events that arrive meanwhile are looked at)."""
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        self._out.write(json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._receive(deadline)
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self._event(reply)

    def _receive(self, deadline: float) -> dict[str, Any]:
        import select

        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._in], [], [], left)[0]:
                raise TimeoutError("Chromium did not answer in time")
            chunk = self._in.read(1 << 20)
            if not chunk:
                raise RuntimeError("Chromium closed the connection")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(message)  # type: ignore[no-any-return]

    def _event(self, event: dict[str, Any]) -> None:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            self.errors.append(details.get("exception", {}).get("description") or details.get("text", "exception"))
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            self.errors.append(" ".join(str(a.get("value", a.get("description"))) for a in params.get("args", [])))
        elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
            self.errors.append(params["entry"].get("text", "error"))

    # ------------------------------------------------------------------ what tests use
    def open(self, path: str | os.PathLike[str]) -> float:
        """Load a file and wait until its script has run (``body[data-ready]``); returns the seconds taken."""
        self.errors = []
        start = time.monotonic()
        self.call("Page.navigate", session=True, url=Path(path).resolve().as_uri())
        while not self.evaluate("document.readyState === 'complete' && document.body.dataset.ready === '1'"):
            if time.monotonic() - start > 30:
                raise TimeoutError(f"the page did not finish loading; errors: {self.errors}")
            time.sleep(0.02)
        return time.monotonic() - start

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (by value: JSON-like results)."""
        result = self.call("Runtime.evaluate", session=True, expression=expression, returnByValue=True,
                           awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression[:80]}: {result['exceptionDetails'].get('text')}")
        return result["result"].get("value")

    def screenshot(self, path: str | os.PathLike[str], *, full_page: bool = False) -> bytes:
        """A PNG of the viewport (or the whole page) written to ``path``; returns its bytes."""
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            params["captureBeyondViewport"] = True
            size = self.call("Page.getLayoutMetrics", session=True)["cssContentSize"]
            params["clip"] = {"x": 0, "y": 0, "width": size["width"], "height": min(size["height"], 6000), "scale": 1}
        data = base64.b64decode(self.call("Page.captureScreenshot", session=True, **params)["data"])
        Path(path).write_bytes(data)
        return data

    def close(self) -> None:
        try:
            self.call("Browser.close", timeout=5)
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for stream in (self._out, self._in):
            stream.close()
        shutil.rmtree(self.profile, ignore_errors=True)
