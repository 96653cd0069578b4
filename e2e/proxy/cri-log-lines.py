#!/usr/bin/env python3
"""Print MiB mebibytes of container log lines in the CRI format the kubelet reads
("<RFC 3339 time> stdout F <text>"), 100 bytes a line, one microsecond apart from now:
a large log for kwok to serve (e2e/tests/53-cli-reach.bats).

  cri-log-lines.py MIB
"""
import datetime
import sys


def main():
    want = int(sys.argv[1]) << 20
    base = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    text = " stdout F " + "x" * 62 + "\n"
    out = sys.stdout
    written, i = 0, 0
    while written < want:
        second = (base + datetime.timedelta(seconds=i // 1000000)).strftime("%Y-%m-%dT%H:%M:%S")
        block = "".join(f"{second}.{n % 1000000:06d}Z{text}" for n in range(i, i + 10000))
        out.write(block)
        written += len(block)
        i += 10000
    out.flush()


if __name__ == "__main__":
    main()
