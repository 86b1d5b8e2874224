"""Revisiting known URLs: the pure core, with no I/O.

durations.py parses "6h"-style durations; policy.py and parse.py hold the
policies a job declares; estimate.py estimates each page's change rate;
allocate.py shares a domain's fetch budget among its pages for freshness;
schedule.py turns a policy and a URL's state into its next due time.
Nothing here reads the clock: callers pass the time.
"""
