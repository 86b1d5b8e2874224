import asyncio
import io

from nadird.common.progress import line, report

STATUS = {
    "pages_ok": 120,
    "pages_error": 3,
    "queued": 30,
    "pages_per_s": 55.5,
    "workers": 2,
    "leases": 3,
    # Failed attempts, retried ones included: not what the line counts.
    "errors_by_kind": {"timeout": 7},
}


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_progress_line_says_pages_queue_rate_errors_and_time() -> None:
    text = line(STATUS, 75.0)
    assert "pages      120" in text and "queued       30" in text
    assert "55.5 p/s" in text and "errors     3" in text and "01:15" in text


async def test_a_terminal_gets_one_line_redrawn_in_place() -> None:
    out = Terminal()
    task = asyncio.create_task(report(lambda: STATUS, out, tty_interval=0.01))
    await asyncio.sleep(0.1)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    text = out.getvalue()
    assert text.count("\r") >= 3 and text.endswith("\n") and text.count("\n") == 1


def test_urls_whose_retries_ran_out_count_as_errors_on_the_line() -> None:
    text = line({**STATUS, "dead_letters": 2}, 75.0)
    assert "errors     5" in text
