"""Writing a config file for the config loader tests."""

from pathlib import Path


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "nadird.yaml"
    path.write_text(text)
    return path
