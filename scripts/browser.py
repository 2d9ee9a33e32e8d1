"""A headless Chromium driven over the DevTools protocol (aiohttp's websocket, no new dependency).

The MLflow UI keeps its view state (expanded parent runs, chart filters, side panels) in the
browser, not in the URL, so a screenshot of the comparison needs clicks and typing, not only
``chromium --screenshot``.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

WIDTH = 1280


class Browser:
    """One headless Chromium with one page; ``async with Browser(path) as b: ...``."""

    def __init__(self, chromium: str, height: int = 900) -> None:
        self.chromium, self.height = chromium, height
        self._ids = itertools.count(1)

    async def __aenter__(self) -> Browser:
        self._dir = tempfile.TemporaryDirectory(prefix="shots-chromium-")
        profile = Path(self._dir.name)
        self._proc = subprocess.Popen(
            [
                self.chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--hide-scrollbars",
                "--remote-debugging-port=0",  # Chromium picks a free port and writes it below
                f"--user-data-dir={profile}",
                f"--window-size={WIDTH},{self.height}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # its renderer and GPU processes go with it
        )
        try:
            port = _wait_for_port(profile / "DevToolsActivePort", self._proc)
            self._http = aiohttp.ClientSession()
            async with self._http.get(f"http://127.0.0.1:{port}/json/list") as resp:
                pages = [t for t in await resp.json() if t["type"] == "page"]
            self._ws = await self._http.ws_connect(pages[0]["webSocketDebuggerUrl"], max_msg_size=0)
        except BaseException:
            await self.__aexit__()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        if getattr(self, "_http", None) is not None:
            await self._http.close()
        stop_group(self._proc)
        self._dir.cleanup()

    async def call(self, method: str, **params: Any) -> dict:
        """Send one DevTools command and return its result (events in between are dropped)."""
        msg_id = next(self._ids)
        await self._ws.send_str(json.dumps({"id": msg_id, "method": method, "params": params}))
        while True:
            msg = json.loads((await self._ws.receive()).data)
            if msg.get("id") == msg_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error'].get('message')}")
                return msg.get("result", {})

    async def js(self, expression: str) -> Any:
        """Evaluate ``expression`` in the page (awaiting a promise) and return its JSON value."""
        out = await self.call(
            "Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True
        )
        if "exceptionDetails" in out:
            detail = out["exceptionDetails"]
            why = detail.get("exception", {}).get("description", detail.get("text", ""))
            raise RuntimeError(f"page script failed: {why.splitlines()[0]}")
        return out["result"].get("value")

    async def open(self, url: str, height: int | None = None) -> None:
        await self.call(
            "Emulation.setDeviceMetricsOverride",
            width=WIDTH,
            height=height or self.height,
            deviceScaleFactor=1,
            mobile=False,
        )
        await self.call("Page.navigate", url=url)

    async def drag(self, start: tuple[float, float], end: tuple[float, float]) -> None:
        """Press the left button at ``start``, move to ``end`` and release (e.g. a splitter)."""
        for kind, (x, y) in (("mousePressed", start), ("mouseMoved", end), ("mouseReleased", end)):
            await self.call(
                "Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1
            )

    async def wait_for(self, expression: str, what: str, timeout: float = 60.0) -> Any:
        """Poll ``expression`` until it is truthy: the React UI renders after the load event."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            # Before the page has a body, or while React swaps it, the check may throw.
            guarded = f"(() => {{ try {{ return ({expression}); }} catch {{ return null; }} }})()"
            value = await self.js(guarded)
            if value:
                return value
            await asyncio.sleep(0.5)
        raise RuntimeError(f"the page did not show {what} within {timeout:.0f} s")

    async def screenshot(self, path: Path, height: int) -> None:
        """Save the top ``height`` px of the page at 1280 px wide as PNG."""
        clip = {"x": 0, "y": 0, "width": WIDTH, "height": height, "scale": 1}
        out = await self.call(
            "Page.captureScreenshot", format="png", clip=clip, captureBeyondViewport=True
        )
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(out["data"]))


def _wait_for_port(marker: Path, proc: subprocess.Popen, timeout: float = 30.0) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"chromium exited with code {proc.returncode} before it listened")
        if marker.is_file() and marker.read_text().strip():
            return int(marker.read_text().split()[0])
        time.sleep(0.2)
    raise RuntimeError(f"chromium did not open its DevTools port within {timeout:.0f} s")


def stop_group(proc: subprocess.Popen, grace: float = 15.0) -> None:
    """End a process started with ``start_new_session=True`` and all it started: TERM, then KILL."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if proc.poll() is not None:
            return
        os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            continue
