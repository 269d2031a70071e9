"""Checks `tern-bench init --json --memory` on stdin:
check_init_memory.py <ranks> [<max RSS MiB> <max segment RSS MiB>].

The memory report must be well formed: both points (after MPI_Init, after
the first exchange), every field with a finite mean <= max, RSS and PSS
positive with PSS <= RSS, the parts (segment, other shared, files, anon)
adding up to the RSS (smaps against VmRSS, within 10%), all ranks on one
node, and Tern's segment mapped in full (its size at least its RSS). With
bounds, the largest rank's RSS and its RSS of the shm segment must stay
below them: a rank that maps the whole segment, or tables that explode with
the job, fails. Exits non-zero with a message otherwise."""
import json
import math
import sys

ranks = int(sys.argv[1])
max_rss_mib = float(sys.argv[2]) if len(sys.argv) > 2 else None
max_seg_mib = float(sys.argv[3]) if len(sys.argv) > 3 else None
text = sys.stdin.read()
doc = None
for line in text.splitlines():
    if line.startswith("{"):
        doc = json.loads(line)
if doc is None:
    sys.exit(f"FAIL: no JSON object in {text!r}")


def need(cond, what):
    if not cond:
        sys.exit(f"FAIL: init --memory: {what}: {json.dumps(doc.get('memory'))}")


FIELDS = ["rss_kb", "pss_kb", "segment_size_kb", "segment_rss_kb", "segment_pss_kb", "shared_rss_kb",
          "shared_pss_kb", "files_rss_kb", "files_pss_kb", "anon_rss_kb", "malloc_kb"]
need(doc.get("benchmark") == "init" and doc.get("ranks") == ranks, "benchmark and rank count")
mem = doc.get("memory")
need(isinstance(mem, dict), "memory report present")
need(mem.get("local_ranks") == ranks, "every rank on this node")
for point in ("after_init", "after_exchange"):
    m = mem.get(point)
    need(isinstance(m, dict) and sorted(m) == sorted(FIELDS), f"{point}: every field")
    for f in FIELDS:
        s = m[f]
        need(all(isinstance(s.get(k), (int, float)) and math.isfinite(s[k]) and s[k] >= 0 for k in ("mean", "max")),
             f"{point} {f}: finite, not negative")
        need(s["mean"] <= s["max"] + 0.05, f"{point} {f}: mean <= max")
    need(m["rss_kb"]["mean"] > 0 and 0 < m["pss_kb"]["mean"] <= m["rss_kb"]["mean"], f"{point}: 0 < PSS <= RSS")
    parts = sum(m[f]["mean"] for f in ("segment_rss_kb", "shared_rss_kb", "files_rss_kb", "anon_rss_kb"))
    need(abs(parts - m["rss_kb"]["mean"]) <= 0.1 * m["rss_kb"]["mean"], f"{point}: parts add up to the RSS")
    need(m["segment_size_kb"]["mean"] > 0, f"{point}: Tern's shm segment mapped")
    need(m["segment_size_kb"]["mean"] >= m["segment_rss_kb"]["max"], f"{point}: segment size >= its RSS")
    need(m["segment_pss_kb"]["mean"] <= m["segment_rss_kb"]["mean"], f"{point}: segment PSS <= RSS")
    if max_rss_mib is not None:
        need(m["rss_kb"]["max"] <= max_rss_mib * 1024, f"{point}: RSS at most {max_rss_mib} MiB")
    if max_seg_mib is not None:
        need(m["segment_rss_kb"]["max"] <= max_seg_mib * 1024, f"{point}: segment RSS at most {max_seg_mib} MiB")
print(f"init --memory: {ranks} ranks, report well formed"
      + (f", RSS <= {max_rss_mib} MiB, segment RSS <= {max_seg_mib} MiB" if max_rss_mib else ""))
