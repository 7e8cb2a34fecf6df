"""The review app in a real headless Chromium (system chromium + chromedriver, via selenium):
keyboard decisions reach the log, a reload moves on, hostile text stays text."""

from __future__ import annotations

import shutil
import time

import pytest

from confidence.review.log import read_log
from tests.fixtures.review import (
    CHROMEDRIVER,
    CHROMIUM,
    SCRIPT,
    chrome,
    free_port,
    make_scored_sample,
    start_server,
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not (shutil.which(CHROMIUM) and shutil.which(CHROMEDRIVER)),
        reason="needs the system chromium and chromium-driver (make system installs them)",
    ),
]
SHOT = "/tmp/extractconf_review_browser.png"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("review_browser")
    sample = make_scored_sample(root)
    log = root / "review.jsonl"
    port = free_port()
    proc = start_server([str(sample["scored"]), "--documents", str(sample["documents"]),
                         "--log", str(log), "--cache-dir", str(sample["cache"]),
                         "--reviewer", "selenium"], port)  # fmt: skip
    yield f"http://127.0.0.1:{port}/", log
    proc.terminate()
    proc.wait(10)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    d = chrome(tmp_path_factory.mktemp("chrome-profile"))
    yield d
    d.quit()


def _current(d):
    from selenium.webdriver.common.by import By

    return d.title, d.find_element(By.ID, "field-name").text


def _wait_new_title(d, old, timeout=20):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if d.title != old and d.find_elements("id", "progress"):
            return
        time.sleep(0.1)
    raise AssertionError(f"the page did not move on from {old!r}")


def test_accept_correct_absent_then_reload(server, browser):
    from selenium.common.exceptions import NoAlertPresentException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    url, log = server
    d = browser
    d.get(url)
    total_left = int(d.find_element(By.ID, "progress").text.split("/")[1].split()[0])
    seen = []
    # 1. Enter accepts the shown value (the input starts focused, its text selected)
    title, _ = _current(d)
    shown = d.find_element(By.ID, "value").get_attribute("value")
    seen.append(title)
    d.find_element(By.ID, "value").send_keys(Keys.ENTER)
    _wait_new_title(d, title)
    # 2. typing replaces the value; Enter saves the correction
    title, _ = _current(d)
    seen.append(title)
    d.find_element(By.ID, "value").send_keys("CORRECTED 42", Keys.ENTER)
    _wait_new_title(d, title)
    # 3. Alt+N: not on the page
    title, _ = _current(d)
    seen.append(title)
    d.find_element(By.ID, "value").send_keys(Keys.ALT, "n")
    _wait_new_title(d, title)

    d.refresh()
    decisions = read_log(log)
    assert [x.action for x in decisions] == ["accept", "correct", "absent"]
    assert decisions[0].final_value == shown
    assert decisions[1].final_value == "CORRECTED 42" and decisions[2].final_value is None
    assert all(x.reviewer == "selenium" for x in decisions)
    assert [f"extractconf review · {x.doc_id} · {x.field}" for x in decisions] == seen
    assert d.title not in seen  # the queue moved on
    assert d.find_element(By.ID, "progress").text == f"3 done / {total_left - 3} left"
    boxes = d.find_elements(By.CSS_SELECTOR, ".box")
    assert d.find_element(By.ID, "page-img").get_property("naturalWidth") > 500
    assert all(b.size["width"] > 5 and b.size["height"] > 5 for b in boxes)
    d.save_screenshot(SHOT)

    # hostile document text: skip (Esc) until the <script> value is shown; it must be text
    for _ in range(total_left):
        if d.find_element(By.ID, "hunter-value").text == SCRIPT:
            break
        title = d.title
        d.find_element(By.ID, "value").send_keys(Keys.ESCAPE)
        _wait_new_title(d, title)
    else:
        pytest.fail("the <script> row never came up")
    assert d.find_element(By.ID, "value").get_attribute("value") == SCRIPT
    assert SCRIPT in d.find_element(By.TAG_NAME, "body").text
    with pytest.raises(NoAlertPresentException):
        d.switch_to.alert.text  # noqa: B018 - the property access is the check
    d.save_screenshot(SHOT.replace(".png", "_script.png"))
    assert {x.action for x in read_log(log)[3:]} <= {"skip"}


@pytest.fixture(scope="module")
def read_twice(tmp_path_factory):
    """A scored sample whose first field to review is an amount, date or id that OCR (as the
    document cache says) read two ways: its last word reads otherwise alone."""
    import json
    from dataclasses import replace

    from confidence.datasets.folder import Dataset
    from confidence.documents.cache import DocumentCache
    from confidence.documents.search import document_index

    root = tmp_path_factory.mktemp("review_alone")
    sample = make_scored_sample(root)
    rows = [json.loads(x) for x in sample["scored"].read_text().splitlines()]
    cache = DocumentCache(sample["cache"])
    ds = Dataset.open(sample["documents"])
    for r in rows:
        if r["decision"] != "review" or r["field_type"] not in ("amount", "date", "id"):
            continue
        path = ds.path_of(r["doc_id"])
        doc = cache.get(path, r["doc_id"])
        m = document_index(doc).find(r["value"], r["field_type"]) if r["value"] else None
        if m is not None:
            break
    else:
        pytest.fail("the sample has no typed value to review on its page")
    page = doc.pages[m.page]
    words = list(page.words)
    i = m.indices[-1]
    words[i] = replace(words[i], alone=words[i].text + "7")
    pages = list(doc.pages)
    pages[m.page] = replace(page, words=tuple(words))
    cache.put(path, replace(doc, pages=tuple(pages)))
    r["confidence"] = 0.0  # first in the queue
    sample["scored"].write_text("".join(json.dumps(x) + "\n" for x in rows))
    log = root / "review.jsonl"
    port = free_port()
    proc = start_server([str(sample["scored"]), "--documents", str(sample["documents"]),
                         "--log", str(log), "--cache-dir", str(sample["cache"])], port)  # fmt: skip
    yield f"http://127.0.0.1:{port}/", log, words[i].alone
    proc.terminate()
    proc.wait(10)


def test_alt_r_puts_the_value_read_alone_in_the_box(read_twice, browser):
    """A value OCR read two ways shows the second reading; Alt+R puts it in the box and Enter
    saves it as the correction."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    url, log, second = read_twice
    d = browser
    d.get(url)
    alone = d.find_element(By.ID, "alone-value").text
    assert alone.endswith(second)
    d.save_screenshot(SHOT.replace(".png", "_alone.png"))
    box = d.find_element(By.ID, "value")
    box.send_keys(Keys.ALT, "r")
    assert box.get_attribute("value") == alone
    title = d.title
    box.send_keys(Keys.ENTER)
    _wait_new_title(d, title)
    (decision,) = read_log(log)
    assert (decision.action, decision.final_value) == ("correct", alone)
