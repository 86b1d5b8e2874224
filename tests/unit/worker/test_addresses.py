"""The SSRF guard's address policy, as a table: no connection is opened."""

from __future__ import annotations

import pytest

from nadird.worker.fetch.addresses import AddressPolicy

REFUSED = [
    "10.0.0.1",
    "10.255.255.254",
    "172.16.0.1",
    "172.31.255.254",
    "192.168.0.1",
    "192.168.255.254",
    "169.254.169.254",  # cloud metadata
    "127.0.0.1",
    "127.0.0.2",
    "0.0.0.0",
    "100.64.0.1",  # carrier-grade NAT
    "224.0.0.1",  # multicast
    "255.255.255.255",
    "::1",
    "::",
    "fc00::1",
    "fd12:3456::1",
    "fe80::1",
    "fe80::1%eth0",
    "ff02::1",  # multicast
    "::ffff:10.0.0.1",  # IPv4-mapped private
    "::ffff:127.0.0.1",
    "2002:a00:1::1",  # 6to4 around 10.0.0.1
    "64:ff9b::a00:1",  # NAT64 around 10.0.0.1
    "not-an-address",
]
PERMITTED = ["93.184.216.34", "8.8.8.8", "2606:4700::1111", "2001:4860:4860::8888"]


@pytest.mark.parametrize("address", REFUSED)
def test_private_and_special_addresses_are_refused(address: str) -> None:
    assert not AddressPolicy(allow_private=False).permits(address)


@pytest.mark.parametrize("address", PERMITTED)
def test_public_addresses_are_permitted(address: str) -> None:
    assert AddressPolicy(allow_private=False).permits(address)


def test_an_allow_list_opens_only_its_networks() -> None:
    policy = AddressPolicy(allow_private=False, allow=["127.0.0.1/32", "10.1.0.0/16"])
    assert policy.permits("127.0.0.1")
    assert policy.permits("10.1.2.3")
    assert policy.permits("::ffff:10.1.2.3")
    for address in ("127.0.0.2", "10.2.0.1", "192.168.1.1", "169.254.169.254", "::1"):
        assert not policy.permits(address), address
    assert policy.permits("93.184.216.34")


def test_allow_private_opens_everything_but_garbage() -> None:
    policy = AddressPolicy(allow_private=True)
    assert policy.permits("10.0.0.1") and policy.permits("::1")
    assert not policy.permits("not-an-address")
