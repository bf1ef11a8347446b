"""The admin client with respx (routes answered at the httpx client, tests/http_mock.py):
redirects, retries, error mapping, redaction."""

from __future__ import annotations

import pytest

from lbctl.admin.auth import make_auth
from lbctl.admin.client import (
    LOAD_REPORT,
    TENANTS,
    AdminClient,
    call,
    split_call,
    unload_call,
)
from lbctl.admin.errors import (
    Conflict,
    ConnectionFailed,
    Forbidden,
    HttpError,
    NotFound,
    PreconditionFailed,
    RequestTimeout,
    ServerError,
    Unauthorized,
)
from tests.http_mock import mock

# httpx through pytest: ruff bans module-level httpx imports (they would slow the CLI's start-up)
httpx = pytest.importorskip("httpx")

A = "http://admin:8080"
B = "http://broker-2:8080"
TOKEN = "eyJ.payload.SIGNATURE-SECRET"


def client(**kw) -> AdminClient:
    kw.setdefault("backoff", 0.0)
    return AdminClient(A, auth=make_auth("token", f"token:{TOKEN}"), **kw)


@mock
def test_cross_host_307_keeps_method_body_and_authorization() -> None:
    path = "/admin/v2/namespaces/public/default/0x00000000_0x40000000/split"
    first = mock.put(A + path).mock(return_value=httpx.Response(
        307, headers={"Location": B + path + "?unload=true&splitAlgorithmName=specified_positions_divide"
                      "&authoritative=false"}))
    second = mock.put(B + path).mock(return_value=httpx.Response(204))
    # the owner is a broker of the cluster: the client asks the admin URL for them once
    mock.get(A + "/admin/v2/brokers").mock(return_value=httpx.Response(
        200, json=["broker-1:8080", "broker-2:8080"]))
    with client() as c:
        r = c.request(split_call("public/default", "0x00000000_0x40000000", unload=True,
                                 algorithm="specified_positions_divide", boundaries=[536870912]))
    assert r.status == 204
    for route in (first, second):
        req = route.calls.last.request
        assert req.method == "PUT" and req.content == b"[536870912]"
        assert req.headers["Authorization"] == f"Bearer {TOKEN}"
    assert second.calls.last.request.url.params["authoritative"] == "false"


@mock
def test_relative_location_and_307_keep_the_method() -> None:
    again = mock.put(A + "/admin/v2/namespaces/t/n/unload", params={"authoritative": "true"}).mock(
        return_value=httpx.Response(204))
    mock.put(A + "/admin/v2/namespaces/t/n/unload").mock(return_value=httpx.Response(
        307, headers={"Location": "/admin/v2/namespaces/t/n/unload?authoritative=true"}))
    with client() as c:
        assert c.request(unload_call("t/n")).status == 204
    assert again.called


@mock
def test_more_than_five_redirects_fail() -> None:
    route = mock.get(A + "/admin/v2/clusters").mock(
        return_value=httpx.Response(307, headers={"Location": A + "/admin/v2/clusters"}))
    with client() as c, pytest.raises(HttpError, match="too many redirects"):
        c.clusters()
    assert route.call_count == 6


@mock
def test_reads_retry_on_5xx_and_429() -> None:
    route = mock.get(A + "/admin/v2/clusters").mock(side_effect=[
        httpx.Response(503), httpx.Response(429, headers={"Retry-After": "0"}),
        httpx.Response(200, json=["c1"])])
    with client(retries=2) as c:
        assert c.clusters() == ["c1"]
    assert route.call_count == 3


@mock
def test_reads_retry_on_connection_errors_then_give_up() -> None:
    route = mock.get(A + "/admin/v2/clusters").mock(side_effect=httpx.ConnectError("refused"))
    with client(retries=2) as c, pytest.raises(ConnectionFailed) as e:
        c.clusters()
    assert route.call_count == 3 and e.value.exit_code == 3 and not e.value.sent


