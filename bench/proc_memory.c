/* A process's memory from /proc/self/smaps and /proc/self/status
 * (proc_memory.h). Linux only, any MPI. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "proc_memory.h"

#include <ctype.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>

const char *const mem_field_name[MEM_FIELDS] = {
    "rss_kb",        "pss_kb",        "segment_size_kb", "segment_rss_kb", "segment_pss_kb", "shared_rss_kb",
    "shared_pss_kb", "files_rss_kb",  "files_pss_kb",    "anon_rss_kb",    "malloc_kb",
};

typedef enum { KIND_SEGMENT, KIND_SHARED, KIND_FILES, KIND_ANON } map_kind;

/* A header line of smaps: "start-end perms offset dev inode [path]". */
static int parse_header(const char *line, map_kind *kind, double *size_kb)
{
    unsigned long start, end;
    char perms[8], path[4096] = "";
    if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %4095[^\n]", &start, &end, perms, path) < 3)
        return -1;
    *size_kb = (double)(end - start) / 1024;
    if (strstr(path, "/dev/shm/tern-") && strstr(path, "-shm-"))
        *kind = KIND_SEGMENT;
    else if (perms[3] == 's')
        *kind = KIND_SHARED;
    else if (path[0] == '/')
        *kind = KIND_FILES;
    else
        *kind = KIND_ANON;
    return 0;
}

static double kb_value(const char *line)
{
    const char *colon = strchr(line, ':');
    double v = 0;
    return colon && sscanf(colon + 1, "%lf", &v) == 1 ? v : 0;
}

static double status_kb(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[512];
    double v = -1;
    size_t n = strlen(field);
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, field, n) && line[n] == ':')
            v = kb_value(line);
    if (f)
        fclose(f);
    return v;
}

static double malloc_in_use_kb(void)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    struct mallinfo2 mi = mallinfo2();
    return (double)(mi.uordblks + mi.hblkhd) / 1024;
#else
    return -1;
#endif
}

int mem_sample_read(double m[MEM_FIELDS])
{
    for (int i = 0; i < MEM_FIELDS; i++)
        m[i] = 0;
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f) {
        for (int i = 0; i < MEM_FIELDS; i++)
            m[i] = -1;
        return -1;
    }
    char line[4352];
    map_kind kind = KIND_ANON;
    double pss_sum = 0;
    while (fgets(line, sizeof line, f)) {
        double size_kb;
        if (isxdigit((unsigned char)line[0]) && parse_header(line, &kind, &size_kb) == 0) {
            if (kind == KIND_SEGMENT)
                m[MEM_SEG_SIZE] += size_kb;
            continue;
        }
        int rss = !strncmp(line, "Rss:", 4), pss = !strncmp(line, "Pss:", 4);
        if (!rss && !pss)
            continue;
        double v = kb_value(line);
        if (pss)
            pss_sum += v;
        switch (kind) {
        case KIND_SEGMENT: m[rss ? MEM_SEG_RSS : MEM_SEG_PSS] += v; break;
        case KIND_SHARED: m[rss ? MEM_SHARED_RSS : MEM_SHARED_PSS] += v; break;
        case KIND_FILES: m[rss ? MEM_FILES_RSS : MEM_FILES_PSS] += v; break;
        case KIND_ANON:
            if (rss)
                m[MEM_ANON_RSS] += v;
            break;
        }
    }
    fclose(f);
    m[MEM_RSS] = status_kb("VmRSS");
    m[MEM_PSS] = pss_sum;
    m[MEM_MALLOC] = malloc_in_use_kb();
    return 0;
}
