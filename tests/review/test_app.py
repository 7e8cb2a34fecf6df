"""The review app over HTTP (Starlette TestClient): pages, decisions, escaping, token, limits."""

from __future__ import annotations

import json

import pytest
from starlette.testclient import TestClient

from confidence.cli import main
from confidence.documents.cache import DocumentCache
from confidence.review.app import create_app
from confidence.review.log import read_log
from confidence.review.pages import DocumentFolder
from confidence.review.queue import ReviewQueue, order_items, queue_items
from tests.fixtures.engine import make_dataset
from tests.fixtures.review import SCRIPT, row

BASE = "http://127.0.0.1"


@pytest.fixture(scope="module")
def docs(tmp_path_factory):
    root = tmp_path_factory.mktemp("review_app")
    ds = make_dataset(root, n_docs=3, seed=5)
    (root / "secret.txt").write_text("outside the documents folder")
    labels = [json.loads(x) for x in (ds / "labels.jsonl").read_text().splitlines()]
    return root, ds, {r["doc_id"]: r["fields"] for r in labels}


def _rows(gold):
    g0, g1 = gold["d000"], gold["d001"]
    return [
        row("d000", "total", g0["total"], 0.2, field_type="amount",
            mapper_value=g0["invoice_number"]),  # the Mapper read another place
        row("d001", "vendor", SCRIPT, 0.3, reasons=[f"near {SCRIPT}"]),
        row("d001", "invoice_number", g1["invoice_number"], 0.5, field_type="id"),
        row("d002", "total", "1.00", 0.99, decision="accept"),
    ]  # fmt: skip


def _app(docs, tmp_path, **kw):
    root, ds, gold = docs
    items = order_items(queue_items(_rows(gold)), "confidence")
    queue = ReviewQueue(items, tmp_path / "review.jsonl", lease=kw.pop("lease", 300))
    folder = DocumentFolder(ds, cache=DocumentCache(root / "cache"))
    return create_app(queue, folder, reviewer="tester", **kw)


def _lease(html: str) -> str:
    return html.split('data-lease="')[1].split('"')[0]


def test_page_shows_the_field_with_boxes_and_progress(docs, tmp_path):
    c = TestClient(_app(docs, tmp_path), base_url=BASE)
    r = c.get("/")
    assert r.status_code == 200
    html = r.text
    assert 'id="field-name">total<' in html and "Total amount due" in html  # schema description
    assert "value-box" in html and "other-box" in html  # both places highlighted
    assert "0 done / 3 left" in html and "document d000: 0 / 1 fields done" in html
    assert "script-src 'self'" in r.headers["content-security-policy"]
    pic = c.get("/page?doc=d000&n=1")
    assert pic.status_code == 200 and pic.content[:3] == b"\xff\xd8\xff"
    assert c.get("/page?doc=d000&n=2").status_code == 404
    assert c.get("/page?doc=nope&n=1").status_code == 404


def test_the_reading_that_differs_from_the_shown_value_is_boxed_whichever_it_is(docs, tmp_path):
    """With the embedded model the shown value is the Mapper's and the Hunter read elsewhere:
    the value's swatch goes beside the Mapper, the dashed box and its swatch to the Hunter."""
    root, ds, gold = docs
    g0 = gold["d000"]
    folder = DocumentFolder(ds, cache=DocumentCache(root / "cache"))

    def page(**kw):
        rows = [row("d000", "total", g0["total"], 0.2, field_type="amount", **kw)]
        queue = ReviewQueue(queue_items(rows), tmp_path / f"{len(kw)}{sorted(kw)}.jsonl")
        return TestClient(create_app(queue, folder), base_url=BASE).get("/").text

    def cell(html, reading):
        return html.split(f'id="{reading}-value">')[1].split("</tr>")[0]

    html = page(hunter_value=g0["invoice_number"])  # the Mapper's value is shown
    assert "value-box" in html and "other-box" in html and "where the Hunter read otherwise" in html
    assert 'swatch value"' in cell(html, "mapper") and 'swatch other"' in cell(html, "hunter")
    html = page(mapper_value=g0["invoice_number"])  # the Hunter's value is shown (remote LLM)
    assert "where the Mapper read otherwise" in html
    assert 'swatch value"' in cell(html, "hunter") and 'swatch other"' in cell(html, "mapper")
    html = page()  # both read the shown value
    assert "other-box" not in html and cell(html, "mapper").count('swatch value"') == 1


