#!/usr/bin/env python3
"""A host service that runs what it is sent: the shape of tmux, docker, systemd or an X
server as far as the escape-by-proxy suite (form 1) is concerned.

  cmd_server.py serve stream|dgram SOCK LOG [--once]
      Bind SOCK, print "ready" on stdout (the test's readiness signal: no sleeps), then for
      every connection (stream) or datagram (dgram): append "conn" to LOG, run the received
      text with /bin/sh -c, append "ran <text>" to LOG, and reply "done" (stream, or dgram
      when the sender has an address). A message "sync" is logged and answered but not run:
      the test sends it after the caged attack, and because the service handles requests in
      order, every earlier request is already in LOG when the answer arrives.
  cmd_server.py client stream|dgram|dgram-sendmsg SOCK TEXT
      Send TEXT; stream waits for the reply. Prints "ok" and exits 0, or prints
      "errno=N" and exits 3 when the kernel refused (so the caller can tell EACCES from
      ENOENT); any other failure is a Python traceback and exit 1.

LOG is written by the service itself, outside the cage: it is the evidence the tests judge.
"""
import os
import socket
import subprocess
import sys


def log(path, line):
    with open(path, "a") as f:
        f.write(line + "\n")
        f.flush()
        os.fsync(f.fileno())


def read_line(conn, size):
    """What the peer sends up to and including a newline, or up to its end."""
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(size)
        if not chunk:
            break
        data += chunk
    return data


def handle(text, logpath):
    log(logpath, "conn")
    if text == "sync":
        log(logpath, "sync")
        return
    subprocess.run(["/bin/sh", "-c", text], check=False)
    log(logpath, "ran " + text)


def serve(kind, path, logpath, once):
    stype = socket.SOCK_STREAM if kind == "stream" else socket.SOCK_DGRAM
    s = socket.socket(socket.AF_UNIX, stype)
    s.bind(path)
    if kind == "stream":
        s.listen(16)
    print("ready", flush=True)
    while True:
        if kind == "stream":
            conn, _ = s.accept()
            with conn:
                data = read_line(conn, 4096)
                handle(data.decode().strip(), logpath)
                try:
                    conn.sendall(b"done\n")
                except OSError:
                    pass
        else:
            data, addr = s.recvfrom(65536)
            handle(data.decode().strip(), logpath)
            if addr:
                try:
                    s.sendto(b"done\n", addr)
                except OSError:
                    pass
        if once:
            return


def client(kind, path, text):
    payload = (text + "\n").encode()
    try:
        if kind == "stream":
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(path)
            s.sendall(payload)
            reply = read_line(s, 64)
            if reply != b"done\n":
                print("no reply", flush=True)
                return 1
        else:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            if kind == "dgram":
                s.sendto(payload, path)
            else:
                s.sendmsg([payload], [], 0, path)
    except OSError as e:
        print("errno=%d" % e.errno, flush=True)
        return 3
    print("ok", flush=True)
    return 0


def main(argv):
    if len(argv) >= 5 and argv[1] == "serve":
        serve(argv[2], argv[3], argv[4], "--once" in argv[5:])
        return 0
    if len(argv) == 5 and argv[1] == "client":
        return client(argv[2], argv[3], argv[4])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
