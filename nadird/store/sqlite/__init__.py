"""The embedded SQLite store: one file next to the master, its table derived from the record's
declaration.
"""
