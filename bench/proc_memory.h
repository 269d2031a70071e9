/* A process's memory, read from /proc (any MPI; tern-bench init --memory).
 *
 * Every figure is in KiB. RSS is what the process has mapped in; PSS
 * divides each page by the number of processes mapping it, so the PSS of
 * all ranks of a node adds up to the node's memory. Mappings are sorted by
 * their name and sharing in /proc/self/smaps:
 *   segment   Tern's node segment, /dev/shm/tern-<job>-shm-<node> (rings
 *             and bulk channel; `size` is the whole mapping, which local
 *             rank 0 reserved on tmpfs in full)
 *   shared    every other shared mapping: the peers' shared-memory
 *             segments, Tern's collective regions (/dev/shm/tern-*-coll-*)
 *   files     private file mappings: the libraries' code and data
 *   anon      private anonymous memory: heap, malloc's mmaps, stacks
 * malloc_kb is what malloc says is in use (heap and its mmaps), the part of
 * anon the library and program asked for. */
#ifndef TERN_BENCH_PROC_MEMORY_H
#define TERN_BENCH_PROC_MEMORY_H

enum {
    MEM_RSS,
    MEM_PSS,
    MEM_SEG_SIZE,
    MEM_SEG_RSS,
    MEM_SEG_PSS,
    MEM_SHARED_RSS,
    MEM_SHARED_PSS,
    MEM_FILES_RSS,
    MEM_FILES_PSS,
    MEM_ANON_RSS,
    MEM_MALLOC,
    MEM_FIELDS
};

/* Short names of the fields, for tables and JSON keys. */
extern const char *const mem_field_name[MEM_FIELDS];

/* Fills m[MEM_FIELDS]; returns 0, or -1 when /proc/self/smaps cannot be
 * read (then every field is -1). */
int mem_sample_read(double m[MEM_FIELDS]);

#endif
