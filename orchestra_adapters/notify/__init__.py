"""Notifications (`notify:` in orchestra.yaml): webhooks and commands told about a run's events, in the background."""
