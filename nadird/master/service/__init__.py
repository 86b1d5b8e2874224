"""The process around the master's stages: sockets and loops, the management API, status, metrics,
state directory.
"""
