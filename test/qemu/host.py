#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The nvpoll authors
"""test/qemu/host.py CONSOLE_LOG MONITOR_SOCKET OUT: what a guest test needs the host for.

A few things can only be done from outside the guest: removing a PCI function the way a
technician pulls a drive is QEMU's `device_del`, a monitor command, and plugging one into
an empty hotplug slot is `device_add` (only an nvme controller on a drive the command line
already defines, into a named bus: q35's root port). A guest test asks for
it with a console line `NVPHOST <command>` (written to /dev/console, not through the
test's own buffered output); this helper, started by run.sh
beside QEMU, follows the console log, sends each allowed command to QEMU's human monitor
(a unix socket) in order and writes what it did, with times, to OUT. The guest sees the
result for itself (the function disappears from its bus), so nothing is sent back.

Only the commands in ALLOWED are sent: the guest is our own, but a console line must not
be able to do anything to the host beyond what a test needs.

It ends when QEMU closes the monitor (QEMU exited), or when the socket never appears.
"""
import os
import re
import select
import socket
import sys
import time

REQUEST = re.compile(r"^NVPHOST (.*?)\s*$")
NAME = r"[A-Za-z0-9_.-]+"
ALLOWED = re.compile(
    r"^(device_del %s|device_add nvme,id=%s,bus=%s,drive=%s,serial=[A-Za-z0-9]+)$"
    % (NAME, NAME, NAME, NAME)
)
ESCAPE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
PROMPT = b"(qemu) "


def log(out, msg):
    out.write("%.3f %s\n" % (time.time(), msg))
    out.flush()


def until_prompt(sock, timeout=10.0):
    """Read the monitor's answer up to its next prompt; None when QEMU has gone."""
    buf = b""
    end = time.time() + timeout
    while not buf.endswith(PROMPT):
        left = end - time.time()
        if left <= 0:
            break
        r, _, _ = select.select([sock], [], [], left)
        if not r:
            continue
        data = sock.recv(4096)
        if not data:
            return None
        buf += data
    return buf.decode(errors="replace").replace("\r", "")


def connect(path, out):
    for _ in range(600):  # QEMU creates the socket as it starts: give it a minute
        if os.path.exists(path):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                sock.connect(path)
                if until_prompt(sock) is not None:
                    return sock
            except OSError:
                pass
            sock.close()
        time.sleep(0.1)
    log(out, "no monitor at %s: QEMU did not start" % path)
    return None


def main():
    if len(sys.argv) != 4:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    logf, mon, outf = sys.argv[1:4]
    with open(outf, "w") as out:
        sock = connect(mon, out)
        if sock is None:
            return 1
        log(out, "monitor connected")
        pos, pending = 0, b""
        while True:
            # QEMU gone: the monitor socket reads end-of-file.
            r, _, _ = select.select([sock], [], [], 0.2)
            if r and not sock.recv(4096, socket.MSG_PEEK):
                log(out, "QEMU exited")
                return 0
            if r:
                sock.recv(4096)  # asynchronous monitor output: not ours
            try:
                with open(logf, "rb") as f:
                    f.seek(pos)
                    chunk = f.read()
            except FileNotFoundError:
                continue
            pos += len(chunk)
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for raw in lines:
                line = raw.decode(errors="replace").replace("\r", "")
                req = REQUEST.match(line)
                if not req:
                    continue
                cmd = req.group(1)
                if not ALLOWED.match(cmd):
                    log(out, "refused: %s" % cmd)
                    continue
                log(out, "sending: %s" % cmd)
                sock.sendall(cmd.encode() + b"\n")
                answer = until_prompt(sock)
                if answer is None:
                    log(out, "QEMU exited")
                    return 0
                # the monitor echoes the line as it is typed (cursor moves and all): its
                # answer is what follows the last echo of the command
                text = ESCAPE.sub("", answer[: -len(PROMPT)])
                text = text[text.rfind(cmd) + len(cmd):].strip()
                log(out, "done: %s%s" % (cmd, " -> " + text if text else ""))


if __name__ == "__main__":
    sys.exit(main())
