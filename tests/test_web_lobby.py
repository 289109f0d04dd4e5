"""The joiner's lobby in the page, through its HTTP seam (no browser): ``canasta join --ui web``
lists the tables heard on the LAN (beacons sent to loopback only) and the person picks one; a
host not met before shows its fingerprint with Accept / Refuse, pinned once accepted; refused,
the process ends with one line."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
from pathlib import Path

from test_web_e2e import Page, environment, read_url

CLI = [sys.executable, "-m", "canasta_net"]


def free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def test_a_joiner_picks_a_table_and_confirms_its_fingerprint_in_the_page(
    tmp_path: Path, processes: list[subprocess.Popen[bytes]]
) -> None:
    beacons = free_udp_port()
    env = environment(tmp_path)

    def start(*args: str) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(
            [*CLI, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=env,
        )
        processes.append(proc)
        return proc

    host = start(
        *("host", "--bind", "127.0.0.1", "--port", "0", "--host-bot", "--name", "kitchen"),
        *("--announce-to", f"127.0.0.1:{beacons}", "--variant", "classic-2p", "--players", "2"),
        *("--hands", "1", "--identity", str(tmp_path / "host.pem")),
        *("--log", str(tmp_path / "host.cnlog")),
    )
    assert host.stdout is not None
    listening = re.search(
        r"listening on (127\.0\.0\.1:\d+); host fingerprint (\S+)", host.stdout.readline().decode()
    )
    assert listening is not None
    address, fingerprint = listening.groups()
    known, refusing_known = tmp_path / "known_hosts", tmp_path / "other_known_hosts"
    # each its own identity: started at once, one read the key file the other was still writing
    seat = ("--ui", "web", "--no-browser", "--identity")
    picker = start(
        *("join", *seat, str(tmp_path / "ada.pem"), "--known-hosts", str(known)),
        *("--log", str(tmp_path / "ada.cnlog")),
        *("--listen-interface", "127.0.0.1", "--listen-port", str(beacons)),
    )
    refuser = start(
        *("join", address, *seat, str(tmp_path / "bob.pem")),
        *("--known-hosts", str(refusing_known), "--log", str(tmp_path / "bob.cnlog")),
    )
    picking, refusing = Page(read_url(picker)), Page(read_url(refuser))

    # refused: one line, nothing pinned, no seat taken
    asked = refusing.wait(lambda s: bool((s["lobby"] or {}).get("trust")))["lobby"]["trust"]
    assert asked == {"address": address, "fingerprint": fingerprint, "table": None}
    assert refusing.post("/trust", {"accept": "yes"})[0] == 400
    assert refusing.post("/pick", {"table": 0}) == (
        400,
        {"ok": False, "error": "No list of tables waits for your choice."},
    )
    assert refusing.post("/trust", {"accept": False}) == (200, {"ok": True})
    assert refuser.wait(20) == 1
    assert refuser.stdout is not None
    said = refuser.stdout.read().decode().strip().splitlines()
    assert said[-1] == f"Error: not joining {address}: its fingerprint was refused in the page"
    assert not refusing_known.exists() or fingerprint not in refusing_known.read_text()

    # the tables heard on the LAN, listed in the page; picked; the fingerprint confirmed
    listed = picking.wait(lambda s: bool((s["lobby"] or {}).get("tables")))["lobby"]["tables"]
    assert listed[0]["name"] == "kitchen" and listed[0]["fingerprint"] == fingerprint
    assert listed[0]["address"] == address and listed[0]["free"] == 1
    assert picking.post("/pick", {"table": 5})[0] == 400
    assert picking.post("/pick", {"table": 0}) == (200, {"ok": True})
    asked = picking.wait(lambda s: bool((s["lobby"] or {}).get("trust")))["lobby"]["trust"]
    assert asked == {"address": address, "fingerprint": fingerprint, "table": "kitchen"}
    assert picking.post("/trust", {"accept": True}) == (200, {"ok": True})
    seated = picking.wait(lambda s: s["seat"] == 1)
    assert seated["lobby"] is None and seated["host_fingerprint"] == fingerprint
    assert f"{address} {fingerprint}" in known.read_text()
    assert picking.post("/trust", {"accept": True})[0] == 400  # nothing asked any more
