"""Stage 2 of a worker: from bytes to a document, and what the job reads from it (fields, robots
directives).
"""
