"""An S3-compatible server on loopback (moto's server mode) for the s3://
replica test: Litestream talks to it over HTTP as to any S3-compatible
service, path-style, with the credentials of the environment."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import boto3
from moto.server import ThreadedMotoServer

# What Litestream (the master's child) and the test's own client log in with.
CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "nadird-test",
    "AWS_SECRET_ACCESS_KEY": "nadird-test-secret",
    "AWS_REGION": "us-east-1",
}


@contextlib.contextmanager
def s3_server(bucket: str) -> Iterator[str]:
    """A server on 127.0.0.1 holding an empty `bucket`; yields its endpoint URL."""
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        client = boto3.client(
            "s3",
            endpoint_url=endpoint,
            region_name=CREDENTIALS["AWS_REGION"],
            aws_access_key_id=CREDENTIALS["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        )
        client.create_bucket(Bucket=bucket)
        yield endpoint
    finally:
        server.stop()
