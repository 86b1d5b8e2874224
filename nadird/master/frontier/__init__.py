"""Stage 1 of the master: which URLs enter the crawl (admission, the seen set) and wait in per-
domain queues on disk.
"""
