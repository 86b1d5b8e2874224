"""Optional step of a worker: a page run in headless Chromium, every request it makes answered by
the fetcher.
"""
