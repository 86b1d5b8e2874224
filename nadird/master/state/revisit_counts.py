"""The revisit plans' page counts, kept durable beside the schedule.

The master plans each domain over the number of its adaptive pages per
(job, rule, rate class) group (revisit_plan.py). Counting them with a
GROUP BY over the schedule at every start cost 1.9-4.2 s per million known
URLs, so the counts live in a table of their own, `revisit_plan_counts`,
kept exact by triggers on `revisits`: every insert, delete and change of a
row's group moves its count in the same statement, hence in the same
transaction (the frontier's redo transaction replays the statement, and the
trigger with it). No code path can forget them, and a start reads one row
per group. A file from before the table gets it built once, from the
GROUP BY, when it opens.

A row without a rate class yet (plan_class NULL) is counted under NO_CLASS:
a key column must not be NULL for the upsert to find its row, and no rate
class comes near it (classes are >= log10(1e-12) * 32 = -384).
"""

from __future__ import annotations

import sqlite3
import time

from nadird.common.logs import get_logger

log = get_logger()

NO_CLASS = -1_000_000
PlanCount = tuple[str, str, int, int | None, int]  # domain, job, rule, class, pages
_TABLE = "revisit_plan_counts"
_TRIGGERS = ("revisit_counts_insert", "revisit_counts_delete", "revisit_counts_update")
_COLS = "domain, job, plan_rule, plan_class"
_MATCH_OLD = (
    "domain = OLD.domain AND job = OLD.job AND plan_rule = OLD.plan_rule "
    f"AND plan_class = coalesce(OLD.plan_class, {NO_CLASS})"
)
# NEW's group gains a page (`when`: a condition on NEW, in the update trigger).
_ADD = (
    f"INSERT INTO {_TABLE} ({_COLS}, pages) SELECT NEW.domain, NEW.job, NEW.plan_rule, "
    f"coalesce(NEW.plan_class, {NO_CLASS}), 1 WHERE {{when}} "
    f"ON CONFLICT ({_COLS}) DO UPDATE SET pages = pages + 1;"
)
# OLD's group loses one; a count at zero goes (the table then holds what the
# GROUP BY gives).
_REMOVE = (
    f"UPDATE {_TABLE} SET pages = pages - 1 WHERE {{when}} AND {_MATCH_OLD}; "
    f"DELETE FROM {_TABLE} WHERE {{when}} AND {_MATCH_OLD} AND pages <= 0;"
)
_SCHEMA = f"""
CREATE TABLE {_TABLE} (
    domain TEXT NOT NULL,
    job TEXT NOT NULL,
    plan_rule INTEGER NOT NULL,
    plan_class INTEGER NOT NULL,
    pages INTEGER NOT NULL,
    PRIMARY KEY ({_COLS})
) WITHOUT ROWID;
CREATE TRIGGER revisit_counts_insert AFTER INSERT ON revisits
WHEN NEW.plan_rule IS NOT NULL
BEGIN {_ADD.format(when="1")} END;
CREATE TRIGGER revisit_counts_delete AFTER DELETE ON revisits
WHEN OLD.plan_rule IS NOT NULL
BEGIN {_REMOVE.format(when="1")} END;
CREATE TRIGGER revisit_counts_update AFTER UPDATE OF {_COLS} ON revisits
WHEN OLD.domain IS NOT NEW.domain OR OLD.job IS NOT NEW.job
    OR OLD.plan_rule IS NOT NEW.plan_rule OR OLD.plan_class IS NOT NEW.plan_class
BEGIN
    {_REMOVE.format(when="OLD.plan_rule IS NOT NULL")}
    {_ADD.format(when="NEW.plan_rule IS NOT NULL")}
END;
"""
_FILL = f"""
INSERT INTO {_TABLE} ({_COLS}, pages)
SELECT domain, job, plan_rule, coalesce(plan_class, {NO_CLASS}), count(*) FROM revisits
WHERE plan_rule IS NOT NULL GROUP BY domain, job, plan_rule, plan_class;
"""


def _present(db: sqlite3.Connection) -> set[str]:
    names = [_TABLE, *_TRIGGERS]
    marks = ",".join("?" * len(names))
    cur = db.execute(f"SELECT name FROM sqlite_master WHERE name IN ({marks})", names)
    return {str(name) for (name,) in cur}


def prepare_counts(db: sqlite3.Connection) -> None:
    """Create the counts table and its triggers if any part is missing,
    counted once from the schedule; in one transaction (a crash midway
    leaves the file as it was, and the next start does it again)."""
    if _present(db) == {_TABLE, *_TRIGGERS}:
        return
    started = time.perf_counter()
    drops = "".join(f"DROP TRIGGER IF EXISTS {name};" for name in _TRIGGERS)
    db.executescript(f"BEGIN; DROP TABLE IF EXISTS {_TABLE}; {drops} {_SCHEMA} {_FILL} COMMIT;")
    if db.execute("SELECT 1 FROM revisits LIMIT 1").fetchone() is None:
        return  # a new schedule: nothing was counted, nothing to say
    groups = int(db.execute(f"SELECT count(*) FROM {_TABLE}").fetchone()[0])
    log.info(
        "revisit_plan_counts_built",
        groups=groups,
        seconds=round(time.perf_counter() - started, 3),
        reason="the schedule had no durable plan counts: counted once, kept from now on",
    )


def read_counts(db: sqlite3.Connection) -> list[PlanCount]:
    """Every group's count: one row per group, not per page (the rows as
    SQLite gives them: TEXT and INTEGER columns, NO_CLASS back to NULL)."""
    cur = db.execute(
        f"SELECT domain, job, plan_rule, nullif(plan_class, {NO_CLASS}), pages FROM {_TABLE}"
    )
    rows: list[PlanCount] = cur.fetchall()
    return rows


def group_counts(db: sqlite3.Connection) -> list[PlanCount]:
    """The same counts taken from the schedule itself (a full scan): what
    the table must always equal."""
    cur = db.execute(
        "SELECT domain, job, plan_rule, plan_class, count(*) FROM revisits "
        "WHERE plan_rule IS NOT NULL GROUP BY domain, job, plan_rule, plan_class"
    )
    return [
        (str(d), str(j), int(r), None if c is None else int(c), int(n)) for d, j, r, c, n in cur
    ]
