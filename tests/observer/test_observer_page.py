"""The observer's page in headless Chromium: it shows the runtime and follows it live.

Driven by Playwright with Debian's Chromium (``/usr/bin/chromium``; ``.ci/run`` installs it).
Playwright never downloads a browser of its own here.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _observed import TIMEOUT, Observed
from _people import RECIPIENT, mailer
from test_observer_views import assert_ended

from praxo_actors.agent import new_agent_options
from praxo_actors.testing import EchoModel

CHROMIUM = "/usr/bin/chromium"

if not os.path.exists(CHROMIUM):
    pytest.skip(
        f"no Chromium at {CHROMIUM} (apt-get install -y chromium; .ci/run does)",
        allow_module_level=True,
    )

sync_api = pytest.importorskip("playwright.sync_api", reason="the test extra installs playwright")

WAIT_MS = TIMEOUT * 1000
# Starting Chromium is the one slow step: on 2 busy vCPUs it took over 10 s once.
LAUNCH_MS = WAIT_MS * 6


@pytest.fixture
def page(observed: Observed) -> Iterator[Any]:
    """Open the observer's page in a headless Chromium; close the browser after the test."""
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox"], timeout=LAUNCH_MS
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
    page.click("#sessions th[data-key=id] button")  # the same column again: descending
    page.wait_for_function("document.querySelector('#sessions tbody tr td')?.textContent === 'c'")
    assert first_column() == ["c", "b", "a"]
    page.click("#sessions th[data-key=messages] button")
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


AXE = Path(
    os.environ.get(
        "PRAXO_AXE_JS",
        Path(__file__).resolve().parents[2] / ".cache/axe/node_modules/axe-core/axe.min.js",
    )
)


def test_the_page_has_no_serious_accessibility_violation(observed: Observed, page: Any) -> None:
    """axe-core finds no serious or critical violation on the page with sessions, runs, an
    approval and events shown."""
    if not AXE.is_file():
        pytest.skip(f"no axe-core at {AXE} (.ci/run installs it from npm)")
    sent: list[Any] = []
    observed.runtime.register_agent("mailer", mailer(sent))
    observed.run("s1")
    observed.runtime.session("ask", agent="mailer").run("mail").get(timeout=TIMEOUT)
    observed.runtime.session("s1", agent="demo").schedule("digest", cron="0 9 * * *", key="d")
    page.goto(observed.server.url)
    page.wait_for_function("document.querySelectorAll('#sessions tbody tr').length === 2")
    page.wait_for_function("document.querySelectorAll('#schedules tbody tr').length === 1")
    page.wait_for_function("document.querySelectorAll('#approvals .approval').length === 1")
    page.wait_for_function("document.querySelectorAll('#runs tbody tr').length === 2")
    page.wait_for_function("document.body.dataset.series === '90'")
    page.wait_for_function("document.body.dataset.events === 'open'")
    for n in range(12):
        observed.run(f"e{n}")  # the events box overflows: it must scroll from the keyboard
    page.wait_for_function(
        "(() => { const b = document.querySelector('#events').parentElement;"
        " return b.scrollHeight > b.clientHeight; })()"
    )
    page.add_script_tag(path=str(AXE))
    version = page.evaluate("axe.version")
    assert version.startswith("4.")
    results = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
    bad = [
        (v["id"], v["impact"], [n["target"] for n in v["nodes"]][:3])
        for v in results["violations"]
        if v["impact"] in ("serious", "critical")
    ]
    assert bad == []
    assert results["passes"], "axe-core checked nothing"
    shot = os.environ.get("PRAXO_OBSERVER_SCREENSHOT")
    if shot:  # how docs/how-to/observer.png is taken
        page.screenshot(path=shot, full_page=True)


def test_the_page_lists_schedules_and_cancels_one(observed: Observed, page: Any) -> None:
    """The schedules section shows each schedule's next fire and last outcome; its cancel
    button (a POST with the page's token) removes it from the store and from the page."""
    runtime = observed.runtime
    daily = runtime.session("a", agent="demo").schedule("digest", cron="0 9 * * *", key="d")
    runtime.session("b", agent="demo").schedule("check", every=3600, key="c")
    page.goto(observed.server.url)
    page.wait_for_function("document.querySelectorAll('#schedules tbody tr').length === 2")
    row = page.locator(f"#schedules tbody tr[data-schedule='{daily.id}']")
    cells = row.locator("td").all_inner_texts()
    assert cells[:3] == ["a", "d", "cron 0 9 * * *"] and cells[4] == "0" and cells[5] == "–"
    assert cells[3] != "–"  # the next fire, in the reader's local time
    wait_text(page, "#schedule-count", "(2)")
    row.get_by_role("button", name="cancel schedule d of a").click()
    page.wait_for_function("document.body.dataset.lastAction === 'ok'")
    page.wait_for_function("document.querySelectorAll('#schedules tbody tr').length === 1")
    assert [s.key for s in runtime.schedules()] == ["c"]


