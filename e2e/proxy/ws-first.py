#!/usr/bin/env python3
"""Open the dashboard's WebSocket and print its first message (the snapshot).

  ws-first.py HOST:PORT COOKIE   (COOKIE as "cadre_dashboard=...")

A WebSocket client in a few lines, for the e2e tests: the upgrade with the page's own
Origin and the session cookie, then one unmasked server frame read whole.
"""
import base64
import os
import socket
import sys


def read_exact(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise SystemExit("the dashboard closed the WebSocket")
        data += chunk
    return data


def main():
    hostport, cookie = sys.argv[1], sys.argv[2]
    host, port = hostport.rsplit(":", 1)
    sock = socket.create_connection((host.strip("[]"), int(port)), timeout=20)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall((f"GET /ws HTTP/1.1\r\nHost: {hostport}\r\nOrigin: http://{hostport}\r\n"
                  f"Cookie: {cookie}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                  f"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: {key}\r\n"
                  f"Sec-WebSocket-Protocol: cadre-dash\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        head += read_exact(sock, 1)
    if b" 101 " not in head.split(b"\r\n", 1)[0]:
        raise SystemExit("no upgrade: " + head.split(b"\r\n", 1)[0].decode())
    b0, b1 = read_exact(sock, 2)
    length = b1 & 0x7F
    if length == 126:
        length = int.from_bytes(read_exact(sock, 2), "big")
    elif length == 127:
        length = int.from_bytes(read_exact(sock, 8), "big")
    print(read_exact(sock, length).decode())


if __name__ == "__main__":
    main()
