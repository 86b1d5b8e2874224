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
    "news.job_latency": (
        "All {count} articles timed since start: p50 about {p50}, p95 about {p95} (estimated"
        " from the histogram's buckets, as Prometheus's histogram_quantile does). Per domain,"
        " exact over the latest 1,000:"
    ),
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
    "url.archive": "Web archive",
    "url.no_archive": "This master writes no WARC files (no {key} section).",
    "url.not_archived": (
        "None of this page's fetches is in the archive's index (fetched before the archive"
        " was set up, before this version of nadird, or without exchanges from its worker)."
    ),
    "url.archive_hint": (
        "Where the page's own record of each of its latest 20 fetches went, in {dir}; the"
        " command prints the body of a response, the headers of a revisit (no body: not"
        " modified, or the same as the copy before)."
    ),
    "url.fetched": "Fetched",
    "url.record": "Record",
    "url.response_record": "response",
    "url.revisit_record": "revisit",
    "url.warc_file": "WARC file",
    "url.offset": "Offset",
    "url.extract": "Read it back",
    "url.writing": "being written: its name ends in .open until closed",
    "url.file_gone": "no longer in the WARC directory",
    "url.archived_in": "archived: {file} at {offset}",
    "url.copy": "Copy",
    "url.copied": "Copied",
    "url.via": "Reached from (its latest capture's via):",
    "url.via_seed": "a seed",
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
    "news.job_latency": (
        "启动以来计时的全部 {count} 篇文章：p50 约 {p50}，p95 约 {p95}（按直方图的桶估算，与"
        " Prometheus 的 histogram_quantile 相同）。按域名，基于最近 1,000 篇的精确值："
    ),
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
    "url.archive": "网页存档",
    "url.no_archive": "此主节点不写 WARC 文件（没有 {key} 配置段）。",
    "url.not_archived": (
        "此页面的抓取都不在存档索引中（在配置存档之前、在此版本的 nadird 之前抓取，或其工作节点"
        "没有发送交换记录）。"
    ),
    "url.archive_hint": (
        "此页面最近 20 次抓取各自的记录写入的位置，在 {dir} 中；命令会输出 response 记录的正文，"
        "或 revisit 记录的头部（没有正文：未修改，或与之前的副本相同）。"
    ),
    "url.fetched": "抓取时间",
    "url.record": "记录",
    "url.response_record": "response",
    "url.revisit_record": "revisit",
    "url.warc_file": "WARC 文件",
    "url.offset": "偏移量",
    "url.extract": "读取",
    "url.writing": "正在写入：关闭前其名称以 .open 结尾",
    "url.file_gone": "已不在 WARC 目录中",
    "url.archived_in": "已存档：{file}，偏移 {offset}",
    "url.via": "来源页面（最近一次存档的 via）：",
    "url.via_seed": "种子",
    "url.copy": "复制",
    "url.copied": "已复制",
}
