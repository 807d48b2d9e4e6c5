"""Chromium for browser-level tests of the Airflow pages (a real Airflow: ``harness.airflow_server``)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import struct
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from harness.airflow_server import stop_process_tree
from harness.ports import free_port

# --------------------------------------------------------------------------- Chromium


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return "/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else None


CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--window-size=1280,1600",
)


@dataclass(frozen=True)
class Chromium:
    """Headless Chromium driven over the DevTools protocol, so pages can be opened logged in."""

    binary: str

    @contextlib.contextmanager
    def session(
        self, cookies: Mapping[str, str] = (), origin: str = "", timeout: float = 60.0
    ) -> Iterator[BrowserPage]:
        """A browser with one page; ``cookies`` are set for ``origin`` before anything is opened."""
        from websockets.sync.client import connect

        port = free_port()
        with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
            process = subprocess.Popen(
                [self.binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--remote-debugging-port={port}"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
            try:
                deadline = time.monotonic() + timeout
                target = None
                while target is None:
                    try:
                        target = httpx.put(f"http://127.0.0.1:{port}/json/new?about:blank", timeout=5).json()
                    except (httpx.HTTPError, ValueError):
                        if process.poll() is not None or time.monotonic() > deadline:
                            raise AssertionError("headless Chromium did not open its DevTools port") from None
                        time.sleep(0.2)
                with connect(target["webSocketDebuggerUrl"], max_size=64 * 1024 * 1024) as ws:
                    page = BrowserPage(ws, timeout)
                    page.call("Page.enable")
                    page.call("Network.enable")
                    page.call(
                        "Emulation.setDeviceMetricsOverride",
                        width=1280,
                        height=1600,
                        deviceScaleFactor=1,
                        mobile=False,
                    )
                    for name, value in dict(cookies).items():
                        page.call("Network.setCookie", name=name, value=value, url=origin)
                    yield page
            finally:
                stop_process_tree(process, grace=5)  # also helpers (zygote, renderers) that outlive the browser


class BrowserPage:
    def __init__(self, ws: Any, timeout: float) -> None:
        self.ws = ws
        self.timeout = timeout
        self._id = 0

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self._id += 1
        self.ws.send(json.dumps({"id": self._id, "method": method, "params": params}))
        deadline = time.monotonic() + self.timeout
        while True:
            message = json.loads(self.ws.recv(timeout=max(0.1, deadline - time.monotonic())))
            if message.get("id") == self._id:
                if "error" in message:
                    raise AssertionError(f"Chromium {method} failed: {message['error']}")
                return message.get("result", {})

    def open(self, url: str) -> str:
        """Navigate, wait for the load to finish, return the rendered DOM and the final URL."""
        self.call("Page.navigate", url=url)
        deadline = time.monotonic() + self.timeout
        while True:
            state = self.call("Runtime.evaluate", expression="[document.readyState, location.href]", returnByValue=True)
            ready, href = state["result"]["value"]
            if ready == "complete" and href != "about:blank":
                break
            if time.monotonic() > deadline:
                raise AssertionError(f"{url} did not finish loading in the browser")
            time.sleep(0.2)
        return self.call("Runtime.evaluate", expression="document.documentElement.outerHTML", returnByValue=True)[
            "result"
        ]["value"]

    def screenshot(self, path: Path) -> tuple[int, int]:
        import base64

        path.parent.mkdir(parents=True, exist_ok=True)
        data = self.call("Page.captureScreenshot", format="png")["data"]
        path.write_bytes(base64.b64decode(data))
        return png_size(path)


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()[:24]
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        raise AssertionError(f"{path} is not a PNG file")
    width, height = struct.unpack(">II", data[16:24])
    return int(width), int(height)
