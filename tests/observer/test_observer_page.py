"""The observer's page in headless Chromium: it shows the runtime and follows it live.

Driven by Playwright with Debian's Chromium (``/usr/bin/chromium``; ``.ci/run`` installs it).
Playwright never downloads a browser of its own here.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from _observed import TIMEOUT, Observed

CHROMIUM = "/usr/bin/chromium"

if not os.path.exists(CHROMIUM):
    pytest.skip(
        f"no Chromium at {CHROMIUM} (apt-get install -y chromium; .ci/run does)",
        allow_module_level=True,
    )

sync_api = pytest.importorskip("playwright.sync_api", reason="the test extra installs playwright")

WAIT_MS = TIMEOUT * 1000


@pytest.fixture
def page(observed: Observed) -> Iterator[Any]:
    """Open the observer's page in a headless Chromium; close the browser after the test."""
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox"], timeout=WAIT_MS
        )
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1000})
            page.set_default_timeout(WAIT_MS)
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            yield page
            assert errors == [], f"the page's script failed: {errors}"
        finally:
            browser.close()


def wait_text(page: Any, selector: str, text: str) -> None:
    """Wait (bounded) until the element ``selector`` shows exactly ``text``."""
    page.wait_for_function(
        "([selector, text]) => document.querySelector(selector)?.textContent === text",
        arg=[selector, text],
        timeout=WAIT_MS,
    )


def test_the_page_shows_the_runtime_and_updates_as_runs_complete(
    observed: Observed, page: Any
) -> None:
    """The page shows the live-session count, then new runs, sessions and events, live."""
    for sid in ("s1", "s2"):
        observed.run(sid)
    page.goto(observed.server.url)
    wait_text(page, "#live-sessions", "2")
    wait_text(page, "#runs-completed", "2")
    wait_text(page, "#status", "live")
    assert page.locator("#sessions tbody tr").count() == 2
    assert "sessions" in page.locator("#tree").inner_text()
    page.wait_for_function("document.body.dataset.events === 'open'")

    for sid in ("s3", "s4", "s5"):
        observed.run(sid)
    wait_text(page, "#live-sessions", "5")
    wait_text(page, "#runs-completed", "5")
    wait_text(page, "#latency-count", "5")
    page.wait_for_function("document.querySelectorAll('#sessions tbody tr').length === 5")
    assert page.locator("#p50").inner_text().endswith(" ms")
    # The events of the runs made while the page was open arrived over the stream.
    page.wait_for_function(
        "[...document.querySelectorAll('#events li')]"
        ".filter(li => li.textContent.includes('run.completed')).length === 3"
    )
    tree = page.locator("#tree").inner_text()
    assert all(sid in tree for sid in ("s1", "s5"))


def test_sessions_sort_and_inspect_on_click(observed: Observed, page: Any) -> None:
    """Clicking a column sorts the sessions; clicking a session shows its inspection."""
    for sid in ("b", "a", "c"):
        observed.run(sid)
    observed.run("a")  # "a" now has the most messages
    page.goto(observed.server.url)
    page.wait_for_function("document.querySelectorAll('#sessions tbody tr').length === 3")

    def first_column() -> list[str]:
        cells: list[str] = page.locator("#sessions tbody tr td:first-child").all_inner_texts()
        return cells

    assert first_column() == ["a", "b", "c"]
    page.click("#sessions th[data-key=id]")  # the same column again: descending
    page.wait_for_function("document.querySelector('#sessions tbody tr td')?.textContent === 'c'")
    assert first_column() == ["c", "b", "a"]
    page.click("#sessions th[data-key=messages]")
    page.wait_for_function(
        "document.querySelector('#sessions tbody tr:last-child td')?.textContent === 'a'"
    )
    page.click("#sessions tbody tr:last-child")
    page.wait_for_function("document.querySelector('#inspect').textContent.includes('\"id\"')")
    shown = page.locator("#inspect").inner_text()
    assert '"id": "a"' in shown and '"messages": 8' in shown


def test_the_page_says_when_the_runtime_stops(observed: Observed, page: Any) -> None:
    """When the runtime stops, the event stream ends and the page says so."""
    observed.run("s")
    page.goto(observed.server.url)
    wait_text(page, "#status", "live")
    page.wait_for_function("document.body.dataset.events === 'open'")
    observed.runtime.stop()
    wait_text(page, "#status", "runtime stopped")
    page.wait_for_function("document.body.dataset.events === 'ended'")
