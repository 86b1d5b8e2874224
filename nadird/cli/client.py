"""`nadird status|nodes|submit|pause|resume|delete-job`: talk to the master's API."""

from __future__ import annotations

import json
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from nadird.common.errors import NadirdError
from nadird.config import Config
from nadird.config.api_token import load_token


class ApiError(NadirdError):
    pass


def endpoint(config: Config, url: str | None, token: str | None) -> tuple[str, str]:
    """The API's URL and token: from the options, else the master's config and state."""
    state = Path(config.master.state_dir)
    if url is None:
        recorded = state / "api.json"
        if recorded.exists():
            url = json.loads(recorded.read_text(encoding="utf-8"))["url"]
        else:
            url = f"http://{config.api.host}:{config.api.port}"
    if token is None:
        token = load_token(config.api, str(state))
    return url.rstrip("/"), token


def call(url: str, token: str, method: str, path: str, body: Any = None) -> Any:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        url + path,
        data=data,
        method=method,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read() or b"null")
    except urllib.error.HTTPError as exc:
        detail = exc.read().decode(errors="replace")[:300]
        raise ApiError(f"{method} {path}: HTTP {exc.code}: {detail}") from None
    except urllib.error.URLError as exc:
        raise ApiError(f"cannot reach the master API at {url}: {exc.reason}") from None


def run(
    command: str,
    config: Config,
    url: str | None,
    token: str | None,
    args: list[Any],  # submit: URLs and request objects; otherwise one job name
    job: str,
) -> int:
    base, secret = endpoint(config, url, token)
    if command == "status":
        result = call(base, secret, "GET", "/api/stats")
    elif command == "nodes":
        result = call(base, secret, "GET", "/api/nodes")
    elif command == "submit":
        result = call(base, secret, "POST", "/api/seeds", {"urls": args, "job": job})
    elif command in ("pause", "resume"):
        result = call(base, secret, "POST", f"/api/jobs/{args[0]}/{command}")
    else:
        result = call(base, secret, "DELETE", f"/api/jobs/{args[0]}")
    json.dump(result, sys.stdout, indent=2, sort_keys=True)
    sys.stdout.write("\n")
    return 0