def test_decisions_go_to_the_log_once_and_the_queue_moves_on(docs, tmp_path):
    c = TestClient(_app(docs, tmp_path), base_url=BASE)
    lease = _lease(c.get("/").text)
    body = {"lease": lease, "action": "correct", "value": "99.00"}
    first = c.post("/decide", json=body)
    assert first.status_code == 200 and first.json()["logged"] is True
    again = c.post("/decide", json=body)  # a double submit (two Enters, a retry)
    assert again.status_code == 200 and again.json()["logged"] is False
    (d,) = read_log(tmp_path / "review.jsonl")
    assert (d.doc_id, d.field, d.action, d.final_value, d.reviewer) == (
        "d000", "total", "correct", "99.00", "tester",
    )  # fmt: skip
    html = c.get("/").text
    assert "1 done / 2 left" in html and _lease(html) != lease
    lease2 = _lease(html)
    assert c.post("/decide", json={"lease": lease2, "action": "absent", "value": "x"}).json()[
        "logged"
    ]
    assert read_log(tmp_path / "review.jsonl")[-1].final_value is None
    assert c.post("/decide", json={"lease": "nope", "action": "accept"}).status_code == 409
    lease3 = _lease(c.get("/").text)
    assert c.post("/decide", json={"lease": lease3, "action": "approve"}).status_code == 400
    assert c.get("/progress").json()["documents"] == [
        {"doc_id": "d000", "done": 1, "total": 1},
        {"doc_id": "d001", "done": 1, "total": 2},
    ]


def test_values_and_reasons_render_as_text(docs, tmp_path):
    c = TestClient(_app(docs, tmp_path), base_url=BASE)
    lease = _lease(c.get("/").text)
    c.post("/decide", json={"lease": lease, "action": "skip"})
    html = c.get("/").text
    assert "<script>alert(1)" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "near &lt;script&gt;" in html
    assert html.count("<script") == 1  # only the app's own /static/review.js


def test_only_files_under_the_documents_folder_are_served(docs, tmp_path):
    root, ds, _ = docs
    c = TestClient(_app(docs, tmp_path), base_url=BASE)
    assert c.get("/documents/files/d000.pdf").status_code == 200
    link = ds / "files" / "link.txt"
    if not link.exists():
        link.symlink_to(root / "secret.txt")
    for bad in ("/documents/../secret.txt", "/documents/%2e%2e/secret.txt",
                "/documents/..%2fsecret.txt", "/documents/files/link.txt",
                "/documents//etc/passwd", "/documents/%2fetc%2fpasswd",
                "/static/../app.py", "/static/app.py"):  # fmt: skip
        r = c.get(bad)
        assert r.status_code == 404, bad
        assert "outside the documents" not in r.text and "root:" not in r.text


def test_request_bodies_are_size_limited_and_must_be_json(docs, tmp_path):
    c = TestClient(_app(docs, tmp_path, max_body=1000), base_url=BASE)
    lease = _lease(c.get("/").text)
    big = {"lease": lease, "action": "correct", "value": "x" * 5000}
    assert c.post("/decide", json=big).status_code == 413
    form = c.post("/decide", data={"lease": lease, "action": "accept"})
    assert form.status_code == 415
    assert read_log(tmp_path / "review.jsonl") == []


