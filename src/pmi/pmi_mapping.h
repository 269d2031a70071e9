/* PMI_process_mapping: which node each rank runs on, as MPICH's Hydra,
 * Slurm's mpi/pmi2 and Tern's mpiexec publish it (PMI-1 key, PMI-2 job
 * attribute):
 *     (vector,(start_node,n_nodes,ranks_per_node),...)
 * Each block gives ranks_per_node consecutive ranks to each of n_nodes nodes
 * from start_node on; the vector repeats until every rank has a node, so
 * "(vector,(0,2,1))" places 4 ranks round-robin on nodes 0,1,0,1. */
#ifndef TERN_PMI_PMI_MAPPING_H
#define TERN_PMI_PMI_MAPPING_H

#include "base/status.h"
#include <stddef.h>

/* Fills node_of_rank[0, size). TERN_ERR_ARG if the text is malformed or
 * places no rank (an empty vector). */
tern_status_t tern_pmi_mapping_parse(const char *text, int size, int *node_of_rank);
/* Writes the mapping of node_of_rank[0, size) into buf[len], merging runs
 * into blocks. TERN_ERR_TRUNCATE if it does not fit. */
tern_status_t tern_pmi_mapping_format(const int *node_of_rank, int size, char *buf, size_t len);

#endif
