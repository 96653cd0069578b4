#!/usr/bin/env python3
"""A CONNECT proxy on loopback that stops forwarding when told, for the e2e tests.

It answers CONNECT HOST:PORT with 200 and then relays bytes both ways. On SIGUSR1 every
tunnel open at that moment stops passing bytes in either direction: its sockets stay open
and are still read (so nothing fills up and no FIN or RST tells either side), which is
what a hung proxy, a dead NAT entry or a peer gone without a word look like to a client.
Tunnels opened afterwards forward as usual. It prints its port on stdout, then serves
until killed; every tunnel it opens is counted on stderr ("tunnel N to HOST:PORT").
"""
import signal
import socket
import sys
import threading

frozen_before = 0  # tunnels numbered below this forward nothing
count = 0
lock = threading.Lock()


def on_usr1(signum, frame):
    global frozen_before
    with lock:
        frozen_before = count + 1


def relay(number, src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            if number >= frozen_before:
                dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def serve(client):
    global count
    head = b""
    while b"\r\n\r\n" not in head:
        data = client.recv(4096)
        if not data:
            client.close()
            return
        head += data
    line = head.split(b"\r\n", 1)[0].decode("latin-1").split()
    if len(line) < 2 or line[0] != "CONNECT":
        client.sendall(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
        client.close()
        return
    host, _, port = line[1].rpartition(":")
    try:
        upstream = socket.create_connection((host.strip("[]"), int(port)), timeout=10)
        upstream.settimeout(None)
    except OSError:
        client.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
        client.close()
        return
    with lock:
        count += 1
        number = count
    print(f"tunnel {number} to {line[1]}", file=sys.stderr, flush=True)
    client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
    rest = head.split(b"\r\n\r\n", 1)[1]
    if rest:
        upstream.sendall(rest)
    threading.Thread(target=relay, args=(number, client, upstream), daemon=True).start()
    threading.Thread(target=relay, args=(number, upstream, client), daemon=True).start()


def main():
    signal.signal(signal.SIGUSR1, on_usr1)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    print(listener.getsockname()[1], flush=True)
    while True:
        client, _ = listener.accept()
        threading.Thread(target=serve, args=(client,), daemon=True).start()


if __name__ == "__main__":
    main()
