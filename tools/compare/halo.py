"""The halo exchange in the comparison (compare.py --benchmarks halo).

tern-bench halo on a grid of 4 ranks (--halo-ranks), 2-D (2x2) and 3-D (2x2x1), not
periodic (tern-bench halo makes only dimensions of 3 ranks or more
periodic, since MPICH 4.0 mixes up the two messages between ranks that are
each other's neighbours on both sides), built like the other
benchmarks with each implementation's mpicc and run in the same interleaved
rounds. Four ways per run: Isend/Irecv + Waitall and
MPI_Neighbor_alltoall(v/w); the benchmark checks every way's halos once per
size, so an MPI that delivers wrong data fails instead of reporting a time.
"""

NAME = "halo"
RANKS = 4
DIMS = [2, 3]
WAYS = [("isend_irecv_us", "Isend/Irecv + Waitall"), ("alltoall_us", "MPI_Neighbor_alltoall"),
        ("alltoallv_us", "MPI_Neighbor_alltoallv"), ("alltoallw_us", "MPI_Neighbor_alltoallw")]


def key(dims):
    return f"halo_{dims}d"


def run(run_bench, res, impl, tc, exe, args, timeout, ranks=RANKS, bound=False):
    """One round of the benchmark for impl: every grid, bound one rank per
    core when the ranks fit the cores, else unbound."""
    for d in DIMS:
        run_bench(res, impl, tc, exe, key(d), ranks, args + ["-d", str(d)], bound, timeout)


def section(res, table, ranks=RANKS):
    """The report's section: one table per grid and way (medians over
    rounds, Tern / best peer), from report_tables.table."""
    lines = [f"## Halo exchange ({ranks} ranks, grid with reorder, bytes per neighbour; "
             "average over ranks of one exchange)\n"]
    if not any(res.sizes(key(d)) for d in DIMS):
        return "\n".join(lines + ["(not run)\n"])
    for d in DIMS:
        if not res.sizes(key(d)):
            continue
        for metric, what in WAYS:
            lines.append(f"### {d}-D, {what}\n")
            lines.append(table(res, key(d), metric, "us", False) + "\n")
    return "\n".join(lines)
