"""Alerts: rules evaluated on the master's state, delivered to chat and mail.

`rules` and `engine` are pure (a snapshot and a clock in, events out);
`channels` delivers events without ever blocking the master; `service`
joins them to the master's housekeeping loop.
"""
