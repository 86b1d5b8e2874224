"""The MongoDB store: connection, documents, indexes, batched writes and the local spool for when
MongoDB is away.
"""
