"""Pages as Chinese, Japanese and Korean sites still serve them: in GBK,
Big5, Shift_JIS or EUC-KR, with no charset declared anywhere (no header
parameter, no <meta>, no byte order mark). A crawler that decodes them as
windows-1252 stores mojibake; one that reads them as a browser does stores
the text below.

Served under /legacy/ on any host name (`LegacySite().install(web)`):

  /legacy/NAME              the page, Content-Type: text/html (no charset)
  /legacy/NAME?meta=LABEL   the same text declared by <meta charset=LABEL>
  /legacy/NAME?header=LABEL the same text declared by the Content-Type header
  /legacy/NAME?repeat=N     the text's paragraph N times (a long page)

NAME is one of `TEXTS` (gbk, big5, shift_jis, euc-kr). Each text is a few
hundred characters of ordinary prose (a travel note), so that a detector
has what a real page gives it and no more.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from aiohttp import web

from nadird.testing.web import SyntheticWeb

PREFIX = "/legacy/"
# The job fields that read a page back (compare with LegacyText.fields()).
FIELDS = {"title": [{"xpath": "//title/text()"}], "text": [{"css": "p.text"}]}
_MAX_REPEAT = 1000


@dataclass(frozen=True)
class LegacyText:
    name: str  # its path under /legacy/
    codec: str  # what the page is encoded in (Python's name)
    lang: str
    title: str
    text: str

    def fields(self) -> dict[str, str]:
        """What FIELDS must extract from its page."""
        return {"title": self.title, "text": self.text}

    def page(self, meta: str | None = None, repeat: int = 1) -> bytes:
        head = f'<meta charset="{html.escape(meta)}">' if meta else ""
        paragraphs = "\n".join(
            f'<p class="{"text" if i == 0 else "more"}">{html.escape(self.text)}</p>'
            for i in range(repeat)
        )
        return (
            f'<!DOCTYPE html>\n<html lang="{self.lang}"><head>{head}'
            f"<title>{html.escape(self.title)}</title></head>\n"
            f"<body><h1>{html.escape(self.title)}</h1>\n{paragraphs}\n</body></html>\n"
        ).encode(self.codec)


TEXTS = (
    LegacyText(
        "gbk",
        "gbk",
        "zh-CN",
        "秋天的杭州：西湖边的一个下午",
        "十月的杭州，天气渐渐凉了下来。早上出门的时候，街边的桂花已经开了，"
        "空气里都是淡淡的甜香。我们沿着北山路慢慢走到断桥，湖面上有几只游船，"
        "远处的保俶塔在薄雾里若隐若现。中午在一家老字号的面馆吃了一碗片儿川，"
        "汤头清爽，笋片和雪菜的味道很搭。下午租了两辆自行车，从苏堤骑到杨公堤，"
        "一路上有不少拍照的游客，也有在树荫下下棋的老人。傍晚的时候，"
        "夕阳把整个湖面染成了金色，我们坐在湖边的长椅上，看着天色一点一点暗下去。"
        "回酒店的路上，买了一盒龙井茶和几块桂花糕，准备带回去给家里人尝尝。"
        "如果你也打算秋天来杭州，建议避开国庆假期，平日里人少，景色也更从容。",
    ),
    LegacyText(
        "big5",
        "big5",
        "zh-TW",
        "台南小吃散步：從赤崁樓到國華街",
        "週末早上搭高鐵到台南，第一站先去吃牛肉湯。店門口七點就排了不少人，"
        "湯頭是用牛骨熬的，溫體牛肉片一燙就熟，配上一碗肉燥飯，整個人都醒了過來。"
        "吃飽以後沿著民族路散步到赤崁樓，老樹下有人在寫生，也有導遊帶著學生講解這座古蹟的"
        "歷史。中午在國華街找了一家賣碗粿的老店，米香很濃，淋上醬汁和一點蒜泥，"
        "味道剛剛好。下午天氣有點熱，就在巷子裡的冰店點了一盤芒果冰，"
        "老闆說今年的芒果特別甜。傍晚走到安平，看夕陽慢慢落進海裡，"
        "再買一包蝦餅當作伴手禮。台南的節奏很慢，適合不趕時間的旅人。",
    ),
    LegacyText(
        "shift_jis",
        "shift_jis",
        "ja",
        "京都の紅葉めぐり：嵐山から東福寺まで",
        "十一月の半ば、久しぶりに京都を訪れました。朝早く嵐山に着くと、"
        "渡月橋のまわりはまだ静かで、川の上に薄い霧がかかっていました。"
        "竹林の小径を抜けて天龍寺の庭園に入ると、池のまわりのもみじが赤や黄色に色づいてい"
        "て、思わず足を止めてしまいます。お昼は湯豆腐の店に入り、"
        "やわらかい豆腐と季節の野菜をいただきました。午後は電車で東福寺へ移動しました。"
        "通天橋から見下ろす谷は一面の紅葉で、まるで燃えているようでした。"
        "人は多かったものの、ゆっくり歩けば写真を撮る場所はいくらでも見つかります。"
        "夕方には祇園の路地を散歩して、小さな和菓子屋で栗きんとんを買いました。"
        "次は雪の季節にも来てみたいと思います。",
    ),
    LegacyText(
        "euc-kr",
        "euc_kr",
        "ko",
        "제주도 올레길 걷기: 바다와 오름 사이에서",
        "지난 봄에 친구와 함께 제주도 올레길 칠 코스를 걸었습니다."
        " 아침 일찍 서귀포 시내에서 출발해 외돌개까지 걸어가는 동안 "
        "바다 냄새가 계속 따라왔습니다. 길 옆으로는 유채꽃이 노랗게 "
        "피어 있었고, 돌담 너머로 귤나무가 줄지어 서 있었습니다. "
        "점심에는 작은 식당에서 고기국수와 전복죽을 먹었는데, 국물이 "
        "진하고 담백해서 피곤이 금방 풀렸습니다. 오후에는 바람이 "
        "조금 강해졌지만 해안 절벽을 따라 걷는 길은 정말 아름다웠습니다."
        " 중간에 카페에 들러 따뜻한 한라봉 차를 마시며 쉬었습니다."
        " 해가 질 무렵 도착한 마을에서는 어부들이 그물을 정리하고 "
        "있었습니다. 다음에는 가을에 다시 와서 오름에도 올라가 보고 "
        "싶습니다.",
    ),
)
BY_NAME = {text.name: text for text in TEXTS}


class LegacySite:
    """Serves TEXTS under PREFIX; see the module doc."""

    def install(self, web_: SyntheticWeb) -> LegacySite:
        web_.add_route(PREFIX, self.handle)
        return self

    async def handle(self, request: web.Request, host: str) -> web.StreamResponse:
        text = BY_NAME.get(request.path[len(PREFIX) :])
        if text is None:
            return web.Response(status=404, text="404: Not Found\n")
        query = request.query
        repeat = query.get("repeat", "1")
        if not repeat.isdigit() or not 1 <= int(repeat) <= _MAX_REPEAT:
            return web.Response(status=400, text=f"repeat: 1 to {_MAX_REPEAT}\n")
        content_type = "text/html"
        if "header" in query:
            content_type += f"; charset={query['header']}"
        body = text.page(query.get("meta"), int(repeat))
        return web.Response(body=body, headers={"Content-Type": content_type})
