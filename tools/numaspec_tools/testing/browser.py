"""A headless Chromium for the site's browser check (tests/meta/test_site_browser.py): Debian's
``chromium`` and ``chromium-driver`` packages, installed here when they are missing and this is
root on Debian, driven by Selenium through Debian's own ``/usr/bin/chromedriver`` (given
explicitly, so selenium-manager never looks for or downloads a driver).

In CI (``CI=true``) a browser that cannot be had is a failure with the reason; elsewhere the
test is skipped with it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import pytest

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
PACKAGES = ("chromium", "chromium-driver")


def _unavailable(why: str) -> NoReturn:
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"the site's browser check needs headless Chromium: {why}", pytrace=False)
    pytest.skip(f"the site's browser check needs headless Chromium: {why}")


def _apt(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    return subprocess.run(["apt-get", *args], capture_output=True, text=True, env=env,
                          timeout=900, check=False)


def ensure_chromium() -> None:
    """Debian's chromium and chromium-driver, installed with apt-get when missing (as root on
    Debian); otherwise the test fails (CI) or is skipped, saying why."""
    if CHROMIUM.is_file() and CHROMEDRIVER.is_file():
        return
    if not Path("/etc/debian_version").is_file() or shutil.which("apt-get") is None:
        _unavailable(f"{CHROMIUM} or {CHROMEDRIVER} is missing and this is not Debian "
                     f"(install the packages {', '.join(PACKAGES)} or their equivalent)")
    if os.geteuid() != 0:
        _unavailable(f"{CHROMIUM} or {CHROMEDRIVER} is missing and installing them needs root "
                     f"(sudo apt-get install -y --no-install-recommends {' '.join(PACKAGES)})")
    install = ("install", "-y", "--no-install-recommends", *PACKAGES)
    done = _apt(*install)
    if done.returncode != 0:  # a stale or missing package list: update it once, then retry
        _apt("update")
        done = _apt(*install)
    if done.returncode != 0 or not (CHROMIUM.is_file() and CHROMEDRIVER.is_file()):
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-5:])
        _unavailable(f"apt-get install {' '.join(PACKAGES)} failed:\n{tail}")


def chromium(scratch: Path, width: int = 1920, height: int = 1080) -> WebDriver:
    """A headless Chromium, driven through Debian's chromedriver, that keeps its profile and
    its temporary files (the singleton socket's directory, which it makes under ``TMPDIR``)
    in ``scratch``, so a test leaves nothing in /tmp.  Its DevTools network events are logged
    (:func:`requests` reads them), so a test can tell every request a page made."""
    ensure_chromium()
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _unavailable("the selenium package is missing (pip install -e '.[dev]')")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 f"--window-size={width},{height}", f"--user-data-dir={scratch / 'profile'}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    environment = {**os.environ, "TMPDIR": str(scratch)}
    return webdriver.Chrome(options=options,
                            service=Service(str(CHROMEDRIVER), env=environment))


def requests(driver: WebDriver) -> list[str]:
    """The URL of every request the browser's pages (and their frames) began since the last
    call: DevTools' ``Network.requestWillBeSent`` events from chromedriver's performance
    log, whatever became of the request (a request to a host that cannot be reached is
    still one)."""
    import json

    from selenium.webdriver.remote.command import Command

    urls: list[str] = []
    # Chrome's own get_log, which the remote WebDriver's type does not declare
    for entry in driver.execute(Command.GET_LOG, {"type": "performance"})["value"]:
        event = json.loads(entry["message"])["message"]
        if event.get("method") == "Network.requestWillBeSent":
            urls.append(str(event["params"]["request"]["url"]))
    return urls
