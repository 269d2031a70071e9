"""Checks a tern-bench --json result on stdin: check_json.py <name> <ranks>.

The object must name the benchmark and rank count, hold one positive finite
figure per metric and size (sizes in the expected power-of-two walk), and say
that every size was validated. Exits non-zero with a message otherwise."""
import json
import math
import sys

name, ranks = sys.argv[1], int(sys.argv[2])
text = sys.stdin.read()
try:
    doc = json.loads(text)
except ValueError as e:
    sys.exit(f"FAIL: not one JSON object ({e}): {text!r}")


def need(cond, what):
    if not cond:
        sys.exit(f"FAIL: {name}: {what}: {json.dumps(doc)}")


need(doc.get("benchmark") == name, "benchmark name")
need(doc.get("ranks") == ranks, "rank count")
rows = doc.get("results")
need(isinstance(rows, list) and rows, "results present")
rma_lat = ("put_lat", "get_lat", "acc_lat", "get_acc_lat", "fop_lat", "cas_lat")
metrics = {"latency": ["latency_us"], "bw": ["bw_mbs"], "bibw": ["bibw_mbs"],
           "put_bw": ["bw_mbs"], "get_bw": ["bw_mbs"], "put_bibw": ["bibw_mbs"],
           **{n: ["latency_us"] for n in rma_lat},
           "mbw_mr": ["bw_mbs", "msg_rate"], "multi_lat": ["latency_us"],
           "latency_mt": [f"latency_us_t{n}" for n in (1, 2, 4)],
           "mr_mt": [f"msg_rate_t{n}" for n in (1, 2, 4)],
           "init": ["init_ms", "init_finalize_ms"],
           "halo": ["isend_irecv_us", "alltoall_us", "alltoallv_us", "alltoallw_us"]}.get(
    name, ["latency_us", "min_latency_us", "max_latency_us"])
for row in rows:
    for m in metrics:
        v = row.get(m)
        need(isinstance(v, (int, float)) and math.isfinite(v) and v > 0, f"{m} positive at size {row.get('size')}")
sizes = [r["size"] for r in rows]
if name == "halo":
    need(doc.get("dims") == 3, "grid dimensions reported")
if name == "init":
    need(rows[0]["init_finalize_ms"] >= rows[0]["init_ms"], "Init+Finalize at least Init")
    need(doc.get("validated_buffers") == ranks, "every rank reported")
elif name == "barrier":
    need(sizes == [0], "barrier has no sizes")
elif name in ("fop_lat", "cas_lat"):
    need(sizes == [8], "one 8-byte element, sizes do not apply")
    need(doc.get("validated_buffers", 0) >= 2, "target value and fetched value checked")
else:
    first = 4 if name in ("reduce", "allreduce", "reduce_scatter", "acc_lat", "get_acc_lat") else 1
    expect = []
    s = first
    while s <= 4096:
        expect.append(s)
        s *= 2
    need(sizes == expect, f"sizes {expect}")
    need(doc.get("validated_sizes") == len(rows), "every size validated")
    need(doc.get("validated_buffers", 0) >= len(rows), "received buffers checked")
if name in ("latency_mt", "mr_mt"):
    need(doc.get("threads") == [1, 2, 4] and doc.get("comm") in ("dup", "shared"), "thread counts and communicators")
if name in rma_lat + ("put_bw", "get_bw", "put_bibw"):
    need(doc.get("sync") and doc.get("win"), "synchronisation and window flavour named")
print(f"ok: {name}: {len(rows)} sizes, validated")
