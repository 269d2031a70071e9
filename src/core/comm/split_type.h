/* The colors of MPI_Comm_split_type: by node (MPI_COMM_TYPE_SHARED), by a
 * hardware resource named in the info key mpi_hw_resource_type
 * (MPI_COMM_TYPE_HW_GUIDED: hwloc's type names, "Machine", "Package",
 * "NUMANode", "L3Cache", "L2Cache", "L1Cache", "Core", "PU" or "HWThread",
 * also as "hwloc://<name>", and MPI's "mpi_shared_memory"), the first finer level that splits
 * (MPI_COMM_TYPE_HW_UNGUIDED), or a process set named in mpi_pset_name
 * (MPI_COMM_TYPE_RESOURCE_GUIDED). A process not restricted to one
 * resource of the type (unbound: mpiexec --bind-to core binds), and every
 * process for a name not known, gets MPI_UNDEFINED: MPI_COMM_NULL. */
#ifndef TERN_CORE_SPLIT_TYPE_H
#define TERN_CORE_SPLIT_TYPE_H

#include "core/comm/comm.h"
#include "core/info/info.h"

/* *color for split_type (checked: one of the MPI_COMM_TYPE_* values) and
 * the info (NULL for MPI_INFO_NULL). Collective over c for
 * MPI_COMM_TYPE_HW_UNGUIDED (the levels are compared across c). */
tern_status_t tern_split_type_color(tern_comm_t *c, int split_type, const tern_info_t *info,
                                    int *color);

/* MPI_Get_hw_resource_info (MPI-4.1): a new info with one key per
 * resource type this machine has, "hwloc://<name>" from Package down to
 * PU (the names split_type's mpi_hw_resource_type takes), whose value is
 * "true" when the process is restricted to one instance of the type now
 * (its CPU binding lies within it), else "false". */
tern_status_t tern_hw_resource_info(MPI_Info *hw_info);

#endif
