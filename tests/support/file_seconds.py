"""Seconds each of the slowest test files took in a whole run, heaviest first.

From `pytest --durations=80` on 2 shared cores (2026-12-02; the sum of the
file's tests among the 80 slowest). tests/conftest.py starts these files
first: xdist hands whole files out (--dist loadfile) in collection order
(--no-loadscope-reorder), so the longest ones no longer come last and leave
one worker finishing a long file while the other idles. Only the order
depends on it: a file missing here runs after these, in collection order.
Measure again when a file grows or shrinks much.
"""

from __future__ import annotations

FILE_SECONDS: dict[str, int] = {
    "tests/cluster/test_render_crawl.py": 175,
    "tests/cluster/test_cluster.py": 125,
    "tests/cluster/test_near_duplicates_crawl.py": 95,
    "tests/cluster/test_mongo_crawl.py": 88,
    "tests/cluster/test_recovery.py": 87,
    "tests/cluster/test_service.py": 86,
    "tests/cluster/test_adoption_crawl.py": 84,
    "tests/cluster/test_item_keys_crawl.py": 79,
    "tests/cluster/test_api.py": 70,
    "tests/cluster/test_requests_crawl.py": 68,
    "tests/cluster/test_restart_hold.py": 67,
    "tests/cluster/test_replica_restore.py": 66,
    "tests/cluster/test_article_crawl.py": 66,
    "tests/cluster/test_forged_results.py": 63,
    "tests/cluster/test_observability.py": 61,
    "tests/cluster/test_worker_masters.py": 58,
    "tests/cluster/test_shipped_configs.py": 58,
    "tests/cluster/test_replica_restore_mongo.py": 58,
    "tests/cluster/test_alerts_cluster.py": 56,
    "tests/cluster/test_feeds_crawl.py": 55,
    "tests/cluster/test_worker_health.py": 49,
    "tests/cluster/test_console_browser_news.py": 49,
    "tests/cluster/test_hostile_worker.py": 48,
    "tests/cluster/test_revisit_etag.py": 46,
    "tests/cluster/test_replica_generation.py": 45,
    "tests/cluster/test_revisit_plan_restart.py": 43,
    "tests/cluster/test_revisit_reschedule_cluster.py": 42,
    "tests/cluster/test_revisit_crawl.py": 42,
    "tests/cluster/test_master_cli.py": 42,
    "tests/cluster/test_console_browser_trust.py": 42,
    # 71 s until its wait for the forgotten bags became the worker's
    # keep_dropped_periods event and its site 7 URLs (alone: 55 s -> 28 s).
    "tests/cluster/test_held_results.py": 36,
    "tests/cluster/test_cookie_crawl.py": 34,
    "tests/cluster/test_local_keys.py": 33,
    "tests/unit/master/test_request_spec.py": 32,
    "tests/cluster/test_replica_sftp.py": 32,
    "tests/cluster/test_robots_shared.py": 31,
    "tests/cluster/test_warc_render.py": 28,
    "tests/cluster/test_crawl_console.py": 26,
    "tests/cluster/test_console_browser_history.py": 26,
    "tests/unit/protocol/test_master_fuzz.py": 25,
    "tests/cluster/test_warc_cluster.py": 25,
    "tests/cluster/test_article_counts.py": 24,
    "tests/cluster/test_alerts_crash_cluster.py": 24,
    "tests/cluster/test_crawl_stop.py": 21,
    "tests/cluster/test_revisit_slots.py": 20,
    "tests/cluster/test_render.py": 20,
    "tests/cluster/test_alerts_change_cluster.py": 20,
    "tests/cluster/test_warc_crawl.py": 18,
}
