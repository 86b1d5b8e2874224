"""Where the master replicates its state directory (master.replica), checked
when the file is read: a wrong URL is a config error (exit 2), not a child
process that fails every few seconds for ever."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit, urlunsplit

# The replica types Litestream takes as URLs, with what each needs.
NEEDS_HOST = {"s3": "a bucket", "gs": "a bucket", "abs": "a container", "sftp": "a host"}
SCHEMES = ("file", *NEEDS_HOST)
EXPECTED = "a URL such as file:///mnt/replica/nadird, s3://bucket/path or sftp://user@host/path"
# What Litestream 0.5 reads from an s3:// URL's query: an S3-compatible
# service (MinIO: ?endpoint=minio.internal:9000) and how to talk to it.
S3_QUERY = (
    "endpoint",
    "region",
    "forcePathStyle",
    "skipVerify",
    "sign-payload",
    "require-content-md5",
)


def check_replica_url(url: str) -> None:
    """Raise ValueError (naming master.replica) unless Litestream can take `url`."""
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        raise ValueError(f"replica: expected {EXPECTED}; {exc}") from None
    if parts.scheme not in SCHEMES:
        shown = parts.scheme or "none"
        raise ValueError(
            f"replica: expected {EXPECTED} (scheme one of {', '.join(SCHEMES)}), got scheme {shown}"
        )
    if parts.fragment or (parts.query and parts.scheme != "s3"):
        raise ValueError(f"replica: expected {EXPECTED}, without ?query or #fragment")
    unknown = [key for key, _ in parse_qsl(parts.query) if key not in S3_QUERY]
    if unknown:
        raise ValueError(
            f"replica: an s3:// URL's query takes {', '.join(S3_QUERY)}; got {unknown[0]}"
        )
    if parts.scheme == "file":
        if parts.netloc or not parts.path.startswith("/") or parts.path == "/":
            raise ValueError(f"replica: expected file:///absolute/path (three slashes), got {url}")
        return
    if not parts.hostname:
        raise ValueError(f"replica: a {parts.scheme}:// URL names {NEEDS_HOST[parts.scheme]}")
    if parts.password:
        # The URL is written to litestream.yml and logged: credentials go in
        # the environment Litestream reads (AWS_ACCESS_KEY_ID, an SSH key...).
        raise ValueError("replica: expected a URL without a password (use the environment)")
    if not parts.path.strip("/"):
        raise ValueError(f"replica: expected a path under {parts.hostname} (one per master)")


def check_sftp_key(url: str | None, key: str | None) -> None:
    """replica_sftp_key goes with an sftp:// replica, as an absolute path."""
    if key is None:
        return
    if url is None or not url.startswith("sftp://"):
        raise ValueError("replica_sftp_key: expected only with an sftp:// master.replica")
    if not key.startswith("/"):
        raise ValueError(f"replica_sftp_key: expected an absolute path, got {key}")


def replica_of(url: str, name: str) -> str:
    """The replica URL of one database of the state directory (the name goes
    at the end of the path, before an s3:// URL's ?endpoint=...)."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"{parts.path.rstrip('/')}/{name}"))
