"""The words of an alert, in English or Chinese, and the webhook's JSON payload.

Every text names what it is about (job, domain or worker), the number the
rule measured and the threshold it was compared with; a resolved notice
says what is over. What came from a page or a peer goes into a text through
escape.safe, in the channel's format; the payload's data fields keep it raw.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from nadird.master.alerts.engine import Event
from nadird.master.alerts.escape import Format, safe
from nadird.revisit.durations import format_duration

SEVERITY = {
    "en": {"info": "INFO", "warning": "WARNING", "critical": "CRITICAL", "resolved": "RESOLVED"},
    "zh": {"info": "提示", "warning": "警告", "critical": "严重", "resolved": "已恢复"},
}
TEXTS = {
    "en": {
        "stall": "no page stored for {value} while {queued} URLs are queued "
        "(threshold {threshold}), job {job}",
        "blocked": "domain {domain} answered {statuses} {value} times in a row "
        "(threshold {threshold}): the crawler may be blocked, job {job}",
        "worker_gone": "worker {worker} silent or gone for {value} (threshold {threshold}), "
        "job {job}",
        "error_rate": "domain {domain}: error rate {value} over {window} "
        "({pages} pages, threshold {threshold}), job {job}",
        "dead_letters": "{value} URLs moved to the dead letters within {window} "
        "(threshold {threshold}), job {job}",
        "job_finished": "crawl finished: {value} pages stored in this run "
        "({stored_total} in the store), job {job}",
        "change": "{field} of {url} went from {old} to {new}{condition}, job {job}",
        "replica_lag": "the replica of the master's state is {value} behind "
        "(threshold {threshold}): losing this machine now would lose that much, job {job}",
        "replica_superseded": "this master stops: {reason}",
    },
    "zh": {
        "stall": "已有 {value} 没有存储任何页面，队列中仍有 {queued} 个 URL"
        "（阈值 {threshold}），任务 {job}",
        "blocked": "域名 {domain} 连续 {value} 次返回 {statuses}（阈值 {threshold}），"
        "爬虫可能已被封禁，任务 {job}",
        "worker_gone": "工作节点 {worker} 已失联 {value}（阈值 {threshold}），任务 {job}",
        "error_rate": "域名 {domain} 在 {window} 内错误率为 {value}（共 {pages} 个页面，"
        "阈值 {threshold}），任务 {job}",
        "dead_letters": "{window} 内有 {value} 个 URL 进入死信队列（阈值 {threshold}），任务 {job}",
        "job_finished": "爬取完成：本次运行存储 {value} 个页面（存储中共 {stored_total} 个），"
        "任务 {job}",
        "change": "{url} 的 {field} 从 {old} 变为 {new}{condition}，任务 {job}",
        "replica_lag": "主节点状态的副本落后 {value}（阈值 {threshold}）："
        "此时失去这台机器将丢失这段时间的状态，任务 {job}",
        "replica_superseded": "本主节点停止运行：另一个主节点已接管其状态副本，"
        "不再分发任务，也不再复制到该副本。{reason}",
    },
}
# A resolved notice says the problem is over (the value is the last measured).
RESOLVED_TEXTS = {
    "en": {
        "stall": "pages are stored again (none was stored for {value}), job {job}",
        "blocked": "domain {domain} answers again (it had answered {statuses} {value} "
        "times in a row), job {job}",
        "worker_gone": "worker {worker} is back (it was silent or gone for {value}), job {job}",
        "error_rate": "domain {domain}: error rate back under {threshold} over {window}, job {job}",
        "dead_letters": "dead letters back under {threshold} within {window}, job {job}",
        "replica_lag": "the replica of the master's state caught up (it was {value} behind), "
        "job {job}",
    },
    "zh": {
        "stall": "已恢复存储页面（此前 {value} 没有存储任何页面），任务 {job}",
        "blocked": "域名 {domain} 已恢复正常应答（此前连续 {value} 次返回 {statuses}），任务 {job}",
        "worker_gone": "工作节点 {worker} 已恢复（此前失联 {value}），任务 {job}",
        "error_rate": "域名 {domain} 在 {window} 内的错误率已回到阈值 {threshold} 以下，任务 {job}",
        "dead_letters": "{window} 内进入死信队列的 URL 已回到阈值 {threshold} 以下，任务 {job}",
        "replica_lag": "主节点状态的副本已追上（此前落后 {value}），任务 {job}",
    },
}
CONDITION_TEXTS = {
    "en": {
        "any": "",
        "below": " (below {limit})",
        "above": " (above {limit})",
        "drop_percent": " (down more than {limit}%)",
        "rise_percent": " (up more than {limit}%)",
    },
    "zh": {
        "any": "",
        "below": "（低于 {limit}）",
        "above": "（高于 {limit}）",
        "drop_percent": "（降幅超过 {limit}%）",
        "rise_percent": "（涨幅超过 {limit}%）",
    },
}
NOTHING = {"en": "(nothing)", "zh": "（无）"}
UNKNOWN = "?"
SHOWN_CHARS = 100  # of a changed text value
ALL_JOBS = {"en": "(all jobs)", "zh": "（全部任务）"}
# Rule types whose value and threshold are seconds, shown as 5m, 1h30m.
DURATIONS = frozenset({"stall", "worker_gone", "replica_lag"})


def _number(value: float | None) -> str:
    if value is None:
        return UNKNOWN
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return UNKNOWN
    return format_duration(round(seconds)) if seconds >= 1 else f"{seconds:.2g}s"


def measure(value: float | None) -> float | int | None:
    """A measure as the payload carries it: 12 not 12.0, 5.5 not 5.498845225000082."""
    if value is None:
        return None
    rounded = round(value, 3)
    return int(rounded) if float(rounded).is_integer() else rounded


def _value(value: object, language: str) -> str:
    """A field's value as a text shows it: numbers plainly, text cut short."""
    if value is None:
        return NOTHING[language]
    if isinstance(value, int | float) and not isinstance(value, bool):
        return _number(value)
    shown = str(value)
    return shown if len(shown) <= SHOWN_CHARS else shown[:SHOWN_CHARS] + "..."


