"""The review app as a real process (``extractconf review``): decisions survive a kill, leases
keep two clients apart, a non-local bind answers 401 without the token."""

from __future__ import annotations

import http.cookiejar
import json
import os
import signal
import time
import urllib.error
import urllib.request

import pytest

from confidence.review.log import read_log
from tests.fixtures.review import free_port, make_scored_sample, start_server

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    return make_scored_sample(tmp_path_factory.mktemp("review_server"))


def _args(sample, log, *extra):
    return [str(sample["scored"]), "--documents", str(sample["documents"]), "--log", str(log),
            "--cache-dir", str(sample["cache"]), *extra]  # fmt: skip


class Browser:
    """A client with its own cookies (one reviewer's browser)."""

    def __init__(self, base):
        self.base = base
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
        )

    def field(self):
        html = self.opener.open(self.base, timeout=30).read().decode()
        if 'data-lease="' not in html:
            return None, None
        title = html.split("<title>")[1].split("</title>")[0]
        return title, html.split('data-lease="')[1].split('"')[0]

    def decide(self, lease, action="accept", value=None):
        body = json.dumps({"lease": lease, "action": action, "value": value}).encode()
        req = urllib.request.Request(
            self.base + "decide", body, {"Content-Type": "application/json"}, method="POST"
        )
        return json.loads(self.opener.open(req, timeout=30).read())


def _kill(proc):
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)


def test_kill_between_submissions_loses_and_duplicates_nothing(sample, tmp_path):
    log = tmp_path / "review.jsonl"
    port = free_port()
    proc = start_server(_args(sample, log), port)
    try:
        b = Browser(f"http://127.0.0.1:{port}/")
        title1, lease1 = b.field()
        assert b.decide(lease1, "correct", "first")["logged"] is True
        _kill(proc)  # no shutdown, no flush beyond what the submit already did
        with log.open("a") as fh:  # and a write cut short by a crash of some other writer
            fh.write('{"doc_id": "d0')
        proc = start_server(_args(sample, log), port)
        title2, lease2 = b.field()
        assert title2 != title1  # resumed after the logged decision
        assert b.decide(lease2, "absent")["logged"] is True
        assert b.decide(lease1, "correct", "first")["logged"] is False  # a retry after the crash
        assert b.decide(lease2, "absent")["logged"] is False
        _kill(proc)
        proc = start_server(_args(sample, log), port)
        title3, _ = b.field()
        assert title3 not in (title1, title2)
    finally:
        _kill(proc)
    decisions = read_log(log)
    assert [(d.action, d.final_value) for d in decisions] == [
        ("correct", "first"),
        ("absent", None),
    ]
    assert len({(d.doc_id, d.field) for d in decisions}) == 2
    assert len(log.read_text().splitlines()) == 2  # the cut-short line was dropped


def test_two_clients_never_get_the_same_field_within_the_lease(sample, tmp_path):
    log = tmp_path / "review.jsonl"
    port = free_port()
    proc = start_server(_args(sample, log, "--lease", "4"), port)
    try:
        base = f"http://127.0.0.1:{port}/"
        alice, bob = Browser(base), Browser(base)
        a1, la = alice.field()
        b1, lb = bob.field()
        assert a1 != b1 and la != lb
        for _ in range(3):  # reloads within the lease keep each on their own field
            assert alice.field() == (a1, la) and bob.field() == (b1, lb)
        assert bob.decide(lb)["logged"] is True
        assert bob.field()[0] not in (a1, b1)
        time.sleep(4.5)  # alice went quiet: her lease expires and her field goes to carol
        carol = Browser(base)
        assert carol.field()[0] == a1
        with pytest.raises(urllib.error.HTTPError) as e:
            alice.decide(la)  # too late: carol holds it now
        assert e.value.code == 409
    finally:
        _kill(proc)
    assert len(read_log(log)) == 1


def test_non_local_bind_needs_the_token_on_every_request(sample, tmp_path):
    port = free_port()
    token = "t0ken-for-test"
    proc = start_server(_args(sample, tmp_path / "r.jsonl", "--host", "0.0.0.0",
                              "--token", token), port)  # fmt: skip
    try:
        base = f"http://127.0.0.1:{port}"
        for path in ("/", "/static/review.js", "/progress", "/page?doc=d000&n=1", "/missing"):
            with pytest.raises(urllib.error.HTTPError) as e:
                urllib.request.urlopen(base + path, timeout=30)
            assert e.value.code == 401, path
        req = urllib.request.Request(
            base + "/progress", headers={"Authorization": f"Bearer {token}"}
        )
        assert json.loads(urllib.request.urlopen(req, timeout=30).read())["left"] > 0
        assert urllib.request.urlopen(f"{base}/?token={token}", timeout=30).status == 200
    finally:
        _kill(proc)
