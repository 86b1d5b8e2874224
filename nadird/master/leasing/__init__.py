"""Stage 2 of the master: handing domains out to workers as leases, and taking back only the
results those leases allow.
"""
