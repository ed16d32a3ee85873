"""Slack: a bot posts reviews with Approve / Reject buttons; the interactivity endpoint decides them (docs/slack.md)."""