def _change_fields(event: Event, language: str) -> dict[str, str]:
    details = event.details
    condition = CONDITION_TEXTS[language][str(details.get("when", "any"))]
    return {
        "old": _value(details.get("old"), language),
        "new": _value(details.get("new"), language),
        "condition": condition.format(limit=_number(event.threshold)),
    }


def text(event: Event, language: str, fmt: Format = "text") -> str:
    """One line: `[WARNING] nadird: ...`; the values from pages and peers
    escaped for `fmt`."""
    rule = event.rule
    shown = _duration if rule.type in DURATIONS else _number
    fields: dict[str, Any] = {
        "job": rule.job or ALL_JOBS[language],
        "queued": UNKNOWN,
        "pages": UNKNOWN,
        "stored_total": UNKNOWN,
        "domain": event.subject,
        "worker": event.subject,
        "statuses": "/".join(str(s) for s in rule.statuses),
        **{k: str(v) for k, v in event.details.items()},
        "value": shown(event.value),
        "threshold": shown(event.threshold),
    }
    if "window" in event.details:
        fields["window"] = _duration(float(str(event.details["window"])))
    if rule.type == "change":
        fields.update(_change_fields(event, language))
    fields = {k: safe(v, fmt) if k != "condition" else v for k, v in fields.items()}
    resolved = event.state == "resolved"
    label = SEVERITY[language]["resolved" if resolved else rule.severity]
    words = (RESOLVED_TEXTS if resolved else TEXTS)[language][rule.type]
    return f"[{label}] nadird: " + words.format(**fields)


def _iso(monotonic_at: float) -> str:
    wall = time.time() - (time.monotonic() - monotonic_at)
    return datetime.fromtimestamp(wall, UTC).isoformat(timespec="seconds")


def payload(event: Event, language: str, master: str) -> dict[str, Any]:
    """The JSON a `webhook` channel POSTs (docs/operations/alerts.md): the
    data fields as measured or found, raw; `value` and `threshold` left out
    when the rule has none; `text` safe to show."""
    rule = event.rule
    measures = {"value": event.value, "threshold": event.threshold}
    return {
        "source": "nadird",
        "master": master,
        "rule": rule.type,
        "rule_index": event.index,
        "state": event.state,
        "severity": rule.severity,
        "subject": event.subject,
        "job": rule.job,
        **{k: measure(v) for k, v in measures.items() if v is not None},
        "details": {k: v for k, v in event.details.items()},
        "since": _iso(event.since),
        "at": _iso(event.at),
        "repeat": event.repeat,
        "language": language,
        "text": text(event, language),
    }