def test_a_token_guards_every_request(docs, tmp_path):
    app = _app(docs, tmp_path, token="s3cret", local_only=False)
    anon = TestClient(app, base_url="http://192.0.2.10")
    for method, path in (("get", "/"), ("get", "/page?doc=d000&n=1"), ("get", "/progress"),
                         ("get", "/static/review.js"), ("get", "/documents/files/d000.pdf"),
                         ("get", "/no-such-route"), ("post", "/decide")):  # fmt: skip
        r = getattr(anon, method)(path)
        assert r.status_code == 401, path
    assert anon.get("/", headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert anon.get("/?token=wrong").status_code == 401
    ok = TestClient(app, base_url="http://192.0.2.10")
    assert ok.get("/", headers={"Authorization": "Bearer s3cret"}).status_code == 200
    first = ok.get("/?token=s3cret")  # the link printed at start: sets the cookie
    assert first.status_code == 200
    assert ok.get("/progress").status_code == 200  # the cookie carries it from now on


def test_loopback_app_answers_loopback_hosts_only(docs, tmp_path):
    app = _app(docs, tmp_path)
    assert TestClient(app, base_url="http://localhost:8765").get("/").status_code == 200
    assert TestClient(app, base_url="http://evil.example").get("/").status_code == 400


def test_non_local_bind_without_token_is_refused(docs, tmp_path, capsys):
    _, ds, gold = docs
    scored = tmp_path / "scored.jsonl"
    scored.write_text("".join(json.dumps(r) + "\n" for r in _rows(gold)))
    code = main(["review", str(scored), "--documents", str(ds), "--host", "0.0.0.0"])
    assert code == 2
    assert "--token" in capsys.readouterr().err


def test_review_reads_the_pages_with_the_options_score_used(docs, tmp_path, monkeypatch):
    import confidence.review.app as app_module

    _, ds, gold = docs
    scored = tmp_path / "scored.jsonl"
    scored.write_text("".join(json.dumps(r) + "\n" for r in _rows(gold)))
    served = []
    monkeypatch.setattr(app_module, "serve", lambda kwargs, **kw: served.append(kwargs))
    flags = ["--read-once", "--keep-hidden-text", "--no-flatten"]
    assert main(["review", str(scored), "--documents", str(ds), *flags]) == 0
    assert main(["review", str(scored), "--documents", str(ds)]) == 0
    with_flags, default = (s["folder"].cache.load_options for s in served)
    assert with_flags == {
        "enlarge_small_text": False,
        "hidden_text": "keep",
        "flatten_photos": False,
    }
    assert default == {}


def test_an_empty_queue_says_so(docs, tmp_path):
    c = TestClient(_app(docs, tmp_path), base_url=BASE)
    for _ in range(3):
        r = c.post("/decide", json={"lease": _lease(c.get("/").text), "action": "absent"})
        assert r.status_code == 200
    html = c.get("/").text
    assert 'id="all-done"' in html and "3 done / 0 left" in html
    assert len(read_log(tmp_path / "review.jsonl")) == 3


def test_the_line_a_reading_came_from_is_boxed_when_its_value_is_not_found(docs, tmp_path):
    from confidence.readings import CallResult, FieldReading, RunRecord
    from confidence.review.queue import with_lines

    root, ds, _ = docs
    rows = [row("d000", "vendor", "Nowhere Ltd", 0.1, mapper_value="Elsewhere Inc")]
    hunter = CallResult("hunter", {"vendor": FieldReading("x", line=0)})
    mapper = CallResult("mapper", {"vendor": FieldReading("y", line=1)})
    runs = {"d000": RunRecord("d000", hunter, mapper)}
    folder = DocumentFolder(ds, cache=DocumentCache(root / "cache"))
    plain = ReviewQueue(queue_items(rows), tmp_path / "a.jsonl")
    html = TestClient(create_app(plain, folder), base_url=BASE).get("/").text
    assert "value-box" not in html and "other-box" not in html
    lined = ReviewQueue(with_lines(queue_items(rows), runs), tmp_path / "b.jsonl")
    html = TestClient(create_app(lined, folder), base_url=BASE).get("/").text
    assert "value-box" in html and "other-box" in html
    assert html.count("page 1, the line it was read from") == 2


def test_a_value_ocr_reads_otherwise_alone_shows_its_second_reading(docs, tmp_path):
    """When the shown value's words read otherwise cut out and read alone (``Word.alone``,
    ingestion version 11), the page shows that second reading: often the printed one."""
    from dataclasses import replace

    from confidence.documents.search import document_index

    root, ds, gold = docs
    value = gold["d000"]["total"]
    app = _app(docs, tmp_path)
    html = TestClient(app, base_url=BASE).get("/").text
    assert 'id="alone-value"' not in html  # a clean scan reads the same alone
    folder = DocumentFolder(ds, cache=DocumentCache(root / "cache"))
    doc = folder.document("d000")
    m = document_index(doc).find(value, "amount")
    assert m is not None
    words = list(doc.pages[m.page].words)
    last = m.indices[-1]
    words[last] = replace(words[last], alone="<b>" + words[last].text[::-1])
    pages = list(doc.pages)
    pages[m.page] = replace(pages[m.page], words=tuple(words))
    folder._docs["d000"] = replace(doc, pages=tuple(pages))  # what the folder's cache serves
    items = order_items(queue_items(_rows(gold)), "confidence")
    queue = ReviewQueue(items, tmp_path / "again.jsonl")
    html = TestClient(create_app(queue, folder, reviewer="t"), base_url=BASE).get("/").text
    shown = html.split('id="alone-value">')[1].split("</td>")[0]
    assert shown.endswith(words[last].text[::-1]) and "&lt;b&gt;" in shown  # escaped, as text
    assert "read alone" in html.lower()
    # a name or an address read word by word is noise: not shown
    wordy = [row("d000", "total", value, 0.2, field_type="address")]
    queue = ReviewQueue(queue_items(wordy), tmp_path / "wordy.jsonl")
    html = TestClient(create_app(queue, folder, reviewer="t"), base_url=BASE).get("/").text
    assert 'id="field-name">total<' in html and 'id="alone-value"' not in html
