"""Email by SMTP (smtplib): one message per outbox row, its Message-ID made from the row's id so that a resend after a
lost acknowledgement is recognisable as the same message. A review's email carries Approve and Reject links
(services/notifications/links.py), or, for a risky one, a link that opens the web app at the item. Each message is
plain text with an HTML alternative of the same lines, where the links are buttons."""

from __future__ import annotations

import re
import smtplib
from email.message import EmailMessage
from email.utils import make_msgid
from html import escape

from config import Settings


class SendFailed(Exception):
    """A delivery that did not go through (the message says why); retried with backoff."""


def compose(settings: Settings, to: str, row_id: str, subject: str, lines: list[str]) -> EmailMessage:
    message = EmailMessage()
    message["From"] = settings.smtp_from
    message["To"] = to
    message["Subject"] = subject.replace("\n", " ")[:200]
    domain = settings.smtp_from.rsplit("@", 1)[-1] or "coach"
    message["Message-ID"] = make_msgid(idstring=row_id, domain=domain)
    message["X-Coach-Delivery"] = row_id
    message.set_content("\n".join(lines) + "\n")
    message.add_alternative(html(subject, lines), subtype="html")
    return message


LINK = re.compile(r"^(?P<label>.{1,200}?): (?P<url>https?://\S+)$")
BUTTON = (
    "display:inline-block;padding:8px 16px;border-radius:6px;text-decoration:none;font-weight:600;"
    "color:#ffffff;background:{}"
)
COLOURS = {"Approve": "#1a7f37", "Reject": "#cf222e"}


def html(subject: str, lines: list[str]) -> str:
    """The HTML alternative: the subject as a heading, each line a paragraph, and each `Label: https://…` line a
    button to that address (Approve green, Reject red, others blue); everything escaped."""
    body = []
    for line in lines:
        link = LINK.match(line)
        if link is not None:
            label = link["label"]
            style = BUTTON.format(COLOURS.get(label, "#0969da"))
            body.append(f'<p><a href="{escape(link["url"])}" style="{style}">{escape(label)}</a></p>')
        elif line:
            body.append(f"<p>{escape(line).replace(chr(10), '<br>')}</p>")
    return (
        '<!doctype html><html><body style="font-family:system-ui,sans-serif;font-size:15px;color:#1f2328">'
        f'<h2 style="font-size:18px">{escape(subject)}</h2>{"".join(body)}</body></html>\n'
    )


def send(settings: Settings, message: EmailMessage) -> None:
    try:
        with smtplib.SMTP(settings.smtp_host, settings.smtp_port, timeout=settings.smtp_timeout_s) as smtp:
            if settings.smtp_starttls:
                smtp.starttls()
            if settings.smtp_user:
                smtp.login(settings.smtp_user, settings.smtp_password)
            smtp.send_message(message)
    except (OSError, smtplib.SMTPException) as exc:
        raise SendFailed(f"SMTP {settings.smtp_host}:{settings.smtp_port}: {type(exc).__name__}: {exc}") from exc
