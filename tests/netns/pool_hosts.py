"""mpi4py's MPIPoolExecutor over a job on two hosts (tests/netns): rank 0
spawns the pool's workers (one per host by mpiexec's default placement),
maps a function over them and checks the results and that workers ran on
both hosts; prints "pool_hosts ok" on success."""
import os
import sys
import time

from mpi4py import MPI
from mpi4py.futures import MPIPoolExecutor


def where(x):
    time.sleep(0.05)  # keeps both workers busy
    return x * x, MPI.Get_processor_name(), os.environ.get("FAKE_HOST", "-")


def main():
    rank = MPI.COMM_WORLD.Get_rank()
    ok = 1
    if rank == 0:
        with MPIPoolExecutor(max_workers=2) as pool:
            res = list(pool.map(where, range(40)))
        if [r[0] for r in res] != [x * x for x in range(40)]:
            print("pool_hosts: wrong results", res, file=sys.stderr)
            ok = 0
        hosts = sorted(set(r[1:] for r in res))
        if len(hosts) != 2:
            print("pool_hosts: workers ran on", hosts, "not on two hosts", file=sys.stderr)
            ok = 0
    ok = MPI.COMM_WORLD.allreduce(ok, op=MPI.MIN)
    if rank == 0 and ok:
        print("pool_hosts ok")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
