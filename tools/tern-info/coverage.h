/* tern-info --coverage (coverage.c). */
#ifndef TERN_INFO_COVERAGE_H
#define TERN_INFO_COVERAGE_H

/* Prints the per-chapter coverage of MPI-5.0's C procedures; list: also the
 * missing ones by name. */
void tern_info_print_coverage(int json, int list);

#endif
