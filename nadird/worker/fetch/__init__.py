"""Stage 1 of a worker: getting bytes from the network (HTTP, DNS, addresses, proxies, robots.txt,
pace, sitemaps).
"""
