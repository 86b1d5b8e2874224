"""Items users can load as they are: field processors and a schema per job.

`numbers` and `dates` turn scraped strings into values, `processors` runs a
field's declared steps in order, `schema` checks the result and records why an
item is invalid.
"""
