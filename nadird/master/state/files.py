"""The names of the master's files in its state directory (master.state_dir)."""

SEEN_FILE = "seen.bloom"  # the seen set's snapshot
FRONTIER_FILE = "frontier.db"  # queue, admission log, dead letters, revisit schedules
ROBOTS_FILE = "robots.db"  # robots notes (a cache)
