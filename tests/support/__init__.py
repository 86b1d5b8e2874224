"""What the tests share: helpers, and the test-only webs (hostile pages,
proxies, login walls...). The webs the README and the benchmarks run stay in
nadird/testing/."""

from pathlib import Path

DIR = Path(__file__).resolve().parent  # scripts the tests run in a subprocess live here
REPO = DIR.parents[1]
