"""/act/<token>: the approve / reject links of an email (services/notifications/links.py). No session: the signed,
single-use token bound to its person is the credential. A GET only shows what the link would do, with an optional
comment (mail scanners fetch links; a GET never decides); the POST decides. A link that no longer decides (used,
expired, decided elsewhere, forged) gets a page saying so, with status 409."""

from __future__ import annotations

from flask import Blueprint, render_template_string, request

from api.context import services
from core.errors import CoachError
from services.decisions import links as link_decisions
from services.notifications import links
from services.orm import utcnow

blp = Blueprint("action_links", __name__)

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>Coach: {{ title }}</title>
<style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;line-height:1.5}
textarea{width:100%;min-height:5rem}button{font-size:1rem;padding:.5rem 1.2rem}.refused{color:#9b1c1c}</style>
</head><body><h1>{{ title }}</h1>
{% if message %}<p class="{{ 'refused' if refused else '' }}">{{ message }}</p>{% endif %}
{% if approval %}<p><strong>{{ approval.message }}</strong></p>
{% if approval.tool %}<p>Tool: <code>{{ approval.tool }}</code></p>{% endif %}{% endif %}
{% if form %}<form method="post">
<label for="comment">Comment (optional)</label><textarea id="comment" name="comment" maxlength="5000"></textarea>
<p><button type="submit">{{ verb }}</button></p></form>{% endif %}
{% if app_url %}<p><a href="{{ app_url }}">Open it in Coach</a></p>{% endif %}
</body></html>"""


def _page(
    status: int,
    title: str,
    message: str = "",
    *,
    refused: bool = False,
    approval=None,
    form: bool = False,
    verb: str = "",
    app_url: str | None = None,
):
    html = render_template_string(
        PAGE, title=title, message=message, refused=refused, approval=approval, form=form, verb=verb, app_url=app_url
    )
    return (
        html,
        status,
        {"Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store", "Referrer-Policy": "no-referrer"},
    )


@blp.get("/act/<token>")
def confirm(token: str):
    svc = services()
    with svc.db.read() as session:
        opened = links.open_token(session, svc, token, utcnow())
        if opened.open_app:
            return _page(
                200,
                "Decide in Coach",
                "This review is decided in Coach, not from an email link.",
                approval=opened.approval,
                app_url=opened.open_app,
            )
        if opened.refusal:
            return _page(409, "This link does not decide", opened.refusal, refused=True)
        verb = "Approve" if opened.decision == "approve" else "Reject"
        return _page(
            200,
            f"{verb}?",
            "Nothing is decided until you press the button.",
            approval=opened.approval,
            form=True,
            verb=verb,
        )


@blp.post("/act/<token>")
def decide(token: str):
    comment = (request.form.get("comment") or "").strip()[:5000]
    try:
        answer = link_decisions.use(services(), token, comment)
    except link_decisions.Refused as exc:
        return _page(409, "This link does not decide", str(exc), refused=True)
    except CoachError as exc:  # decided elsewhere meanwhile (409), no longer allowed to decide (403) …
        return _page(409, "This link does not decide", exc.message, refused=True)
    status = answer["approval"]["status"]
    return _page(200, "Done", f"Your decision was recorded; the approval is {status}.", approval=answer["approval"])