def test_every_control_works_from_the_keyboard(observed: Observed, page: Any) -> None:
    """Sort buttons set ``aria-sort`` (numbers sort as numbers), Enter on a session row
    inspects it, Space on a run row shows its timeline, and the events box takes focus and
    scrolls with the arrow keys."""
    for sid in ("b", "a", "c"):
        observed.run(sid)
    for _ in range(2):
        observed.run("a")  # 12 messages: as text, "12" would sort before "4"
    page.goto(observed.server.url)
    page.wait_for_function("document.querySelectorAll('#sessions tbody tr').length === 3")
    button = page.locator("#sessions th[data-key=messages] button")
    button.focus()
    page.keyboard.press("Enter")
    page.wait_for_function(
        "document.querySelector('#sessions th[data-key=messages]').ariaSort === 'ascending'"
    )
    assert page.get_attribute("#sessions th[data-key=id]", "aria-sort") == "none"
    page.wait_for_function(
        "document.querySelector('#sessions tbody tr:last-child td')?.textContent === 'a'"
    )
    assert page.locator("#sessions tbody tr td:nth-child(5)").all_inner_texts() == ["4", "4", "12"]
    page.keyboard.press("Space")  # the same button again: descending
    page.wait_for_function(
        "document.querySelector('#sessions th[data-key=messages]').ariaSort === 'descending'"
    )
    page.wait_for_function("document.querySelector('#sessions tbody tr td')?.textContent === 'a'")
    page.locator("#sessions tbody tr").first.focus()
    page.keyboard.press("Enter")
    page.wait_for_function("document.querySelector('#inspect').textContent.includes('\"a\"')")
    assert '"messages": 12' in page.locator("#inspect").inner_text()

    page.wait_for_function("document.querySelectorAll('#runs tbody tr').length === 5")
    page.locator("#runs tbody tr").first.focus()
    page.keyboard.press(" ")
    page.wait_for_function("document.querySelectorAll('#timeline li').length === 8")
    assert "run.completed" in page.locator("#timeline li").last.inner_text()

    for sid in [f"e{n}" for n in range(12)]:
        observed.run(sid)  # enough events to overflow the box
    page.wait_for_function(
        "(() => { const b = document.querySelector('#events-box');"
        " return b.scrollHeight > b.clientHeight; })()"
    )
    page.locator("#events-box").focus()
    assert page.evaluate("document.activeElement.id") == "events-box"
    page.keyboard.press("End")
    page.wait_for_function("document.querySelector('#events-box').scrollTop > 0")


def test_more_than_one_page_of_sessions_is_paged(observed: Observed, page: Any) -> None:
    """With 130 sessions the page shows 100, then the other 30 on the next page."""
    observed.runtime.register_agent("echo", lambda: new_agent_options(EchoModel()))
    futures = [observed.runtime.session(f"p{n:03}", agent="echo").run("hi") for n in range(130)]
    for future in futures:
        future.get(timeout=TIMEOUT)
    page.goto(observed.server.url)
    page.wait_for_function("document.querySelectorAll('#sessions tbody tr').length === 100")
    assert not page.is_disabled("#next-page") and page.is_disabled("#prev-page")
    page.click("#next-page")
    page.wait_for_function("document.querySelectorAll('#sessions tbody tr').length === 30")
    assert page.locator("#sessions tbody tr td").first.inner_text() == "p100"
    assert page.is_disabled("#next-page")
    wait_text(page, "#page-label", "page 2")


def test_approve_and_deny_from_the_page_end_the_runs(observed: Observed, page: Any) -> None:
    """Approve on one pending approval runs the tool; deny on the other ends its run with the
    call denied; the list empties, and the arguments were shown redacted."""
    sent: list[Any] = []
    observed.runtime.register_agent("mailer", mailer(sent))
    for sid in ("yes", "no"):
        observed.runtime.session(sid, agent="mailer").run("mail").get(timeout=TIMEOUT)
    page.goto(observed.server.url)
    page.wait_for_function("document.querySelectorAll('#approvals .approval').length === 2")
    shown = page.locator("#approvals").inner_text()
    assert RECIPIENT not in shown and "[REDACTED_EMAIL]" in shown
    page.click("#approvals [data-session=yes] button[aria-label^=approve]")
    page.click("#approvals [data-session=no] button[aria-label^=deny]")
    page.wait_for_function("document.querySelectorAll('#approvals .approval').length === 0")
    assert_ended(observed, sent)
    page.wait_for_function(
        "[...document.querySelectorAll('#runs tbody tr')]"
        ".filter(tr => tr.textContent.includes('completed')).length === 2"
    )


def test_stop_and_passivate_from_the_page(observed: Observed, page: Any) -> None:
    """The passivate and stop buttons of a session's row take it out of memory."""
    observed.run("one")
    observed.run("two")
    page.goto(observed.server.url)
    page.wait_for_function("document.querySelectorAll('#sessions tbody tr').length === 2")
    page.click("button[aria-label='passivate one']")
    page.click("button[aria-label='stop two']")
    page.wait_for_function(
        "[...document.querySelectorAll('#sessions tbody tr td:nth-child(2)')]"
        ".every(td => td.textContent === 'passivated')"
    )
    states = {s["id"]: s["state"] for s in observed.state()["sessions"]}
    assert states == {"one": "passivated", "two": "passivated"}


def test_the_browser_gets_the_favicon(observed: Observed, page: Any) -> None:
    """Loading the page asks for no resource that fails (the favicon included)."""
    failed: list[str] = []
    page.on("response", lambda r: failed.append(r.url) if r.status >= 400 else None)
    page.goto(observed.server.url)
    wait_text(page, "#status", "live")
    icon = page.evaluate("fetch('/favicon.ico').then(r => r.status)")
    assert icon == 200 and failed == []
