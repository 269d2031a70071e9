#!/bin/bash
# libmpich.so.12 exports what libtern.so exports (every MPI_/PMPI_/MPIX_
# procedure Tern implements) and, besides, exactly the names of MPICH's own
# that its binaries refer to (src/mpich.map, src/mpich/mpich_abi.c: data
# symbols, MPIR_Dup_fn, MPICH 4.0's MPIX_ names of MPI-4.1 procedures,
# MPI-1's MPI_Type_hvector/hindexed, the three hooks of MPICH's C++
# binding libmpichcxx.so.12); and every MPI symbol that
# Debian's binary libhdf5-mpich needs is there.
# Usage: check_exports.sh LIBTERN LIBMPICH
set -euo pipefail
export LC_ALL=C
tern=$1 mpich=$2
defined() { nm -D --defined-only "$1" | awk '{print $3}' | sort -u; }
extra=$(comm -13 <(defined "$tern") <(defined "$mpich") | tr '\n' ' ')
missing=$(comm -23 <(defined "$tern") <(defined "$mpich") | tr '\n' ' ')
want="MPII_Errhandler_set_cxx MPII_Keyval_set_proxy MPII_Op_set_cxx MPIX_Delete_error_class MPIX_Delete_error_code MPIX_Delete_error_string MPIR_C_MPI_UNWEIGHTED MPIR_C_MPI_WEIGHTS_EMPTY MPIR_Dup_fn MPIR_F08_MPI_BOTTOM MPIR_F08_MPI_IN_PLACE MPIR_F08_MPI_STATUSES_IGNORE_OBJ MPIR_F08_MPI_STATUS_IGNORE_OBJ MPI_F08_STATUSES_IGNORE MPI_F08_STATUS_IGNORE MPI_F_STATUSES_IGNORE MPI_F_STATUS_IGNORE MPI_UNWEIGHTED MPI_WEIGHTS_EMPTY MPI_Type_hindexed MPI_Type_hvector PMPI_Type_hindexed PMPI_Type_hvector PMPIX_Delete_error_class PMPIX_Delete_error_code PMPIX_Delete_error_string "
rc=0
[ -z "$missing" ] || { echo "FAIL: libtern.so exports, libmpich.so.12 does not: $missing"; rc=1; }
want=$(echo $want | tr ' ' '\n' | sort | tr '\n' ' ')
[ "$extra" = "$want" ] || { echo "FAIL: libmpich.so.12's own names: got '$extra', want '$want'"; rc=1; }
soname=$(readelf -d "$mpich" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[ "$soname" = libmpich.so.12 ] || { echo "FAIL: soname '$soname'"; rc=1; }
hdf5=/usr/lib/x86_64-linux-gnu/hdf5/mpich/libhdf5.so
if [ -f "$hdf5" ]; then
    need=$(nm -D --undefined-only "$hdf5" | awk '$2 ~ /^P?MPIX?_/ {print $2}' | sort -u)
    lacking=$(comm -23 <(echo "$need") <(defined "$mpich") | tr '\n' ' ')
    [ -z "$lacking" ] || { echo "FAIL: libhdf5-mpich needs $lacking"; rc=1; }
    echo "libhdf5-mpich: $(echo "$need" | wc -l) MPI symbols, all exported"
fi
[ $rc -eq 0 ] && echo "libmpich.so.12: $(defined "$mpich" | wc -l) names, libtern.so's and $(echo $want | wc -w) of MPICH's"
exit $rc
