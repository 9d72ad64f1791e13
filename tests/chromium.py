"""Debian's Chromium under Playwright, as every browser test launches it: headless, no sandbox
(a container), no background traffic of its own."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = os.environ.get("WARRANT_CHROMIUM", "/usr/bin/chromium")


@contextmanager
def chromium(*extra_args: str) -> Iterator[Any]:
    """A launched Chromium (with `extra_args`), closed after; a test without one fails, saying
    how to install it."""
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(
            f"no Chromium at {CHROMIUM}: apt-get install chromium (or set WARRANT_CHROMIUM)"
        )
    args = ["--no-sandbox", "--disable-background-networking", "--disable-component-update"]
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=[*args, *extra_args]
        )
        try:
            yield browser
        finally:
            browser.close()
