"""The strings of what the console shows of feeds, articles and the web
archive, merged into catalog.py's dicts (the same checks apply: both
languages have the same keys and placeholders)."""

from __future__ import annotations

from typing import Final

EN: Final[dict[str, str]] = {
    "news.discovery": "Feeds: discovery",
    "news.discovery_hint": (
        "Articles of feeds jobs fetched since the master started, by the source that named"
        " them first; feed and sitemap entries left out, by reason; and the discovery"
        " latency (from an article's stated publication to its result at the master) over"
        " the latest 1,000 articles timed per domain. Also in {source}."
    ),
    "news.domain_hint": (
        "From an article's stated publication to its result at the master, over the latest"
        " 1,000 articles of this domain timed in each feeds job, since the master started."
    ),
    "news.source.feed": "Feed",
    "news.source.sitemap": "Sitemap",
    "news.source.hub": "Hub page",
    "news.source.link": "Other link",
    "news.total": "Articles",
    "news.failed": "Entries left out",
    "news.reason.no_url": "no link",
    "news.reason.bad_date": "unreadable date",
    "news.reason.over_limit": "past max_entries",
    "news.none": "none",
    "news.latency_of": "Discovery latency of job {job}",
    "news.domain": "Domain",
    "news.timed": "Articles timed",
    "news.no_latency": (
        "No article timed yet: only articles published after the master first read their"
        " feed, with a stated date, are timed."
    ),
    "news.more_domains": "And {count} more domains (all of them in /api/stats).",
    "news.articles": "Articles",
    "news.articles_hint": (
        "Since the master started, per job: near-duplicate pages (marked with"
        " near_duplicate_of, or dropped: stored without their item), fields that took the"
        " generic step, and pages whose extraction was given up, by reason."
    ),
    "news.marked": "Near-duplicates marked",
    "news.dropped": "Near-duplicates dropped",
    "news.fallbacks": "Generic step, by field",
    "news.given_up": "Given up, by reason",
    "url.near_duplicate_of": "Near-duplicate of",
    "url.article": "Article (latest version)",
    "url.words": "{count} words",
}

ZH_CN: Final[dict[str, str]] = {
    "news.discovery": "订阅源：发现",
    "news.discovery_hint": (
        "主节点启动以来订阅源任务抓取的文章，按最先指向它们的来源统计；按原因统计被略过的订阅源"
        "和站点地图条目；以及发现延迟（从文章声明的发布时间到其结果到达主节点），按每个域名最近"
        "计时的 1,000 篇文章计算。也见 {source}。"
    ),
    "news.domain_hint": (
        "从文章声明的发布时间到其结果到达主节点，按每个订阅源任务中此域名最近计时的 1,000 篇文章"
        "计算，自主节点启动以来。"
    ),
    "news.source.feed": "订阅源",
    "news.source.sitemap": "站点地图",
    "news.source.hub": "聚合页",
    "news.source.link": "其他链接",
    "news.total": "文章",
    "news.failed": "被略过的条目",
    "news.reason.no_url": "没有链接",
    "news.reason.bad_date": "日期无法读取",
    "news.reason.over_limit": "超过 max_entries",
    "news.none": "无",
    "news.latency_of": "任务 {job} 的发现延迟",
    "news.domain": "域名",
    "news.timed": "计时的文章",
    "news.no_latency": (
        "还没有计时的文章：只有在主节点第一次读取其订阅源之后发布、并声明了日期的文章才会计时。"
    ),
    "news.more_domains": "另有 {count} 个域名（全部见 /api/stats）。",
    "news.articles": "文章",
    "news.articles_hint": (
        "主节点启动以来，按任务统计：近似重复的页面（标记 near_duplicate_of，或丢弃：存储时不带"
        "其条目）、使用通用步骤的字段，以及按原因统计放弃抽取的页面。"
    ),
    "news.marked": "已标记的近似重复",
    "news.dropped": "已丢弃的近似重复",
    "news.fallbacks": "通用步骤（按字段）",
    "news.given_up": "已放弃（按原因）",
    "url.near_duplicate_of": "近似重复于",
    "url.article": "文章（最新版本）",
    "url.words": "{count} 个词",
}
