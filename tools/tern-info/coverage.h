/* tern-info --coverage (coverage.c). */
#ifndef TERN_INFO_COVERAGE_H
#define TERN_INFO_COVERAGE_H

/* Prints the per-chapter coverage of MPI-5.0's C procedures; list: also the
 * missing ones by name. */
void tern_info_print_coverage(int json, int list);
/* The same as one JSON object, without a newline after it; indent: what
 * starts its inner lines (it is a member of tern-info --json). */
void tern_info_print_coverage_json(const char *indent);

#endif
