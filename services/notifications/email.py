"""Email by SMTP (smtplib): one message per outbox row, its Message-ID made from the row's id so that a resend after a
lost acknowledgement is recognisable as the same message. A review's email carries Approve and Reject links
(services/notifications/links.py), or, for a risky one, a link that opens the web app at the item."""
from __future__ import annotations

import smtplib
from email.message import EmailMessage
from email.utils import make_msgid

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
    return message


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
