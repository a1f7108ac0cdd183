import requests

from review.localserver import Reply


def test_routes_prefixes_faults_and_request_log(local_server):
    local_server.route("/a", Reply(200, "hello", {"Content-Type": "text/plain"}))
    local_server.route("/files/", lambda req: Reply(200, req.path.upper()), prefix=True)
    local_server.route("/cut", Reply(200, b"x" * 1000, truncate_to=10))
    assert requests.get(local_server.url + "/a", timeout=5).text == "hello"
    assert requests.get(local_server.url + "/files/q?x=1", timeout=5).text == "/FILES/Q"
    assert requests.get(local_server.url + "/missing", timeout=5).status_code == 404
    try:
        requests.get(local_server.url + "/cut", timeout=5).content
        raise AssertionError("a truncated body must not read as complete")
    except requests.exceptions.ChunkedEncodingError:
        pass
    assert [r.path for r in local_server.requests][:2] == ["/a", "/files/q"]
    assert local_server.requests[1].query == {"x": ["1"]}
