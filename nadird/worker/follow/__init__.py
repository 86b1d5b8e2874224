"""Stage 3 of a worker: a page's links found (find), cleaned and trimmed (filter) by the job's
rules (rules).
"""
