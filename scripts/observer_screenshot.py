"""Take docs/how-to/observer.png: the observer's page during a demo run, in headless Chromium.

    python scripts/observer_screenshot.py [--out docs/how-to/observer.png]

Runs ``praxo-actors demo --observe`` in a subprocess (long enough to be watched), opens the
printed URL in Debian's Chromium through Playwright, waits until runs have completed and
sessions have been passivated, saves the screenshot, and lets the demo finish.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path
from tempfile import TemporaryDirectory

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT_MS = 60_000


def main() -> int:
    """Run the demo, take the screenshot, and return the demo's exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "docs" / "how-to" / "observer.png"))
    args = parser.parse_args()
    with TemporaryDirectory() as tmp:
        demo = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "praxo_actors.cli",
                "demo",
                "--sessions=300",
                "--runs-per-session=6",
                "--latency=0.3",
                "--concurrency=60",
                "--failure-rate=0.08",
                "--idle-timeout=0.5",
                "--seed=7",
                "--no-live",
                "--observe",
                f"--store={tmp}/demo.sqlite3",
            ],
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
            cwd=ROOT,
        )
        try:
            assert demo.stdout is not None
            url = ""
            for line in demo.stdout:
                print(line, end="")
                if line.startswith("observer: "):
                    url = line.split(" ", 1)[1].strip()
                    break
            if not url:
                raise SystemExit("the demo printed no observer URL")
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path="/usr/bin/chromium", headless=True, args=["--no-sandbox"]
                )
                try:
                    page = browser.new_page(viewport={"width": 1360, "height": 1180})
                    page.goto(url)
                    page.wait_for_function(
                        "Number(document.querySelector('#runs-completed').textContent) > 400"
                        " && Number(document.querySelector('#passivations').textContent) > 0"
                        " && Number(document.querySelector('#runs-failed').textContent) > 0",
                        timeout=TIMEOUT_MS,
                    )
                    page.click("#sessions tbody tr:nth-child(3)")
                    page.wait_for_function(
                        "document.querySelector('#inspect').textContent.includes('state')",
                        timeout=TIMEOUT_MS,
                    )
                    page.screenshot(path=args.out, full_page=True)
                finally:
                    browser.close()
            for line in demo.stdout:
                print(line, end="")
            return demo.wait(timeout=TIMEOUT_MS / 1000)
        finally:
            if demo.poll() is None:
                demo.kill()
                demo.wait()


if __name__ == "__main__":
    sys.exit(main())
