#!/usr/bin/env python3
"""Checks DIR/profile.json of profile_pattern.c at 4 ranks cell by cell:
the point-to-point matrix (bytes and messages per sender and receiver), the
traffic sent while MPI_Pcontrol(0) paused the recording absent, everything
sent at least the program's own, the calls and times per rank, and the
collectives with the algorithm Tern chose (DIR/chosen.txt, which the
program read through MPI_T).
Usage: check_profile.py DIR [MIN]: MIN, bytes the collectives sent at least
(all minus p2p)."""
import json
import os
import sys

N = 4
errors = []


def expect(cond, what):
    if not cond:
        errors.append(what)


def main():
    d = sys.argv[1]
    coll_min = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    with open(os.path.join(d, "profile.json")) as f:
        prof = json.load(f)
    with open(os.path.join(d, "chosen.txt")) as f:
        chosen = f.read().strip()

    expect(prof["ranks"] == N, f"ranks {prof['ranks']}, expected {N}")
    # [sender][receiver]: (bytes, messages)
    want = {}
    for r in range(N):
        want[(r, (r + 1) % N)] = (4000, 1)            # the ring (MPI_Sendrecv)
    b, m = want[(0, 2)] if (0, 2) in want else (0, 0)
    want[(0, 2)] = (b + 100 + 200000, m + 2)          # MPI_Isend + MPI_Ssend
    b, m = want.get((3, 1), (0, 0))
    want[(3, 1)] = (b + 3 * 64 * 8, m + 3)            # persistent, 3 starts
    b, m = want.get((1, 0), (0, 0))
    want[(1, 0)] = (b + 2 * 1024, m + 2)              # partitioned, 2 rounds
    # (0, 3): only the paused send: must stay 0.
    for s in range(N):
        for r in range(N):
            wb, wm = want.get((s, r), (0, 0))
            gb = prof["p2p"]["bytes"][s][r]
            gm = prof["p2p"]["messages"][s][r]
            expect(gb == wb, f"p2p bytes [{s}][{r}] = {gb}, expected {wb}")
            expect(gm == wm, f"p2p messages [{s}][{r}] = {gm}, expected {wm}")
            ab = prof["all"]["bytes"][s][r]
            am = prof["all"]["messages"][s][r]
            expect(ab >= gb and am >= gm,
                   f"all [{s}][{r}] = {ab} B / {am} msgs, less than p2p {gb} / {gm}")
    total_p2p = sum(map(sum, prof["p2p"]["bytes"]))
    total_all = sum(map(sum, prof["all"]["bytes"]))
    expect(total_all >= total_p2p + coll_min,
           f"all bytes {total_all} < p2p bytes {total_p2p} + the collective's {coll_min}")

    calls = prof["calls"]
    def count(name):
        return calls.get(name, {}).get("count")
    expect(count("MPI_Sendrecv") == [1] * N, f"MPI_Sendrecv counts {count('MPI_Sendrecv')}")
    expect(count("MPI_Allreduce") == [1] * N, f"MPI_Allreduce counts {count('MPI_Allreduce')}")
    expect(count("MPI_Isend") == [1, 0, 0, 0], f"MPI_Isend counts {count('MPI_Isend')}")
    expect(count("MPI_Ssend") == [1, 0, 0, 0], f"MPI_Ssend counts {count('MPI_Ssend')}")
    # Rank 3's persistent starts, rank 1's 3 + 2 partitioned, rank 0's 2.
    expect(count("MPI_Start") == [2, 5, 0, 3], f"MPI_Start counts {count('MPI_Start')}")
    expect(count("MPI_Send") == [1] * N, f"MPI_Send counts {count('MPI_Send')} "
           "(each rank's MPI_PROC_NULL one: rank 0's paused one must not count)")
    # MPI_Pcontrol(0) is timed (recording when it began), (1) is not.
    expect(count("MPI_Pcontrol") == [1] * N, f"MPI_Pcontrol counts {count('MPI_Pcontrol')}")
    for paused in ("MPI_Bcast", "MPI_Alltoall"):
        expect(paused not in calls, f"{paused} recorded while paused")
    expect("MPI_Recv" in calls and calls["MPI_Recv"]["count"] == [0, 0, 2, 0],
           f"MPI_Recv counts {count('MPI_Recv')} (rank 3's paused one must not count)")
    for name, c in calls.items():
        expect(len(c["count"]) == N and len(c["time_s"]) == N, f"{name}: rows not of {N}")
        expect(all(t >= 0 for t in c["time_s"]), f"{name}: negative time")
    t = prof["time_in_mpi_s"]
    expect(len(t) == N and all(x > 0 for x in t), f"time_in_mpi_s {t}")
    for r in range(N):
        s = sum(c["time_s"][r] for c in calls.values())
        expect(abs(s - t[r]) <= 1e-6 + 1e-6 * t[r], f"rank {r}: calls' times {s} != time in MPI {t[r]}")

    colls = prof["collectives"]
    names = {c["name"] for c in colls}
    expect("bcast" not in names and "alltoall" not in names,
           f"collectives recorded while paused: {sorted(names)}")
    ar = [c for c in colls if c["name"] == "allreduce"]
    expect(len(ar) == 1, f"allreduce entries {ar}")
    if ar:
        a = ar[0]
        expect(a["algorithm"] == chosen, f"allreduce algorithm {a['algorithm']}, Tern chose {chosen}")
        expect(a["count"] == N, f"allreduce count {a['count']}, expected {N}")
        expect(a["bytes"] == N * 80, f"allreduce bytes {a['bytes']}, expected {N * 80}")
        expect(a["per_rank"]["count"] == [1] * N, f"allreduce per rank {a['per_rank']}")
        expect(a["per_rank"]["bytes"] == [80] * N, f"allreduce bytes per rank {a['per_rank']}")
    for c in colls:
        expect(set(c) >= {"name", "algorithm", "count", "bytes"}, f"collective entry {c}")

    if errors:
        print("\n".join(errors))
        print(f"FAIL: {len(errors)} mismatches in {d}/profile.json")
        return 1
    print(f"profile.json checked: p2p {total_p2p} bytes, all {total_all} bytes, "
          f"allreduce by {chosen}, {len(calls)} procedures")
    return 0


if __name__ == "__main__":
    sys.exit(main())
