"""Tenants fully apart (issue #11): adding a user is an invitation they accept, a user's workspace never moves
behind their back, admins manage only their own members (never leaving a workspace without an admin), logout ends
the cookie. Through the Flask test client, on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from services.models.users import User
from services.users import tokens

pytestmark = pytest.mark.shared_app  # an app per module and database (tests/conftest.py SharedApps)

PASSWORD = "password-123"  # make_user's


def _user(services, email: str, role: str, slug: str) -> str:
    """A user with `role` in workspace `slug` (made if need be, now): a bearer token of theirs."""
    from tests.conftest import make_user

    return make_user(services, email, role, slug)


class Caller:
    def __init__(self, app, token: str | None = None, workspace: str | None = None):
        self.client = app.test_client()
        if token:
            self.client.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {token}"
        if workspace:
            self.client.environ_base["HTTP_X_COACH_WORKSPACE"] = workspace

    def __call__(self, method: str, path: str, json=None, **kwargs):
        response = self.client.open(path, method=method, json=json, **kwargs)
        return response.status_code, response.get_json(silent=True)


def _login(app, email: str, password: str = PASSWORD, **more):
    client = app.test_client()
    response = client.post("/api/auth/login", json={"email": email, "password": password, **more})
    return client, response


def _audit_actions(caller: Caller) -> list[str]:
    status, body = caller("GET", "/api/audit?per_page=200")
    assert status == 200, body
    return [e["action"] for e in body["items"]]


@pytest.fixture
def tenants(app, services):
    """Workspace "evil" (made first, so it is the older one) with its admin; then workspace "home" with the
    victim, an operator there."""
    evil = _user(services, "mallory@evil.test", "admin", "evil")
    victim = _user(services, "victim@home.test", "operator", "home")
    home_admin = _user(services, "boss@home.test", "admin", "home")
    return {
        "evil": Caller(app, evil),
        "victim": Caller(app, victim),
        "home_admin": Caller(app, home_admin),
        "victim_token": victim,
    }


# ---- item 3: adding someone is an invitation ------------------------------------------------------------------
def test_adding_an_existing_user_of_another_tenant_neither_reveals_nor_captures_them(app, services, tenants):
    evil, victim = tenants["evil"], tenants["victim"]
    existing = evil("POST", "/api/users", {"email": "victim@home.test", "role": "admin"})
    unknown = evil("POST", "/api/users", {"email": "nobody@home.test", "role": "admin"})
    # the same answer whether or not the email has an account: no id, nothing to enumerate
    assert existing[0] == unknown[0] == 202, (existing, unknown)
    assert existing[1] == {"status": "invited", "email": "victim@home.test", "role": "admin"}
    assert {k: v for k, v in unknown[1].items() if k != "email"} == {
        k: v for k, v in existing[1].items() if k != "email"
    }
    # the victim is not a member of evil, and still lands in home (evil's workspace is the older one)
    status, members = evil("GET", "/api/users")
    assert "victim@home.test" not in {m["email"] for m in members["items"]}
    me = victim("GET", "/api/auth/me")[1]
    assert [w["slug"] for w in me["workspaces"]] == ["home"] and me["role"] == "operator"
    assert victim("GET", "/api/auth/me")[1]["workspace_id"] == me["workspaces"][0]["id"]
    _, login = _login(app, "victim@home.test")
    assert login.status_code == 200 and login.get_json()["workspace_id"] == me["workspaces"][0]["id"]
    # the invitation waits for the victim, who may decline it
    status, mine = victim("GET", "/api/auth/invitations")
    assert status == 200 and [(i["workspace"]["slug"], i["role"], i["invited_by"]) for i in mine["items"]] == [
        ("evil", "admin", "mallory@evil.test")
    ]
    assert victim("POST", f"/api/auth/invitations/{mine['items'][0]['id']}/decline")[0] == 204
    assert victim("GET", "/api/auth/invitations")[1]["items"] == []
    assert [w["slug"] for w in victim("GET", "/api/auth/me")[1]["workspaces"]] == ["home"]


def test_an_accepted_invitation_joins_without_moving_the_users_workspace(app, services, tenants):
    evil, victim = tenants["evil"], tenants["victim"]
    assert evil("POST", "/api/users", {"email": "victim@home.test", "role": "lead"})[0] == 202
    invitations = evil("GET", "/api/users/invitations")[1]["items"]
    assert [(i["email"], i["role"], i["status"]) for i in invitations] == [("victim@home.test", "lead", "pending")]
    inv_id = victim("GET", "/api/auth/invitations")[1]["items"][0]["id"]
    # nobody else can accept it, and no other workspace's admin can cancel it
    assert tenants["home_admin"]("POST", f"/api/auth/invitations/{inv_id}/accept")[0] == 404
    assert tenants["home_admin"]("DELETE", f"/api/users/invitations/{inv_id}")[0] == 404
    status, accepted = victim("POST", f"/api/auth/invitations/{inv_id}/accept")
    assert status == 200 and accepted["workspace"]["slug"] == "evil" and accepted["workspace"]["role"] == "lead"
    status, again = victim("POST", f"/api/auth/invitations/{inv_id}/accept")
    assert status == 409 and again["error"]["code"] == "conflict"
    me = victim("GET", "/api/auth/me")[1]
    assert {w["slug"]: w["role"] for w in me["workspaces"]} == {"evil": "lead", "home": "operator"}
    home_id = next(w["id"] for w in me["workspaces"] if w["slug"] == "home")
    assert (me["workspace_id"], me["role"]) == (home_id, "operator")  # still home, although evil is older
    assert Caller(app, tenants["victim_token"], "evil")("GET", "/api/auth/me")[1]["role"] == "lead"
    assert "invitation_create" in _audit_actions(evil) and "invitation_accept" in _audit_actions(evil)
    # choosing a workspace at login makes it the user's default from then on (their own choice)
    _, login = _login(app, "victim@home.test", workspace="evil")
    assert login.get_json()["role"] == "lead"
    assert victim("GET", "/api/auth/me")[1]["role"] == "lead"


def test_an_admin_cancels_an_invitation_and_a_new_email_with_a_password_gets_an_account(app, services, tenants):
    evil = tenants["evil"]
    status, body = evil(
        "POST", "/api/users", {"email": "New.Person@Evil.test", "password": PASSWORD, "role": "operator", "name": "New"}
    )
    assert status == 202 and body["email"] == "new.person@evil.test"
    client, login = _login(app, "new.person@evil.test")
    assert login.status_code == 200 and login.get_json()["workspace_id"] is None  # not a member before accepting
    pending = client.get("/api/auth/invitations").get_json()["items"]
    assert len(pending) == 1
    # an existing account's password is never changed by an invitation
    assert (
        evil("POST", "/api/users", {"email": "victim@home.test", "password": "evil-password-1", "role": "operator"})[0]
        == 202
    )
    assert _login(app, "victim@home.test", "evil-password-1")[1].status_code == 401
    # cancel the victim's invitation: it is gone for them
    inv = next(i for i in evil("GET", "/api/users/invitations")[1]["items"] if i["email"] == "victim@home.test")
    assert evil("DELETE", f"/api/users/invitations/{inv['id']}")[0] == 204
    assert evil("DELETE", f"/api/users/invitations/{inv['id']}")[0] == 409
    assert tenants["victim"]("GET", "/api/auth/invitations")[1]["items"] == []
    assert "invitation_cancel" in _audit_actions(evil)
    # accepting the new person's invitation lands them in evil (their first workspace)
    csrf = login.get_json()["csrf_token"]
    response = client.post(f"/api/auth/invitations/{pending[0]['id']}/accept", headers={"X-CSRF-Token": csrf})
    assert response.status_code == 200
    assert client.get("/api/auth/me").get_json()["role"] == "operator"


@pytest.mark.parametrize(
    "body",
    [
        {"email": "not an email", "role": "operator"},
        {"email": "a@b.test", "role": "king"},
        {"email": "a@b.test", "role": "operator", "password": "short"},
        {"role": "operator"},
        ["a list"],
    ],
)
def test_a_bad_invitation_is_a_422_never_a_500(tenants, body):
    status, answer = tenants["evil"]("POST", "/api/users", body)
    assert status in (400, 422) and set(answer["error"]) == {"code", "message", "details"}, answer


@pytest.mark.parametrize("path", ["/api/auth/invitations/nope/accept", "/api/auth/invitations/nope/decline"])
def test_an_unknown_invitation_is_a_404(tenants, path):
    status, answer = tenants["victim"]("POST", path)
    assert status == 404 and answer["error"]["code"] == "not_found"


# ---- item 9: admins manage their own members ---------------------------------------------------------------------
def _id_of(caller: Caller, email: str) -> str:
    return next(m["id"] for m in caller("GET", "/api/users")[1]["items"] if m["email"] == email)


def test_an_admin_removes_disables_and_revokes_the_tokens_of_a_member_of_their_workspace_only(app, services, tenants):
    home_admin, victim = tenants["home_admin"], tenants["victim"]
    # the victim is also a member of evil: nothing done in home may touch that
    _user(services, "victim@home.test", "operator", "evil")
    victim_id = _id_of(home_admin, "victim@home.test")
    in_evil = Caller(app, tenants["victim_token"], "evil")

    status, member = home_admin("POST", f"/api/users/{victim_id}/disable")
    assert status == 200 and member["disabled"] is True
    status, refused = victim("GET", "/api/workflows", headers={"X-Coach-Workspace": "home"})
    assert (status, refused["error"]["code"]) == (403, "member_disabled"), refused  # said so, not "not found"
    assert refused["error"]["message"].startswith("an admin disabled your access to ")
    assert refused["error"]["details"]["workspace"]["slug"] == "home"
    assert in_evil("GET", "/api/workflows")[0] == 200  # another workspace: untouched
    assert home_admin("POST", f"/api/users/{victim_id}/enable")[1]["disabled"] is False
    assert victim("GET", "/api/workflows", headers={"X-Coach-Workspace": "home"})[0] == 200

    assert home_admin("DELETE", f"/api/users/{victim_id}/tokens")[0] == 204
    assert victim("GET", "/api/workflows", headers={"X-Coach-Workspace": "home"})[0] == 404
    assert in_evil("GET", "/api/workflows")[0] == 200
    fresh = tokens.create_token  # a token made afterwards works in home again
    with services.db.transaction() as session:
        _, secret = fresh(session, session.get(User, victim_id), "after")
    assert Caller(app, secret, "home")("GET", "/api/workflows")[0] == 200

    assert home_admin("DELETE", f"/api/users/{victim_id}")[0] == 204
    assert Caller(app, secret, "home")("GET", "/api/workflows")[0] == 404
    assert "victim@home.test" not in {m["email"] for m in home_admin("GET", "/api/users")[1]["items"]}
    assert Caller(app, secret)("GET", "/api/auth/me")[1]["workspaces"][0]["slug"] == "evil"
    actions = _audit_actions(home_admin)
    assert {"member_disable", "member_enable", "member_tokens_revoke", "member_remove"} <= set(actions)
    # another workspace's member is not found here
    mallory_id = Caller(app, _user(services, "mallory@evil.test", "admin", "evil"))("GET", "/api/auth/me")[1]
    for method, path in (
        ("DELETE", "/api/users/{}"),
        ("POST", "/api/users/{}/disable"),
        ("DELETE", "/api/users/{}/tokens"),
        ("PUT", "/api/users/{}/role"),
    ):
        status, body = home_admin(method, path.format(mallory_id["user"]["id"]), {"role": "operator"})
        assert (status, body["error"]["code"]) == (404, "not_found"), (method, path)


def test_the_last_admin_cannot_be_demoted_disabled_or_removed(app, services, tenants):
    evil = tenants["evil"]
    me = evil("GET", "/api/auth/me")[1]["user"]["id"]
    for method, path, body in (
        ("PUT", f"/api/users/{me}/role", {"role": "operator"}),
        ("POST", f"/api/users/{me}/disable", None),
        ("DELETE", f"/api/users/{me}", None),
    ):
        status, answer = evil(method, path, body)
        assert (status, answer["error"]["code"]) == (409, "conflict"), (path, answer)
    assert evil("GET", "/api/auth/me")[1]["role"] == "admin"
    # with a second admin, the first may step down
    _user(services, "second@evil.test", "admin", "evil")
    status, answer = evil("PUT", f"/api/users/{me}/role", {"role": "lead"})
    assert status == 200 and answer["role"] == "lead"


# ---- item 11: logout ends the cookie -----------------------------------------------------------------------------
def test_logout_invalidates_a_copied_cookie(app, tenants):
    client, login = _login(app, "victim@home.test")
    cookie = client.get_cookie("coach_session").value
    thief = app.test_client()
    thief.set_cookie("coach_session", cookie)
    assert thief.get("/api/auth/me").status_code == 200
    assert client.post("/api/auth/logout", headers={"X-CSRF-Token": login.get_json()["csrf_token"]}).status_code == 204
    response = thief.get("/api/auth/me")
    assert response.status_code == 401 and response.get_json()["error"]["code"] == "unauthorized"
    # a bearer token of the same user still works, and a new login makes a working cookie
    assert tenants["victim"]("GET", "/api/auth/me")[0] == 200
    again, _ = _login(app, "victim@home.test")
    assert again.get("/api/auth/me").status_code == 200
    assert "logout" in _audit_actions(tenants["home_admin"])


def test_me_names_the_workspaces_where_an_admin_disabled_the_user(app, tenants):
    """A member disabled in their only workspace still logs in (the account is theirs), has no workspace to act in,
    and /api/auth/me says where they were disabled, so the web app can tell them whom to ask (issue #31, item 6)."""
    home_admin = tenants["home_admin"]
    victim_id = _id_of(home_admin, "victim@home.test")
    client, response = _login(app, "victim@home.test")
    assert response.status_code == 200 and response.get_json()["disabled_workspaces"] == []

    assert home_admin("POST", f"/api/users/{victim_id}/disable")[0] == 200
    me = client.get("/api/auth/me")
    assert me.status_code == 200, me.get_json()
    body = me.get_json()
    assert body["workspaces"] == [] and body["workspace_id"] is None
    assert [w["slug"] for w in body["disabled_workspaces"]] == ["home"]
    assert body["disabled_workspaces"][0]["name"]

    assert home_admin("POST", f"/api/users/{victim_id}/enable")[0] == 200
    body = client.get("/api/auth/me").get_json()
    assert [w["slug"] for w in body["workspaces"]] == ["home"] and body["disabled_workspaces"] == []
