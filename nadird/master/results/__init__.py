"""Stage 3 of the master: a worker's page results counted, retried when worth it, and written to
the store in batches.
"""