@mock
def test_mutations_are_never_retried() -> None:
    route = mock.put(A + "/admin/v2/namespaces/t/n/unload").mock(return_value=httpx.Response(503))
    with client(retries=5) as c, pytest.raises(ServerError):
        c.request(unload_call("t/n"))
    assert route.call_count == 1


@pytest.mark.parametrize(("status", "cls", "code"), [
    (401, Unauthorized, 5), (403, Forbidden, 6), (404, NotFound, 7), (409, Conflict, 8),
    (412, PreconditionFailed, 9), (500, ServerError, 10), (502, ServerError, 10),
    (418, HttpError, 11)])
@mock
def test_status_maps_to_one_error_class(status: int, cls: type, code: int) -> None:
    mock.get(A + "/admin/v2/tenants").mock(
        return_value=httpx.Response(status, json={"reason": "Tenant does not exist"}))
    with client(retries=0) as c, pytest.raises(cls) as e:
        c.json(call(TENANTS))
    assert e.value.exit_code == code
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith(f"GET {A}/admin/v2/tenants: {status}")
    assert msg.endswith("Tenant does not exist")


@mock
def test_html_401_page_gives_its_title() -> None:
    mock.get(A + "/admin/v2/clusters").mock(return_value=httpx.Response(
        401, html="<html><head><title>Error 401 Authentication required</title></head></html>"))
    with client() as c, pytest.raises(Unauthorized, match="Error 401 Authentication required$"):
        c.clusters()


@mock
def test_secrets_are_scrubbed_from_errors_and_traces() -> None:
    mock.get(A + "/admin/v2/clusters").mock(
        return_value=httpx.Response(403, json={"reason": f"token {TOKEN} is not allowed"}))
    lines: list[str] = []
    with client(trace=lines.append) as c, pytest.raises(Forbidden) as e:
        c.clusters()
    assert TOKEN not in str(e.value) and "token *** is not allowed" in str(e.value)
    assert lines and all(TOKEN not in x for x in lines)


def test_url_user_info_is_scrubbed() -> None:
    c = AdminClient("http://user:pa55word@admin:8080")
    assert "pa55word" not in call(LOAD_REPORT).describe(c.admin_url)
    assert c.redact("GET http://user:pa55word@h/x") == "GET http://***@h/x"


@mock
def test_timeout() -> None:
    mock.get(A + "/admin/v2/clusters").mock(side_effect=httpx.ReadTimeout("slow"))
    with client(retries=3) as c, pytest.raises(RequestTimeout, match="no answer within") as e:
        c.clusters()
    assert e.value.exit_code == 4


@mock
def test_gather_keeps_each_failure_in_its_slot() -> None:
    mock.get("http://b1:8080/admin/v2/broker-stats/load-report").mock(
        return_value=httpx.Response(200, json={"cpu": {"usage": 1, "limit": 2}}))
    mock.get("http://b2:8080/admin/v2/broker-stats/load-report").mock(
        return_value=httpx.Response(404, json={"reason": "gone"}))
    with client(retries=0) as c:
        ok, err = c.gather([call(LOAD_REPORT, base=c.broker_url(b)) for b in ("b1:8080", "b2:8080")])
    assert ok == {"cpu": {"usage": 1, "limit": 2}} and isinstance(err, NotFound)


def test_calls_describe_exactly_what_is_sent() -> None:
    c = split_call("public/default", "0x00000000_0x40000000", unload=False,
                   algorithm="specified_positions_divide", boundaries=[1, 2])
    assert c.describe(A) == (
        f"PUT {A}/admin/v2/namespaces/public/default/0x00000000_0x40000000/split"
        "?unload=false&splitAlgorithmName=specified_positions_divide  body: [1,2]")
    u = unload_call("public/default", "0x00000000_0x40000000", "b:8080")
    assert u.url(A).endswith("/0x00000000_0x40000000/unload?destinationBroker=b%3A8080")
    assert unload_call("t/n").body_bytes() == b""
