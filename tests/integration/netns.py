"""Hosts as Linux network namespaces for partition tests: cut a host off the network and heal it again.

Topology: one bridge in the root namespace holding the subnet's ``.1`` address, and one namespace per host
joined to it by a veth pair (``eth0`` inside, ``<prefix><host>`` on the bridge). Host ``i`` (0-based) gets
``<subnet>.(11 + i)``. The test process stays in the root namespace and reaches every host through the
bridge; a process started with ``Network.popen(host, ...)`` runs inside that host's namespace.

``cut(host)`` takes the bridge-side end of the host's veth down: the host keeps its address and loopback
(processes on it still reach each other and its own address) but nothing crosses the link in either
direction, and established TCP connections see silence, not resets. ``heal(host)`` brings it up again.

Names carry a random suffix (namespaces ``kl<hex>-<host>``, links ``kl<hex><i>``, at most 15 characters as
Linux requires), and the /24 is picked among ``10.213.x.0/24`` ranges no local interface uses, so parallel
runs do not collide. Needs root (``CAP_SYS_ADMIN`` and ``CAP_NET_ADMIN``): ``Network.create`` raises
``NetnsUnavailable`` with ``ip``'s own error when a namespace cannot be made.

Not thread-safe; ``close`` is idempotent and deletes every namespace and link made here even after a failure
half-way through ``create``. It does not stop the processes started with ``popen``: the caller kills them
(by PID) first, since a namespace lives on while a process is inside it.
"""

from __future__ import annotations

import ipaddress
import random
import secrets
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Host", "Network", "NetnsUnavailable"]


class NetnsUnavailable(RuntimeError):
    """Network namespaces cannot be created here (not root, no ``ip``, a kernel without netns)."""


def ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    """Run ``ip <args>``; a failure raises ``RuntimeError`` with the command and its stderr when ``check``."""
    done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    if check and done.returncode != 0:
        raise RuntimeError(f"`ip {' '.join(args)}` failed ({done.returncode}): {done.stderr.strip()}")
    return done


@dataclass(frozen=True)
class Host:
    name: str
    netns: str
    address: str
    link: str  # the bridge-side end of the host's veth pair, in the root namespace


class Network:
    """A bridge and one namespace per host; see the module docstring. Use ``Network.create`` to build one."""

    def __init__(self, hosts: Sequence[str]) -> None:
        self._suffix = secrets.token_hex(3)
        self.bridge = f"kl{self._suffix}br"
        self._names = list(hosts)
        self.hosts: dict[str, Host] = {}
        self.gateway = ""
        self._made_netns: list[str] = []
        self._made_links: list[str] = []
        self._closed = False

    @classmethod
    def create(cls, hosts: Sequence[str]) -> Network:
        network = cls(hosts)
        try:
            network._build()
        except BaseException:
            network.close()
            raise
        return network

    def _build(self) -> None:
        probe = f"kl{self._suffix}-probe"
        try:
            done = ip("netns", "add", probe, check=False)
        except FileNotFoundError as e:
            raise NetnsUnavailable(f"no `ip` command: {e}") from None
        if done.returncode != 0:
            raise NetnsUnavailable(f"`ip netns add` failed: {done.stderr.strip()}")
        ip("netns", "del", probe, check=False)

        subnet = _free_subnet()
        self.gateway = str(subnet.network_address + 1)
        ip("link", "add", self.bridge, "type", "bridge")
        self._made_links.append(self.bridge)
        ip("addr", "add", f"{self.gateway}/{subnet.prefixlen}", "dev", self.bridge)
        ip("link", "set", self.bridge, "up")
        for i, name in enumerate(self._names):
            host = Host(name, f"kl{self._suffix}-{name}", str(subnet.network_address + 11 + i), f"kl{self._suffix}{i}")
            ip("netns", "add", host.netns)
            self._made_netns.append(host.netns)
            ip("link", "add", host.link, "type", "veth", "peer", "name", "eth0", "netns", host.netns)
            self._made_links.append(host.link)
            ip("link", "set", host.link, "master", self.bridge, "up")
            ip("-n", host.netns, "addr", "add", f"{host.address}/{subnet.prefixlen}", "dev", "eth0")
            ip("-n", host.netns, "link", "set", "eth0", "up")
            ip("-n", host.netns, "link", "set", "lo", "up")
            self.hosts[name] = host

    # -- faults
    def cut(self, name: str) -> None:
        """Take the host's link down: it can reach only itself until ``heal``."""
        ip("link", "set", self.hosts[name].link, "down")

    def heal(self, name: str) -> None:
        ip("link", "set", self.hosts[name].link, "up")

    # -- processes
    def popen(self, name: str, argv: Sequence[str], **kwargs) -> subprocess.Popen:
        """Start ``argv`` inside the host's namespace (``ip netns exec`` execs it: the PID is the command's)."""
        return subprocess.Popen(["ip", "netns", "exec", self.hosts[name].netns, *argv], **kwargs)

    def run(self, name: str, argv: Sequence[str], **kwargs) -> subprocess.CompletedProcess:
        return subprocess.run(["ip", "netns", "exec", self.hosts[name].netns, *argv], **kwargs)

    def close(self) -> None:
        """Delete the namespaces and links made here (idempotent; errors are ignored: nothing else can be done)."""
        if self._closed:
            return
        self._closed = True
        for netns in reversed(self._made_netns):
            ip("netns", "del", netns, check=False)
        for link in reversed(self._made_links):  # a veth also goes with its namespace, but asynchronously
            ip("link", "del", link, check=False)

    def __enter__(self) -> Network:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _free_subnet() -> ipaddress.IPv4Network:
    """A ``10.213.x.0/24`` that no interface in the root namespace has an address in."""
    used = []
    for line in ip("-4", "-o", "addr", "show").stdout.splitlines():
        fields = line.split()
        if "inet" in fields:
            used.append(ipaddress.IPv4Interface(fields[fields.index("inet") + 1]).network)
    candidates = list(range(1, 255))
    random.SystemRandom().shuffle(candidates)
    for x in candidates:
        subnet = ipaddress.IPv4Network(f"10.213.{x}.0/24")
        if not any(subnet.overlaps(u) for u in used):
            return subnet
    raise RuntimeError("every 10.213.x.0/24 is in use")
