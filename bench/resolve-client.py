# The Python client of `npm run bench:resolve`: what most users of IDC run
# (its public client is a Python package). Standard library only, as
# requests/urllib3 do it: POST the saved manifest, inflate the gzip answer as
# it arrives, then json.loads it (or split the TSV). One JSON line per run on
# stdout: seconds to the last byte received (inflated) and to parsed, the
# client's CPU seconds, the answer's size and encoding, and the totals.
# Usage: python3 bench/resolve-client.py PORT BODY_FILE RUNS FORMAT(json|tsv)

import http.client
import json
import sys
import time
import zlib


def run(port: int, body: bytes, fmt: str) -> dict:
    t0 = time.perf_counter()
    c0 = time.process_time()
    conn = http.client.HTTPConnection("127.0.0.1", port)
    conn.request("POST", "/v3/series/resolve", body, {"content-type": "application/json", "accept-encoding": "gzip, deflate"})
    res = conn.getresponse()
    if res.status != 200:
        raise SystemExit(f"HTTP {res.status}: {res.read()[:300]!r}")
    encoding = res.getheader("content-encoding") or "identity"
    inflate = zlib.decompressobj(16 + zlib.MAX_WBITS) if encoding == "gzip" else None
    parts = []
    while True:
        chunk = res.read(1 << 16)
        if not chunk:
            break
        parts.append(inflate.decompress(chunk) if inflate else chunk)
    if inflate:
        parts.append(inflate.flush())
    raw = b"".join(parts)
    conn.close()
    last_byte = time.perf_counter() - t0
    if fmt == "json":
        totals = json.loads(raw)["totals"]
    else:
        rows = raw.decode("utf-8").split("\n")
        cells = [r.split("\t") for r in rows[2:-1]]
        if any(len(c) != len(cells[0]) for c in cells):
            raise SystemExit("TSV rows of different widths")
        totals = json.loads(rows[0].split("totals ", 1)[1])
    return {
        "last_byte": last_byte,
        "parsed": time.perf_counter() - t0,
        "cpu": time.process_time() - c0,
        "bytes": len(raw),
        "encoding": encoding,
        "totals": totals,
    }


def main() -> None:
    port, body_file, runs, fmt = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
    with open(body_file, "rb") as f:
        body = f.read()
    for _ in range(runs):
        print(json.dumps(run(port, body, fmt)), flush=True)


main()
